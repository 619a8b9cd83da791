package engine

import (
	"sync"

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
