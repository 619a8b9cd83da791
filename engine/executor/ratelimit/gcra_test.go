package ratelimit

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// Six workers, each with a limiter of its own over one shared state (as six
// processes over one KV key), reserve 50 sends each at one instant of a
// frozen clock: whatever the interleaving, the 300 slots are exactly the
// burst at once, then one every interval, and no window of a minute holds
// more than the limit plus the burst.
func TestSharedLimitAcrossWorkers(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return t0 }
	state := &Memory{}
	const workers, each, perMinute, burst = 6, 50, 60.0, 5.0
	var mu sync.Mutex
	var slots []time.Time
	var wg sync.WaitGroup
	for range workers {
		g, err := New(state, Limit{PerMinute: perMinute, Burst: burst}, now)
		if err != nil {
			t.Fatal(err)
		}
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
		want := t0
		if k >= burst {
			want = t0.Add(time.Duration(k-burst+1) * time.Second) // 60/min: one a second
		}
		if !at.Equal(want) {
			t.Fatalf("slot %d at %v, want %v", k, at.Sub(t0), want.Sub(t0))
		}
	}
	for i := range slots {
		j := i
		for j < len(slots) && slots[j].Sub(slots[i]) < time.Minute {
			j++
		}
		if j-i > perMinute+burst {
			t.Fatalf("%d sends in the minute from %v", j-i, slots[i].Sub(t0))
		}
	}
}

// A 429's Retry-After, told by one worker, holds every worker's next send.
func TestHoldMovesEveryWorker(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return t0 }
	state := &Memory{}
	a, _ := New(state, Limit{PerMinute: 600, Burst: 3}, now)
	b, _ := New(state, Limit{PerMinute: 600, Burst: 3}, now)
	if err := a.Hold(context.Background(), t0.Add(7*time.Second)); err != nil {
		t.Fatal(err)
	}
	at, err := b.Reserve(context.Background(), 1)
	if err != nil || !at.Equal(t0.Add(7*time.Second)) {
		t.Fatalf("b's send at %v (%v), want 7s", at.Sub(t0), err)
	}
	// Tokens count by cost: 600 units/min is 100ms a unit, burst 3 is 200ms
	// of tolerance. The hold put the TAT at 7.2s, b's send at 7.3s; a's 30
	// units go at 7.1s and take the TAT to 10.3s; b's next goes at 10.1s.
	at, _ = a.Reserve(context.Background(), 30)
	if want := t0.Add(7*time.Second + 100*time.Millisecond); !at.Equal(want) {
		t.Fatalf("a's send at %v, want %v", at.Sub(t0), want.Sub(t0))
	}
	at, _ = b.Reserve(context.Background(), 1)
	if want := t0.Add(10100 * time.Millisecond); !at.Equal(want) {
		t.Fatalf("b's next send at %v, want %v", at.Sub(t0), want.Sub(t0))
	}
	if _, err := New(state, Limit{}, now); err == nil {
		t.Fatal("a zero rate was accepted")
	}
}
