package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/engine/executor"
)

// Worker pull-consumes tasks and runs them on a local executor.
type Worker struct {
	q           *Queue
	newExecutor func() executor.Executor
	concurrency int
	log         zerolog.Logger

	// RetryUnavailableAfter: see NewWorker. Set before Run.
	RetryUnavailableAfter time.Duration

	mu      sync.Mutex
	ex      executor.Executor
	tripped time.Time // when a task of ex failed with its provider unavailable; zero: none did

	ran, reused, abandoned, refused atomic.Int64
	progress                        time.Duration // between progress signals of a task in flight

	// abandon, set by tests, is asked after a task ran (stage "ran") and
	// after its result was stored ("stored"): true drops the task unacked
	// there, as a worker that died.
	abandon func(stage, id string) bool
}

// NewWorker runs up to concurrency tasks at once (at least 1) on an
// executor from newExecutor.
//
// A client whose breaker tripped (a refused key, an exhausted quota) fails
// every later call of its provider without a request, as in a local run;
// but a worker outlives the run that tripped it, and the next run, after
// the key or the quota was fixed, must not inherit the refusal. So the
// first task asked after RetryUnavailableAfter has passed since a task
// failed with its provider unavailable gets a fresh executor (the limits
// of the other providers start over too). Until then, tasks still in
// flight of the run that tripped it fail without a request, as locally.
func NewWorker(q *Queue, newExecutor func() executor.Executor, concurrency int, log zerolog.Logger) *Worker {
	return &Worker{q: q, newExecutor: newExecutor, concurrency: max(concurrency, 1), log: log, ex: newExecutor(),
		RetryUnavailableAfter: time.Minute}
}

// WorkerStats are a worker's counts.
type WorkerStats struct {
	Ran       int64 // tasks run on the executor
	Reused    int64 // redelivered tasks whose result was already stored: acked without a call
	Abandoned int64 // tasks dropped unacked (tests' dying worker, or a stop mid-task)
	Refused   int64 // tasks failed without a request: their provider was found unavailable (down.go)
}

func (w *Worker) Stats() WorkerStats {
	return WorkerStats{Ran: w.ran.Load(), Reused: w.reused.Load(), Abandoned: w.abandoned.Load(), Refused: w.refused.Load()}
}

func (w *Worker) executor() executor.Executor {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.tripped.IsZero() && time.Since(w.tripped) >= w.RetryUnavailableAfter {
		w.ex, w.tripped = w.newExecutor(), time.Time{}
	}
	return w.ex
}

// trip notes that a task of ex failed with its provider unavailable.
func (w *Worker) trip(ex executor.Executor) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ex == ex && w.tripped.IsZero() {
		w.tripped = time.Now()
	}
}

// Run consumes tasks until ctx ends. A task in flight when ctx ends is
// left unacked (nak'd when the server can still be told), so another
// worker takes it at once rather than after AckWait.
func (w *Worker) Run(ctx context.Context) error {
	cons, err := w.q.Consumer(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	// Progress signals go at a third of the consumer's AckWait, whoever set it.
	w.progress = w.q.cfg.AckWait / 3
	if info := cons.CachedInfo(); info != nil && info.Config.AckWait > 0 {
		w.progress = info.Config.AckWait / 3
	}
	w.progress = max(w.progress, 10*time.Millisecond) // a ticker needs a positive period
	// A consumer deleted under the worker ends every fetcher, not only the
	// one that saw it.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	for range w.concurrency {
		wg.Go(func() {
			for ctx.Err() == nil {
				fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				msg, err := cons.Next(jetstream.FetchContext(fctx))
				cancel()
				if err != nil {
					if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
						continue
					}
					if errors.Is(err, jetstream.ErrNoMessages) {
						continue
					}
					// A lost connection heals on its own (nats reconnects);
					// anything else is the consumer's end.
					if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
						stop(fmt.Errorf("jetstream: %w", err))
						return
					}
					w.log.Warn().Err(err).Msg("fetching a task")
					select {
					case <-time.After(time.Second):
					case <-ctx.Done():
					}
					continue
				}
				w.handle(ctx, msg)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err // the consumer's end, not the caller's stop
	}
	return nil
}

// handle runs one task message: its stored result if a worker before
// this one put it (acked without a call), else the executor's, which it
// puts in the bucket, and only once the put is durable acks.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) {
	id := msg.Headers().Get(HeaderResult)
	if id == "" {
		w.log.Error().Msg("a task message without its result key: dropped")
		_ = msg.Term()
		return
	}
	if _, ok, err := w.q.Lookup(ctx, id); err == nil && ok {
		w.reused.Add(1)
		w.ack(ctx, msg, id)
		return
	}
	if out, ok := w.sharedDown(ctx, msg.Data()); ok {
		w.refused.Add(1)
		w.store(ctx, msg, id, out)
		return
	}
	// Tell the server the task is alive while it runs, so only a dead
	// worker's task is redelivered.
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(w.progress)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = msg.InProgress()
			case <-done:
				return
			}
		}
	}()
	ex := w.executor()
	start := time.Now()
	out := executor.Serve(ctx, ex, msg.Data())
	close(done)
	if w.log.Debug().Enabled() {
		var h taskHead
		_ = json.Unmarshal(msg.Data(), &h)
		outcome, _ := failed(out)
		if outcome == "" {
			outcome = "answered"
		}
		w.log.Debug().Str("task", id).Str("address", h.Address).Str("outcome", outcome).Dur("took", time.Since(start)).Msg("task run")
	}
	w.ran.Add(1)
	if w.abandon != nil && w.abandon("ran", id) {
		w.abandoned.Add(1)
		return
	}
	if ctx.Err() != nil {
		// Stopped mid-task: the result is a cancellation of ours, not the
		// task's; leave the task to another worker.
		w.abandoned.Add(1)
		_ = msg.Nak()
		return
	}
	if kind, isFailure := failed(out); isFailure && kind == string(executor.KindProviderUnavailable) {
		w.trip(ex)
		w.shareDown(context.WithoutCancel(ctx), msg.Data(), out)
	}
	w.store(ctx, msg, id, out)
}

// store puts a task's result in the bucket and, once it is there, acks.
// A result in hand is stored even if the worker is stopping meanwhile: it
// was paid for.
func (w *Worker) store(ctx context.Context, msg jetstream.Msg, id string, out []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := w.q.Results.Put(ctx, id, out); err != nil {
		// Too large for the server, most likely: say so in the result's
		// place, so the coordinator is not left waiting.
		w.log.Warn().Err(err).Str("task", id).Msg("storing a result")
		env := executor.Envelope(nil, fmt.Errorf("the worker could not store the result: %w", err))
		b, _ := json.Marshal(env)
		if _, err := w.q.Results.Put(ctx, id, b); err != nil {
			w.log.Error().Err(err).Str("task", id).Msg("storing a result failed twice: the task goes back to the queue")
			_ = msg.Nak()
			return
		}
	}
	if w.abandon != nil && w.abandon("stored", id) {
		w.abandoned.Add(1)
		return
	}
	w.ack(ctx, msg, id)
}

func (w *Worker) ack(ctx context.Context, msg jetstream.Msg, id string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		// The result is stored: a redelivery is acked without a call.
		w.log.Warn().Err(err).Str("task", id).Msg("acking a task")
	}
}
