package executor

import (
	"context"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// Rounds is implemented by an executor that holds some providers' tasks
// back to send them together (engine/batchexec: a provider's Batch API).
// Such an executor cannot tell by itself when a round is complete: more
// tasks may be on their way through the engine. The engine can. It counts
// the work of a run that may still hand the executor a task (ready nodes
// being resolved, queued tasks, tasks in Execute, results being written),
// leaving out the tasks the executor holds (Hold), and calls Quiet each
// time that count falls to zero: then nothing can reach the executor until
// a task it holds returns, and the round is complete. So a pipeline of
// batch stages takes one round per stage depth, with no timer.
type Rounds interface {
	// Batched reports whether the provider's chat calls go in rounds, at
	// its models' batch prices (the engine reserves the budget at them and
	// sends them no calls while planning).
	Batched(provider string) bool
	// Quiet says the run's count fell to zero; still reports, whenever the
	// executor asks later, whether it is zero yet (a task may have come
	// since). It must not block.
	Quiet(still func() bool)
}

type holdKey struct{}

// WithHold is the context the engine hands Execute: hold(true) takes the
// task out of the run's count (the executor holds it for a round), and
// hold(false) puts it back (its answer came: it will settle).
func WithHold(ctx context.Context, hold func(held bool)) context.Context {
	return context.WithValue(ctx, holdKey{}, hold)
}

// Hold tells the engine, through the context Execute was given, that the
// executor holds the task (held) or has let it go. Without a hold in ctx
// (a test, a worker elsewhere) it does nothing.
func Hold(ctx context.Context, held bool) {
	if f, ok := ctx.Value(holdKey{}).(func(bool)); ok {
		f(held)
	}
}

// UseClient makes e send provider's calls through c instead of a client
// of its own: a wrapper that answers them another way (a batch round)
// gets its Results made exactly as every other call's. Call it before
// the provider's first task.
func (e *LocalExecutor) UseClient(provider string, c llm.Client) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clients[provider] = c
}
