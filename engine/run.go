package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
)

// RunOptions control one run.
type RunOptions struct {
	Offline    bool
	MaxCost    float64 // USD; 0: no limit
	ReportDir  string  // where report files go; "" means g.Exp.ResultsDir
	OnProgress func(total int) (report func(address string, status Status), grow func(added int))
	Variables  map[string]string
	GitCommit  string
	// VarValues and VarFiles go to the run record (and VarFiles to the
	// reports' provenance): see cache.RunRecord.
	VarValues map[string]string
	VarFiles  []cache.VarFile
	// Started is when the process started (for the whole wall time) and
	// LoadSeconds how long loading the experiment, its datasets and the
	// cache took; zero values leave them out.
	Started     time.Time
	LoadSeconds float64
	// Version is the ideaflow version, for the provenance of reports.
	Version string
	// AllowUnpriced starts a run with a MaxCost although some of its calls go
	// to models without a price (their cost is unknown): without it such a
	// run is refused before any call, since the budget could not bind them.
	AllowUnpriced bool
	// OnLock, when set, is given the lock of what a run that wrote its
	// reports rests on (lock.go), for the caller to write beside the experiment.
	OnLock func(*Lock)
}

// Run plans the graph, checks that every call it needs can be made (API keys
// present, or --offline satisfied), then runs it. Cached nodes found by the
// plan are not visited again. Every completed node is in the cache when Run
// returns, even when ctx is cancelled part-way.
func (e *Engine) Run(ctx context.Context, g *Graph, opts RunOptions) (*Summary, error) {
	if e.Exec == nil {
		return nil, errors.New("engine has no executor")
	}
	start := time.Now()
	if opts.Started.IsZero() {
		opts.Started = start
	}
	memos := newMemoWriter(e.Store)
	ahead := e.newEarly(ctx, g, opts)
	plan := e.plan(g, memos, ahead)
	if e.planned != nil {
		e.planned()
	}
	if plan.Diags.HasErrors() {
		ahead.stop()
		memos.stop()
		return nil, &InputError{Diags: plan.Diags}
	}
	if err := plan.checkCallable(opts.Offline, keysHere(e.Exec)); err != nil {
		ahead.stop()
		memos.stop()
		return nil, err
	}
	if opts.MaxCost > 0 && !opts.AllowUnpriced {
		if err := plan.checkBudgetBinds(opts.MaxCost); err != nil {
			ahead.stop()
			memos.stop()
			return nil, err
		}
	}
	planned := time.Now()
	ps := plan.Summary
	e.Log.Info().Str("experiment", g.Exp.Name).Int("nodes", ps.Nodes.Total).Int("cached", ps.Nodes.Cached).
		Int("to_run", ps.Nodes.ToRun).Int("est_llm_calls", ps.Estimate.LLMCalls).Float64("est_cost_usd", ps.Estimate.CostUSD).
		Msg("run planned")

	w := e.newWalker(g, false)
	w.ctx = ctx
	w.early = ahead
	w.budget = &budget{max: opts.MaxCost}
	w.act = newActivity(e.Exec)
	// The run takes over the plan's states: cached nodes stay settled, the
	// rest start afresh (a plan's in-memory results are not cache records).
	w.states, w.provs = plan.states, plan.provs
	plan.states = nil
	for i := range w.states {
		if w.states[i].status != StatusCached {
			w.states[i] = nodeState{}
		}
	}
	if opts.OnProgress != nil {
		total := 0
		for i, n := range g.Nodes {
			if !n.Inst.source && w.states[i].status != StatusCached {
				total++
			}
		}
		report, grow := opts.OnProgress(total)
		w.onProgress = func(n *Node, st *nodeState) { report(n.Address, st.status) }
		w.onGrow = grow
	}
	toRun := 0
	for i := range w.states {
		if w.states[i].status != StatusCached {
			toRun++
		}
	}
	e.startWorkers(w, toRun)
	w.planGroups(e.Exec)
	w.startWriters()
	w.walk(e.Resolvers)
	for _, q := range w.queues {
		close(q)
	}
	ahead.stop()
	ahead.settleUnclaimed(w)
	w.stopWriters()
	memosRewritten := memos.stop()
	sum := w.summarize()
	sum.Memo = MemoCounts{Rendered: plan.rendered + int(w.rendered.Load()), Rewritten: memosRewritten}
	sum.Repaired = w.dmg.fixed
	sum.Unsaved = int(w.unsaved.Load())
	sum.Unavailable = w.down
	sum.Interrupted = ctx.Err() != nil
	sum.BudgetExhausted = w.budget.exhausted
	ran := time.Now()
	if w.storeErr != nil {
		sum.Phases = Phases{Load: opts.LoadSeconds, Plan: planned.Sub(start).Seconds(), Run: ran.Sub(planned).Seconds()}
		sum.WallSeconds = ran.Sub(opts.Started).Seconds()
		return sum, fmt.Errorf("cache write failed: %w", w.storeErr)
	}
	if w.growDiags.HasErrors() {
		return sum, &InputError{Diags: w.growDiags}
	}
	sum.Warnings = w.growDiags
	paths, err := w.writeReports(opts.ReportDir, provenanceOf(g, sum, opts))
	sum.Reports = paths
	end := time.Now()
	sum.Phases = Phases{Load: opts.LoadSeconds, Plan: planned.Sub(start).Seconds(), Run: ran.Sub(planned).Seconds(), Reports: end.Sub(ran).Seconds()}
	sum.WallSeconds = end.Sub(opts.Started).Seconds()
	if err != nil {
		return sum, err
	}
	e.recordRun(g, w, sum, start, opts)
	if opts.OnLock != nil {
		opts.OnLock(lockOf(g, w.states, opts.Variables))
	}
	e.Log.Info().Str("experiment", g.Exp.Name).Int("cached", sum.Nodes.Cached).Int("ran", sum.Nodes.Ran).
		Int("failed", sum.Nodes.Failed).Int("skipped", sum.Nodes.Skipped).Int("llm_calls", sum.LLMCalls).Int("service_calls", sum.ServiceCalls).
		Int64("tokens_in", sum.Tokens.Input).Int64("tokens_out", sum.Tokens.Output).Float64("cost_usd", sum.CostUSD).
		Float64("wall_s", sum.WallSeconds).Bool("interrupted", sum.Interrupted).Msg("run finished")
	return sum, nil
}

// incomplete reports whether any node node i depends on, directly or not,
// was left undone by this run: interrupted, out of budget, stopped or never
// reached. Failed nodes were tried: a report counts them as missing.
func (w *walker) incomplete(i int32) bool {
	seen := map[int32]bool{i: true}
	stack := []int32{i}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range w.g.Nodes[j].Deps {
			if seen[d] {
				continue
			}
			seen[d] = true
			st := &w.states[d]
			switch {
			case st.status == StatusPending:
				return true
			case st.status == StatusSkipped && st.why.kind != skipInput:
				return true
			}
			stack = append(stack, d)
		}
	}
	return false
}

func (e *Engine) recordRun(g *Graph, w *walker, sum *Summary, start time.Time, opts RunOptions) {
	b, _ := json.Marshal(sum)
	rec := &cache.RunRecord{
		ID: fmt.Sprintf("%s-%d", g.Exp.Name, start.UnixNano()), Experiment: g.Exp.Name,
		ExperimentDigest: g.Exp.Source, Variables: opts.Variables, GitCommit: opts.GitCommit,
		Started: start.UTC(), Finished: time.Now().UTC(), Summary: b,
		ExperimentID: g.Exp.ID, ExperimentPath: g.Exp.Path, LatestPrefix: w.expKey, Blocks: g.Exp.Blocks,
		VarValues: opts.VarValues, VarFiles: opts.VarFiles,
	}
	if err := e.Store.PutRun(rec); errors.Is(err, cache.ErrReadOnly) {
		e.Log.Debug().Err(err).Msg("run record not written")
	} else if err != nil {
		e.Log.Warn().Err(err).Msg("could not write run record")
	}
}

// runMiss computes a compute node at once, or hands a call to its
// provider's queue unless the same key is already in flight, in which case
// the node waits for that call's result.
func (w *walker) runMiss(i int32, work *stages.Work, key string, parts []namedPart, inKey [32]byte) {
	n := w.g.Nodes[i]
	if work.Compute != nil {
		start := time.Now()
		out, err := work.Compute()
		if err != nil {
			w.fail(i, key, why(failPrepare, prepareError(err)), "", nil)
			return
		}
		w.complete(i, inKey, key, parts, &cache.Record{Output: out, Usage: cache.Usage{LatencyMS: time.Since(start).Milliseconds(), Attempts: 1}})
		return
	}
	if work.Call == nil && work.Service == nil {
		w.fail(i, key, why(failPrepare, "stage prepared no work (an internal error in the stage type)"), "", nil)
		return
	}
	if w.runReuse(i, work, key, parts, inKey) || !w.joinAnswer(i, work, key, parts, inKey) {
		return // derived from a stored answer, or waits for the one in flight
	}
	provider := w.states[i].provider
	q := w.queues[provider]
	if q == nil {
		w.fail(i, key, why(failConfig, fmt.Sprintf("%s uses provider %q, which has no client", n.Address, provider)), "", nil)
		return
	}
	j := w.flights.join(key, waiter{idx: i, inKey: inKey}, false)
	if j == landedHere {
		if w.lookup(i, work, key, inKey) {
			w.leaveGroup(i)
			return // answered by another node since this one looked
		}
		j = w.flights.join(key, waiter{idx: i, inKey: inKey}, true)
	}
	if j == waitInFlight {
		w.leaveGroup(i)
		return // another node with this key is in flight; it settles this one
	}
	t := task{idx: i, work: work, key: key, parts: parts, inKey: inKey}
	if w.joinGroup(t) {
		return // sent with its sibling samples once they are all prepared
	}
	w.act.add(1)
	q <- t
}

// complete stores a fresh result, then settles the node and every node
// that waited for the same key.
//
// A call's result is settled only once its record is durable: a crash must
// not leave a dependent's record without the answer it was built on (the
// answer would be asked again, and could differ). A compute node is settled
// at once and written behind: it is pure and cheap, so if a crash loses its
// record the next run recomputes the same output, and its dependents' keys
// (built on output digests) still match. Either way the write leaves the
// caller's goroutine, so a dispatch slot or a resolver is free at once.
func (w *walker) complete(i int32, inKey [32]byte, key string, parts []namedPart, rec *cache.Record) {
	n := w.g.Nodes[i]
	st := &w.states[i]
	fillRecord(n, key, parts, rec)
	w.noteRecord(i, key, rec)
	// Marked before the record can be read: a node that finds it in the
	// cache from now on counts as ran here (no call of its own), not cached.
	w.flights.markRan(key)
	job := &writeJob{idx: i, inKey: inKey, rec: rec, memo: w.encodeMemo(st), settleAfter: st.isCall || st.isService}
	if !job.settleAfter {
		w.settle(i, rec)
	}
	if w.writes == nil { // no writer pool: write in place
		w.write(job)
		return
	}
	w.act.add(1)
	w.writes <- job
}

// completeDurable settles call node i with a record already durable (an
// early call's, early.go): as complete, without the write.
func (w *walker) completeDurable(i int32, key string, rec *cache.Record) {
	w.noteRecord(i, key, rec)
	w.flights.markRan(key)
	w.settle(i, rec)
}

// noteRecord sets node i's state from its fresh record: key, digest, who
// answered, what it rests on, its drop.
func (w *walker) noteRecord(i int32, key string, rec *cache.Record) {
	st := &w.states[i]
	var digest [32]byte
	if d, err := hex.DecodeString(rec.OutputDigest); err == nil && len(d) == 32 {
		copy(digest[:], d)
	} else {
		digest = sha256.Sum256(rec.Output)
	}
	st.key, st.digest = key, digest
	if rec.Answerer != nil {
		// A call's record says who answered it; its node rests on that
		// answerer and on what its inputs rest on.
		st.answerer = w.provs.answerer(llmAnswerer(*rec.Answerer))
		st.prov = w.provs.with(w.inputProv(i), st.answerer)
	} else {
		// A compute record says what fed it, as its inputs' records did.
		st.prov = w.inputProv(i)
		rec.Fed, rec.Synthetic = cacheAnswerers(st.prov.answerersOf()), st.prov.synthetic()
	}
	st.servedModel, st.fingerprint = rec.ServedModel, rec.Fingerprint
	noteDrop(st, rec.Output)
}

// keepOutputBytes bounds the outputs a run keeps in memory once their
// records are durable; see keepOutput.
const keepOutputBytes = 64 << 10

// keepOutput is what of a node's output the walk keeps in memory. A large
// output whose record is durable is read back from the cache by the few
// dependents that need it (outputOf): a run over BERTScore's token vectors,
// hundreds of KiB a text, held every one of them, past 15 GB at IdeaBench's
// full size. A plan keeps every output: it writes none.
func (w *walker) keepOutput(out []byte, durable bool) []byte {
	if w.plan || !durable || len(out) <= keepOutputBytes {
		return out
	}
	return nil
}

// settle marks node i ran with rec's output and releases it and the nodes
// that waited for its key.
func (w *walker) settle(i int32, rec *cache.Record) {
	st := &w.states[i]
	// A call's record is durable before it settles; a compute node's is
	// written behind and must stay in memory.
	out := w.keepOutput(rec.Output, st.isCall || st.isService)
	st.status, st.known, st.output = StatusRan, true, out
	if rec.Usage != (cache.Usage{}) || st.cost != nil {
		st.costsW().usage = rec.Usage
	}
	w.flights.markRan(rec.Key)
	waiters := w.flights.land(rec.Key)
	w.finish(i)
	for _, wt := range waiters {
		ws := &w.states[wt.idx]
		ws.status, ws.known, ws.dedup = StatusRan, true, true
		ws.key, ws.digest, ws.output = rec.Key, st.digest, out
		ws.answerer, ws.servedModel, ws.fingerprint = st.answerer, rec.ServedModel, rec.Fingerprint
		ws.prov = w.provs.with(w.inputProv(wt.idx), st.answerer)
		ws.dropped, ws.dropWhy = st.dropped, st.dropWhy
		w.setMemo(wt.inKey, ws)
		w.markLatest(w.g.Nodes[wt.idx], rec.Key)
		w.finish(wt.idx)
	}
}
