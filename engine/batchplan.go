package engine

import (
	"sort"

	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/pricing"
)

// BatchPlan is what a plan says of the calls that go through providers'
// Batch APIs (batch = true; engine/batchexec): how many, in how many
// rounds, and what they cost at batch prices beside synchronous ones.
type BatchPlan struct {
	Providers []string `json:"providers"`
	// Calls counts the Estimate's model calls that go in batches.
	Calls int `json:"calls"`
	// Rounds is the number of batch rounds they take: a round holds every
	// call whose inputs are ready, so it is the depth of batch calls on
	// the longest chain of the graph (one round per stage depth).
	Rounds int `json:"rounds"`
	// CostUSD is what those calls cost at their models' batch prices,
	// SyncCostUSD at synchronous ones (the Estimate's); the Estimate's
	// total with batch prices is Estimate.CostUSD - SyncCostUSD + CostUSD.
	CostUSD     float64 `json:"cost_usd"`
	SyncCostUSD float64 `json:"sync_cost_usd"`
}

// batchProviders are the providers of g that set batch = true.
func batchProviders(g *Graph) map[string]bool {
	out := map[string]bool{}
	for name, p := range g.Exp.LLMProviders() {
		if v, _ := p.Get("batch"); v == true {
			out[name] = true
		}
	}
	return out
}

// batchPlan counts, over the plan's nodes to run, the distinct calls to
// batch providers, their rounds and their cost at both prices; nil when
// the experiment has no batch provider or nothing to batch.
func (w *walker) batchPlan() *BatchPlan {
	batch := batchProviders(w.g)
	if len(batch) == 0 {
		return nil
	}
	bp := &BatchPlan{}
	for name := range batch {
		bp.Providers = append(bp.Providers, name)
	}
	sort.Strings(bp.Providers)
	isBatch := make([]bool, len(w.g.Nodes))
	keys := map[string]bool{}
	for i, n := range w.g.Nodes {
		st := &w.states[i]
		if n.Inst.source || st.status != StatusToRun || !st.isCall || st.reused {
			continue
		}
		m := w.modelOfState(n, st)
		if m == nil || !batch[m.Provider] {
			continue
		}
		isBatch[i] = true
		if st.key != "" {
			if keys[st.key] {
				continue // one call per key (single-flight)
			}
			keys[st.key] = true
		}
		bp.Calls++
		bp.SyncCostUSD += st.costs().estCost
		bp.CostUSD += pricing.Cost(m.Price, llm.Usage{InputTokens: st.costs().estIn, OutputTokens: st.costs().estOut}, pricing.Batch)
	}
	// depth[i]: batch calls on the longest chain ending at node i.
	depth := make([]int, len(w.g.Nodes))
	done := make([]bool, len(w.g.Nodes))
	var visit func(i int32) int
	visit = func(i int32) int {
		if done[i] {
			return depth[i]
		}
		d := 0
		for _, dep := range w.g.Nodes[i].Deps {
			d = max(d, visit(dep))
		}
		if isBatch[i] {
			d++
		}
		depth[i], done[i] = d, true
		return d
	}
	for i := range w.g.Nodes {
		bp.Rounds = max(bp.Rounds, visit(int32(i)))
	}
	if bp.Calls == 0 {
		return nil
	}
	return bp
}
