package jetstream

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/engine/executor/ratelimit"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

const testKeyEnv = "JETSTREAM_TEST_KEY"

// startServer is an in-process NATS server with JetStream in a temp dir.
func startServer(t testing.TB) *EmbeddedServer {
	t.Helper()
	s, err := StartServer("127.0.0.1:0", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// open is a new connection (a process of its own, as far as the server
// can tell) to s and the queue on it.
func open(t testing.TB, s *EmbeddedServer, cfg Config) *Queue {
	t.Helper()
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	q, err := Open(context.Background(), nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// provider is an openai-kind provider at srv, as a task carries it.
func provider(srv *llmtest.Server) llm.Provider {
	p := llm.NewProvider("fake", "openai")
	p.BaseURL, p.APIKeyEnv, p.MaxRetries = srv.URL, testKeyEnv, 0
	return p
}

// task is an encoded chat task at p, key "k<i>".
func task(t testing.TB, p llm.Provider, i int) []byte {
	t.Helper()
	b, err := json.Marshal(&executor.Task{
		Key: fmt.Sprintf("k%d", i), Address: fmt.Sprintf("stage.x[%d]", i), Provider: p.Name, Settings: &p,
		Chat: &llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf("question %d", i)}},
			Format: format.Spec{Kind: format.Text}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newWorker(q *Queue, conc int) *Worker {
	return NewWorker(q, func() executor.Executor { return executor.NewLocalExecutor(nil, zerolog.Nop()) }, conc, zerolog.Nop())
}

// run runs w until the test ends.
func run(t testing.TB, w *Worker) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// answered decodes a result and fails the test unless it is an answer.
func answered(t *testing.T, b []byte, err error) executor.Result {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var r executor.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != nil || r.Raw == "" {
		t.Fatalf("result %s: want an answer", b)
	}
	return r
}

// until polls cond (a state another goroutine moves; no time limit but
// the test's own).
func until(cond func() bool) {
	for !cond() {
		time.Sleep(5 * time.Millisecond)
	}
}

// pending is the stream's messages not acked yet.
func pending(t *testing.T, q *Queue) uint64 {
	t.Helper()
	info, err := q.Stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func lastSeq(t *testing.T, q *Queue) uint64 {
	t.Helper()
	info, err := q.Stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// Two coordinators publish the same task before any worker runs: the
// stream keeps one message (the second publish is dropped by its message
// id), the endpoint is asked once, and both get the one answer.
func TestDuplicatePublishAnsweredOnce(t *testing.T) {
	t.Setenv(testKeyEnv, "sk-test")
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	s := startServer(t)
	c1, c2 := NewCoordinator(open(t, s, Config{})), NewCoordinator(open(t, s, Config{}))
	b := task(t, provider(srv), 1)
	var wg sync.WaitGroup
	results := make([][]byte, 2)
	errs := make([]error, 2)
	for i, c := range []*Coordinator{c1, c2} {
		wg.Go(func() { results[i], errs[i] = c.Send(context.Background(), b) })
	}
	until(func() bool { return c1.Stats().Published == 1 && c2.Stats().Published == 1 })
	q := open(t, s, Config{})
	if n := lastSeq(t, q); n != 1 {
		t.Fatalf("%d messages in the stream after two publishes of one id, want 1", n)
	}
	run(t, newWorker(q, 2))
	wg.Wait()
	a, b2 := answered(t, results[0], errs[0]), answered(t, results[1], errs[1])
	if a.Raw != b2.Raw {
		t.Errorf("answers differ: %q, %q", a.Raw, b2.Raw)
	}
	if d := c1.Stats().Duplicates + c2.Stats().Duplicates; d != 1 {
		t.Errorf("%d publishes reported duplicate, want 1", d)
	}
	if n := srv.Count(); n != 1 {
		t.Errorf("%d endpoint calls, want 1", n)
	}
}

// A worker that dies with a task taken (it never acks) leaves it to be
// redelivered after AckWait to another worker, which answers it. Dying
// before the result was stored, the answer is lost with the worker and
// paid again (2 calls); dying after it was stored and before the ack, the
// next worker finds it and acks without a call (1 call).
func TestDeadWorkersTaskRedelivered(t *testing.T) {
	t.Setenv(testKeyEnv, "sk-test")
	for _, c := range []struct {
		name        string
		stage       string
		calls       int
		ran, reused int64
	}{
		{name: "died before storing", stage: "ran", calls: 2, ran: 1},
		{name: "died after storing, before acking", stage: "stored", calls: 1, ran: 0, reused: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New()
			t.Cleanup(srv.Close)
			s := startServer(t)
			cfg := Config{AckWait: 300 * time.Millisecond}
			coord := NewCoordinator(open(t, s, cfg))
			done := make(chan struct{})
			var out []byte
			var err error
			go func() { defer close(done); out, err = coord.Send(context.Background(), task(t, provider(srv), 1)) }()

			dying := newWorker(open(t, s, cfg), 1)
			ctx, die := context.WithCancel(context.Background())
			dead := make(chan struct{})
			dying.abandon = func(stage, _ string) bool {
				if stage != c.stage {
					return false
				}
				die() // the process is gone: it takes no further task
				return true
			}
			go func() { defer close(dead); _ = dying.Run(ctx) }()
			<-dead
			if st := dying.Stats(); st.Abandoned != 1 || st.Ran != 1 {
				t.Fatalf("dying worker %+v, want 1 task run and abandoned", st)
			}
			next := newWorker(open(t, s, cfg), 1)
			run(t, next)
			<-done
			answered(t, out, err)
			// Acked: the work queue drops the message. (With the result
			// stored before the death, Send returned before the redelivery.)
			until(func() bool { return pending(t, next.q) == 0 })
			if n := srv.Count(); n != c.calls {
				t.Errorf("%d endpoint calls, want %d", n, c.calls)
			}
			if st := next.Stats(); st.Ran != c.ran || st.Reused != c.reused {
				t.Errorf("next worker %+v, want %d run, %d reused", st, c.ran, c.reused)
			}
		})
	}
}

// A coordinator that dies after publishing (its process killed: its
// connection gone, nothing withdrawn) leaves the task to a worker, which
// answers and stores it; a coordinator started after that finds the
// answer in the results bucket and neither publishes nor calls.
func TestRestartedCoordinatorReadsStoredResult(t *testing.T) {
	t.Setenv(testKeyEnv, "sk-test")
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	s := startServer(t)
	p := provider(srv)
	dying := open(t, s, Config{})
	first := NewCoordinator(dying)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // its Send may wait on a watch of the closed connection
	go func() { _, _ = first.Send(ctx, task(t, p, 7)) }()
	until(func() bool { return first.Stats().Published == 1 })
	dying.JS.Conn().Close()
	q := open(t, s, Config{})
	w := newWorker(q, 1)
	run(t, w)
	until(func() bool { _, ok, _ := q.Lookup(context.Background(), "k7"); return ok })

	restarted := NewCoordinator(open(t, s, Config{}))
	seq := lastSeq(t, q)
	out, err := restarted.Send(context.Background(), task(t, p, 7))
	answered(t, out, err)
	if st := restarted.Stats(); st.Published != 0 || st.FromStore != 1 {
		t.Errorf("restarted coordinator %+v, want 0 published, 1 from the store", st)
	}
	if n := lastSeq(t, q); n != seq {
		t.Errorf("the stream grew from %d to %d messages", seq, n)
	}
	if n := srv.Count(); n != 1 {
		t.Errorf("%d endpoint calls, want 1 (the worker's)", n)
	}
}

// A stored failure answers the coordinator that waited for it, not a
// later one: asking again publishes again (under a message id of its own,
// or the stream would drop it as a duplicate) and gets the answer.
func TestStoredFailureAskedAgain(t *testing.T) {
	t.Setenv(testKeyEnv, "sk-test")
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	srv.Enqueue(llmtest.Fault{Status: 400, Message: "context too long"})
	s := startServer(t)
	q := open(t, s, Config{})
	run(t, newWorker(q, 1))
	p := provider(srv)
	b, err := NewCoordinator(q).Send(context.Background(), task(t, p, 3))
	if err != nil {
		t.Fatal(err)
	}
	var r executor.Result
	if err := json.Unmarshal(b, &r); err != nil || r.Error == nil || r.Error.API == nil || r.Error.API.Status != 400 {
		t.Fatalf("first result %s (%v): want the 400 failure", b, err)
	}
	again := NewCoordinator(open(t, s, Config{}))
	out, err := again.Send(context.Background(), task(t, p, 3))
	answered(t, out, err)
	if st := again.Stats(); st.Published != 1 || st.Duplicates != 0 || st.FromStore != 0 {
		t.Errorf("second coordinator %+v, want 1 publish, not a duplicate", st)
	}
	if n := srv.Count(); n != 2 {
		t.Errorf("%d endpoint calls, want 2", n)
	}
}

// Four limiters, each on its own connection, over one KV key, reserve 25
// sends each at one instant of a frozen clock: the 100 slots are one every
// interval exactly (requests_per_minute 120: one each 500 ms, burst 1),
// whatever the interleaving of their compare-and-sets, so no window of a
// minute holds more than 120; then a Hold told by one delays the others.
func TestSharedLimitOverKV(t *testing.T) {
	s := startServer(t)
	t0 := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return t0 }
	const limiters, each, perMinute = 4, 25, 120.0
	gs := make([]*ratelimit.GCRA, limiters)
	for i := range gs {
		g, err := ratelimit.New(NewKVState(open(t, s, Config{}).Limits, "limit.test.requests"), ratelimit.Limit{PerMinute: perMinute}, now)
		if err != nil {
			t.Fatal(err)
		}
		gs[i] = g
	}
	var mu sync.Mutex
	var slots []time.Time
	var wg sync.WaitGroup
	for _, g := range gs {
		wg.Go(func() {
			for range each {
				at, err := g.Reserve(context.Background(), 1)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				slots = append(slots, at)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.SortFunc(slots, func(a, b time.Time) int { return a.Compare(b) })
	for k, at := range slots {
		if want := t0.Add(time.Duration(k) * 500 * time.Millisecond); !at.Equal(want) {
			t.Fatalf("slot %d at %v, want %v", k, at.Sub(t0), want.Sub(t0))
		}
	}
	for i := range slots {
		j := i
		for j < len(slots) && slots[j].Sub(slots[i]) < time.Minute {
			j++
		}
		if j-i > perMinute {
			t.Fatalf("%d sends in the minute from %v", j-i, slots[i].Sub(t0))
		}
	}
	// The TAT is at 50 s; a 429 at t0 asking for 90 s holds every limiter.
	if err := gs[0].Hold(context.Background(), t0.Add(90*time.Second)); err != nil {
		t.Fatal(err)
	}
	for i, g := range gs[1:] {
		at, err := g.Reserve(context.Background(), 1)
		if want := t0.Add(90*time.Second + time.Duration(i)*500*time.Millisecond); err != nil || !at.Equal(want) {
			t.Errorf("limiter %d after the hold: send at %v (%v), want %v", i+1, at.Sub(t0), err, want.Sub(t0))
		}
	}
}

// Workers' provider clients wait on the shared limit before every
// request: two workers, each with its own connection and client, send 6
// requests of a provider with requests_per_minute, and the shared key was
// written once per request (its revision counts the writes: the bucket
// holds no other key), so every request of both booked its slot there. A
// 429 with Retry-After: 2 told by one worker holds the shared state at
// least 2 s past the moment it came.
func TestWorkersWaitOnSharedLimit(t *testing.T) {
	t.Setenv(testKeyEnv, "sk-test")
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	var refusedAt time.Time
	var once sync.Once
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
		if r.Seq != 3 {
			return llmtest.Fault{}, false
		}
		once.Do(func() { refusedAt = time.Now() })
		return llmtest.Fault{Status: 429, RetryAfter: "2"}, true
	})
	s := startServer(t)
	p := provider(srv)
	p.RequestsPerMinute, p.MaxRetries = 6000, 1 // 10 ms apart: the test stays fast
	var ws []*Worker
	for range 2 {
		q := open(t, s, Config{})
		w := NewWorker(q, func() executor.Executor {
			return executor.NewLocalExecutor(nil, zerolog.Nop(), llm.WithSharedLimits(q.SharedLimits))
		}, 2, zerolog.Nop())
		run(t, w)
		ws = append(ws, w)
	}
	coord := NewCoordinator(open(t, s, Config{}))
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			out, err := coord.Send(context.Background(), task(t, p, i))
			answered(t, out, err)
		})
	}
	wg.Wait()
	if n := srv.Count(); n != 6 {
		t.Fatalf("%d endpoint calls, want 6 (5 tasks, one retried after its 429)", n)
	}
	e, err := open(t, s, Config{}).Limits.Get(context.Background(), LimitKey(p, "requests"))
	if err != nil {
		t.Fatal(err)
	}
	// 6 bookings; the hold is a 7th write unless a booking after it had
	// already moved the TAT past its floor.
	if rev := e.Revision(); rev != 6 && rev != 7 {
		t.Errorf("shared state revision %d, want 6 bookings (and the hold)", rev)
	}
	tat := time.Unix(0, int64(binary.BigEndian.Uint64(e.Value())))
	if tat.Before(refusedAt.Add(2 * time.Second)) {
		t.Errorf("shared TAT %v, before the 429's Retry-After (%v)", tat, refusedAt.Add(2*time.Second))
	}
	if ran := ws[0].Stats().Ran + ws[1].Stats().Ran; ran != 5 {
		t.Errorf("workers ran %d tasks, want 5", ran)
	}
}

// A worker whose provider tripped (a refused key) fails the tasks that
// follow without a request, as a local run's client does, until
// RetryUnavailableAfter has passed; then a fresh executor reads the key
// again (fixed meanwhile) and answers.
func TestWorkerRetriesUnavailableProviderLater(t *testing.T) {
	for _, c := range []struct {
		name     string
		after    time.Duration
		calls    int
		answered bool
	}{
		{name: "within the cooldown", after: time.Hour, calls: 1},
		{name: "after it", after: 0, calls: 2, answered: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.WithAPIKey("sk-right"))
			t.Cleanup(srv.Close)
			t.Setenv(testKeyEnv, "sk-wrong")
			s := startServer(t)
			q := open(t, s, Config{})
			w := newWorker(q, 1)
			w.RetryUnavailableAfter = c.after
			run(t, w)
			coord := NewCoordinator(q)
			p := provider(srv)
			b, err := coord.Send(context.Background(), task(t, p, 1))
			var r executor.Result
			if err != nil || json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Kind != executor.KindProviderUnavailable {
				t.Fatalf("first result %s (%v): want provider_unavailable", b, err)
			}
			t.Setenv(testKeyEnv, "sk-right")
			b, err = coord.Send(context.Background(), task(t, p, 2))
			if err != nil {
				t.Fatal(err)
			}
			r = executor.Result{}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if got := r.Error == nil; got != c.answered {
				t.Errorf("second result %s: answered %v, want %v", b, got, c.answered)
			}
			if n := srv.Count(); n != c.calls {
				t.Errorf("%d endpoint calls, want %d", n, c.calls)
			}
		})
	}
}

// A task published with no worker running leaves the queue starved; once
// a worker has taken and acked it, it is not.
func TestStarved(t *testing.T) {
	t.Setenv(testKeyEnv, "sk-test")
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	s := startServer(t)
	q := open(t, s, Config{})
	if _, starved, err := q.Starved(context.Background()); err != nil || starved {
		t.Fatalf("empty queue: starved %v (%v)", starved, err)
	}
	coord := NewCoordinator(q)
	done := make(chan error, 1)
	go func() { _, err := coord.Send(context.Background(), task(t, provider(srv), 1)); done <- err }()
	until(func() bool { return coord.Stats().Published == 1 })
	if n, starved, err := q.Starved(context.Background()); err != nil || !starved || n != 1 {
		t.Fatalf("a task and no worker: %d pending, starved %v (%v)", n, starved, err)
	}
	run(t, newWorker(open(t, s, Config{}), 1))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	until(func() bool { return pending(t, q) == 0 })
	if _, starved, err := q.Starved(context.Background()); err != nil || starved {
		t.Fatalf("after the worker: starved %v (%v)", starved, err)
	}
}

// Open leaves a stream that exists as it is (an operator's, with replicas
// or limits of their own) but refuses one the queue cannot rely on: not a
// work queue, so an acked task would stay and a duplicate id go unchecked.
func TestOpenChecksAnExistingStream(t *testing.T) {
	s := startServer(t)
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: StreamName, Subjects: []string{Subject}, MaxMsgs: 1000}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, nc, Config{}); err == nil || !strings.Contains(err.Error(), "no work queue") {
		t.Fatalf("Open on a limits stream: %v", err)
	}
	if err := js.DeleteStream(ctx, StreamName); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: StreamName, Subjects: []string{Subject}, Retention: jetstream.WorkQueuePolicy, MaxMsgs: 1000}); err != nil {
		t.Fatal(err)
	}
	q, err := Open(ctx, nc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if c := q.Stream.CachedInfo().Config; c.MaxMsgs != 1000 {
		t.Errorf("Open changed the operator's stream: max msgs %d", c.MaxMsgs)
	}
}

// A result larger than the server takes in one message (1 MB by default)
// cannot be stored: the worker stores a failure saying so in its place,
// so the coordinator is answered (call_failed) instead of left waiting.
func TestResultTooLargeToStore(t *testing.T) {
	t.Setenv(testKeyEnv, "sk-test")
	srv := llmtest.New(llmtest.WithResponder(func(*openai.ChatCompletionRequest) string { return strings.Repeat("x", 1<<20+1) }))
	t.Cleanup(srv.Close)
	s := startServer(t)
	q := open(t, s, Config{})
	run(t, newWorker(q, 1))
	b, err := NewCoordinator(q).Send(context.Background(), task(t, provider(srv), 1))
	if err != nil {
		t.Fatal(err)
	}
	var r executor.Result
	if err := json.Unmarshal(b, &r); err != nil || r.Error == nil || r.Error.Kind != executor.KindCallFailed ||
		!strings.Contains(r.Error.Message, "could not store the result") {
		t.Fatalf("result %.300s (%v): want a call_failed saying the result could not be stored", b, err)
	}
	until(func() bool { return pending(t, q) == 0 })
}

// A run that stops waiting (interrupted) takes back its tasks no worker
// has taken: the stream is empty after, nothing is called, and each id
// holds a cancellation, so a later ask publishes again and is answered.
func TestCancelWithdrawsQueuedTasks(t *testing.T) {
	t.Setenv(testKeyEnv, "sk-test")
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	s := startServer(t)
	p := provider(srv)
	q := open(t, s, Config{})
	coord := NewCoordinator(q)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			if _, err := coord.Send(ctx, task(t, p, i)); !errors.Is(err, context.Canceled) {
				t.Errorf("task %d: %v, want cancelled", i, err)
			}
		})
	}
	until(func() bool { return coord.Stats().Published == 3 })
	cancel()
	wg.Wait()
	if st := coord.Stats(); st.Withdrawn != 3 {
		t.Errorf("%+v: want 3 withdrawn", st)
	}
	if n := pending(t, q); n != 0 {
		t.Errorf("%d task(s) still queued", n)
	}
	for i := range 3 {
		e, err := q.Results.Get(context.Background(), fmt.Sprintf("k%d", i))
		var r executor.Result
		if err != nil || json.Unmarshal(e.Value(), &r) != nil || r.Error == nil || r.Error.Kind != executor.KindCancelled {
			t.Errorf("task %d's stored result: %v, want a cancellation", i, err)
		}
	}
	run(t, newWorker(open(t, s, Config{}), 1))
	again := NewCoordinator(open(t, s, Config{}))
	out, err := again.Send(context.Background(), task(t, p, 1))
	answered(t, out, err)
	if st := again.Stats(); st.Published != 1 || st.Duplicates != 0 {
		t.Errorf("asking again: %+v, want 1 publish, not a duplicate", st)
	}
	if n := srv.Count(); n != 1 {
		t.Errorf("%d endpoint calls, want 1 (the task asked again)", n)
	}
}

// A provider one worker found unavailable (a refused key) is unavailable
// to the others: a task of it that reaches another worker within
// RetryUnavailableAfter fails there with the same failure, without a
// request, as a local run's one tripped client fails it.
func TestUnavailableProviderSharedByWorkers(t *testing.T) {
	srv := llmtest.New(llmtest.WithAPIKey("sk-right"))
	t.Cleanup(srv.Close)
	t.Setenv(testKeyEnv, "sk-wrong")
	s := startServer(t)
	coord := NewCoordinator(open(t, s, Config{}))
	p := provider(srv)

	first := newWorker(open(t, s, Config{}), 1)
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); _ = first.Run(ctx) }()
	b1, err := coord.Send(context.Background(), task(t, p, 1))
	if err != nil {
		t.Fatal(err)
	}
	stop()
	<-stopped

	second := newWorker(open(t, s, Config{}), 1)
	second.RetryUnavailableAfter = time.Hour
	run(t, second)
	b2, err := coord.Send(context.Background(), task(t, p, 2))
	if err != nil {
		t.Fatal(err)
	}
	var r1, r2 executor.Result
	if json.Unmarshal(b1, &r1) != nil || json.Unmarshal(b2, &r2) != nil || r1.Error == nil || r2.Error == nil {
		t.Fatalf("results %s, %s: want two failures", b1, b2)
	}
	if r2.Error.Kind != executor.KindProviderUnavailable || r2.Error.Message != r1.Error.Message || len(r2.Error.Attempts) != 0 {
		t.Errorf("second failure %+v; want the first's kind and message (%+v), no attempts", r2.Error, r1.Error)
	}
	if n, st := srv.Count(), second.Stats(); n != 1 || st.Refused != 1 || st.Ran != 0 {
		t.Errorf("%d endpoint calls, second worker %+v; want 1 call, the second task refused", n, st)
	}
}

// A worker whose consumer is deleted under it (an operator reset the
// queue) stops with an error saying so, every fetcher with it.
func TestWorkerStopsWhenItsConsumerIsDeleted(t *testing.T) {
	s := startServer(t)
	q := open(t, s, Config{})
	w := newWorker(open(t, s, Config{}), 4)
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	// Run reads the consumer before it fetches: delete it once it has.
	until(func() bool {
		info, err := q.Stream.Consumer(context.Background(), ConsumerName)
		if err != nil {
			return false
		}
		ci, err := info.Info(context.Background())
		return err == nil && ci.NumWaiting == 4
	})
	if err := q.Stream.DeleteConsumer(context.Background(), ConsumerName); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "consumer") {
		t.Fatalf("Run: %v, want the consumer's end", err)
	}
}
