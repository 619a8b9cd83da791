package httpcall

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

var bg = context.Background()

// throttle ends n attempts of l with a 429 asking for wait, each admitted
// after the previous one ended, and reports how many were congestion.
func throttle(t *testing.T, l *Limiter, n int, wait time.Duration) int {
	t.Helper()
	cuts := 0
	for i := 0; i < n; i++ {
		tk, err := l.Acquire(bg, 1)
		if err != nil {
			t.Fatal(err)
		}
		if l.Throttled(tk, wait) {
			cuts++
		}
	}
	return cuts
}

// TestIsolated429sKeepLimits: with every tenth attempt answered 429, the
// limits never move and nothing pauses: each 429 is its own request's
// business.
func TestIsolated429sKeepLimits(t *testing.T) {
	l := NewLimiter(llmtestClock(), 32, 600, 0)
	for i := 1; i <= 1000; i++ {
		if i%10 == 0 {
			if throttle(t, l, 1, time.Second) != 0 {
				t.Fatalf("429 at attempt %d counted as congestion", i)
			}
			continue
		}
		if _, err := l.Acquire(bg, 1); err != nil {
			t.Fatal(err)
		}
		l.Done(true)
	}
	if s := l.State(); s.Concurrency != 32 || s.RateFactor != 1 || !s.PausedUntil.IsZero() || s.Throttled != 100 || s.Recent429 > 7 {
		t.Fatalf("after 100 isolated 429s in 1000 attempts: %+v, want the limits untouched", s)
	}
}

// TestCongestionCuts: more than a quarter of the last 64 attempts answered
// 429 is congestion: the 17th 429 in a row halves concurrency and the rate
// and pauses new attempts for the server's wait. The cut spends the
// evidence: 16 more 429s do not cut again, the 17th does.
func TestCongestionCuts(t *testing.T) {
	clock := llmtestClock()
	l := NewLimiter(clock, 32, 600, 0)
	if got := throttle(t, l, 16, 0); got != 0 {
		t.Fatalf("16 429s in 64 attempts: %d cuts, want none", got)
	}
	if got := throttle(t, l, 1, 10*time.Second); got != 1 {
		t.Fatal("the 17th 429 did not cut")
	}
	s := l.State()
	if s.Concurrency != 16 || s.RateFactor != 0.5 || s.Recent429 != 0 || !s.PausedUntil.Equal(clock.Now().Add(10*time.Second)) {
		t.Fatalf("after the cut: %+v, want concurrency 16, rate factor 0.5, the window emptied, a 10 s pause", s)
	}
	if got := throttle(t, l, 17, 0); got != 1 || l.State().Concurrency != 8 {
		t.Fatalf("17 more 429s: %d cuts, concurrency %v; want 1 cut, 8", got, l.State().Concurrency)
	}
}

// TestOneCutPerCongestionEvent: 429s from calls admitted before the last
// cut neither cut again nor count as evidence for the next one.
func TestOneCutPerCongestionEvent(t *testing.T) {
	l := NewLimiter(llmtestClock(), 64, 0, 0)
	throttle(t, l, 16, 0)
	t1, _ := l.Acquire(bg, 1)
	t2, _ := l.Acquire(bg, 1)
	if !l.Throttled(t1, 0) || l.Throttled(t2, 0) {
		t.Fatal("want the first 429 of the round to cut and the second not")
	}
	if s := l.State(); s.Concurrency != 32 || s.Throttled != 18 || s.Recent429 != 0 || s.RateFactor != 1 {
		t.Fatalf("after two 429s of one round: %+v, want concurrency 32, 18 throttled, no evidence kept, rate factor untouched", s)
	}
}

// TestConcurrencySlots: a call beyond the limit queues until a slot frees;
// a queued call whose context ends leaves the queue.
func TestConcurrencySlots(t *testing.T) {
	l := NewLimiter(llmtest.NewFakeClock(time.Time{}), 2, 0, 0)
	for i := 0; i < 2; i++ {
		if _, err := l.Acquire(bg, 1); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(bg)
	gaveUp := make(chan error)
	go func() { _, err := l.Acquire(ctx, 1); gaveUp <- err }()
	waitFor(t, func() bool { return l.State().Waiting == 1 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait returned %v", err)
	}
	if s := l.State(); s.Waiting != 0 || s.InFlight != 2 {
		t.Fatalf("after cancel: %+v, want 0 waiting, 2 in flight", s)
	}
	got := make(chan error)
	go func() { _, err := l.Acquire(bg, 1); got <- err }()
	waitFor(t, func() bool { return l.State().Waiting == 1 })
	l.Done(true)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if s := l.State(); s.Waiting != 0 || s.InFlight != 2 {
		t.Fatalf("after hand-over: %+v, want 0 waiting, 2 in flight", s)
	}
}

// waitFor polls a condition another goroutine will make true; it bounds a
// wait for a goroutine to block, not the speed of the code under test.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 5000; i++ {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition never became true")
}

// TestCongestionPausesEveryCall: the Retry-After of a congestion 429
// pauses the whole provider, not only the call that received it.
func TestCongestionPausesEveryCall(t *testing.T) {
	clock := llmtestClock()
	l := NewLimiter(clock, 4, 0, 0)
	throttle(t, l, 16, 0)
	throttle(t, l, 1, 10*time.Second)
	if got := l.State().PausedUntil; !got.Equal(llmtest.Epoch.Add(10 * time.Second)) {
		t.Fatalf("PausedUntil = %v", got)
	}
	clock.Advance(4 * time.Second)
	if _, err := l.Acquire(bg, 1); err != nil {
		t.Fatal(err)
	}
	if got := clock.Sleeps(); len(got) != 1 || got[0] != 6*time.Second {
		t.Fatalf("sleeps = %v, want [6s]", got)
	}
}

// TestTokenBucketRefund pins the x/time/rate behaviour the refund relies on:
// a negative reservation returns tokens, capped at the burst on the next use.
func TestTokenBucketRefund(t *testing.T) {
	now := llmtest.Epoch
	l := rate.NewLimiter(1, 10)
	l.ReserveN(now, 10)
	l.ReserveN(now, -4)
	if got := l.TokensAt(now); got != 4 {
		t.Fatalf("tokens after refund = %v, want 4", got)
	}
	l.ReserveN(now, -20)
	if got := l.TokensAt(now); got != 10 {
		t.Fatalf("tokens after over-refund = %v, want the burst, 10", got)
	}
}

func llmtestClock() *llmtest.FakeClock { return llmtest.NewFakeClock(time.Time{}) }
