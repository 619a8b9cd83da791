package httpcall

import (
	"context"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pausingClock is the clock of a process stopped from from to to (kill
// -STOP, then -CONT) inside a synctest bubble, whose time is virtual: no
// goroutine runs in the pause, so every sleep due to end inside it ends at
// its end, late.
type pausingClock struct {
	start    time.Time
	from, to time.Duration
}

func (c pausingClock) Now() time.Time { return time.Now() }

func (c pausingClock) Sleep(ctx context.Context, d time.Duration) error {
	end := time.Now().Add(d)
	if off := end.Sub(c.start); off >= c.from && off < c.to {
		end = c.start.Add(c.to)
	}
	return RealClock.Sleep(ctx, time.Until(end))
}

// maxIn is the largest number of the sorted times inside any window [t, t+w).
func maxIn(times []time.Time, w time.Duration) int {
	best, lo := 0, 0
	for hi := range times {
		for !times[lo].Add(w).After(times[hi]) {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// TestNoBurstAfterPause: 16 attempts in flight at once against 60 requests
// per minute (1/s, burst 1), and the process stopped from 2.5 s to 10 s.
// No 1 s window may hold more than the rate plus the burst (2), and the time
// the pause took is not made up: after it, starts go on 1 s apart from its
// end.
func TestNoBurstAfterPause(t *testing.T) {
	tests := []struct {
		name     string
		rpm, tpm float64
		tokens   int64
	}{
		{"requests per minute", 60, 0, 1},
		{"tokens per minute", 0, 600, 10}, // 10 tokens/s, 10 per attempt
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clock := pausingClock{start: time.Now(), from: 2500 * time.Millisecond, to: 10 * time.Second}
				l := NewLimiter(clock, 16, tt.rpm, tt.tpm)
				var mu sync.Mutex
				var starts []time.Time
				var wg sync.WaitGroup
				for w := 0; w < 16; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 2; i++ {
							tk, err := l.Acquire(bg, tt.tokens)
							if err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							starts = append(starts, time.Now())
							mu.Unlock()
							l.Correct(tk, tt.tokens)
							l.Done(true)
						}
					}()
				}
				wg.Wait()
				sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
				if got := maxIn(starts, time.Second); got > 2 {
					t.Errorf("a 1 s window holds %d starts, want at most 2 (rate 1/s + burst 1)", got)
				}
				// Starts at 0, 1 and 2 s; the one due at 3 s wakes at 10 s;
				// then one per second.
				for i, at := range starts {
					want := time.Duration(i) * time.Second
					if i >= 3 {
						want = 10*time.Second + time.Duration(i-3)*time.Second
					}
					if got := at.Sub(clock.start); got != want {
						t.Fatalf("start %d at %v, want %v", i, got, want)
					}
				}
			})
		})
	}
}

// TestPacerCancel: an attempt whose context ends while it waits for budget
// gives up its turn and its slot, and takes no budget.
func TestPacerCancel(t *testing.T) {
	clock := llmtestClock()
	l := NewLimiter(clock, 4, 60, 0)
	if _, err := l.Acquire(bg, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := l.Acquire(ctx, 1); err == nil {
		t.Fatal("a cancelled wait for budget succeeded")
	}
	if s := l.State(); s.InFlight != 1 {
		t.Fatalf("after the cancelled wait: %+v, want 1 in flight", s)
	}
	if _, err := l.Acquire(bg, 1); err != nil {
		t.Fatal(err)
	}
	if got := clock.Sleeps(); len(got) != 1 || got[0] != time.Second {
		t.Fatalf("sleeps = %v, want [1s]: the cancelled attempt took no budget", got)
	}
}

// lateClock wakes every sleep late by a fixed lateness, as a loaded machine's
// timers do, inside a synctest bubble.
type lateClock struct{ late time.Duration }

func (c lateClock) Now() time.Time { return time.Now() }

func (c lateClock) Sleep(ctx context.Context, d time.Duration) error {
	return RealClock.Sleep(ctx, d+c.late)
}

// TestLateWakesKeepTheRate: at 60 requests per minute with every wake late,
// a lateness within lateWake of the interval is given back (the first start
// goes at once, start i >= 1 at i seconds plus one lateness: the configured
// rate),
// no 1 s window holds more than the rate plus the burst, and a lateness
// beyond lateWake is lost on every request, not made up.
func TestLateWakesKeepTheRate(t *testing.T) {
	tests := []struct {
		late time.Duration
		span time.Duration // first to last of 30 starts
	}{
		{0, 29 * time.Second},
		{5 * time.Millisecond, 29*time.Second + 5*time.Millisecond},
		{200 * time.Millisecond, 29*time.Second + 200*time.Millisecond},    // within lateWake (250 ms)
		{400 * time.Millisecond, 29*time.Second + 29*400*time.Millisecond}, // beyond: each lateness lost
	}
	for _, tt := range tests {
		t.Run(tt.late.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := NewLimiter(lateClock{tt.late}, 4, 60, 0)
				start := time.Now()
				var mu sync.Mutex
				var starts []time.Time
				var wg sync.WaitGroup
				for w := 0; w < 4; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 30 / 4 {
							if _, err := l.Acquire(bg, 1); err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							starts = append(starts, time.Now())
							mu.Unlock()
							l.Done(true)
						}
					}()
				}
				wg.Wait()
				for range 30 - 4*(30/4) {
					if _, err := l.Acquire(bg, 1); err != nil {
						t.Fatal(err)
					}
					starts = append(starts, time.Now())
					l.Done(true)
				}
				sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
				if len(starts) != 30 {
					t.Fatalf("%d starts, want 30", len(starts))
				}
				if got := starts[29].Sub(starts[0]); got != tt.span {
					t.Errorf("30 starts span %v, want %v", got, tt.span)
				}
				if starts[0] != start {
					t.Errorf("first start at %v, want at once", starts[0].Sub(start))
				}
				if got := maxIn(starts, time.Second); got > 2 {
					t.Errorf("a 1 s window holds %d starts, want at most 2 (rate 1/s + burst 1)", got)
				}
			})
		})
	}
}
