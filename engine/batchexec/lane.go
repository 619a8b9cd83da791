package batchexec

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/batch"
	"github.com/ideaflow/ideaflow/stages/pricing"
)

// lane is one batch provider's rounds: the calls registered and waiting,
// and one driver goroutine that alone uses the batch.Client (it is not
// safe for concurrent use).
type lane struct {
	x     *Executor
	name  string
	p     llm.Provider
	max   int
	retry string // batch_retry

	startOnce sync.Once
	startErr  error
	journal   *batch.FileJournal
	sync      llm.Client // the provider's own client: re-asks by policy, services

	clientMu sync.Mutex // held by the driver for a round, and by open and close
	client   *batch.Client

	// lost: an answer was collected for a call whose run was already
	// cancelled (its caller may have gone without it), so this lane's
	// collected submissions are not recorded done: the next run collects
	// them again rather than asking again.
	lost atomic.Bool

	mu      sync.Mutex
	pending []*call
	wakeCh  chan struct{}
	stop    chan struct{}
	stopped chan struct{}
}

// call is one request registered for a round.
type call struct {
	id   string // custom_id
	req  llm.Request
	ctx  context.Context
	once sync.Once
	done chan struct{}

	resp    *llm.Response
	fail    *batch.Failure
	err     error
	batchID string
}

// release puts the call back in the run's count (once: the driver and a
// cancelled caller may both release it).
func (c *call) release() { c.once.Do(func() { executor.Hold(c.ctx, false) }) }

func newLane(x *Executor, p llm.Provider) *lane {
	max := p.Int("batch_max_requests")
	if max <= 0 {
		max = llm.DefaultBatchMaxRequests
	}
	return &lane{x: x, name: p.Name, p: p, max: max, retry: stringSetting(p, "batch_retry"),
		wakeCh: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
}

// start opens the journal and the clients, once, when the provider's
// first task comes: a run with every batch answer cached opens nothing.
func (l *lane) start() error {
	l.startOnce.Do(func() {
		sc, err := llm.New(l.p, append([]llm.Option{llm.WithLogger(l.x.log)}, l.x.o.LLM...)...)
		if err != nil {
			l.startErr = err
			return
		}
		j, err := batch.OpenFile(JournalPath(l.x.o.Dir, l.p))
		if err != nil {
			l.startErr = err
			return
		}
		c, err := batch.New(sc, j, batch.Options{MaxRequests: l.max, CompletionWindow: stringSetting(l.p, "batch_window"),
			PollFirst: pollFirst(l.p), Clock: l.x.o.Clock, NewID: l.x.o.NewID, DeferDone: true})
		if err != nil {
			j.Close()
			l.startErr = fmt.Errorf("provider %s: %w", l.name, err)
			return
		}
		l.sync, l.journal, l.client = sc, j, c
		l.x.local.UseClient(l.name, laneClient{l: l})
		go l.run()
	})
	return l.startErr
}

func (l *lane) wake() {
	select {
	case l.wakeCh <- struct{}{}:
	default: // a wake is pending already
	}
}

// ask registers a request for the next round and waits for its outcome.
func (l *lane) ask(ctx context.Context, id string, req llm.Request) *call {
	c := &call{id: id, req: req, ctx: ctx, done: make(chan struct{})}
	l.mu.Lock()
	l.pending = append(l.pending, c)
	l.mu.Unlock()
	// Out of the run's count only once it is registered: a round closed
	// in between would leave it for the next one.
	executor.Hold(ctx, true)
	l.wake()
	select {
	case <-c.done:
		return c
	case <-ctx.Done():
		c.release()
		return &call{err: ctx.Err()}
	}
}

// take closes a round: the pending calls, when the round is full or the
// engine is quiet (nothing else can come). Cancelled calls are dropped.
func (l *lane) take() []*call {
	l.mu.Lock()
	defer l.mu.Unlock()
	live := l.pending[:0]
	for _, c := range l.pending {
		if c.ctx.Err() == nil {
			live = append(live, c)
		}
	}
	l.pending = live
	if len(live) == 0 || (len(live) < l.max && !l.x.quiet()) {
		return nil
	}
	n := min(len(live), l.max)
	round := append([]*call(nil), live[:n]...)
	l.pending = append(l.pending[:0:0], live[n:]...)
	return round
}

func (l *lane) pendingEmpty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending) == 0
}

// run is the driver: it closes rounds as the engine goes quiet, submits
// them and hands their answers over. Detached, calls of batches still
// running stay held (held) until the run detaches.
func (l *lane) run() {
	defer close(l.stopped)
	var held []*call
	for {
		select {
		case <-l.wakeCh:
		case <-l.stop:
			return
		}
		for {
			round := l.take()
			if round == nil {
				break
			}
			held = l.round(round, held)
		}
		if l.x.o.Detach && len(held) > 0 && l.pendingEmpty() && l.x.quiet() {
			// Only running batches are left: exit, and let a later run
			// collect them.
			if l.x.detached.CompareAndSwap(false, true) && l.x.o.OnDetach != nil {
				l.x.o.OnDetach()
			}
			held = nil // their callers return the run's cancellation
		}
	}
}

// round submits a round, waits for its batches (detached: polls them once)
// and hands every call its answer, its failure or the error that stopped
// the wait. It returns the calls left waiting for running batches.
func (l *lane) round(round, held []*call) []*call {
	l.clientMu.Lock()
	defer l.clientMu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer context.AfterFunc(round[0].ctx, cancel)() // the run's context
	items := make([]batch.Item, len(round))
	for i, c := range round {
		items[i] = batch.Item{Key: c.id, Request: c.req}
	}
	got := map[string]batch.Result{}
	sink := func(r batch.Result) error {
		// After a crash a key may come in two submissions (a failed line
		// and its retry): an answer wins over a failure.
		if prev, ok := got[r.Key]; ok && prev.Response != nil {
			return nil
		}
		got[r.Key] = r
		return nil
	}
	rejected, serr := l.client.Submit(ctx, items)
	for _, r := range rejected {
		got[r.Key] = r
	}
	var werr error
	if l.x.o.Detach {
		_, werr = l.client.Poll(ctx, sink)
	} else {
		werr = l.client.Wait(ctx, sink)
	}
	var ready, still []*call
	for _, c := range append(held, round...) {
		r, ok := got[c.id]
		switch {
		case ok:
			c.resp, c.fail, c.batchID = r.Response, r.Failure, r.BatchID
			if c.ctx.Err() != nil {
				l.lost.Store(true)
			}
		case werr != nil:
			c.err = fmt.Errorf("provider %s: %w", l.name, werr)
		case serr != nil:
			c.err = fmt.Errorf("provider %s: %w", l.name, serr)
		case l.x.o.Detach:
			still = append(still, c)
			continue
		default:
			c.fail = &batch.Failure{Kind: batch.FailMissing, Message: "no open batch carried it"}
		}
		ready = append(ready, c)
	}
	// Every answer back in the run's count before any is handed over: the
	// first to settle must not leave the count at zero while the others
	// are on their way (that would close the next round too early).
	for _, c := range ready {
		c.release()
	}
	for _, c := range ready {
		close(c.done)
	}
	return still
}

func (l *lane) open() []batch.Submission {
	if l.client == nil {
		return nil
	}
	l.clientMu.Lock()
	defer l.clientMu.Unlock()
	return l.client.Open()
}

// close stops the driver, records the collected submissions done when
// the run's records are durable, and closes the journal.
func (l *lane) close(durable bool) error {
	if l.client == nil {
		return nil
	}
	close(l.stop)
	<-l.stopped
	var err error
	if durable && !l.lost.Load() {
		err = l.client.Finish()
	}
	return errors.Join(err, l.journal.Close())
}

// laneClient is the client the LocalExecutor sends a batch provider's
// calls through: a batch task's Complete goes in the next round (a
// re-ask too, with its own custom_id), anything else to the provider's
// own client.
type laneClient struct{ l *lane }

func (lc laneClient) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	l := lc.l
	tc, _ := ctx.Value(taskKey{}).(*taskCall)
	if tc == nil {
		return l.sync.Complete(ctx, req)
	}
	id := tc.next()
	for try := 0; ; try++ {
		c := l.ask(ctx, id, req)
		if c.err != nil {
			return nil, c.err
		}
		if c.resp != nil {
			tc.add(completion{usage: c.resp.Usage, mode: pricing.Batch, batchID: c.batchID})
			return c.resp, nil
		}
		f := c.fail
		switch {
		case f.Kind == batch.FailTooLarge || f.Retryable() && l.retry == "sync":
			resp, err := l.sync.Complete(ctx, req)
			if resp != nil {
				tc.add(completion{usage: resp.Usage, mode: pricing.Sync})
			}
			return resp, err
		case f.Retryable() && l.retry == "batch" && try < MaxBatchRetries:
			continue // in the next round
		}
		where := "batch " + c.batchID
		if c.batchID == "" {
			where = "batch"
		}
		return nil, fmt.Errorf("%s of provider %s: %w", where, l.name, f)
	}
}

func (lc laneClient) Embed(ctx context.Context, model string, inputs []string) ([][]float32, llm.Usage, error) {
	return lc.l.sync.Embed(ctx, model, inputs)
}

func (lc laneClient) Synthetic() bool { return lc.l.sync.Synthetic() }

// Call serves the provider's service requests (embeddings) synchronously.
func (lc laneClient) Call(ctx context.Context, req llm.ServiceRequest) (*llm.ServiceResponse, error) {
	sc, ok := lc.l.sync.(llm.ServiceClient)
	if !ok {
		return nil, fmt.Errorf("provider %q serves no %q requests", lc.l.name, req.Op)
	}
	return sc.Call(ctx, req)
}
