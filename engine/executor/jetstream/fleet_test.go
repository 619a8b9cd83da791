package jetstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/engine/executor/ratelimit"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// fleetClient is one worker's client of p: its own connection to s, its
// shared limits and breaker count over the limits bucket (unless shared
// is false: a client alone), on clock.
func fleetClient(t *testing.T, s *EmbeddedServer, p llm.Provider, clock *llmtest.FakeClock, shared bool) llm.Client {
	t.Helper()
	opts := []llm.Option{llm.WithClock(clock), llm.WithJitter(func(d time.Duration) time.Duration { return d })}
	if shared {
		q := open(t, s, Config{})
		opts = append(opts, llm.WithSharedLimits(SharedLimitsAt(func(key string) ratelimit.State { return NewKVState(q.Limits, key) }, clock)))
	}
	c, err := llm.New(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ask(c llm.Client, i int) error {
	_, err := c.Complete(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf("question %d", i)}}})
	return err
}

// The breaker's count of failures is the fleet's: two workers' clients of
// one provider (breaker_failures 3, no retries) take turns against an
// endpoint answering 500; the third failure in total, whoever's, trips the
// breaker of the worker that saw it, and the other worker's next call
// fails as provider unavailable without a request; a success between
// failures resets the count for both. Alone (no shared state) each worker
// counts its own, as before: six failures between them trip neither.
func TestSharedBreakerCount(t *testing.T) {
	type step struct {
		worker int  // 0 or 1
		ok     bool // the endpoint answers (else 500); ignored when no request is due
		want   string
	}
	const (
		answered = "answered"
		failed   = "failed"  // a 500, the provider still available
		tripped  = "tripped" // the 500 that made it unavailable
		refused  = "refused" // unavailable, no request
	)
	tests := []struct {
		name     string
		shared   bool
		steps    []step
		requests int
	}{
		{name: "turns", shared: true, requests: 3, steps: []step{
			{0, false, failed}, {1, false, failed}, {0, false, tripped}, {1, false, refused}, {0, false, refused}}},
		{name: "two on one worker", shared: true, requests: 3, steps: []step{
			{0, false, failed}, {0, false, failed}, {1, false, tripped}, {0, false, refused}, {1, false, refused}}},
		{name: "a success resets both", shared: true, requests: 6, steps: []step{
			{0, false, failed}, {1, false, failed}, {0, true, answered}, {1, false, failed}, {0, false, failed},
			{1, false, tripped}, {0, false, refused}}},
		{name: "alone", shared: false, requests: 6, steps: []step{
			{0, false, failed}, {1, false, failed}, {0, false, failed}, {1, false, failed}, {0, true, answered}, {1, false, tripped}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(testKeyEnv, "sk-test")
			srv := llmtest.New()
			t.Cleanup(srv.Close)
			s := startServer(t)
			p := provider(srv)
			p.BreakerFailures = 3
			clock := llmtest.NewFakeClock(time.Time{})
			workers := []llm.Client{fleetClient(t, s, p, clock, tc.shared), fleetClient(t, s, p, clock, tc.shared)}
			for i, st := range tc.steps {
				before := srv.Count()
				if st.want != refused {
					if st.ok {
						srv.Enqueue(llmtest.Fault{})
					} else {
						srv.Enqueue(llmtest.Fault{Status: http.StatusInternalServerError})
					}
				}
				err := ask(workers[st.worker], i)
				var got string
				switch sent := srv.Count() > before; {
				case err == nil:
					got = answered
				case errors.Is(err, llm.ErrProviderUnavailable) && sent:
					got = tripped
				case errors.Is(err, llm.ErrProviderUnavailable):
					got = refused
				default:
					got = failed
				}
				if got != st.want {
					t.Fatalf("step %d (worker %d): %s (%v), want %s", i, st.worker, got, err, st.want)
				}
				if got == refused && !strings.Contains(err.Error(), "500") {
					t.Errorf("step %d: %v does not carry the failure that tripped it", i, err)
				}
			}
			if n := srv.Count(); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

// A congestion 429 seen by one worker lowers every worker's pace: worker
// A's client (requests_per_minute 60: one a second) has 17 of its last 34
// attempts answered 429, more than a quarter of them, and halves the
// shared rate; worker B, which saw no 429, then sends its requests 2 s
// apart on the fake clock (the first booking at half the rate), the next
// 1/0.52 s apart (its success won 2% back). Alone, B keeps its 1 s.
func TestSharedSlowdown(t *testing.T) {
	recovered := 0.5 // as the shared state computes it, in float64
	recovered += ratelimit.RecoveryShare
	tests := []struct {
		name   string
		shared bool
		gaps   []time.Duration // between B's requests' arrivals
		factor float64         // the shared requests limit's factor after A's 429s (0: none shared)
	}{
		{name: "shared", shared: true, factor: 0.5,
			gaps: []time.Duration{2 * time.Second, time.Duration(float64(time.Second) / recovered)}},
		{name: "alone", shared: false, gaps: []time.Duration{time.Second, time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(testKeyEnv, "sk-test")
			clock := llmtest.NewFakeClock(time.Time{})
			srv := llmtest.New(llmtest.WithClock(clock.Now))
			t.Cleanup(srv.Close)
			s := startServer(t)
			p := provider(srv)
			p.RequestsPerMinute = 60
			a, b := fleetClient(t, s, p, clock, tc.shared), fleetClient(t, s, p, clock, tc.shared)
			if err := ask(a, 0); err != nil {
				t.Fatal(err)
			}
			for i := range 17 {
				srv.Enqueue(llmtest.Fault{Status: http.StatusTooManyRequests, Code: "rate_limit_exceeded"})
				if err := ask(a, 1+2*i); err == nil {
					t.Fatal("a 429 answered")
				}
				if i < 16 {
					if err := ask(a, 2+2*i); err != nil {
						t.Fatal(err)
					}
				}
			}
			if st := a.(llm.Limited).Limits(); st.RateFactor != 0.5 {
				t.Fatalf("A's own rate factor %v, want 0.5: the 429s were not congestion", st.RateFactor)
			}
			if tc.shared {
				e, err := open(t, s, Config{}).Limits.Get(context.Background(), LimitKey(p, "requests"))
				if err != nil {
					t.Fatal(err)
				}
				g, _ := ratelimit.New(NewKVState(open(t, s, Config{}).Limits, LimitKey(p, "requests")), ratelimit.Limit{PerMinute: 60}, clock.Now)
				if _, err := g.Reserve(context.Background(), 0); err != nil || g.Factor() != tc.factor {
					t.Fatalf("shared factor %v (%v; value %x), want %v", g.Factor(), err, e.Value(), tc.factor)
				}
			}
			before := srv.Count()
			for i := range len(tc.gaps) + 1 {
				if err := ask(b, 100+i); err != nil {
					t.Fatal(err)
				}
			}
			reqs := srv.Requests()[before:]
			for i, want := range tc.gaps {
				if got := reqs[i+1].Time.Sub(reqs[i].Time); got != want {
					t.Errorf("B's requests %d and %d %v apart, want %v", i, i+1, got, want)
				}
			}
		})
	}
}
