package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Streaming dispatch: calls start while planning goes on. A run plans every
// node before it runs any (the plan refuses a run that cannot make its calls,
// and tells the run what is cached), which at 100k nodes kept the first call
// waiting 8 s. The plan of a run therefore sends a call as soon as it finds
// one that must run and whose request it could render (its inputs are known),
// as long as nothing the plan could still find would refuse the run:
//
//   - not offline, no --max-cost (the budget check needs the whole estimate);
//   - the provider's key is there (the check the plan makes per provider);
//   - the provider does not send samples as n choices (a group goes once all
//     its members are prepared), and the node has no answer key of its own
//     (answer flights are the run's);
//   - a slot is free: at most the provider's concurrency of early calls are
//     in flight, so a plan never queues work the run would wait behind.
//
// An early call writes its record (with its latest key and memo) durably
// as soon as it is answered, as any call does; the run then meets the node
// as one that ran in this run (claim): through its memo, or, while the call
// is still in flight, in dispatch, where it waits for it (take). A failed
// early call is failed by the run as if dispatched there. The plan's numbers
// are the same: the plan still counts the node to run.
type early struct {
	e      *Engine
	ctx    context.Context
	slots  map[string]chan struct{} // provider -> free early slots
	usable map[string]bool          // provider -> early calls allowed
	mu     sync.Mutex
	calls  map[string]*earlyCall // key -> its early call
	wg     sync.WaitGroup
	down   map[string]bool // providers that said they are unavailable
}

type earlyCall struct {
	node    int32 // the node whose offer sent it
	done    chan struct{}
	claimed bool
	res     *Result       // the answer (nil when err)
	rec     *cache.Record // its record, once durable (nil: the run writes it)
	err     error
	est     float64
	earlier bool // answered by a queue's results store (Result.Earlier)
}

// newEarly prepares streaming dispatch for a run, or returns nil when the
// run's options forbid calls before the plan is complete.
func (e *Engine) newEarly(ctx context.Context, g *Graph, opts RunOptions) *early {
	if opts.Offline || opts.MaxCost > 0 || e.noEarlyCalls {
		return nil
	}
	sb, _ := e.Exec.(SampleBatcher)
	x := &early{e: e, ctx: ctx, slots: map[string]chan struct{}{}, usable: map[string]bool{},
		calls: map[string]*earlyCall{}, down: map[string]bool{}}
	for name := range g.Exp.Providers {
		ok := !keysHere(e.Exec) || !g.Exp.MissingKeys([]string{name}).HasErrors()
		if sb != nil && sb.BatchesSamples(name) || batched(e.Exec, name) {
			ok = false // n-choices groups and batch rounds are the run's
		}
		x.usable[name] = ok
		n := e.Exec.Concurrency(name)
		if n < 1 {
			n = 1
		}
		x.slots[name] = make(chan struct{}, n)
	}
	return x
}

// offer sends node i's call now when the rules above allow it. It is called
// by the plan walker (pw) for a call node it found missing.
func (x *early) offer(pw *walker, i int32, work *stages.Work, key string, parts []namedPart, inKey [32]byte) {
	st := &pw.states[i]
	n := pw.g.Nodes[i]
	if x == nil || work.Call == nil || st.answerKey != "" || x.ctx.Err() != nil || pw.dmg.seen() {
		return // (a plan that met damaged records leaves calls to the run, which drops and counts them)
	}
	provider := work.Call.Model.Provider
	if m := modelOf(n.Inst); m != nil && !x.usable[m.Provider] {
		return // the instance's samples may go as n choices
	}
	x.mu.Lock()
	if !x.usable[provider] || x.down[provider] || x.calls[key] != nil {
		x.mu.Unlock()
		return
	}
	select {
	case x.slots[provider] <- struct{}{}:
	default:
		x.mu.Unlock()
		return // every early slot is busy: the run sends it
	}
	c := &earlyCall{node: i, done: make(chan struct{})}
	x.calls[key] = c
	x.mu.Unlock()

	// What the record and memo need from the plan's state, copied now: the
	// plan walker goes on with other nodes.
	memoSt := *st
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer func() { <-x.slots[provider] }()
		defer close(c.done)
		tk, est := newTask(key, n.Address, work)
		c.est = est
		res, err := settle(x.e.Exec.Execute(x.ctx, tk))
		if err != nil {
			c.err = err
			if errors.Is(err, llm.ErrProviderUnavailable) {
				x.mu.Lock()
				x.down[provider] = true
				x.mu.Unlock()
			}
			return
		}
		c.res, c.earlier = res, res.Earlier
		out, err := applyOutput(work, res)
		if err != nil {
			return // the run fails it, from the result
		}
		rec := recordOf(work, tk, res, out)
		fillRecord(n, key, parts, rec)
		memoSt.status, memoSt.known, memoSt.key = StatusRan, true, key
		memoSt.digest = sha256.Sum256(out)
		memoSt.answerer = pw.provs.answerer(llmAnswerer(*rec.Answerer))
		memoSt.servedModel, memoSt.fingerprint = rec.ServedModel, rec.Fingerprint
		noteDrop(&memoSt, out)
		if err := pw.store.PutIndexed(rec, pw.expKey+n.Address, hex.EncodeToString(inKey[:]), pw.encodeMemo(&memoSt)); err != nil {
			return // the run writes it (and stops on the error)
		}
		if _, err := pw.store.Failure(key); err == nil {
			_ = pw.store.DeleteFailure(key)
		}
		// Kept until the run ends, for the nodes that meet it (dispatch's
		// completeDurable reads output, digest, usage, who answered): the
		// record is durable, so what only the cache needs goes. Holding
		// whole records and results cost a cold 1M-node run gigabytes (at
		// 105k nodes, 196 MB of key parts alone).
		slim := *rec
		slim.Parts, slim.Raw, slim.Reasoning, slim.Attempts = nil, "", "", nil
		c.rec, c.res = &slim, nil
	}()
}

// sent reports whether key was sent as an early call.
func (x *early) sent(key string) bool {
	if x == nil {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.calls[key] != nil
}

// claim is for a node the run found settled through its record: ok when an
// early call made it, with its record's usage and whether a queue's
// results store answered it (earlier); first for the one node per
// key that counts the call (the others ran on it: deduplicated).
func (x *early) claim(key string) (u cache.Usage, earlier, first, ok bool) {
	c, first := x.take(key)
	if c == nil || c.rec == nil {
		return cache.Usage{}, false, false, false
	}
	return c.rec.Usage, c.earlier, first, true
}

// take is for a node the run settles or dispatches: the early call of its
// key, waited for (nil when there is none); first for the first node to
// take it. A node that found the record waits too: the early call has
// written it and is about to end, and until it has, the node would count as
// cached.
func (x *early) take(key string) (*earlyCall, bool) {
	if x == nil {
		return nil, false
	}
	x.mu.Lock()
	c := x.calls[key]
	if c == nil {
		x.mu.Unlock()
		return nil, false
	}
	first := !c.claimed
	c.claimed = true
	x.mu.Unlock()
	<-c.done
	return c, first
}

// settleUnclaimed marks, after the walk, the nodes whose early call was
// answered and stored but which the run never reached (it was interrupted,
// or stopped by a failure elsewhere): they ran in this run, and the summary
// counts their calls. Without it an interrupted run said it made fewer
// calls than the server saw and the cache holds (TestInterruptKeepsCompletedWork).
func (x *early) settleUnclaimed(w *walker) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for key, c := range x.calls {
		if c.claimed || c.rec == nil {
			continue
		}
		c.claimed = true
		st := &w.states[c.node]
		if st.status == StatusRan || st.status == StatusCached || st.status == StatusFailed {
			continue
		}
		st.status, st.key, st.isCall, st.earlier = StatusRan, key, true, c.earlier
		st.costsW().usage = c.rec.Usage
		st.wantModel, st.servedModel, st.fingerprint = c.rec.Model, c.rec.ServedModel, c.rec.Fingerprint
	}
}

// stop waits for every early call to end (their records written).
func (x *early) stop() {
	if x != nil {
		x.wg.Wait()
	}
}

// recordOf is the record of a call's result, before the engine adds what
// names it (fillRecord).
func recordOf(work *stages.Work, tk *Task, res *Result, out []byte) *cache.Record {
	rec := &cache.Record{
		Output: out, Usage: usageOf(res.Usage), ServedModel: res.ServedModel,
		Fingerprint: res.Fingerprint, Raw: res.Raw, Reasoning: res.Reasoning, Attempts: attemptsOf(res.Attempts),
		Answerer: answeredBy(work, res), Obtained: res.Obtained,
	}
	rec.Synthetic = rec.Answerer.Synthetic
	if tk.Chat != nil {
		rec.Model = tk.Chat.Model
	} else {
		rec.Model = tk.Service.Model
		if work.Service.Output != nil {
			rec.Raw = string(res.Body) // the output is derived: keep the reply too
		}
	}
	return rec
}

// fillRecord adds to rec what names it: key, addresses, output digest, key
// parts, creation time.
func fillRecord(n *Node, key string, parts []namedPart, rec *cache.Record) {
	digest := sha256.Sum256(rec.Output)
	rec.Key = key
	rec.Stage = n.Inst.Address
	rec.Address = n.Address
	rec.OutputDigest = hex.EncodeToString(digest[:])
	rec.Parts = cacheParts(append(parts[:len(parts):len(parts)], n.Inst.about...))
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = time.Now().UTC()
	}
}
