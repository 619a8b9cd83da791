// Package ratelimit is one rate limit shared by every process that sends
// with one API key: GCRA (the generic cell rate algorithm) over a single
// shared value, its theoretical arrival time (TAT), moved by compare-and-set.
// Each reservation reads the TAT, computes the new one and writes it only if
// nobody wrote in between (else it reads again), so N workers on N machines
// together send at the limit, not N times it. A 429's Retry-After moves the
// same value (Hold), so every worker backs off, not only the one refused.
//
// The shared value lives behind State: Memory for one process (and tests);
// a JetStream KV key (jetstream.KVState: its revision is the CAS token,
// Create for revision 0, Update(key, value, revision) otherwise) for
// workers on several machines. Shared puts a provider's requests and
// tokens per minute together, as its client waits on them.
package ratelimit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// State is a shared value with compare-and-set.
type State interface {
	// Load returns the value and its revision; revision 0: never written.
	Load(ctx context.Context) (value []byte, rev uint64, err error)
	// CompareAndSet writes value if the revision is still rev; false when
	// another writer was first.
	CompareAndSet(ctx context.Context, value []byte, rev uint64) (bool, error)
}

// Limit is a rate and how many sends may go at once after a quiet spell.
type Limit struct {
	PerMinute float64 // units (requests, or tokens) per minute; must be > 0
	Burst     float64 // units that may go at once; < 1 counts as 1
}

// GCRA reserves sends against a shared State.
type GCRA struct {
	state    State
	interval time.Duration // one unit's share of the rate (T)
	tau      time.Duration // burst tolerance: (Burst-1) * T
	now      func() time.Time
}

// New is a limiter over state. now is the clock (time.Now when nil);
// every process sharing state must use a wall clock (TATs are absolute).
func New(state State, l Limit, now func() time.Time) (*GCRA, error) {
	if l.PerMinute <= 0 {
		return nil, fmt.Errorf("rate limit: %v per minute: want more than 0", l.PerMinute)
	}
	if now == nil {
		now = time.Now
	}
	t := time.Duration(float64(time.Minute) / l.PerMinute)
	b := max(l.Burst, 1)
	return &GCRA{state: state, interval: t, tau: time.Duration((b - 1) * float64(t)), now: now}, nil
}

// maxConflicts bounds the CAS retries of one reservation: each conflict
// means another writer moved the TAT, so the loop always progresses; the
// bound only turns a broken State into an error.
const maxConflicts = 10000

// Reserve books cost units and returns when they may be sent (never before
// now). The booking holds whether or not the caller waits: it is the
// caller's slot.
func (g *GCRA) Reserve(ctx context.Context, cost float64) (time.Time, error) {
	return g.ReserveAt(ctx, cost, g.now())
}

// ReserveAt is Reserve as of now, a time the caller read once for several
// limits (Shared books requests and tokens at one instant, so that the
// clock moving between the two bookings cannot push the request past the
// slot the first one booked). A now a little in the past books as the
// limit stood then: the slots stay T apart, as every booking's are.
func (g *GCRA) ReserveAt(ctx context.Context, cost float64, now time.Time) (time.Time, error) {
	inc := time.Duration(cost * float64(g.interval))
	for range maxConflicts {
		tat, rev, err := g.load(ctx)
		if err != nil {
			return time.Time{}, err
		}
		if tat.Before(now) {
			tat = now
		}
		newTAT := tat.Add(inc)
		sendAt := newTAT.Add(-inc - g.tau)
		if sendAt.Before(now) {
			sendAt = now
		}
		ok, err := g.state.CompareAndSet(ctx, encode(newTAT), rev)
		if err != nil {
			return time.Time{}, fmt.Errorf("rate limit: %w", err)
		}
		if ok {
			return sendAt, nil
		}
	}
	return time.Time{}, errors.New("rate limit: the shared state keeps changing under every write")
}

// Wait reserves cost units and sleeps until they may go.
func (g *GCRA) Wait(ctx context.Context, cost float64) error {
	at, err := g.Reserve(ctx, cost)
	if err != nil {
		return err
	}
	d := at.Sub(g.now())
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hold makes every sharer wait until until (a 429's Retry-After): no
// reservation made afterwards is sent before it.
func (g *GCRA) Hold(ctx context.Context, until time.Time) error {
	floor := until.Add(g.tau) // sendAt = TAT - tau must not precede until
	for range maxConflicts {
		tat, rev, err := g.load(ctx)
		if err != nil {
			return err
		}
		if !tat.Before(floor) {
			return nil
		}
		ok, err := g.state.CompareAndSet(ctx, encode(floor), rev)
		if err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
		if ok {
			return nil
		}
	}
	return errors.New("rate limit: the shared state keeps changing under every write")
}

func (g *GCRA) load(ctx context.Context) (time.Time, uint64, error) {
	v, rev, err := g.state.Load(ctx)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("rate limit: %w", err)
	}
	if rev == 0 || len(v) != 8 {
		return time.Time{}, rev, nil // never written (or not ours): no debt
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v))), rev, nil
}

func encode(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano()))
}

// Memory is a State in one process.
type Memory struct {
	mu    sync.Mutex
	value []byte
	rev   uint64
}

func (m *Memory) Load(context.Context) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.value, m.rev, nil
}

func (m *Memory) CompareAndSet(_ context.Context, v []byte, rev uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rev != m.rev {
		return false, nil
	}
	m.value, m.rev = v, m.rev+1
	return true, nil
}
