package engine

import (
	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/executor"
)

// The executor and its tasks live in engine/executor, which imports neither
// HCL nor Badger: a worker needs the task and the provider settings, never
// the graph or the cache. These names keep the engine's API as it was.
type (
	Task          = executor.Task
	Result        = executor.Result
	ExecError     = executor.ExecError
	Executor      = executor.Executor
	LocalExecutor = executor.LocalExecutor
	SampleBatcher = executor.SampleBatcher
)

// NewLocalExecutor calls providers in-process (executor.NewLocalExecutor).
var NewLocalExecutor = executor.NewLocalExecutor

// settle reads an executor's outcome: a Result carrying a failure envelope
// (an executor across a wire) becomes the error it stands for, so every
// decision below (provider unavailable, ExecError's raw answer and usage,
// budget) is the same as on a local error.
var settle = executor.Settle

// cost is what in input and out output tokens cost at a price.
var cost = executor.Cost

// The seam's two plain-data types convert to the cache's: same fields, in
// the same order.
func usageOf(u executor.Usage) cache.Usage { return cache.Usage(u) }

func attemptsOf(as []executor.Attempt) []cache.Attempt {
	if as == nil {
		return nil
	}
	out := make([]cache.Attempt, len(as))
	for i, a := range as {
		out[i] = cache.Attempt(a)
	}
	return out
}
