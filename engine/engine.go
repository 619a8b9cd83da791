package engine

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/ideaflow/ideaflow/cache"
	"github.com/rs/zerolog"
)

// The engine and the walker's modes. A walk is the same traversal in every
// mode (walk.go, resolve.go); what differs is what a miss does, and each
// mode's code is in one file: plan.go (estimate; no writes), run.go
// (compute or dispatch; write), verify.go (recompute cached compute nodes),
// offline.go (refuse calls), rerender.go (reports from the cache alone),
// adopt.go (adopt previous-scheme records), inspect.go (read a plan's
// nodes: show, export, the page). Calls leave the engine as plain-data
// tasks to engine/executor.

// Engine plans and runs graphs against a cache.
type Engine struct {
	Store cache.Store
	Exec  Executor
	Log   zerolog.Logger
	// Resolvers is how many goroutines resolve nodes (prepare, key, cache
	// lookup); 0 means GOMAXPROCS.
	Resolvers int
	// CheckRecords makes plans and runs read every cached record they rely
	// on instead of trusting memos: for a cache that lost records on opening
	// (a damaged log cut by recovery), so each lost record is recomputed.
	CheckRecords bool
	// epoch replaces memoEpoch (tests: two builds of other rendering code).
	epoch string
	// noEarlyCalls makes a run send no call before its plan is complete
	// (early.go); tests that pin the order calls go in set it.
	noEarlyCalls bool
	// tests: planResolve is the plan walker's onResolve; planned is called
	// once a run's plan is complete.
	planResolve func(i int32)
	planned     func()
}

// newWalker is a walker over g with the engine's store, log and memo epoch.
func (e *Engine) newWalker(g *Graph, plan bool) *walker {
	w := newWalker(g, e.Store, plan)
	w.log = e.Log
	w.checkRecords = e.CheckRecords
	if e.epoch != "" {
		w.epoch = e.epoch
	}
	return w
}

// InputError is bad input found before any call (missing API key, offline
// misses): the CLI exits 2.
type InputError struct {
	Diags hcl.Diagnostics
	Err   error
}

func (e *InputError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Diags.Error()
}

func (e *InputError) Unwrap() error { return e.Err }
