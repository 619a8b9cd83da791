package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// walker visits the graph in dependency order, once for a plan (no model
// calls; compute nodes whose inputs are known are evaluated in memory so the
// plan sees early cutoff) and once for a run.
type walker struct {
	g      *Graph
	store  cache.Store
	log    zerolog.Logger
	plan   bool
	expKey string // prefix of latest-index addresses

	states    []nodeState
	remaining []int32
	ready     chan int32
	finished  atomic.Int64
	total     int64
	done      chan struct{}

	// run only
	ctx        context.Context
	budget     *budget
	queues     map[string]chan task
	onProgress func(*Node, *nodeState)
	errMu      sync.Mutex
	storeErr   error

	internMu sync.Mutex
	interned map[string]string
}

type task struct {
	idx   int32
	work  *stages.Work
	key   string
	parts []namedPart
	inKey [32]byte
}

func newWalker(g *Graph, store cache.Store, plan bool) *walker {
	w := &walker{
		g: g, store: store, plan: plan, expKey: g.Exp.Name + ":",
		states:    make([]nodeState, len(g.Nodes)),
		remaining: make([]int32, len(g.Nodes)),
		ready:     make(chan int32, len(g.Nodes)),
		done:      make(chan struct{}),
		log:       zerolog.Nop(),
		interned:  map[string]string{},
	}
	return w
}

// walk runs the traversal to completion. Nodes already settled (dataset
// items, and for a run the nodes its plan found cached) are not visited again.
func (w *walker) walk(resolvers int) {
	if resolvers <= 0 {
		resolvers = runtime.GOMAXPROCS(0)
	}
	for i, n := range w.g.Nodes {
		if n.Inst.source {
			st := &w.states[i]
			st.status, st.known, st.output, st.digest = StatusCached, true, n.output, n.outputDigest
		}
	}
	settled := func(i int32) bool { return w.g.Nodes[i].Inst.source || w.states[i].status == StatusCached }
	for i := range w.g.Nodes {
		if settled(int32(i)) {
			continue
		}
		w.total++
	}
	if w.total == 0 {
		return
	}
	for i, n := range w.g.Nodes {
		if settled(int32(i)) {
			continue
		}
		pendingDeps := int32(0)
		for _, d := range n.Deps {
			if !settled(d) {
				pendingDeps++
			}
		}
		w.remaining[i] = pendingDeps
		if pendingDeps == 0 {
			w.ready <- int32(i)
		}
	}
	var wg sync.WaitGroup
	for r := 0; r < resolvers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case i := <-w.ready:
					w.resolve(i)
				case <-w.done:
					return
				}
			}
		}()
	}
	<-w.done
	wg.Wait()
}

// finish marks node i settled and releases the dependents it was holding back.
func (w *walker) finish(i int32) {
	if w.onProgress != nil {
		w.onProgress(w.g.Nodes[i], &w.states[i])
	}
	for _, j := range w.g.Dependents(int(i)) {
		if atomic.AddInt32(&w.remaining[j], -1) == 0 {
			w.ready <- j
		}
	}
	if w.finished.Add(1) == w.total {
		close(w.done)
	}
}

// resolve gathers node i's input digests and first looks for a memo of the
// node's key under those inputs (no prompt rendering, no output loading: the
// warm path). On a memo miss it loads the inputs, prepares the work, computes
// the key and looks it up; a miss is computed at once (compute nodes) or
// handed to the provider's queue (model nodes).
func (w *walker) resolve(i int32) {
	n := w.g.Nodes[i]
	st := &w.states[i]
	digests := make([][32]byte, len(n.Deps))
	for k, d := range n.Deps {
		ds := &w.states[d]
		switch {
		case ds.known:
			digests[k] = ds.digest
		case w.plan && ds.status == StatusToRun:
			st.status, st.reason = StatusToRun, "upstream will run"
			st.isCall = guessCall(n)
			w.estimateUnprepared(n, st)
			w.finish(i)
			return
		case n.Spec.AllowMissing:
			digests[k] = missingDigest
		default:
			st.status = StatusSkipped
			st.reason = "input failed or was skipped: " + w.g.Nodes[d].Address
			w.finish(i)
			return
		}
	}
	inKey := inputKey(n, digests)
	if w.memoHit(st, inKey) {
		if !w.plan {
			w.markLatest(n, st.key)
		}
		w.finish(i)
		return
	}

	in := make([]stages.In, len(n.Deps))
	for k, d := range n.Deps {
		in[k] = stages.In{Dep: n.Spec.Deps[k], Node: stages.NodeInfo{Item: w.g.Nodes[d].Spec.Item, Slot: w.g.Nodes[d].Spec.Slot}}
		if !w.states[d].known {
			continue
		}
		out, err := w.outputOf(d)
		if err != nil {
			w.fail(i, "", fmt.Errorf("load input %s: %w", w.g.Nodes[d].Address, err), "", nil)
			return
		}
		in[k].Output = out
	}
	work, err := n.Spec.Prepare(in)
	if err != nil {
		w.fail(i, "", fmt.Errorf("prepare: %w", err), "", nil)
		return
	}
	st.isCall = work.Call != nil
	if work.Call != nil {
		st.provider = work.Call.Model.Provider
		st.wantModel = work.Call.Request.Model
	}
	parts := keyParts(n, work, digests)
	key := keyOf(parts)
	st.key = key
	if rec, err := w.store.Get(key); err == nil {
		st.status, st.known, st.output = StatusCached, true, rec.Output
		st.synthetic = rec.Synthetic
		st.servedModel = rec.ServedModel
		if d, err := hex.DecodeString(rec.OutputDigest); err == nil && len(d) == 32 {
			copy(st.digest[:], d)
		} else {
			st.digest = sha256.Sum256(rec.Output)
		}
		w.setMemo(inKey, st)
		if !w.plan {
			w.markLatest(n, key)
		}
		w.finish(i)
		return
	} else if errors.Is(err, cache.ErrCorrupt) {
		// A damaged record is recomputed, which repairs it.
		w.log.Warn().Str("node", n.Address).Err(err).Msg("corrupt cache record; recomputing")
	} else if !errors.Is(err, cache.ErrNotFound) {
		w.fail(i, key, fmt.Errorf("read cache: %w", err), "", nil)
		return
	}

	if w.plan {
		st.status = StatusToRun
		st.reason = w.whyDirty(n, key, parts)
		if work.Compute != nil {
			// Compute nodes are cheap and pure: evaluate them now so the plan
			// knows their output and can show early cutoff downstream.
			if out, err := work.Compute(); err == nil {
				st.known, st.output, st.digest = true, out, sha256.Sum256(out)
			}
		} else {
			w.estimate(work.Call, st)
		}
		w.finish(i)
		return
	}
	if work.Compute != nil {
		start := time.Now()
		out, err := work.Compute()
		if err != nil {
			w.fail(i, key, err, "", nil)
			return
		}
		w.complete(i, inKey, key, parts, &cache.Record{Output: out, Usage: cache.Usage{LatencyMS: time.Since(start).Milliseconds(), Attempts: 1}})
		return
	}
	q := w.queues[work.Call.Model.Provider]
	if q == nil {
		w.fail(i, key, fmt.Errorf("model %s uses provider %q, which has no client", work.Call.Model.Address, work.Call.Model.Provider), "", nil)
		return
	}
	q <- task{idx: i, work: work, key: key, parts: parts, inKey: inKey}
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

// complete stores a fresh result durably, then releases dependents.
func (w *walker) complete(i int32, inKey [32]byte, key string, parts []namedPart, rec *cache.Record) {
	n := w.g.Nodes[i]
	st := &w.states[i]
	digest := sha256.Sum256(rec.Output)
	rec.Key = key
	rec.Stage = n.Inst.Address
	rec.Address = n.Address
	rec.OutputDigest = hex.EncodeToString(digest[:])
	rec.Parts = cacheParts(parts)
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = time.Now().UTC()
	}
	st.key, st.digest = key, digest
	st.synthetic = rec.Synthetic
	st.servedModel = rec.ServedModel
	// One durable write holds the record, the latest key at this address and
	// the memo: a crash leaves all three or none.
	if err := w.store.PutIndexed(rec, w.expKey+n.Address, hex.EncodeToString(inKey[:]), encodeMemo(st)); err != nil {
		w.setStoreErr(err)
		w.fail(i, key, fmt.Errorf("write cache: %w", err), "", nil)
		return
	}
	if _, err := w.store.Failure(key); err == nil {
		_ = w.store.DeleteFailure(key)
	}
	st.status, st.known, st.output = StatusRan, true, rec.Output
	st.usage = rec.Usage
	w.finish(i)
}

func (w *walker) fail(i int32, key string, err error, raw string, attempts []cache.Attempt) {
	n := w.g.Nodes[i]
	st := &w.states[i]
	st.status = StatusFailed
	st.reason = err.Error()
	var pe *llm.ParseError
	if raw == "" && errors.As(err, &pe) {
		raw = pe.Raw
	}
	w.log.Warn().Str("node", n.Address).Err(err).Msg("node failed")
	if key != "" && !w.plan {
		if ferr := w.store.PutFailure(&cache.Failure{
			Key: key, Stage: n.Inst.Address, Address: n.Address, Error: err.Error(), Raw: raw,
			Attempts: attempts, CreatedAt: time.Now().UTC(),
		}); ferr != nil {
			w.setStoreErr(ferr)
		}
	}
	w.finish(i)
}

func (w *walker) skip(i int32, reason string) {
	st := &w.states[i]
	st.status, st.reason = StatusSkipped, reason
	w.finish(i)
}

func (w *walker) setStoreErr(err error) {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.storeErr == nil {
		w.storeErr = err
	}
}

// markLatest records key as the one last computed at the node's address, so a
// later plan can explain a miss. It writes only when the key changed.
func (w *walker) markLatest(n *Node, key string) {
	addr := w.expKey + n.Address
	if old, ok, err := w.store.Latest(addr); err == nil && ok && old == key {
		return
	}
	if err := w.store.SetLatest(addr, key); err != nil {
		w.setStoreErr(err)
	}
}

func (w *walker) whyDirty(n *Node, key string, parts []namedPart) string {
	if f, err := w.store.Failure(key); err == nil {
		return "failed last run (" + shorten(f.Error, 60) + "); will retry"
	}
	old, ok, err := w.store.Latest(w.expKey + n.Address)
	if err != nil || !ok {
		return "new"
	}
	if old == key {
		return "evicted from cache"
	}
	oldParts, err := w.store.Parts(old)
	if err != nil {
		return "key changed"
	}
	return explain(oldParts, parts)
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// guessCall says whether an unprepared node will likely make a model call:
// its instance has a model parameter.
func guessCall(n *Node) bool {
	for _, v := range n.Inst.Params {
		switch v.(type) {
		case *stages.Model, []*stages.Model:
			return true
		}
	}
	return false
}
