package config

// The settings block: experiment-wide limits.

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

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

// maxNameBytes bounds settings { name }: it names the experiment in every
// output, so a long one is a mistake.
const maxNameBytes = 200

func (l *loader) evalSettings(d *decl) {
	if n, ok := l.intIn(d.content.Attributes, "max_nodes", nil, 1, maxMaxNodes); ok {
		l.exp.MaxNodes = n
	}
	if name, ok := l.str(d.content.Attributes, "name", nil); ok {
		at := d.content.Attributes["name"].Expr.Range().Ptr()
		switch {
		case strings.TrimSpace(name) == "":
			l.errorf(at, "Empty experiment name", "settings { name } names the experiment (plan compares it with its own last run); give it a name, or remove the attribute to use the file's or folder's name.")
		case len(name) > maxNameBytes || strings.IndexFunc(name, unicode.IsControl) >= 0:
			l.errorf(at, "Invalid experiment name", "settings { name } must be at most %d bytes with no control characters; got %d bytes. Give a short name such as \"ideabench-table1\".", maxNameBytes, len(name))
		default:
			l.exp.Name = name
			l.exp.ID = "name:" + name
		}
	}
}

// identify sets the experiment's ID from where it was loaded (path: its
// folder, or its file) unless settings { name } set it, and its Blocks.
func (l *loader) identify(path string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	l.exp.Path = filepath.Clean(abs)
	if l.exp.ID == "" {
		l.exp.ID = "path:" + l.exp.Path
	}
	l.exp.Blocks = make([]string, 0, len(l.decls))
	for addr := range l.decls {
		if addr != "settings" {
			l.exp.Blocks = append(l.exp.Blocks, addr)
		}
	}
	sort.Strings(l.exp.Blocks)
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
