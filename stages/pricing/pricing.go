// Package pricing prices a call's usage: at a model's synchronous or batch
// rates, with the prompt tokens the provider served from its prompt cache
// (llm.Usage.CachedTokens) at the cached-input rate. It reads a model's
// price block (stages.Price) and nothing else, so the engine, plan and
// --max-cost can share one rule.
package pricing

import (
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Mode is how a call was (or will be) made.
type Mode int

const (
	Sync  Mode = iota // one request per call
	Batch             // through the provider's batch interface (stages/llm/batch)
)

func (m Mode) String() string {
	if m == Batch {
		return "batch"
	}
	return "sync"
}

// Rates are USD per million tokens for one mode.
type Rates struct {
	Input, CachedInput, Output float64
}

// RatesOf is the rates p gives for mode m. A price the block does not give
// falls back to the one it would discount: batch input and output to the
// synchronous ones, cached input to the mode's input price, the batch
// cached-input price to the batch input price. So a cost is never
// under-estimated for want of a declared discount (budgets stay safe), and
// a block with only input_per_mtok and output_per_mtok prices every mode
// as before.
func RatesOf(p stages.Price, m Mode) Rates {
	or := func(v *float64, def float64) float64 {
		if v == nil {
			return def
		}
		return *v
	}
	if m == Batch {
		in := or(p.BatchInputPerMTok, p.InputPerMTok)
		return Rates{Input: in, CachedInput: or(p.BatchCachedInputPerMTok, in), Output: or(p.BatchOutputPerMTok, p.OutputPerMTok)}
	}
	return Rates{Input: p.InputPerMTok, CachedInput: or(p.CachedInputPerMTok, p.InputPerMTok), Output: p.OutputPerMTok}
}

// Cost is what u costs at p's rates for mode m, in USD: the uncached
// input, the cached input and the output, each at its rate. Cached tokens
// are part of InputTokens (as OpenAI reports them); a report of more
// cached than input tokens is held to the input.
func Cost(p stages.Price, u llm.Usage, m Mode) float64 {
	r := RatesOf(p, m)
	cached := min(max(u.CachedTokens, 0), u.InputTokens)
	// Summed per million in this order so that a call without cached
	// tokens costs, to the last bit, what executor.Cost said before.
	return float64(u.InputTokens-cached)/1e6*r.Input + float64(cached)/1e6*r.CachedInput + float64(u.OutputTokens)/1e6*r.Output
}
