package ratelimit

import (
	"context"
	"encoding/binary"
	"testing"
	"time"
)

// The slowdown is shared: a cut by one limiter halves the cost-per-unit
// rate of every limiter over the state; a second 429 of an attempt
// admitted before that cut does not cut again (one round, one cut), one
// admitted after it does; the factor stops at MinFactor; each Recover
// wins RecoveryShare back, and at factor 1 Recover writes nothing. A value
// of 8 bytes (an earlier version's TAT alone) reads as factor 1.
func TestSlowdownShared(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	now := t0
	clock := func() time.Time { return now }
	state := &Memory{}
	a, _ := New(state, Limit{PerMinute: 60}, clock)
	b, _ := New(state, Limit{PerMinute: 60}, clock)

	if err := a.Recover(ctx); err != nil || state.rev != 0 {
		t.Fatalf("Recover at factor 1 wrote (rev %d, %v)", state.rev, err)
	}
	steps := []struct {
		admitted time.Duration // of the attempt refused, from t0
		at       time.Duration // when the cut is asked for
		cut      bool
		factor   float64
	}{
		{admitted: 0, at: time.Second, cut: true, factor: 0.5},
		{admitted: 500 * time.Millisecond, at: 2 * time.Second, cut: false, factor: 0.5}, // admitted before the cut at 1 s
		{admitted: 1500 * time.Millisecond, at: 3 * time.Second, cut: true, factor: 0.25},
		{admitted: 4 * time.Second, at: 5 * time.Second, cut: true, factor: 0.125},
		{admitted: 6 * time.Second, at: 7 * time.Second, cut: true, factor: 1.0 / 16},
		{admitted: 8 * time.Second, at: 9 * time.Second, cut: true, factor: 1.0 / 32},
		{admitted: 10 * time.Second, at: 11 * time.Second, cut: true, factor: MinFactor},
		{admitted: 12 * time.Second, at: 13 * time.Second, cut: false, factor: MinFactor},
	}
	for i, st := range steps {
		now = t0.Add(st.at)
		g := []*GCRA{a, b}[i%2]
		cut, err := g.Slow(ctx, t0.Add(st.admitted))
		if err != nil || cut != st.cut {
			t.Fatalf("step %d: cut %v (%v), want %v", i, cut, err, st.cut)
		}
		if _, err := b.Reserve(ctx, 0); err != nil || b.Factor() != st.factor {
			t.Fatalf("step %d: b reads factor %v (%v), want %v", i, b.Factor(), err, st.factor)
		}
	}
	// At 1/64 of 60 a minute a request costs 64 s: b's next two go 64 s apart.
	now = t0.Add(time.Hour)
	first, _ := b.Reserve(ctx, 1)
	second, _ := a.Reserve(ctx, 1)
	if second.Sub(first) != 64*time.Second {
		t.Fatalf("requests %v apart at factor 1/64, want 64s", second.Sub(first))
	}
	for range 3 {
		if err := a.Recover(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := MinFactor
	for range 3 {
		want = min(1, want+RecoveryShare)
	}
	if _, err := b.Reserve(ctx, 0); b.Factor() != want || err != nil {
		t.Fatalf("factor %v after 3 successes, want %v", b.Factor(), want)
	}

	old := &Memory{value: binary.BigEndian.AppendUint64(nil, uint64(t0.UnixNano())), rev: 1}
	g, _ := New(old, Limit{PerMinute: 60}, func() time.Time { return t0 })
	at, err := g.Reserve(ctx, 1)
	if err != nil || !at.Equal(t0) || g.Factor() != 1 || len(old.value) != 24 {
		t.Fatalf("over an 8-byte value: send at %v, factor %v, value %d bytes (%v)", at, g.Factor(), len(old.value), err)
	}
}

// The shared breaker count: failures add up whoever records them, a
// success resets them (and writes nothing when there are none), and the
// count keeps when the first failed and the last failure.
func TestHealthCount(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	now := t0
	state := &Memory{}
	a, b := NewHealth(state, func() time.Time { return now }), NewHealth(state, func() time.Time { return now })
	if err := a.Succeeded(ctx); err != nil || state.rev != 0 {
		t.Fatalf("a success with no failures wrote (rev %d, %v)", state.rev, err)
	}
	for i, h := range []*Health{a, b, a} {
		now = t0.Add(time.Duration(i) * time.Second)
		n, since, err := h.Failed(ctx, 500+i, "down")
		if err != nil || n != i+1 || !since.Equal(t0) {
			t.Fatalf("failure %d: count %d since %v (%v)", i, n, since.Sub(t0), err)
		}
	}
	if n, since, status, msg, err := b.Failures(ctx); n != 3 || !since.Equal(t0) || status != 502 || msg != "down" || err != nil {
		t.Fatalf("Failures = %d, %v, %d, %q, %v", n, since, status, msg, err)
	}
	if err := b.Succeeded(ctx); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(time.Minute)
	if n, since, err := a.Failed(ctx, 500, "down"); n != 1 || !since.Equal(now) || err != nil {
		t.Fatalf("after the success: count %d since %v (%v), want 1 from now", n, since, err)
	}
}
