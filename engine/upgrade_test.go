package engine

import (
	"testing"

	"github.com/ideaflow/ideaflow/cache"
)

// A rebuild that changes nothing a node's output depends on (a new version
// string, another compiler) leaves every memo trusted; one that changes the
// memo epoch (shared rendering code, a scheme) makes the first warm run
// render every node and rewrite its memo, and the next one renders none.
// Before epochs a memo named the executable's digest and a run's plan never
// rewrote one, so every warm run after any rebuild rendered every node.
func TestWarmAfterUpgrade(t *testing.T) {
	dir := t.TempDir()
	store := cache.NewMemory()
	exec := newFakeExec(lists(map[string]string{"a": "alpha\nbeta\ngamma", "b": "delta"}))
	// With early calls: the cold run's calls sent while planning write
	// their records, which a walk may meet by rendering the request before
	// the memo is durable; that is no cached node found by rendering, so
	// the cold run renders none (it counted one in 5 of 30 -race runs).
	e := &Engine{Store: store, Exec: exec, epoch: "build-1"}
	const nodes = 8 // 2 lists, 4 children, 2 collects (the 2 items are given)

	steps := []struct {
		name      string
		epoch     string
		plan      bool // a plan alone before the run: renders, writes nothing
		ran       int
		rendered  int
		rewritten int
	}{
		{name: "cold", epoch: "build-1", ran: nodes},
		{name: "warm, same build", epoch: "build-1"},
		{name: "another version string, same epoch", epoch: "build-1"},
		{name: "first warm run of a new epoch", epoch: "build-2", plan: true, rendered: nodes, rewritten: nodes},
		{name: "second warm run of the new epoch", epoch: "build-2"},
		{name: "back to the old epoch", epoch: "build-1", rendered: nodes, rewritten: nodes},
		{name: "and warm again", epoch: "build-1"},
	}
	for _, s := range steps {
		e.epoch = s.epoch
		if s.plan {
			p := e.Plan(expExp(t, dir))
			if p.rendered != nodes || p.Summary.Nodes.Cached != nodes {
				t.Fatalf("%s: the plan rendered %d nodes (%+v), want %d", s.name, p.rendered, p.Summary.Nodes, nodes)
			}
		}
		calls := exec.count()
		sum := runOnce(t, e, expExp(t, dir))
		if sum.Nodes.Ran != s.ran || sum.Nodes.Cached != nodes-s.ran || sum.Memo.Rendered != s.rendered || sum.Memo.Rewritten != s.rewritten {
			t.Fatalf("%s: nodes %+v memo %+v, want %d ran, %d rendered, %d memos rewritten",
				s.name, sum.Nodes, sum.Memo, s.ran, s.rendered, s.rewritten)
		}
		if want := calls + map[bool]int{true: 6}[s.ran > 0]; exec.count() != want {
			t.Fatalf("%s: %d calls in all, want %d", s.name, exec.count(), want)
		}
	}
}

// The memo epoch is made of versions, never of the executable: two builds
// that differ only in their version string share it.
func TestMemoEpochIsVersions(t *testing.T) {
	if got, want := memoEpoch(), memoEpochOf(memoFormat, keyFormat, "render="+renderVersion); got != want {
		t.Fatalf("memoEpoch() = %s, want %s", got, want)
	}
	old := renderVersion
	renderVersion = old + "-next"
	defer func() { renderVersion = old }()
	if memoEpoch() == memoEpochOf(memoFormat, keyFormat, "render="+old) {
		t.Fatal("a new render version left the memo epoch unchanged")
	}
}
