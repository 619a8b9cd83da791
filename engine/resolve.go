package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// resolve settles node i, in phases:
//
//  1. inputDigests: the digests of its inputs' outputs (or it settles at
//     once: an input failed, or in a plan an input must run first);
//  2. the memo: input state -> key, so a warm node is settled without
//     rendering a prompt or loading an input;
//  3. loadInputs + Prepare: the work (call, service or compute) and its key;
//  4. lookup: a cache hit settles it;
//  5. a miss: a plan estimates (and evaluates compute nodes in memory); a
//     run computes at once or hands the call to its provider's queue.
func (w *walker) resolve(i int32) {
	if w.onResolve != nil {
		w.onResolve(i)
	}
	n := w.g.Nodes[i]
	st := &w.states[i]
	in, ok := w.inputDigests(i)
	if !ok {
		return
	}
	inKey := inputKey(n, in)
	if !w.verify && w.memoHit(st, inKey) && w.readable(i) {
		st.prov = w.provs.with(in.union, st.answerer)
		if !w.plan {
			w.markLatest(n, st.key)
			if w.flights.ranHere(st.key) {
				st.status, st.dedup = StatusRan, st.isCall || st.isService
			}
		}
		w.finish(i)
		return
	}
	inputs, damaged, err := w.loadInputs(n)
	if damaged {
		// An input's record is damaged: it is recomputed in the next round,
		// and this node with it.
		st.status, st.why = StatusSkipped, why(skipInput, "a damaged cache record (recomputing)")
		w.finish(i)
		return
	}
	if err != nil {
		w.fail(i, "", why(failInput, err.Error()), "", nil)
		return
	}
	work, err := n.Spec.Prepare(inputs)
	if err != nil {
		w.fail(i, "", why(failPrepare, prepareError(err)), "", nil)
		return
	}
	describe(st, work)
	// Until a record says who answered, the node rests on its inputs'
	// answerers (a plan adds who will be asked: planMiss).
	st.prov, st.answerer = in.union, nil
	parts := keyParts(n, work, in)
	key := keyOf(parts)
	st.key = key
	st.answerKey = answerKeyOf(n, work, in)
	if w.lookup(i, work, key, inKey) {
		return
	}
	if w.adopt != nil && w.adoptLookup(i, work, key, parts, in) {
		return
	}
	if w.plan {
		w.planMiss(i, work, key, parts)
		return
	}
	w.runMiss(i, work, key, parts, inKey)
}

// inputDigests gathers node i's input digests and provenance. When the
// node cannot be prepared (an input failed, or a plan's input must run
// first) it settles the node and returns false.
func (w *walker) inputDigests(i int32) (keyInputs, bool) {
	n := w.g.Nodes[i]
	st := &w.states[i]
	digests := make([][32]byte, len(n.Deps))
	provs := make([]*provenance, len(n.Deps))
	for k, d := range n.Deps {
		ds := &w.states[d]
		switch {
		case ds.known:
			digests[k], provs[k] = ds.digest, ds.prov
		case w.plan && ds.status == StatusToRun:
			st.status, st.why = StatusToRun, why(planUpstreamRuns, "")
			st.isCall, st.isService = n.Inst.calls, n.Inst.services
			w.estimateUnprepared(n, st)
			w.finish(i)
			return keyInputs{}, false
		case n.Spec.AllowMissing:
			digests[k] = missingDigest
		default:
			st.status = StatusSkipped
			st.why = why(skipInput, w.g.Nodes[d].Address)
			w.finish(i)
			return keyInputs{}, false
		}
	}
	return keyInputs{digests: digests, provs: provs, union: w.provs.unionAll(provs)}, true
}

// inputProv is the provenance of node i's settled inputs.
func (w *walker) inputProv(i int32) *provenance {
	var out *provenance
	for _, d := range w.g.Nodes[i].Deps {
		if ds := &w.states[d]; ds.known && ds.prov != out {
			out = w.provs.union(out, ds.prov)
		}
	}
	return out
}

// loadInputs reads the outputs of node n's inputs, for Prepare. damaged
// reports an input whose record could not be read intact (noted for repair).
func (w *walker) loadInputs(n *Node) (in []stages.In, damaged bool, err error) {
	in = make([]stages.In, len(n.Deps))
	for k, d := range n.Deps {
		dn := w.g.Nodes[d]
		in[k] = stages.In{Dep: n.Spec.Deps[k], Node: stages.NodeInfo{Item: dn.Spec.Item, Slot: dn.Spec.Slot, Label: dn.Spec.Label}, From: dn.Inst.Up}
		if !w.states[d].known {
			continue
		}
		in[k].Provenance = w.states[d].prov.view()
		out, err := w.outputOf(d)
		if err != nil {
			if isDamaged(err) && !dn.Inst.source {
				w.noteDamaged(d)
				return nil, true, nil
			}
			return nil, false, fmt.Errorf("%s: %w", dn.Address, err)
		}
		in[k].Output = n.Inst.projected(in[k].Input, out)
	}
	return in, false, nil
}

// readable checks that the record a memo names reads intact, for a node
// whose files the run writes (reports are read after the walk, when a
// damaged record could no longer be recomputed) and, when the cache said on
// opening that it lost records, for every node.
func (w *walker) readable(i int32) bool {
	n := w.g.Nodes[i]
	if !n.Spec.WritesFiles && !w.checkRecords {
		return true
	}
	if _, err := w.store.Get(w.states[i].key); err != nil {
		w.states[i] = nodeState{}
		return false
	}
	return true
}

// describe records what kind of work a prepared node does.
func describe(st *nodeState, work *stages.Work) {
	switch {
	case work.Call != nil:
		st.isCall = true
		st.provider = work.Call.Model.Provider
		st.wantModel = work.Call.Request.Model
	case work.Service != nil:
		st.isService = true
		st.provider = work.Service.Model.Provider
		st.wantModel = work.Service.Request.Model
	}
}

// lookup settles node i from the cache when its key is there. A damaged
// record is a miss: recomputing the node replaces it.
func (w *walker) lookup(i int32, work *stages.Work, key string, inKey [32]byte) bool {
	n := w.g.Nodes[i]
	st := &w.states[i]
	if w.distrusted(key) {
		return false
	}
	rec, err := w.store.Get(key)
	switch {
	case err == nil:
	case errors.Is(err, cache.ErrCorrupt):
		w.log.Warn().Str("node", n.Address).Err(err).Msg("corrupt cache record; recomputing")
		w.dmg.mu.Lock()
		w.dmg.fixed++
		w.dmg.mu.Unlock()
		return false
	case errors.Is(err, cache.ErrNotFound):
		return false
	default:
		w.fail(i, key, why(failCache, "read: "+err.Error()), "", nil)
		return true
	}
	st.status, st.known, st.output = StatusCached, true, w.keepOutput(rec.Output, true)
	if st.isCall || st.isService {
		// Who answered, as the record says; the key names the same
		// answerer, unless the record was put there by hand.
		st.answerer = w.provs.answerer(recordAnswerer(rec))
		st.prov = w.provs.with(st.prov, st.answerer)
	}
	st.servedModel = rec.ServedModel
	noteDrop(st, rec.Output)
	if d, err := hex.DecodeString(rec.OutputDigest); err == nil && len(d) == 32 {
		copy(st.digest[:], d)
	} else {
		st.digest = sha256.Sum256(rec.Output)
	}
	if w.verify && work.Compute != nil {
		w.verifyCompute(n, work, rec)
	}
	w.rendered.Add(1)
	if w.memos != nil {
		// The plan of a run: the run would settle this node from the plan
		// and never write its memo, so every later warm run would render
		// it again (after each rebuild, before memos had epochs).
		w.memos.put(inKey, w.encodeMemo(st))
	}
	if !w.plan {
		w.setMemo(inKey, st)
		w.markLatest(n, key)
		if w.flights.ranHere(key) {
			// Computed by another node in this run: it ran, as the plan
			// said; a call node made no call of its own.
			st.status, st.dedup = StatusRan, st.isCall || st.isService
		}
	}
	w.finish(i)
	return true
}

// planMiss settles a node a plan found missing from the cache.
func (w *walker) planMiss(i int32, work *stages.Work, key string, parts []namedPart) {
	n := w.g.Nodes[i]
	st := &w.states[i]
	st.status = StatusToRun
	st.why = w.whyDirty(n, key, parts)
	if m := workModel(work); m != nil {
		// Who will be asked: the model's provider (a record will say).
		st.answerer = w.provs.answerer(m.Answerer)
		st.prov = w.provs.with(st.prov, st.answerer)
	}
	if w.reportOnly && work.Compute == nil && st.why.kind == planFailedLast {
		st.status, st.why = StatusFailed, why(failCall, st.why.detail)
		w.finish(i)
		return
	}
	switch {
	case work.Compute != nil:
		// Compute nodes are cheap and pure: evaluate them now so the plan
		// knows their output and can show early cutoff downstream.
		out, err := work.Compute()
		if err == nil {
			st.known, st.output, st.digest = true, out, sha256.Sum256(out)
			noteDrop(st, out)
		} else if w.reportOnly {
			st.status, st.why = StatusFailed, why(failPrepare, prepareError(err))
		}
	case work.Call != nil && w.planReuse(i, work):
		// Its answer is cached under the answer key: the run derives the
		// output from it, with no call, and so does the plan.
	case work.Call != nil:
		var exact bool
		st.estIn, exact, st.estOut, st.estCost = estimateCallExact(work.Call.Model, work.Call.Request)
		st.estApprox = !exact
		w.notePlanChoice(i, work)
	case work.Service != nil:
		st.estIn, st.estCost = estimateService(work.Service)
	}
	w.finish(i)
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
	digest := sha256.Sum256(rec.Output)
	rec.Key = key
	rec.Stage = n.Inst.Address
	rec.Address = n.Address
	rec.OutputDigest = hex.EncodeToString(digest[:])
	rec.Parts = cacheParts(append(parts[:len(parts):len(parts)], n.Inst.about...))
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = time.Now().UTC()
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
	st.servedModel = rec.ServedModel
	noteDrop(st, rec.Output)
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
	w.writes <- job
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
	st.usage = rec.Usage
	w.flights.markRan(rec.Key)
	waiters := w.flights.land(rec.Key)
	w.finish(i)
	for _, wt := range waiters {
		ws := &w.states[wt.idx]
		ws.status, ws.known, ws.dedup = StatusRan, true, true
		ws.key, ws.digest, ws.output = rec.Key, st.digest, out
		ws.answerer, ws.servedModel = st.answerer, rec.ServedModel
		ws.prov = w.provs.with(w.inputProv(wt.idx), st.answerer)
		ws.dropped, ws.dropWhy = st.dropped, st.dropWhy
		w.setMemo(wt.inKey, ws)
		w.markLatest(w.g.Nodes[wt.idx], rec.Key)
		w.finish(wt.idx)
	}
}

// fail settles node i as failed (recording the failure for a later plan)
// and every node that waited for the same key with it.
func (w *walker) fail(i int32, key string, r reason, raw string, attempts []cache.Attempt) {
	n := w.g.Nodes[i]
	st := &w.states[i]
	st.status = StatusFailed
	st.why = r
	for _, a := range attempts {
		// An answer came back (HTTP 200, or the mock's) and was refused;
		// transport failures (429, 5xx, timeouts) are retries, not calls.
		if a.Status == 200 || (a.Status == 0 && a.Raw != "") {
			st.answered++
		}
	}
	w.landAnswer(i)
	msg := r.String()
	w.log.Warn().Str("node", n.Address).Str("error", msg).Msg("node failed")
	if key != "" && !w.plan && r.kind != failCache {
		if ferr := w.store.PutFailure(&cache.Failure{
			Key: key, Stage: n.Inst.Address, Address: n.Address, Error: msg, Raw: raw,
			Attempts: attempts, CreatedAt: time.Now().UTC(),
		}); ferr != nil && !errors.Is(ferr, cache.ErrReadOnly) {
			w.setStoreErr(ferr)
		}
	}
	var waiters []waiter
	if key != "" && !w.plan {
		waiters = w.flights.land(key)
	}
	w.finish(i)
	for _, wt := range waiters {
		ws := &w.states[wt.idx]
		ws.status, ws.why, ws.dedup = StatusFailed, r, true
		w.finish(wt.idx)
	}
}

// skip settles node i (and its waiters) as not run.
func (w *walker) skip(i int32, key string, r reason) {
	st := &w.states[i]
	w.landAnswer(i)
	st.status, st.why = StatusSkipped, r
	waiters := w.flights.land(key)
	w.finish(i)
	for _, wt := range waiters {
		ws := &w.states[wt.idx]
		ws.status, ws.why = StatusSkipped, r
		w.finish(wt.idx)
	}
}

// markLatest records key as the one last computed at the node's address, so a
// later plan can explain a miss. It writes only when the key changed.
func (w *walker) markLatest(n *Node, key string) {
	addr := w.expKey + n.Address
	if old, ok, err := w.store.Latest(addr); err == nil && ok && old == key {
		return
	}
	if err := w.store.SetLatest(addr, key); err != nil && !errors.Is(err, cache.ErrReadOnly) {
		w.setStoreErr(err)
	}
}

func (w *walker) whyDirty(n *Node, key string, parts []namedPart) reason {
	if f, err := w.store.Failure(key); err == nil {
		return why(planFailedLast, f.Error)
	}
	old, ok, err := w.store.Latest(w.expKey + n.Address)
	if err == nil && !ok {
		if p := w.priorPrefix(); p != "" {
			old, ok, err = w.store.Latest(p + n.Address)
		}
	}
	if err == nil && !ok {
		if p := w.legacyIndex(); p != "" {
			if k, found, lerr := w.store.Latest(p + n.Address); lerr == nil && found && k == keyOfFormat(keyFormatV1, v1Parts(parts)) {
				return why(planOldScheme, "")
			}
		}
	}
	if err != nil || !ok {
		return why(planNew, "")
	}
	if old == key {
		return why(planEvicted, "")
	}
	oldParts, err := w.store.Parts(old)
	if err != nil {
		return why(planChanged, "key changed")
	}
	switch {
	case oldScheme(oldParts):
		return why(planOldScheme, "")
	case onlyAnswererDiffers(oldParts, parts):
		// The cached answer would serve, were it the same answerer's.
		r := why(planAnswerer, explain(oldParts, parts, n.Inst.about))
		r.from = answererOfParts(oldParts)
		return r
	}
	return why(planChanged, explain(oldParts, parts, n.Inst.about))
}

// guessWork says what an instance's nodes will likely do before they can be
// prepared (the stage type cannot say until its inputs exist): an instance
// with a model param calls it, as a service call when the param says so
// (stages.Param.Service) or the model's provider kind does not chat, else as
// a chat call.
func (g *Graph) guessWork(inst *Instance) (call, service bool) {
	m := modelOf(inst)
	if m == nil {
		return false, false
	}
	if inst.modelService {
		return false, true
	}
	if p := g.Exp.Providers[m.Provider]; p != nil {
		if k, ok := llm.LookupKind(p.Kind); ok && !k.Chat {
			return false, true
		}
	}
	return true, false
}

// VerifyMismatch is a cached deterministic node whose recomputed output
// differs from the cache: a stage changed its outputs without a Version bump.
type VerifyMismatch struct {
	Address string `json:"address"`
	Key     string `json:"key"`
	Error   string `json:"error,omitempty"` // recomputing failed
}

func (w *walker) verifyCompute(n *Node, work *stages.Work, rec *cache.Record) {
	out, err := work.Compute()
	w.errMu.Lock()
	defer w.errMu.Unlock()
	w.verified++
	switch {
	case err != nil:
		w.mismatches = append(w.mismatches, VerifyMismatch{Address: n.Address, Key: rec.Key, Error: err.Error()})
	case !bytes.Equal(out, rec.Output):
		w.mismatches = append(w.mismatches, VerifyMismatch{Address: n.Address, Key: rec.Key})
	}
}
