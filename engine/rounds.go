package engine

import (
	"context"
	"sync/atomic"

	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/pricing"
)

// activity counts, on a run whose executor sends some providers' calls in
// rounds (executor.Rounds: engine/batchexec), the work that may still hand
// the executor a task: ready nodes being resolved, queued tasks, tasks in
// dispatch (less those the executor holds), records being written. Each of
// them hands its unit on before giving it up (a resolve queues its task,
// a write enqueues the dependents it releases), so the count is zero only
// when nothing can reach the executor until a task it holds returns: the
// round is complete, and the executor is told (Quiet). On any other run
// (nil, or no Rounds) it counts nothing.
type activity struct {
	n      atomic.Int64
	rounds executor.Rounds
}

func newActivity(ex Executor) *activity {
	r, ok := ex.(executor.Rounds)
	if !ok {
		return nil
	}
	return &activity{rounds: r}
}

func (a *activity) add(d int64) {
	if a == nil {
		return
	}
	if a.n.Add(d) == 0 {
		a.rounds.Quiet(a.still)
	}
}

func (a *activity) still() bool { return a.n.Load() == 0 }

// hold is the context Execute gets: the executor takes a task it holds for
// a round out of the count, and puts it back when its answer came.
func (a *activity) hold(ctx context.Context) context.Context {
	if a == nil {
		return ctx
	}
	return executor.WithHold(ctx, func(held bool) {
		if held {
			a.add(-1)
		} else {
			a.add(1)
		}
	})
}

// batched reports whether the executor sends provider's chat calls in
// batches, at the batch price.
func batched(ex Executor, provider string) bool {
	r, ok := ex.(executor.Rounds)
	return ok && r.Batched(provider)
}

// batchEstimate is a chat call's estimated cost at its model's batch price.
func batchEstimate(m *stages.Model, req llm.Request) float64 {
	in, out, _ := estimateCall(m, req)
	return pricing.Cost(m.Price, llm.Usage{InputTokens: in, OutputTokens: out}, pricing.Batch)
}
