package engine

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
)

// walker visits the graph in dependency order, once for a plan (no model
// calls; compute nodes whose inputs are known are evaluated in memory so the
// plan sees early cutoff) and once for a run.
//
// A walk goes in rounds: it visits every node laid out so far, then lets the
// graph grow (instances whose inputs became final are laid out, Expander
// items whose inputs settled expand) and visits the new nodes, until nothing
// grows. Between rounds no goroutine touches the walker, so its per-node
// arrays can grow without locks.
type walker struct {
	g      *Graph
	store  cache.Store
	log    zerolog.Logger
	plan   bool
	verify bool // plan only: recompute cached compute nodes and compare
	// reportOnly (plan only) renders reports from the cache alone
	// (RenderReports): a node whose last run failed stays failed, and a
	// deterministic node that fails to compute is failed, so aggregates count
	// them as missing, as the run that left the cache did.
	reportOnly bool
	// checkRecords reads every memoised record, trusting none unread: the
	// cache lost records when it was opened.
	checkRecords bool
	expKey       string // prefix of latest-index addresses (latestPrefix)
	// prior is the latest-key prefix of the run this experiment most
	// likely was before a move or rename (priorPrefix), found once;
	// priorPath is where that experiment was.
	priorOnce        sync.Once
	prior, priorPath string
	// legacy is legacyPrefix when the cache holds latest keys of this
	// experiment's name under it (a cache from before experiment
	// identity), found once; "" otherwise.
	legacyOnce sync.Once
	legacy     string

	states    []nodeState
	remaining []int32
	// Ready nodes wait in two queues: nodes of instances that make calls
	// first, since calls are the critical path and cheap deterministic nodes
	// must never hold them back.
	readyCalls chan int32
	ready      chan int32
	finished   atomic.Int64
	total      int64
	done       chan struct{}

	// run only
	ctx        context.Context
	budget     *budget
	queues     map[string]chan task
	onProgress func(*Node, *nodeState)
	onResolve  func(i int32) // tests: the order nodes are resolved in
	flights    flights
	groups     map[int32]*sampleGroup // run only: samples sent as n choices (choices.go)
	// choiceGroups maps, in a plan, a call node to its n-choices group.
	choiceGroups map[int32][32]byte
	batchesOnce  sync.Once
	batching     map[string]bool // provider -> sends samples as n choices
	dmg          damage
	writes       chan *writeJob // nil: write in place
	writersWG    sync.WaitGroup
	errMu        sync.Mutex
	storeErr     error
	unsaved      atomic.Int64      // compute nodes whose record could not be written
	down         map[string]string // providers unavailable for the rest of the run -> why

	growDiags hcl.Diagnostics
	// onGrow is told how many nodes a grow added (between rounds), so a
	// progress report's total follows the graph.
	onGrow     func(added int)
	mismatches []VerifyMismatch // verify only
	verified   int              // verify only: compute nodes recomputed
	// resample, when set (VerifySample), collects the cached call nodes
	// whose answers may be asked again.
	resample *[]sampleCall

	internMu sync.Mutex
	interned map[string]string
	// provs interns the provenance of every node (provenance.go).
	provs *provTable
	// adopt is set on a plan walk that adopts previous-scheme records (adopt.go).
	adopt *adoption

	// epoch is the memo epoch this walk trusts and writes (memoEpoch).
	epoch string
	// memos, set on the plan of a run, rewrites the memos of cached nodes
	// found by rendering (memo.go); a run's own walk writes them in place.
	memos *memoWriter
	// rendered counts cached nodes found by rendering, not by their memo.
	rendered atomic.Int64
	// early, on a run and on its plan, sends calls while planning goes on
	// (early.go); nil: none.
	early *early
	// choiceRequests counts the n-choices requests answered (choices.go).
	choiceRequests atomic.Int64
	// act counts the run's work for an executor that sends calls in
	// rounds (rounds.go); nil otherwise.
	act *activity
}

func newWalker(g *Graph, store cache.Store, plan bool) *walker {
	return &walker{
		g: g, store: store, plan: plan, expKey: latestPrefix(g.Exp), epoch: memoEpoch(),
		states:    make([]nodeState, len(g.Nodes)),
		remaining: make([]int32, len(g.Nodes)),
		log:       zerolog.Nop(),
		interned:  map[string]string{},
		flights:   flights{m: map[string][]waiter{}, ran: map[string]bool{}},
		provs:     newProvTable(),
	}
}

// walk runs the traversal to completion, round by round. Nodes already
// settled (dataset items, and for a run the nodes its plan found cached) are
// not visited again.
func (w *walker) walk(resolvers int) {
	if resolvers <= 0 {
		resolvers = runtime.GOMAXPROCS(0)
	}
	from := 0
	for {
		w.walkRound(from, resolvers)
		if w.stopped() {
			return
		}
		if w.resetDamaged() {
			from = 0 // the reset nodes are anywhere in the graph
			continue
		}
		n := len(w.g.Nodes)
		added, diags := w.g.grow(w)
		w.growDiags = append(w.growDiags, diags...)
		if !added {
			return
		}
		grown := len(w.g.Nodes) - n
		if w.onGrow != nil {
			w.onGrow(grown)
		}
		w.states = append(w.states, make([]nodeState, grown)...)
		w.remaining = append(w.remaining, make([]int32, grown)...)
		from = n
	}
}

// walkRound visits the unvisited nodes from index from on. Nodes before from
// are settled: they were visited in earlier rounds.
func (w *walker) walkRound(from, resolvers int) {
	nodes := w.g.Nodes
	for i := from; i < len(nodes); i++ {
		if n := nodes[i]; n.Inst.source {
			st := &w.states[i]
			st.status, st.known, st.output, st.digest = StatusCached, true, n.output, n.outputDigest
		}
	}
	visit := func(i int32) bool { return w.states[i].status == StatusPending }
	w.total = 0
	w.finished.Store(0)
	for i := from; i < len(nodes); i++ {
		if visit(int32(i)) {
			w.total++
		}
	}
	if w.total == 0 {
		return
	}
	w.ready = make(chan int32, w.total)
	w.readyCalls = make(chan int32, w.total)
	w.done = make(chan struct{})
	for i := from; i < len(nodes); i++ {
		if !visit(int32(i)) {
			continue
		}
		pendingDeps := int32(0)
		for _, d := range nodes[i].Deps {
			if visit(d) {
				pendingDeps++
			}
		}
		w.remaining[i] = pendingDeps
		if pendingDeps == 0 {
			w.enqueue(int32(i))
		}
	}
	var wg sync.WaitGroup
	for r := 0; r < resolvers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select { // calls first
				case i := <-w.readyCalls:
					w.resolve(i)
					w.act.add(-1)
					continue
				default:
				}
				select {
				case i := <-w.readyCalls:
					w.resolve(i)
				case i := <-w.ready:
					w.resolve(i)
				case <-w.done:
					return
				}
				w.act.add(-1)
			}
		}()
	}
	<-w.done
	wg.Wait()
}

// stopped reports whether a run must not grow the graph any further: it was
// interrupted, ran out of budget or could not write the cache.
func (w *walker) stopped() bool {
	if w.plan {
		return false
	}
	return w.ctx.Err() != nil || w.budget.isExhausted() || w.storeError() != nil
}

func (w *walker) storeError() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.storeErr
}

// settled and output let the graph grow from what this walk knows.
func (w *walker) settled(i int32) bool {
	if int(i) >= len(w.states) {
		// Appended by this grow (an expander expanding on one that just
		// expanded): not visited yet, so not settled until the next round.
		return false
	}
	st := &w.states[i]
	switch st.status {
	case StatusPending:
		return false
	case StatusToRun:
		return st.known // a plan computed it in memory
	}
	return true
}

func (w *walker) output(i int32) ([]byte, error) {
	if !w.states[i].known {
		return nil, nil
	}
	return w.outputOf(i)
}

// finish marks node i settled and releases the dependents it was holding back.
func (w *walker) finish(i int32) {
	if w.groups != nil {
		w.leaveGroup(i) // a member that settles alone frees its group to go
	}
	if w.onProgress != nil {
		w.onProgress(w.g.Nodes[i], &w.states[i])
	}
	for _, j := range w.g.Dependents(int(i)) {
		if atomic.AddInt32(&w.remaining[j], -1) == 0 {
			w.enqueue(j)
		}
	}
	// total and done are read before the count: once the count reaches
	// total, the next round may reset them.
	total, done := w.total, w.done
	if w.finished.Add(1) == total {
		close(done)
	}
}

// enqueue hands a ready node to the resolvers: a node of an instance that
// makes calls goes ahead of deterministic ones.
func (w *walker) enqueue(i int32) {
	w.act.add(1)
	if inst := w.g.Nodes[i].Inst; inst.calls || inst.services {
		w.readyCalls <- i
		return
	}
	w.ready <- i
}

// outputOf returns node d's output, reading it from the cache when the walk
// only knew its digest (a memo hit). It is not kept: memory stays flat on
// warm runs, and only nodes that must run read their inputs.
func (w *walker) outputOf(d int32) ([]byte, error) {
	st := &w.states[d]
	if st.output != nil {
		return st.output, nil
	}
	rec, err := w.store.Get(st.key)
	if err != nil {
		return nil, err
	}
	return rec.Output, nil
}

func (w *walker) setStoreErr(err error) {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.storeErr == nil {
		w.storeErr = err
	}
}

// intern shares one string per model name across the nodes that name it.
func (w *walker) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	w.internMu.Lock()
	defer w.internMu.Unlock()
	if s, ok := w.interned[string(b)]; ok {
		return s
	}
	s := string(b)
	w.interned[s] = s
	return s
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
