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
	"math"
	"sync"
	"sync/atomic"
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
	factor   atomic.Uint64 // bits of the slowdown factor last read (0: 1, never read)
}

// The shared value is the TAT, then the slowdown: the share of the rate
// that 429s have left (a congestion Slow halves it, each Recover wins back
// RecoveryShare, never below MinFactor or above 1) and when it was last
// cut. A booking's cost is divided by the factor, so one process's cut
// slows every process sharing the value. A value of 8 bytes (the TAT
// alone, as earlier versions wrote it) has factor 1.
type value struct {
	tat    time.Time
	factor float64
	cutAt  time.Time
}

const (
	// MinFactor is how far congestion may slow the shared rate (as the
	// client's own limiter: 1/64).
	MinFactor = 1.0 / 64
	// RecoveryShare is the share of the rate one success wins back (as the
	// client's own limiter: half speed to full in 25 successes, fleet-wide).
	RecoveryShare = 0.02
)

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
	for range maxConflicts {
		v, rev, err := g.load(ctx)
		if err != nil {
			return time.Time{}, err
		}
		tat := v.tat
		if tat.Before(now) {
			tat = now
		}
		inc := time.Duration(cost * float64(g.interval) / v.factor)
		newTAT := tat.Add(inc)
		sendAt := newTAT.Add(-inc - g.tau)
		if sendAt.Before(now) {
			sendAt = now
		}
		v.tat = newTAT
		ok, err := g.state.CompareAndSet(ctx, v.encode(), rev)
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
		v, rev, err := g.load(ctx)
		if err != nil {
			return err
		}
		if !v.tat.Before(floor) {
			return nil
		}
		v.tat = floor
		ok, err := g.state.CompareAndSet(ctx, v.encode(), rev)
		if err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
		if ok {
			return nil
		}
	}
	return errors.New("rate limit: the shared state keeps changing under every write")
}

// Slow is congestion seen by one sharer (its client found more than a
// quarter of its recent attempts answered 429): it halves the factor for
// every sharer, unless a cut was made at or after admitted (when the
// attempt refused was let through): a round of requests refused together
// is one congestion event, however many sharers saw it. It reports
// whether it cut.
func (g *GCRA) Slow(ctx context.Context, admitted time.Time) (bool, error) {
	for range maxConflicts {
		v, rev, err := g.load(ctx)
		if err != nil {
			return false, err
		}
		if !v.cutAt.Before(admitted) || v.factor <= MinFactor {
			return false, nil
		}
		v.factor, v.cutAt = max(MinFactor, v.factor/2), g.now()
		ok, err := g.state.CompareAndSet(ctx, v.encode(), rev)
		if err != nil {
			return false, fmt.Errorf("rate limit: %w", err)
		}
		if ok {
			g.factor.Store(math.Float64bits(v.factor))
			return true, nil
		}
	}
	return false, errors.New("rate limit: the shared state keeps changing under every write")
}

// Recover is one success: it wins back RecoveryShare of the rate for every
// sharer. It writes only while the factor last read is below 1, so a
// limit that was never slowed costs no write a request.
func (g *GCRA) Recover(ctx context.Context) error {
	if g.Factor() >= 1 {
		return nil
	}
	for range maxConflicts {
		v, rev, err := g.load(ctx)
		if err != nil {
			return err
		}
		if v.factor >= 1 {
			return nil
		}
		v.factor = min(1, v.factor+RecoveryShare)
		ok, err := g.state.CompareAndSet(ctx, v.encode(), rev)
		if err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
		if ok {
			g.factor.Store(math.Float64bits(v.factor))
			return nil
		}
	}
	return errors.New("rate limit: the shared state keeps changing under every write")
}

// Factor is the slowdown factor as last read (1 before any read).
func (g *GCRA) Factor() float64 {
	if b := g.factor.Load(); b != 0 {
		return math.Float64frombits(b)
	}
	return 1
}

func (g *GCRA) load(ctx context.Context) (value, uint64, error) {
	b, rev, err := g.state.Load(ctx)
	if err != nil {
		return value{}, 0, fmt.Errorf("rate limit: %w", err)
	}
	v := decode(b)
	g.factor.Store(math.Float64bits(v.factor))
	return v, rev, nil
}

// decode reads a shared value; one never written (or not ours) is no debt
// and no slowdown.
func decode(b []byte) value {
	v := value{factor: 1}
	if len(b) != 8 && len(b) != 24 {
		return v
	}
	v.tat = time.Unix(0, int64(binary.BigEndian.Uint64(b)))
	if len(b) == 24 {
		if f := math.Float64frombits(binary.BigEndian.Uint64(b[8:])); f >= MinFactor && f <= 1 {
			v.factor = f
		}
		if c := int64(binary.BigEndian.Uint64(b[16:])); c != 0 {
			v.cutAt = time.Unix(0, c)
		}
	}
	return v
}

func (v value) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(v.tat.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.factor))
	var cut int64
	if !v.cutAt.IsZero() {
		cut = v.cutAt.UnixNano()
	}
	return binary.BigEndian.AppendUint64(b, uint64(cut))
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
