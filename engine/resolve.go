package engine

import (
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
			w.ranHereOrEarly(st)
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
		if w.early != nil && st.status == StatusToRun {
			w.early.offer(w, i, work, key, parts, inKey)
		}
		return
	}
	w.runMiss(i, work, key, parts, inKey)
}

// ranHereOrEarly marks a node a run found in the cache as ran when this run
// made its record: an early call of the plan's (early.go), counted as this
// node's call, or another node's call with the same key (no call of its
// own), as the plan said.
func (w *walker) ranHereOrEarly(st *nodeState) {
	if u, earlier, first, ok := w.early.claim(st.key); ok {
		st.status = StatusRan
		if first {
			st.costsW().usage = u
			st.earlier = earlier
		} else {
			st.dedup = st.isCall || st.isService
		}
		w.flights.markRan(st.key)
		return
	}
	if w.flights.ranHere(st.key) {
		st.status, st.dedup = StatusRan, st.isCall || st.isService
	}
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
	st.servedModel, st.fingerprint = rec.ServedModel, rec.Fingerprint
	noteDrop(st, rec.Output)
	if d, err := hex.DecodeString(rec.OutputDigest); err == nil && len(d) == 32 {
		copy(st.digest[:], d)
	} else {
		st.digest = sha256.Sum256(rec.Output)
	}
	if w.verify && work.Compute != nil {
		w.verifyCompute(n, work, rec)
	} else if w.verify && w.resample != nil && work.Call != nil {
		w.noteSampleCall(n, work, rec)
	}
	if !w.early.sent(key) {
		// Found by rendering its request: a cached node without a valid
		// memo. A record an early call of this run wrote is no such node
		// (it ran here; ranHereOrEarly counts it), whichever walk meets it
		// before its memo is durable.
		w.rendered.Add(1)
	}
	if w.memos != nil {
		// The plan of a run: the run would settle this node from the plan
		// and never write its memo, so every later warm run would render
		// it again (after each rebuild, before memos had epochs).
		w.memos.put(inKey, w.encodeMemo(st))
	}
	if !w.plan {
		w.setMemo(inKey, st)
		w.markLatest(n, key)
		w.ranHereOrEarly(st)
	}
	w.finish(i)
	return true
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
			st.costsW().answered++
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
