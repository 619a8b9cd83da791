package engine

import (
	"crypto/sha256"
	"encoding/json"
	"sync"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Independent samples as n choices. The samples of one item's prompt are
// nodes of their own (raising n keeps the first ones cached), yet they send
// the same input n times. For a provider whose executor batches samples
// (n_choices), the run gathers the to-run samples of each (instance, item,
// inputs) and, once all have been prepared, sends those whose requests are
// equal but for the sample index as one request with n choices. Each answer
// is cached as its own sample node under its own key: how samples were
// fetched is operational, like concurrency. A seeded request is never
// batched: seed+i is part of sample i's request. Answers the endpoint did
// not give (it ignored n) or that do not parse are asked for one by one.

// sampleGroup is the to-run call nodes of one instance and item that share
// their inputs: the samples of one prompt, if their requests agree.
type sampleGroup struct {
	mu       sync.Mutex
	expected int // members not settled from the cache when the run began
	settled  int // members that settled without joining (cached after all, failed, skipped)
	joined   []task
	done     bool
}

// planGroups assigns the run's to-run call nodes to sample groups, for the
// providers the executor batches.
func (w *walker) planGroups(exec Executor) {
	sb, ok := exec.(SampleBatcher)
	if !ok {
		return
	}
	type gk struct {
		inst *Instance
		item string
		deps string
	}
	byKey := map[gk][]int32{}
	for i, n := range w.g.Nodes {
		if n.Inst.source || !n.Inst.calls || w.states[i].status == StatusCached || n.Spec.Item == "" {
			continue
		}
		m := modelOf(n.Inst)
		if m == nil || !sb.BatchesSamples(m.Provider) {
			continue
		}
		d, _ := json.Marshal(n.Deps)
		k := gk{n.Inst, n.Spec.Item, string(d)}
		byKey[k] = append(byKey[k], int32(i))
	}
	for _, members := range byKey {
		if len(members) < 2 {
			continue
		}
		g := &sampleGroup{expected: len(members)}
		if w.groups == nil {
			w.groups = map[int32]*sampleGroup{}
		}
		for _, i := range members {
			w.groups[i] = g
		}
	}
}

// joinGroup hands call task t to its sample group, or reports that the node
// has none (or its request cannot be batched) and must be queued alone.
func (w *walker) joinGroup(t task) bool {
	g := w.groups[t.idx]
	if g == nil {
		return false
	}
	if t.work.Call == nil || t.work.Call.Request.Seed != nil {
		w.leaveGroup(t.idx)
		return false
	}
	g.mu.Lock()
	g.joined = append(g.joined, t)
	ready := g.readyLocked()
	g.mu.Unlock()
	if ready {
		w.flushGroup(g)
	}
	return true
}

// leaveGroup records that node i settled (or is sent) without its group.
func (w *walker) leaveGroup(i int32) {
	g := w.groups[i]
	if g == nil {
		return
	}
	g.mu.Lock()
	for _, t := range g.joined {
		if t.idx == i {
			g.mu.Unlock()
			return // a member that joined settles through the group's call
		}
	}
	g.settled++
	ready := g.readyLocked()
	g.mu.Unlock()
	if ready {
		w.flushGroup(g)
	}
}

func (g *sampleGroup) readyLocked() bool {
	if g.done || len(g.joined)+g.settled < g.expected {
		return false
	}
	g.done = true
	return true
}

// flushGroup queues the joined members: those whose requests agree but for
// the sample index as one batch task, the rest alone.
func (w *walker) flushGroup(g *sampleGroup) {
	byReq := map[[32]byte][]task{}
	var order [][32]byte
	for _, t := range g.joined {
		r := t.work.Call.Request
		r.Sample = 0
		k := sha256.Sum256(mustJSON(r))
		if _, ok := byReq[k]; !ok {
			order = append(order, k)
		}
		byReq[k] = append(byReq[k], t)
	}
	for _, k := range order {
		ts := byReq[k]
		q := w.queues[w.states[ts[0].idx].provider]
		w.act.add(1)
		if len(ts) == 1 {
			q <- ts[0]
			continue
		}
		q <- task{idx: ts[0].idx, work: ts[0].work, key: ts[0].key, parts: ts[0].parts, inKey: ts[0].inKey, batch: ts}
	}
}

// dispatchBatch sends a batch task's samples as one request and completes
// each member with its own answer; a member without a usable answer is
// dispatched alone, by this worker (never queued again: a full queue would
// block the workers that drain it).
func (e *Engine) dispatchBatch(w *walker, t task) {
	first := t.batch[0]
	n := w.g.Nodes[first.idx]
	tk, _ := newTask(first.key, n.Address, first.work)
	for _, m := range t.batch {
		tk.Samples = append(tk.Samples, m.work.Call.Request.Sample)
	}
	if w.ctx.Err() != nil || w.storeError() != nil || w.unavailable(tk.Provider) != "" {
		for _, m := range t.batch {
			e.dispatchOne(w, m) // each meets the checks of a single dispatch
		}
		return
	}
	// The input is paid once, each sample's output in full.
	m := first.work.Call.Model
	in, out, _ := estimateCall(m, first.work.Call.Request)
	est := cost(m.Price, in, out*int64(len(t.batch)))
	if !w.budget.reserve(est) {
		for _, m := range t.batch {
			w.skip(m.idx, m.key, why(skipBudget, ""))
		}
		return
	}
	res, err := settle(e.Exec.Execute(w.ctx, tk))
	if err != nil {
		w.budget.settle(est, 0)
		for _, m := range t.batch {
			e.dispatchOne(w, m) // each asks alone, with its own retries and repairs
		}
		return
	}
	w.choiceRequests.Add(1)
	spent := 0.0
	for k, m := range t.batch {
		if k >= len(res.Choices) || res.Choices[k] == nil {
			e.dispatchOne(w, m)
			continue
		}
		r := res.Choices[k]
		// The sample came as a choice of the shared request: the summary
		// counts it as a sample, not as a request of its own.
		w.states[m.idx].choice = true
		out, err := applyOutput(m.work, r)
		if err != nil {
			// A choice that did not parse (no Answer) or that the stage
			// refused: paid for, then asked alone.
			w.states[m.idx].costsW().refused = usageOf(r.Usage)
			spent += r.Usage.CostUSD
			e.dispatchOne(w, m)
			continue
		}
		spent += r.Usage.CostUSD
		if err := w.putAnswer(m, r); err != nil {
			w.setStoreErr(err)
			w.fail(m.idx, m.key, why(failCache, err.Error()), r.Raw, attemptsOf(r.Attempts))
			continue
		}
		a := answeredBy(m.work, r)
		w.complete(m.idx, m.inKey, m.key, m.parts, &cache.Record{
			Output: out, Usage: usageOf(r.Usage), Model: tk.Chat.Model, ServedModel: r.ServedModel,
			Fingerprint: r.Fingerprint, Raw: r.Raw, Reasoning: r.Reasoning, Attempts: attemptsOf(r.Attempts), Synthetic: a.Synthetic,
			Answerer: a,
		})
	}
	w.budget.settle(est, spent)
}

// notePlanChoice records, for a plan, the sample group of a call node whose
// provider sends samples as n choices, so the estimate counts the group's
// input (and its request) once, as the run will send it.
func (w *walker) notePlanChoice(i int32, work *stages.Work) {
	n := w.g.Nodes[i]
	r := work.Call.Request
	if r.Seed != nil || n.Spec.Item == "" || !w.batches(work.Call.Model.Provider) {
		return
	}
	r.Sample = 0
	k := sha256.Sum256(mustJSON(struct {
		Inst, Item string
		Deps       []int32
		Req        llm.Request
	}{n.Inst.Address, n.Spec.Item, n.Deps, r}))
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.choiceGroups == nil {
		w.choiceGroups = map[int32][32]byte{}
	}
	w.choiceGroups[i] = k
}

// batches reports whether provider sends independent samples as n choices
// (its n_choices setting). The answer is read once per provider.
func (w *walker) batches(provider string) bool {
	w.batchesOnce.Do(func() {
		w.batching = map[string]bool{}
		for name, p := range w.g.Exp.Providers {
			w.batching[name] = executor.NChoices(p.Provider)
		}
	})
	return w.batching[provider]
}
