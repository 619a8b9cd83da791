package engine

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// task is a call node queued for its provider.
type task struct {
	idx   int32
	work  *stages.Work
	key   string
	parts []namedPart
	inKey [32]byte
	batch []task // samples sent as one request with n choices (choices.go)
}

// waiter is a node waiting for the call of another node with its key.
type waiter struct {
	idx   int32
	inKey [32]byte
}

// flights makes one call per distinct key in a run (single-flight): the
// first node with a key sends the call; later nodes with the same key wait
// for its result instead of paying for it again. ran remembers keys answered
// in this run, so a node that finds such a key in the cache afterwards is
// counted as a node that ran (without a call), the way plan counted it.
type flights struct {
	mu  sync.Mutex
	m   map[string][]waiter // key in flight -> nodes waiting for it
	ran map[string]bool
}

// joined is what join tells a node about its key.
type joined int

const (
	sendCall     joined = iota // no call with the key yet: this node sends it
	waitInFlight               // the key's call is in flight: its landing settles this node
	landedHere                 // the key was answered in this run after the node's cache lookup: read the cache again
)

// join registers node wt for key. A key answered earlier in this run is
// landedHere unless retry is set: its record became durable between the
// node's cache lookup and this join (a call settles only once written), so a
// second lookup finds it. Without that, a node whose lookup raced the
// landing found neither the flight nor the record and sent the key again.
// retry is for a node whose second lookup still missed (the record could
// not be read): it sends the call.
func (f *flights) join(key string, wt waiter, retry bool) joined {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ws, ok := f.m[key]; ok {
		f.m[key] = append(ws, wt)
		return waitInFlight
	}
	if f.ran[key] && !retry {
		return landedHere
	}
	f.m[key] = nil
	return sendCall
}

// land ends key's flight and returns the nodes that waited for it.
func (f *flights) land(key string) []waiter {
	if key == "" {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ws, ok := f.m[key]
	if !ok {
		return nil
	}
	delete(f.m, key)
	return ws
}

// markRan records that key was computed in this run.
func (f *flights) markRan(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran[key] = true
}

func (f *flights) ranHere(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ran[key]
}

// startWorkers starts, per provider, dispatch workers that take call nodes
// off its provider's queue: half again as many as the executor allows in
// flight, so that a call sleeping before a retry (a Retry-After) does not
// leave a slot idle; the client itself holds calls in flight to the limit.
// A queue holds every node that may run, so resolvers rarely wait on it.
func (e *Engine) startWorkers(w *walker, toRun int) {
	w.queues = map[string]chan task{}
	grows := len(w.g.pending()) > 0
	for name := range w.g.Exp.Providers {
		q := make(chan task, toRun)
		w.queues[name] = q
		n := e.Exec.Concurrency(name)
		if batched(e.Exec, name) && !grows {
			// A round's size, but no more workers than calls. A graph that
			// may still grow keeps them all: a round closes only once every
			// ready call is held, each by a worker.
			n = max(min(n, toRun), 1)
		}
		for k := 0; k < n+n/2; k++ {
			go e.dispatch(w, q)
		}
	}
}

// dispatch executes queued calls: it checks the interrupt and the budget,
// hands the task (plain data) to the executor, turns the result into the
// node's output (the stage's Output, applied here rather than in the
// executor) and stores it.
func (e *Engine) dispatch(w *walker, q chan task) {
	for t := range q {
		if len(t.batch) > 0 {
			e.dispatchBatch(w, t)
		} else {
			e.dispatchOne(w, t)
		}
		w.act.add(-1)
	}
}

// dispatchOne checks the interrupt, the cache, the provider and the budget,
// then executes one call and completes (or fails, or skips) its node.
func (e *Engine) dispatchOne(w *walker, t task) {
	if w.ctx.Err() != nil {
		w.skip(t.idx, t.key, why(skipInterrupted, ""))
		return
	}
	if err := w.storeError(); err != nil {
		// The cache cannot take results (a full disk): stop paying for calls.
		w.skip(t.idx, t.key, why(skipStopped, "the cache cannot be written"))
		return
	}
	n := w.g.Nodes[t.idx]
	tk, est := newTask(t.key, n.Address, t.work)
	if tk.Chat != nil && batched(e.Exec, tk.Provider) {
		est = batchEstimate(t.work.Call.Model, *tk.Chat) // checked before the round is submitted
	}
	if down := w.unavailable(tk.Provider); down != "" {
		w.skip(t.idx, t.key, why(skipUnavailable, down))
		return
	}
	if !w.budget.reserve(est) {
		w.skip(t.idx, t.key, why(skipBudget, ""))
		return
	}
	var res *Result
	var err error
	c, first := w.early.take(t.key)
	switch {
	case c != nil && c.rec != nil:
		// The plan sent it (early.go) and its record is durable: this
		// node's answer, or (another node counted the call) a shared one.
		if first && c.earlier {
			w.states[t.idx].earlier = true // paid for by the run that published it
			w.budget.settle(est, 0)
		} else if first {
			w.budget.settle(est, c.rec.Usage.CostUSD)
		} else {
			w.budget.settle(est, 0)
			w.states[t.idx].dedup = true
		}
		w.completeDurable(t.idx, t.key, c.rec)
		return
	case c != nil && first:
		res, err = c.res, c.err // answered (or failed) early, not yet stored
	default:
		res, err = settle(e.Exec.Execute(w.act.hold(w.ctx), tk))
	}
	if err != nil {
		var ee *ExecError
		isExec := errors.As(err, &ee)
		if isExec {
			w.states[t.idx].costsW().usage = usageOf(ee.Usage) // what its refused answers cost
			w.budget.settle(est, ee.Usage.CostUSD)
		} else {
			w.budget.settle(est, 0)
		}
		if w.ctx.Err() != nil {
			w.skip(t.idx, t.key, why(skipInterrupted, ""))
			return
		}
		if errors.Is(err, executor.ErrBudget) {
			// An executor elsewhere refused it for a spending limit: as
			// when this run's budget refuses it before sending.
			w.skip(t.idx, t.key, why(skipBudget, ""))
			return
		}
		if errors.Is(err, llm.ErrProviderUnavailable) {
			// Wrong credentials, an exhausted quota, or an endpoint that
			// keeps failing: no later call to it can succeed in this run.
			w.markUnavailable(tk.Provider, err.Error())
		}
		if isExec {
			w.fail(t.idx, t.key, why(failCall, err.Error()), ee.Raw, attemptsOf(ee.Attempts))
		} else {
			w.fail(t.idx, t.key, why(failCall, err.Error()), "", nil)
		}
		return
	}
	if res.Earlier {
		// Paid for by the run that published it: not this run's spending.
		w.states[t.idx].earlier = true
		w.budget.settle(est, 0)
	} else {
		w.budget.settle(est, res.Usage.CostUSD)
	}
	out, err := applyOutput(t.work, res)
	if err != nil {
		w.states[t.idx].costsW().usage = usageOf(res.Usage)
		w.fail(t.idx, t.key, why(failOutput, err.Error()), res.Raw, attemptsOf(res.Attempts))
		return
	}
	if err := w.putAnswer(t, res); err != nil {
		w.setStoreErr(err)
		w.fail(t.idx, t.key, why(failCache, err.Error()), res.Raw, attemptsOf(res.Attempts))
		return
	}
	w.complete(t.idx, t.inKey, t.key, t.parts, recordOf(t.work, tk, res, out))
}

// answeredBy is who answered work's call, for its record: the answerer its
// key names (its model's provider's). Its answer is made up when the
// answerer's class makes answers up (the mock) or the client said so.
func answeredBy(work *stages.Work, res *Result) *cache.Answerer {
	a := cacheAnswerer(workModel(work).Answerer)
	a.Synthetic = a.Synthetic || res.Synthetic
	return a
}

// markUnavailable records that provider can serve no more calls this run.
func (w *walker) markUnavailable(provider, why string) {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.down == nil {
		w.down = map[string]string{}
	}
	if _, ok := w.down[provider]; !ok {
		w.down[provider] = why
	}
}

// unavailable returns why provider can serve no more calls, or "".
func (w *walker) unavailable(provider string) string {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.down[provider]
}

// newTask turns prepared work into an executor task and its estimated cost.
func newTask(key, address string, work *stages.Work) (*Task, float64) {
	if c := work.Call; c != nil {
		req := c.Request
		_, _, est := estimateCall(c.Model, req)
		return &Task{Key: key, Address: address, Provider: c.Model.Provider, Chat: &req, Price: c.Model.Price}, est
	}
	s := work.Service
	req := s.Request
	_, est := estimateService(s)
	return &Task{Key: key, Address: address, Provider: s.Model.Provider, Service: &req, Price: s.Model.Price}, est
}

// applyOutput turns an executor's result into the node's canonical output.
func applyOutput(work *stages.Work, res *Result) ([]byte, error) {
	if c := work.Call; c != nil {
		if res.Answer == nil {
			return nil, errors.New("the executor returned no parsed answer")
		}
		if c.Output == nil {
			return nil, errors.New("the stage gave no Output for its call (an internal error in the stage type)")
		}
		if res.Answer.Raw == "" { // an executor that did not set it
			res.Answer.Raw = res.Raw
		}
		return c.Output(res.Answer)
	}
	if work.Service.Output == nil {
		if len(res.Body) == 0 {
			return nil, fmt.Errorf("the service returned an empty body")
		}
		return res.Body, nil
	}
	return work.Service.Output(res.Body)
}
