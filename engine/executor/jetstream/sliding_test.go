package jetstream

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/engine/executor/ratelimit"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// simClock is time as the workers sleeping on it see it: a worker books
// a slot, then sleeps until it; time passes only while every worker
// sleeps, and then it jumps to the earliest slot slept for and wakes that
// worker alone. Bookings are instants, as they are beside the slots'
// spacing on a real clock; demand exceeds the limit (a worker woken books
// again at once).
type simClock struct {
	mu       sync.Mutex
	t        time.Time
	active   int                         // workers not finished
	sleeping map[chan struct{}]time.Time // each sleeper's wake-up channel and slot
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Sleep is sleepUntil now+d (the ratelimit.Clock of the shared limits).
func (c *simClock) Sleep(_ context.Context, d time.Duration) error {
	c.sleepUntil(c.Now().Add(d))
	return nil
}

// sleepUntil blocks until the clock reaches at.
func (c *simClock) sleepUntil(at time.Time) {
	ch := make(chan struct{})
	c.mu.Lock()
	c.sleeping[ch] = at
	c.step()
	c.mu.Unlock()
	<-ch
}

// done is a worker finished: it no longer holds time back.
func (c *simClock) done() {
	c.mu.Lock()
	c.active--
	c.step()
	c.mu.Unlock()
}

// step wakes the earliest sleeper once every active worker sleeps; c.mu
// must be held.
func (c *simClock) step() {
	if c.active == 0 || len(c.sleeping) < c.active {
		return
	}
	var first chan struct{}
	for ch, at := range c.sleeping {
		if first == nil || at.Before(c.sleeping[first]) {
			first = ch
		}
	}
	if at := c.sleeping[first]; at.After(c.t) {
		c.t = at
	}
	delete(c.sleeping, first)
	close(first)
}

// Several workers' shared limits (ratelimit.Shared, each on a connection
// of its own, as processes are) over one KV bucket book requests as fast
// as they are given slots, each sleeping until its slot on a simulated
// clock (simClock). Whatever
// the interleaving of their compare-and-sets, the booked times are one
// every binding interval exactly (the GCRA's burst of 1: the first at
// once), so any sliding window W holds exactly ceil(W/T) of them: never
// more than the window's share of requests_per_minute plus the burst,
// and their tokens never more than tokens_per_minute in 60 s; and the
// booked rate is the limit itself (>= 95% asserted, 100% exact).
//
// One limit a case: with both set, the requests and tokens bookings are
// two compare-and-sets on two keys, and two workers interleaving them
// (one first on requests, the other first on tokens) each wait for the
// later of their slots: a slot of each limit is lost, so the slots are
// not exactly T apart (the limit still holds, the rate drops a little).
func TestSharedLimitSlidingWindows(t *testing.T) {
	tests := []struct {
		name          string
		rpm, tpm      float64
		tokens        int64 // each request's estimate
		workers, each int
		interval      time.Duration // the binding limit's spacing
	}{
		{name: "requests bind", rpm: 60, tokens: 100, workers: 4, each: 40, interval: time.Second},
		{name: "tokens bind", tpm: 3000, tokens: 100, workers: 4, each: 40, interval: 2 * time.Second},
		{name: "one worker", rpm: 600, tokens: 10, workers: 1, each: 650, interval: 100 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t)
			t0 := time.Unix(1_800_000_000, 0)
			clock := &simClock{t: t0, active: tc.workers, sleeping: map[chan struct{}]time.Time{}}
			p := llm.NewProvider("fake", "openai")
			p.BaseURL, p.APIKeyEnv, p.RequestsPerMinute, p.TokensPerMinute = "http://x/v1", testKeyEnv, tc.rpm, tc.tpm
			var mu sync.Mutex
			var slots []time.Time
			var wg sync.WaitGroup
			for range tc.workers {
				q := open(t, s, Config{})
				sl, err := SharedLimitsAt(func(key string) ratelimit.State { return NewKVState(q.Limits, key) }, clock)(p)
				if err != nil {
					t.Fatal(err)
				}
				shared := sl.(*ratelimit.Shared)
				wg.Go(func() {
					defer clock.done()
					for range tc.each {
						at, err := shared.Reserve(context.Background(), tc.tokens)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						slots = append(slots, at)
						mu.Unlock()
						clock.sleepUntil(at)
					}
				})
			}
			wg.Wait()
			slices.SortFunc(slots, func(a, b time.Time) int { return a.Compare(b) })
			if len(slots) != tc.workers*tc.each {
				t.Fatalf("%d slots, want %d", len(slots), tc.workers*tc.each)
			}
			for k, at := range slots {
				if want := t0.Add(time.Duration(k) * tc.interval); !at.Equal(want) {
					t.Fatalf("slot %d at %v, want %v", k, at.Sub(t0), want.Sub(t0))
				}
			}
			for _, w := range []time.Duration{time.Second, time.Minute} {
				got := llmtest.MostInWindow(slots, nil, w)
				if want := int(math.Ceil(float64(w) / float64(tc.interval))); got != want {
					t.Errorf("%v window: at most %d requests, want %d", w, got, want)
				}
				if allow := w.Minutes()*max(tc.rpm, tc.tpm/float64(tc.tokens)) + 1; float64(got) > allow {
					t.Errorf("%v window: %d requests, over the limit's %v and the burst", w, got, allow)
				}
				if tc.tpm > 0 && w == time.Minute && float64(int64(got)*tc.tokens) > tc.tpm {
					t.Errorf("%d tokens in a minute, over %v", int64(got)*tc.tokens, tc.tpm)
				}
			}
			perMinute := float64(len(slots)-1) / slots[len(slots)-1].Sub(slots[0]).Minutes()
			limit := tc.rpm
			if tc.tpm > 0 {
				limit = tc.tpm / float64(tc.tokens)
			}
			if perMinute < 0.95*limit || perMinute > limit*(1+1e-9) {
				t.Errorf("booked %.3f a minute, want the limit %v", perMinute, limit)
			}
		})
	}
}
