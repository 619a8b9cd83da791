package config

// The settings block: experiment-wide limits.

import (
	"fmt"
	"math"

	"github.com/hashicorp/hcl/v2"
)

// DefaultMaxNodes is the node budget of a plan unless settings { max_nodes }
// raises it. A node costs a few hundred bytes while planning and a cache
// lookup, so ten million is a few GB and minutes: past what any benchmark
// here needs (IdeaBench's 2,374 targets x 3 ideas x 3 permutations is
// ~50,000), and well short of running out of memory.
const DefaultMaxNodes = 10_000_000

// maxMaxNodes is the largest budget that can be set: the graph indexes its
// nodes with int32.
const maxMaxNodes = math.MaxInt32

func (l *loader) evalSettings(d *decl) {
	if n, ok := l.intIn(d.content.Attributes, "max_nodes", nil, 1, maxMaxNodes); ok {
		l.exp.MaxNodes = n
	}
}

// CheckNodes refuses to lay out adding more nodes for si when the graph
// already holds have and the sum would pass the budget. The engine calls it
// before appending a stage's nodes, so a plan that would take minutes and
// gigabytes fails at once, at the stage that tipped it over.
//
// Once it has refused, it returns that same diagnostic for every later
// stage: they pass the budget only because the first did, and an identical
// diagnostic prints once (see Dedupe).
func (e *Experiment) CheckNodes(si *StageInstance, have, adding int) hcl.Diagnostics {
	e.budgetMu.Lock()
	defer e.budgetMu.Unlock()
	if e.overBudget != nil {
		return e.overBudget
	}
	budget := e.MaxNodes
	if budget <= 0 {
		budget = DefaultMaxNodes
	}
	if have+adding <= budget {
		return nil
	}
	r := si.DeclRange
	e.overBudget = hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Too many nodes",
		Detail: fmt.Sprintf("%s lays out %d nodes after %d others: %d in all, more than the limit of %d. "+
			"Lower what multiplies them (a dataset's limit, n, permutations), or raise the limit with settings { max_nodes = %d } in the experiment.",
			si.Address, adding, have, have+adding, budget, have+adding),
		Subject: &r,
	}}
	return e.overBudget
}
