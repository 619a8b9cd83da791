package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ideaflow/ideaflow/engine/executor"
)

// Coordinator is the engine's side of the queue: Send is an
// executor.Transport (give it to executor.NewWire). The engine hands an
// executor only nodes that are ready and not cached, so a warm run never
// reaches Send.
type Coordinator struct {
	q *Queue
	// Counts, for the run's report and the tests.
	published  atomic.Int64 // tasks published (a duplicate dropped by the server included)
	duplicates atomic.Int64 // publishes the server dropped as duplicates
	stored     atomic.Int64 // tasks answered from the results bucket without a publish
	withdrawn  atomic.Int64 // tasks taken back from the queue when their Send gave up
	inFlight   sync.WaitGroup
}

// NewCoordinator sends tasks through q.
func NewCoordinator(q *Queue) *Coordinator { return &Coordinator{q: q} }

// Stats are a coordinator's counts.
type Stats struct {
	Published, Duplicates, FromStore, Withdrawn int64
}

func (c *Coordinator) Stats() Stats {
	return Stats{Published: c.published.Load(), Duplicates: c.duplicates.Load(), FromStore: c.stored.Load(), Withdrawn: c.withdrawn.Load()}
}

// taskHead is what Send reads of an encoded executor.Task.
type taskHead struct {
	Key     string `json:"key"`
	Address string `json:"address"`
	Samples []int  `json:"samples"`
}

// resultHead is what the queue reads of an encoded executor.Result.
type resultHead struct {
	Error *struct {
		Kind string `json:"kind"`
	} `json:"error"`
}

func failed(result []byte) (kind string, isFailure bool) {
	var h resultHead
	if json.Unmarshal(result, &h) != nil {
		return "unreadable", true
	}
	if h.Error == nil {
		return "", false
	}
	return h.Error.Kind, true
}

// Send runs one encoded task on the fleet and returns its encoded result.
// A successful result already in the bucket answers at once. Otherwise it
// publishes the task (message id: the task's id; after a stored failure,
// the id and that failure's revision, so the retry is not dropped as a
// duplicate of the publish that failed, while two coordinators retrying the
// same failure still share one publish) and waits, until ctx ends, for a
// result newer than the stale one. The watch starts before the publish, so
// a result that lands in between is not missed.
func (c *Coordinator) Send(ctx context.Context, task []byte) ([]byte, error) {
	c.inFlight.Add(1)
	defer c.inFlight.Done()
	var h taskHead
	if err := json.Unmarshal(task, &h); err != nil {
		return nil, fmt.Errorf("reading the task: %w", err)
	}
	id := TaskID(h.Key, h.Samples)
	// The watch outlives ctx until Send returns: a watch ended by ctx would
	// race ctx.Done in the selects below, and a Send that took the watch's
	// end for its own would return without withdrawing its task.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	w, err := c.q.Results.Watch(wctx, id)
	if err != nil {
		return nil, fmt.Errorf("watching result %s: %w", id, err)
	}
	defer w.Stop()
	var stale uint64
	// The watch first delivers the key's current value, if any, then nil.
	for initial := true; initial; {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("watching result %s: the watch ended", id)
			}
			if e == nil {
				initial = false
				break
			}
			if e.Operation() != jetstream.KeyValuePut {
				continue
			}
			if _, isFailure := failed(e.Value()); !isFailure {
				c.stored.Add(1)
				return markEarlier(e.Value())
			}
			stale = e.Revision()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	msgID := id
	if stale > 0 {
		msgID = id + "-" + strconv.FormatUint(stale, 10)
	}
	msg := &nats.Msg{Subject: Subject, Data: task, Header: nats.Header{}}
	msg.Header.Set(HeaderResult, id)
	// The publish is not cut short by ctx: a publish the server took but
	// whose ack was never read would leave a task nobody withdraws (its
	// sequence unknown). Once acked, a ctx that ended meanwhile withdraws it.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	ack, err := c.q.JS.PublishMsg(pctx, msg, jetstream.WithMsgID(msgID))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("publishing task %s: %w", h.Address, err)
	}
	c.published.Add(1)
	if ack.Duplicate {
		c.duplicates.Add(1)
	}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("watching result %s: the watch ended", id)
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut || e.Revision() <= stale {
				continue
			}
			return e.Value(), nil
		case <-ctx.Done():
			if !ack.Duplicate { // a duplicate's message is another publisher's
				c.withdraw(id, h.Address, ack.Sequence, stale)
			}
			return nil, ctx.Err()
		}
	}
}

// markEarlier marks a stored result as an earlier run's answer
// (executor.Result.Earlier). A result answered after this Send published
// is not marked, even when its publish was a duplicate of a task still
// queued by a coordinator that died: that answer is paid while this run
// waits for it, and no other run will report it.
func markEarlier(result []byte) ([]byte, error) {
	var r executor.Result
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("reading a stored result: %w", err)
	}
	r.Earlier = true
	return json.Marshal(&r)
}

// Close waits, up to timeout, for the Sends still returning: an engine
// that stops (an interrupt) may return before the Sends it cancelled have
// withdrawn their tasks, and closing the connection under them would
// leave the tasks queued. It reports whether they all returned.
func (c *Coordinator) Close(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() { c.inFlight.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// withdraw takes back the task of a run that stopped waiting for it (an
// interrupt, a deadline), so that no worker pays for an answer nobody
// waits for, as a local run never sends what it has not dispatched: it
// deletes the message and stores a cancellation in the result's place, so
// any other coordinator waiting on the id is answered (cancelled) rather
// than left waiting, and a later ask publishes again (a stored failure).
// A task a worker has answered meanwhile is left alone: the message is
// gone then (delete fails), or its result is stored (the store write is a
// create, or an update at the stale revision, and fails). A task a worker
// holds still gets its result stored, over the cancellation.
func (c *Coordinator) withdraw(id, address string, seq, stale uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.q.Stream.DeleteMsg(ctx, seq); err != nil {
		return // taken and acked already (or the server is gone: then the task stays)
	}
	c.withdrawn.Add(1)
	b, err := json.Marshal(executor.Envelope(nil, fmt.Errorf("task %s withdrawn from the queue: the run that published it stopped waiting: %w", address, context.Canceled)))
	if err != nil {
		return
	}
	if stale == 0 {
		_, _ = c.q.Results.Create(ctx, id, b)
	} else {
		_, _ = c.q.Results.Update(ctx, id, b, stale)
	}
}

// Lookup is the stored successful result of a task id, if any.
func (q *Queue) Lookup(ctx context.Context, id string) ([]byte, bool, error) {
	e, err := q.Results.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading result %s: %w", id, err)
	}
	if _, isFailure := failed(e.Value()); isFailure {
		return nil, false, nil
	}
	return e.Value(), true, nil
}
