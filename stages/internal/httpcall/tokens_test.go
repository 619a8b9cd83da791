package httpcall

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestTokenBudget: the ledger and the pacer of tokens_per_minute = 1200
// (20 tokens a second), step by step.
func TestTokenBudget(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at        time.Duration
		take      int64         // estimate to start, or 0 to settle instead
		wantDelay time.Duration // for a take
		settle    int           // index of the step whose start to settle
		used      int64
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"estimate used in full: spaced by it, then held by the window", []step{
			{at: 0, take: 1000},
			{at: 0, settle: 0, used: 1000},
			{at: 0, take: 1000, wantDelay: time.Minute}, // pacer: 50 s; ledger: the first leaves the window at 60 s
			{at: time.Minute, take: 1000},
		}},
		{"usage a fifth of the estimate: the rest comes back at once", []step{
			{at: 0, take: 1000},
			{at: time.Second, settle: 0, used: 200},
			{at: time.Second, take: 1000, wantDelay: 9 * time.Second},  // 200 tokens at 20/s: due at 10 s
			{at: 10 * time.Second, take: 1000},                         // predicted 200: 1000 + 200 in flight and settled fit in 1200
			{at: 10 * time.Second, take: 1000, wantDelay: time.Minute}, // the ledger: 1200 held until the one in flight settles or leaves the window
		}},
		{"usage above the estimate delays what follows", []step{
			{at: 0, take: 100},
			{at: 0, settle: 0, used: 300},
			{at: 0, take: 100, wantDelay: 15 * time.Second},
		}},
		{"a request larger than the budget goes into an empty window", []step{
			{at: 0, take: 5000},
			{at: 0, take: 100, wantDelay: 250 * time.Second}, // pacer: 5000 at 20/s
		}},
		{"idle time is not saved up", []step{
			{at: 0, take: 100},
			{at: 0, settle: 0, used: 100},
			{at: time.Hour, take: 100},
			{at: time.Hour, take: 100, wantDelay: 5 * time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTokenBudget(1200)
			type started struct {
				id   uint64
				est  int64
				pred float64
			}
			starts := map[int]started{}
			for i, s := range tt.steps {
				now := t0.Add(s.at)
				if s.take == 0 {
					st := starts[s.settle]
					b.settle(st.id, st.est, st.pred, s.used)
					continue
				}
				d, id, pred := b.take(now, s.take)
				if d != s.wantDelay {
					t.Fatalf("step %d: delay %v, want %v", i, d, s.wantDelay)
				}
				if d == 0 {
					starts[i] = started{id, s.take, pred}
				}
			}
		})
	}
}

// TestSettlingWakesThePacer: a call waiting for token budget starts as soon
// as a call in flight reports using less than its estimate, not when the
// wait computed from the estimate ends.
func TestSettlingWakesThePacer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := NewLimiter(RealClock, 4, 0, 1200) // 20 tokens a second
		first, err := l.Acquire(bg, 1000)
		if err != nil {
			t.Fatal(err)
		}
		started := make(chan time.Duration)
		go func() {
			tk, err := l.Acquire(bg, 1000)
			if err != nil {
				t.Error(err)
			}
			started <- time.Since(start)
			l.Correct(tk, 200)
			l.Done(true)
		}()
		synctest.Wait() // asleep: the first holds 1000 of 1200, due again at 50 s
		time.Sleep(time.Second)
		l.Correct(first, 200) // 800 back: due at 10 s
		l.Done(true)
		if got := <-started; got != 10*time.Second {
			t.Errorf("the waiting call started at %v, want 10s", got)
		}
	})
}
