package engine

import (
	"testing"

	"github.com/ideaflow/ideaflow/cache"
)

// Zero is a size: an item whose list is empty expands to no child, and an
// expansion whose every item expands to none is final and empty, not "not
// laid out yet". What reads it (test_collect) is laid out and runs, in the
// plan and in the run, cold and warm.
func TestZeroExpansion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lists    map[string]string
		children int // test_each nodes
		calls    int // cold run: lists + model children
	}{
		{"every item", map[string]string{"a": "# none", "b": "# none"}, 0, 2},
		{"some items", map[string]string{"a": "alpha\nbeta", "b": "# none"}, 2, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exec := newFakeExec(lists(tc.lists))
			e := &Engine{Store: cache.NewMemory(), Exec: exec}

			// Cold plan: the lists are unknown, so the expansion waits.
			p := e.Plan(expExp(t, dir))
			if pe := p.Summary.Stages[eachAddr].Pending; pe == nil || pe.Items != 2 {
				t.Fatalf("cold plan of the expansion: %+v", p.Summary.Stages[eachAddr])
			}

			sum := runOnce(t, e, expExp(t, dir))
			if exec.count() != tc.calls || sum.LLMCalls != tc.calls {
				t.Fatalf("cold run: %d calls (summary %d), want %d", exec.count(), sum.LLMCalls, tc.calls)
			}
			for addr, want := range map[string]Counts{
				listAddr:    {Total: 2, Ran: 2},
				eachAddr:    {Total: tc.children, Ran: tc.children},
				collectAddr: {Total: 2, Ran: 2},
			} {
				if got := stageCounts(sum, addr); got != want {
					t.Errorf("cold run %s: %+v, want %+v", addr, got, want)
				}
			}
			g := expExp(t, dir)
			if got := collected(t, e, g, "b"); len(got) != 0 {
				t.Errorf("item b collected %v, want nothing", got)
			}

			// A warm plan expands from the cache: the empty expansion is
			// final, nothing is pending, every node is cached.
			p = e.Plan(expExp(t, dir))
			total := 2 + tc.children + 2
			if p.Summary.Nodes.Total != total || p.Summary.Nodes.Cached != total || p.Summary.Stages[eachAddr].Pending != nil ||
				p.Summary.Stages[collectAddr].Pending != nil || p.Summary.UpperBound.LLMCalls != 0 {
				t.Fatalf("warm plan: %+v, each %+v, collect %+v", p.Summary.Nodes, p.Summary.Stages[eachAddr], p.Summary.Stages[collectAddr])
			}
			if views, err := e.Inspect(p, eachAddr, InspectOptions{}); err != nil || len(views) != tc.children {
				t.Fatalf("inspect the expansion: %d nodes, %v; want %d and no error", len(views), err, tc.children)
			}

			// A warm run: no call, every node cached, the same counts.
			sum = runOnce(t, e, expExp(t, dir))
			if exec.count() != tc.calls || sum.Nodes.Total != total || sum.Nodes.Cached != total || sum.Nodes.Ran != 0 {
				t.Fatalf("warm run: %d calls, %+v", exec.count(), sum.Nodes)
			}
			if got := stageCounts(sum, collectAddr); got != (Counts{Total: 2, Cached: 2}) {
				t.Errorf("warm run collect: %+v", got)
			}
		})
	}
}
