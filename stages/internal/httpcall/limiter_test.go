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

// TestOneCutPerCongestionEvent: 429s from calls admitted before the last cut
// do not cut again.
func TestOneCutPerCongestionEvent(t *testing.T) {
	l := NewLimiter(llmtest.NewFakeClock(time.Time{}), 8, 0, 0)
	t1, _ := l.Acquire(bg, 1)
	t2, _ := l.Acquire(bg, 1)
	l.Throttled(t1, 0)
	l.Throttled(t2, 0)
	if got := l.State().Concurrency; got != 4 {
		t.Fatalf("after two 429s of one round: concurrency %v, want 4", got)
	}
	l.Done(false)
	l.Done(false)
	t3, _ := l.Acquire(bg, 1)
	l.Throttled(t3, 0)
	l.Done(false)
	if got := l.State(); got.Concurrency != 2 || got.Throttled != 3 || got.RateFactor != 1 {
		t.Fatalf("after a 429 of the next round: %+v, want concurrency 2, 3 throttled, rate factor untouched", got)
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

// TestServerWaitPausesEveryCall: a Retry-After pauses the whole provider,
// not only the call that received it.
func TestServerWaitPausesEveryCall(t *testing.T) {
	clock := llmtest.NewFakeClock(time.Time{})
	l := NewLimiter(clock, 4, 0, 0)
	tk, _ := l.Acquire(bg, 1)
	l.Throttled(tk, 10*time.Second)
	l.Done(false)
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
