package engine

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Inspection: what `ideaflow show` and `ideaflow export` read. A plan already
// knows every node's state and, for most, its key; inspecting a node adds
// what a person wants to see of it: the request re-rendered from its cached
// inputs (the stage's Prepare, as the walk calls it), the record or failure
// stored under its key and the key's named parts. It reads the cache and
// never writes it.

// NodeView is one node as a person (or a script) inspects it.
type NodeView struct {
	Address     string `json:"address"`
	Instance    string `json:"instance"`
	Block       string `json:"block"`
	InstanceKey string `json:"instance_key,omitempty"`
	Type        string `json:"type"` // stage type, or "dataset"
	Version     string `json:"version,omitempty"`
	Item        string `json:"item,omitempty"`
	Slot        int    `json:"slot"`
	Label       string `json:"label,omitempty"`
	// Work is what the node does: "call", "service", "compute" or "dataset";
	// "" when it could not be prepared and the plan could not tell.
	Work string `json:"work,omitempty"`
	// Status is the plan's: "cached", "to run", "failed" or "skipped".
	Status string `json:"status"`
	// Reason says why a node that is not cached must run (or was skipped).
	Reason string `json:"reason,omitempty"`
	Key    string `json:"key,omitempty"`
	// Parts are the key's named parts: the stored ones for a cached node
	// (what made its key), else those of the key computed now.
	Parts []cache.Part `json:"parts,omitempty"`
	// Inputs are the addresses of the nodes this one reads, in order.
	Inputs []string `json:"inputs,omitempty"`
	// Generator is the model the instance's outputs derive from (its own
	// generator param, or inherited from upstream).
	Generator *ModelName `json:"generator,omitempty"`
	// Provider is the provider block a call or service request goes to.
	Provider string `json:"provider,omitempty"`
	// Answerer is who answered a call or service node, as its record says
	// (Asks, for a node not in the cache: who will be asked).
	Answerer *cache.Answerer `json:"answerer,omitempty"`
	Asks     *cache.Answerer `json:"asks,omitempty"`
	// Provenance is who answered the calls the node's output rests on,
	// directly or through its inputs, as their records say.
	Provenance *FedBy `json:"provenance,omitempty"`
	// Request is a model node's request exactly as the stage renders it from
	// the cached inputs: what is sent (repair re-asks add to it; see Attempts).
	Request *llm.Request `json:"request,omitempty"`
	// Service is a service node's request.
	Service *llm.ServiceRequest `json:"service,omitempty"`
	// PrepareError is the stage's error rendering the request, if any.
	PrepareError string `json:"prepare_error,omitempty"`
	// Result is the cached record (or, for a deterministic node that must
	// run, the output the plan computed in memory: Result.Planned).
	Result *NodeResult `json:"result,omitempty"`
	// Failure is the failure recorded under the node's key by the last run
	// that tried it.
	Failure *cache.Failure `json:"failure,omitempty"`
	// Notes are what a reader should know besides, e.g. that the request
	// re-rendered now has another key than the cached record's.
	Notes []string `json:"notes,omitempty"`
}

// FedBy is who answered the calls an output rests on, transitively.
type FedBy struct {
	Synthetic bool             `json:"synthetic,omitempty"`
	Answerers []cache.Answerer `json:"answerers,omitempty"`
}

func provenanceView(p *provenance) *FedBy {
	if p == nil {
		return nil
	}
	return &FedBy{Synthetic: p.Synthetic, Answerers: cacheAnswerers(p.Answerers)}
}

// ModelName names a model and its family.
type ModelName struct {
	Name   string `json:"name"`
	Family string `json:"family,omitempty"`
}

// NodeResult is a node's stored result, with its output as JSON.
type NodeResult struct {
	Output       json.RawMessage `json:"output"`
	OutputDigest string          `json:"output_digest,omitempty"`
	Model        string          `json:"model,omitempty"`
	ServedModel  string          `json:"served_model,omitempty"`
	Fingerprint  string          `json:"system_fingerprint,omitempty"`
	Raw          string          `json:"raw,omitempty"`
	Reasoning    string          `json:"reasoning,omitempty"`
	Usage        cache.Usage     `json:"usage"`
	Attempts     []cache.Attempt `json:"attempts,omitempty"`
	Synthetic    bool            `json:"synthetic,omitempty"`
	// Answerer is who answered a call or service record; Fed who answered
	// the calls a compute record's output rests on; AdoptedFrom the
	// previous-scheme key an adopted record was copied from.
	Answerer    *cache.Answerer  `json:"answerer,omitempty"`
	Fed         []cache.Answerer `json:"fed,omitempty"`
	AdoptedFrom string           `json:"adopted_from,omitempty"`
	// AnswerKey names the stored answer the output was derived from with
	// no call (only the stage's output settings had changed).
	AnswerKey string    `json:"answer_key,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	// Planned marks an output the plan computed in memory: it is not in
	// the cache yet.
	Planned bool `json:"planned,omitempty"`
	// Obtained says how a call's answer was obtained when not by one
	// request of its own (a batch).
	Obtained string `json:"obtained,omitempty"`
}

// InspectOptions control Inspect.
type InspectOptions struct {
	// Render re-renders each node's request from its cached inputs and
	// computes its key parts (show). Export needs only outputs and skips it.
	Render bool
}

// AddressError is an address that names no node, item or instance of the
// graph, with the addresses nearest to it.
type AddressError struct {
	Address     string
	Suggestions []string
	// Pending is set when the address names an instance that has no nodes
	// yet: it is laid out (or expands) only after its inputs run.
	Pending bool
}

func (e *AddressError) Error() string {
	if e.Pending {
		return fmt.Sprintf("%s has no nodes yet: it is laid out once its inputs have run", e.Address)
	}
	msg := fmt.Sprintf("no node, item or stage instance at %s", e.Address)
	if len(e.Suggestions) > 0 {
		msg += "; did you mean " + strings.Join(e.Suggestions, " or ") + "?"
	}
	return msg
}

// ErrPlanUsed is returned by Inspect for a plan a run has taken over.
var ErrPlanUsed = errors.New("plan was consumed by a run")

// Inspect returns the nodes of plan p at address, in graph order. An address
// is a node's (`stage.generate_ideas.main["gen-a"]/qs-membrane/sample 0`), an
// item's (`stage.generate_ideas.main["gen-a"]/qs-membrane`: its every node),
// an instance's (`stage.generate_ideas.main["gen-a"]`) or a block's
// (`stage.generate_ideas.main`: every instance of it). An address that
// matches nothing is an *AddressError with suggestions. p must come from
// e.Plan on the same store.
func (e *Engine) Inspect(p *Plan, address string, opts InspectOptions) ([]NodeView, error) {
	if p.states == nil {
		return nil, ErrPlanUsed
	}
	idx, err := p.g.match(address)
	if err != nil {
		return nil, err
	}
	// A walker over the plan's states reads inputs the way the walk did:
	// known outputs from memory, memo hits from the cache.
	w := &walker{g: p.g, store: e.Store, plan: true, states: p.states, log: e.Log, provs: p.provs, interned: map[string]string{}}
	out := make([]NodeView, 0, len(idx))
	for _, i := range idx {
		v, err := w.view(int32(i), opts)
		if err != nil {
			return out, fmt.Errorf("inspect %s: %w", p.g.Nodes[i].Address, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// match returns the indexes of the nodes address names, in graph order.
func (g *Graph) match(address string) ([]int, error) {
	q := strings.TrimSuffix(strings.TrimSpace(address), "/")
	var out []int
	for i, n := range g.Nodes {
		if n.Address == q || strings.HasPrefix(n.Address, q+"/") || n.Inst.Block == q || n.Inst.Address == q {
			out = append(out, i)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	// An instance without nodes is either not laid out (or expanded) yet,
	// or final and empty: zero is a size (every item expanded to no child),
	// and an empty answer is the right one there, not an error.
	named, pending := false, false
	for _, inst := range g.Instances {
		if inst.Address == q || inst.Block == q {
			named = true
			pending = pending || !inst.final
		}
	}
	switch {
	case pending:
		return nil, &AddressError{Address: q, Pending: true}
	case named:
		return nil, nil
	}
	return nil, &AddressError{Address: q, Suggestions: g.suggest(q)}
}

// suggest returns up to three addresses near q: within the instance q
// starts with, its items and nodes; otherwise instances and blocks. Near
// means a small edit distance, so a typo or a wrong sample number finds the
// address meant.
func (g *Graph) suggest(q string) []string {
	var inst *Instance
	for _, in := range g.Instances {
		if strings.HasPrefix(q, in.Address+"/") && (inst == nil || len(in.Address) > len(inst.Address)) {
			inst = in
		}
	}
	seen := map[string]bool{}
	var cands []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			cands = append(cands, s)
		}
	}
	if inst != nil {
		for _, ni := range inst.nodes {
			n := g.Nodes[ni]
			if n.Spec.Item != "" {
				add(inst.Address + "/" + n.Spec.Item)
			}
			add(n.Address)
		}
	} else {
		for _, in := range g.Instances {
			add(in.Block)
			add(in.Address)
		}
	}
	type scored struct {
		s string
		d int
	}
	// A few edits per dozen characters is a typo; more is another address.
	// Of those, only the nearest (and the next nearest) are worth reading.
	limit := max(2, len([]rune(q))/12)
	var near []scored
	for _, c := range cands {
		if d := editDistance(q, c); d <= limit {
			near = append(near, scored{c, d})
		}
	}
	sort.SliceStable(near, func(i, j int) bool { return near[i].d < near[j].d })
	var out []string
	for i := 0; i < len(near) && i < 3 && near[i].d <= near[0].d+1; i++ {
		out = append(out, near[i].s)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// view builds node i's view from the plan's state and the cache.
func (w *walker) view(i int32, opts InspectOptions) (NodeView, error) {
	n := w.g.Nodes[i]
	st := &w.states[i]
	inst := n.Inst
	v := NodeView{
		Address: n.Address, Instance: inst.Address, Block: inst.Block, InstanceKey: inst.Key,
		Type: inst.Type, Version: inst.Version, Item: n.Spec.Item, Slot: n.Spec.Slot, Label: n.Spec.Label,
		Status: st.status.String(), Key: st.key,
	}
	if st.status != StatusCached {
		v.Reason = st.why.String()
	}
	v.Generator = generatorName(inst.Up.Generator)
	for _, d := range n.Deps {
		v.Inputs = append(v.Inputs, w.g.Nodes[d].Address)
	}
	switch {
	case inst.source:
		v.Work = "dataset"
		v.Result = &NodeResult{Output: json.RawMessage(n.output), OutputDigest: hex.EncodeToString(n.outputDigest[:])}
		return v, nil
	case st.isCall:
		v.Work = "call"
	case st.isService:
		v.Work = "service"
	case st.known || st.status == StatusCached:
		v.Work = "compute"
	}
	v.Provider = st.provider
	v.Provenance = provenanceView(st.prov)
	if st.answerer != nil {
		if st.status == StatusCached {
			v.Answerer = cacheAnswerer(*st.answerer)
		} else {
			v.Asks = cacheAnswerer(*st.answerer)
		}
	}

	if opts.Render {
		w.render(n, st, &v)
	}
	if v.Key == "" {
		return v, nil
	}
	if st.status == StatusCached {
		rec, err := w.store.Get(v.Key)
		if err != nil {
			return v, fmt.Errorf("read record %s: %w", v.Key, err)
		}
		v.Result = resultOf(rec)
		if parts, err := w.store.Parts(v.Key); err == nil && len(parts) > 0 {
			v.Parts = parts
		}
		return v, nil
	}
	if f, err := w.store.Failure(v.Key); err == nil {
		v.Failure = f
	} else if !errors.Is(err, cache.ErrNotFound) {
		return v, fmt.Errorf("read failure %s: %w", v.Key, err)
	}
	if st.known && st.output != nil {
		v.Result = &NodeResult{Output: json.RawMessage(st.output), OutputDigest: hex.EncodeToString(st.digest[:]), Planned: true}
	}
	return v, nil
}

// render prepares node n as the walk does, from its inputs' outputs, and
// fills in the request and the key parts. A node whose inputs are not all
// known (an input must run first, or failed) cannot be rendered; the view
// then says so through its Reason.
func (w *walker) render(n *Node, st *nodeState, v *NodeView) {
	digests := make([][32]byte, len(n.Deps))
	provs := make([]*provenance, len(n.Deps))
	for k, d := range n.Deps {
		switch ds := &w.states[d]; {
		case ds.known:
			digests[k], provs[k] = ds.digest, ds.prov
		case n.Spec.AllowMissing:
			digests[k] = missingDigest
		default:
			return
		}
	}
	kin := keyInputs{digests: digests, provs: provs, union: w.provs.unionAll(provs)}
	in, damaged, err := w.loadInputs(n)
	if damaged {
		v.PrepareError = "load inputs: an input's cache record is damaged; the next run recomputes it"
		return
	}
	if err != nil {
		v.PrepareError = "load inputs: " + err.Error()
		return
	}
	work, err := n.Spec.Prepare(in)
	if err != nil {
		v.PrepareError = err.Error()
		return
	}
	switch {
	case work.Call != nil:
		v.Work = "call"
		r := work.Call.Request
		v.Request = &r
		v.Provider = work.Call.Model.Provider
		if v.Answerer == nil {
			v.Asks = cacheAnswerer(work.Call.Model.Answerer)
		}
	case work.Service != nil:
		v.Work = "service"
		r := work.Service.Request
		v.Service = &r
		v.Provider = work.Service.Model.Provider
		if v.Answerer == nil {
			v.Asks = cacheAnswerer(work.Service.Model.Answerer)
		}
	case work.Compute != nil:
		v.Work = "compute"
	}
	parts := keyParts(n, work, kin)
	key := keyOf(parts)
	v.Parts = cacheParts(parts)
	switch {
	case v.Key == "":
		v.Key = key
	case v.Key != key:
		// The plan settled the node from the memo under another key than
		// the request renders to now: the cached answer was asked with a
		// request other than the one shown.
		v.Notes = append(v.Notes, fmt.Sprintf("the request rendered now has key %s, not the cached record's %s: the record was made from another request", key, v.Key))
	}
}

func resultOf(rec *cache.Record) *NodeResult {
	return &NodeResult{
		Output: json.RawMessage(rec.Output), OutputDigest: rec.OutputDigest, Model: rec.Model, ServedModel: rec.ServedModel,
		Fingerprint: rec.Fingerprint, Raw: rec.Raw, Reasoning: rec.Reasoning, Usage: rec.Usage, Attempts: rec.Attempts,
		Synthetic: rec.Synthetic, AnswerKey: rec.AnswerKey, CreatedAt: rec.CreatedAt,
		Answerer: rec.Answerer, Fed: rec.Fed, AdoptedFrom: rec.AdoptedFrom, Obtained: rec.Obtained,
	}
}

func generatorName(m *stages.Model) *ModelName {
	if m == nil {
		return nil
	}
	return &ModelName{Name: m.Name, Family: m.Family}
}
