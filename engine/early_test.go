package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/cache"
)

// startSignal is an executor that says when its first call starts and
// counts the calls made while the run was still planning.
type startSignal struct {
	*fakeExec
	once     sync.Once
	started  chan struct{}
	planned  atomic.Bool
	planning atomic.Int64
}

func (s *startSignal) Execute(ctx context.Context, t *Task) (*Result, error) {
	if !s.planned.Load() {
		s.planning.Add(1)
	}
	s.once.Do(func() { close(s.started) })
	return s.fakeExec.Execute(ctx, t)
}

// Calls start while planning goes on: the plan of a run sends a call it
// finds to run and can render, and the run counts it as its own, once.
// The plan waits, on its second call node, for the first node's call to
// start: without streaming dispatch no call starts before the plan ends.
func TestCallsStartWhilePlanning(t *testing.T) {
	dir := t.TempDir()
	store := cache.NewMemory()
	exec := &startSignal{fakeExec: newFakeExec(lists(map[string]string{"a": "alpha\nbeta\ngamma", "b": "delta"})), started: make(chan struct{})}
	var lists atomic.Int64
	e := &Engine{Store: store, Exec: exec}
	want := e.Plan(expExp(t, dir)).Summary // the plan alone, on the same empty cache
	g := expExp(t, dir)
	e.planResolve = func(i int32) {
		if g.Nodes[i].Inst.Address == listAddr && lists.Add(1) == 2 {
			select {
			case <-exec.started:
			case <-time.After(30 * time.Second): // a guard against a hang, not a measure
				t.Error("no call started while the plan went on")
			}
		}
	}
	e.planned = func() { exec.planned.Store(true) }
	sum := runOnce(t, e, g)
	if exec.planning.Load() < 1 {
		t.Fatal("every call waited for the plan to complete")
	}
	// Every call once, counted once; the plan said what the run did.
	if exec.count() != 6 || exec.maxPerKey() != 1 || sum.LLMCalls != 6 || sum.Requests != 6 || sum.Nodes.Ran != 8 || sum.Deduplicated != 0 {
		t.Fatalf("%d calls (max %d per key); summary %+v", exec.count(), exec.maxPerKey(), sum.Nodes)
	}
	if want.Nodes.ToRun != 2 || want.Estimate.LLMCalls != 2 {
		t.Fatalf("plan: %+v, estimate %+v", want.Nodes, want.Estimate)
	}
	// The early answers are records like any: the next run is warm.
	e.planResolve = nil
	sum = runOnce(t, e, expExp(t, dir))
	if exec.count() != 6 || sum.Nodes.Cached != 8 {
		t.Fatalf("warm: %d calls, %+v", exec.count(), sum.Nodes)
	}
}
