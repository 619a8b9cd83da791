package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// defaultOutputTokens is the output size assumed for a model with no max_tokens.
const defaultOutputTokens = 1024

// estimateCall estimates a request's tokens and cost before it is sent: input
// counted with the model's tokenizer where it is public (else 4 bytes per
// token), plus the chat format's few tokens per message; output at
// max_tokens (an upper bound).
func estimateCall(m *stages.Model, req llm.Request) (in, out int64, usd float64) {
	in, _, out, usd = estimateCallExact(m, req)
	return in, out, usd
}

// estimateCallExact is estimateCall, also saying whether the input count is
// exact (a public tokenizer) or an approximation.
func estimateCallExact(m *stages.Model, req llm.Request) (in int64, exact bool, out int64, usd float64) {
	const perMessage = 4 // role and separators in the chat format
	exact = true
	for _, msg := range req.Messages {
		n, ok := countTokens(req.Model, msg.Content)
		in += n + perMessage
		exact = exact && ok
	}
	in += 3 // the reply's priming
	out = int64(req.MaxTokens)
	if out <= 0 {
		out = defaultOutputTokens
	}
	return in, exact, out, cost(m.Price, in, out)
}

// budget stops dispatch when the next call could take spending past max.
type budget struct {
	mu        sync.Mutex
	max       float64 // <= 0: unlimited
	spent     float64
	reserved  float64
	exhausted bool
}

// reserve claims the estimated cost of one call, or reports that the budget cannot cover it.
func (b *budget) reserve(est float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max <= 0 {
		return true
	}
	if b.exhausted || b.spent+b.reserved+est > b.max {
		b.exhausted = true
		return false
	}
	b.reserved += est
	return true
}

// settle replaces a reservation with what the call actually cost.
func (b *budget) settle(est, actual float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved -= est
	b.spent += actual
}

func (b *budget) isExhausted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.exhausted
}

// estimateService estimates a service request before it is sent: its body's
// size in tokens, priced as input.
func estimateService(s *stages.Service) (in int64, usd float64) {
	in = int64(len(s.Request.Body)/4 + 1)
	return in, cost(s.Model.Price, in, 0)
}

// unpricedModels lists, sorted by address, the models without a price block
// that the plan's calls still to make may go to: the nodes of an instance
// that must call (their prepared request names the model, else any model
// param of the instance may answer) and the instances still to be laid out
// or expanded that call. A budget cannot bind such calls: their cost is
// unknown, not zero.
func (p *Plan) unpricedModels() []*stages.Model {
	found := map[string]*stages.Model{}
	note := func(m *stages.Model) {
		if m != nil && !m.Priced {
			found[m.Address] = m
		}
	}
	noteAll := func(inst *Instance) {
		for _, v := range inst.Params {
			switch x := v.(type) {
			case *stages.Model:
				note(x)
			case []*stages.Model:
				for _, m := range x {
					note(m)
				}
			}
		}
	}
	w := &walker{g: p.g, states: p.states}
	for i, n := range p.g.Nodes {
		st := &p.states[i]
		if n.Inst.source || st.status == StatusCached || !(st.isCall || st.isService) || st.reused {
			continue
		}
		if st.wantModel != "" {
			note(w.modelOfState(n, st))
		} else {
			noteAll(n.Inst)
		}
	}
	for inst := range p.g.pending() {
		if inst.calls || inst.services {
			noteAll(inst)
		}
	}
	out := make([]*stages.Model, 0, len(found))
	for _, a := range slices.Sorted(maps.Keys(found)) {
		out = append(out, found[a])
	}
	return out
}

// checkBudgetBinds refuses, before any call, a --max-cost that cannot bind:
// some call to make goes to a model without a price. One error per such
// model, at its block.
func (p *Plan) checkBudgetBinds(maxCost float64) error {
	ms := p.unpricedModels()
	if len(ms) == 0 {
		return nil
	}
	var diags hcl.Diagnostics
	for _, m := range ms {
		d := &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "No price for " + m.Address,
			Detail: fmt.Sprintf("--max-cost $%g cannot limit the calls to %s (%q): without a price block their cost is unknown, not zero. "+
				"Add one to the model block, e.g. price { input_per_mtok = 2.5  output_per_mtok = 10 } (0 and 0 for a free or local model), "+
				"or pass --allow-unpriced to start with a budget that counts the priced models only.", maxCost, m.Address, m.Name),
		}
		if r, ok := p.g.Exp.ModelRanges[strings.TrimPrefix(m.Address, "model.")]; ok {
			d.Subject = r.Ptr()
		}
		diags = append(diags, d)
	}
	return &InputError{Diags: diags, Err: ErrUnpriced}
}

// ErrUnpriced is returned when --max-cost is given and a call to make goes to
// a model without a price.
var ErrUnpriced = errors.New("--max-cost with unpriced models")
