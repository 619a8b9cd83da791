package httpcall

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

const (
	// minRateFactor is how far repeated 429s may slow the configured rates.
	minRateFactor = 1.0 / 64
	// rateRecovery is the share of the configured rate won back per success:
	// from half speed to full in 25 successful calls.
	rateRecovery = 0.02
	// congestionWindow and congestionShare tell congestion from isolated
	// 429s: a 429 is congestion when more than a quarter of the provider's
	// last 64 attempts were 429s. Below that the server is rejecting a few
	// requests, not the load: each such request waits for its own retry, and
	// cutting the limits for it would cost far more than its wait (halving
	// 32 slots for every 10th request answered 429 made a run 9 times
	// slower). Above it, the load is too high and the limits come down.
	congestionWindow = 64
	congestionShare  = 0.25
)

// LimitState is a snapshot of a provider's adaptive limits.
type LimitState struct {
	InFlight       int
	Waiting        int     // calls queued for a concurrency slot
	Concurrency    float64 // effective concurrency limit (AIMD); calls run while InFlight < floor(Concurrency)
	MaxConcurrency int
	RateFactor     float64 // share of requests/tokens per minute currently allowed (AIMD)
	Throttled      int64   // 429 replies seen
	Recent429      int     // 429s among the last congestionWindow attempts since the last cut
	PausedUntil    time.Time
}

// Limiter enforces one provider's limits for every stage sharing its Client.
//
// Concurrency is a FIFO semaphore whose size adapts: a congestion 429
// halves it (multiplicative decrease) and every success adds 1/size to it
// (additive increase: about one slot per round of successes), between 1 and
// the configured maximum — TCP's congestion avoidance, as in promptfoo's
// and Inspect's adaptive concurrency. Requests and tokens per minute are
// token buckets (x/time/rate) driven with explicit times from the injected
// clock, and scaled by a rate factor that congestion halves and successes
// restore.
//
// The response to 429s is proportional to how many there are. A 429 is
// congestion only when more than congestionShare of the last
// congestionWindow attempts were 429s; an isolated one leaves the limits
// alone (its request waits for its own retry, freeing its slot meanwhile).
// Congestion cuts once per round, as before, and pauses new attempts
// until the server's Retry-After: when most requests are being refused,
// none should go before the time the server named.
//
// A slot is taken before rate budget: only slot holders wait for budget, one
// at a time in arrival order, and budget is taken at the instant an attempt
// goes, never reserved ahead (see take), so no window of time sees more
// starts than the rate plus the burst allow, whatever the scheduling delays.
type Limiter struct {
	clock Clock
	max   int

	rpm     *rate.Limiter // nil: unlimited
	rpmAt   time.Time     // the latest time handed to rpm; see rpmTime
	rpmDue  time.Time     // when the last request that went was due
	rpmBase float64       // configured requests per second
	tpm     *tokenBudget  // nil: unlimited; guarded by mu
	tpmMax  int64         // largest estimate taken: the whole per-minute budget

	pacer chan struct{} // held by the one attempt waiting for rate budget
	// wakePacer ends the sleep of the attempt waiting for rate budget, so
	// that it recomputes its wait when settled usage gives budget back;
	// nil while none sleeps. Guarded by mu.
	wakePacer func()

	mu          sync.Mutex
	limit       float64
	inUse       int
	waiters     []chan struct{}
	epoch       uint64 // bumped by every decrease; see Throttled
	factor      float64
	throttledN  int64
	pausedUntil time.Time
	recent      [congestionWindow]bool // ring of the last attempts' outcomes: true for a 429
	recentNext  int
	recent429   int // true entries in recent
}

// NewLimiter makes the limiter of one provider: at most maxConc attempts at
// once, rpm requests and tpm tokens per minute (0: unlimited).
func NewLimiter(clock Clock, maxConc int, rpm, tpm float64) *Limiter {
	l := &Limiter{clock: clock, max: maxConc, limit: float64(maxConc), factor: 1, pacer: make(chan struct{}, 1)}
	if rpm > 0 {
		// Burst 1 spaces requests evenly, so that any 60 s window holds at
		// most requests_per_minute starts; a larger burst would let a full
		// bucket plus a minute of refill through in one window.
		l.rpmBase = rpm / 60
		l.rpm = rate.NewLimiter(rate.Limit(l.rpmBase), 1)
	}
	if tpm > 0 {
		l.tpm = newTokenBudget(tpm)
		l.tpmMax = max(1, int64(tpm))
	}
	return l
}

// Ticket is one admitted attempt.
type Ticket struct {
	epoch  uint64
	tokens int64   // tokens taken from the per-minute budget (0: none)
	id     uint64  // the start's entry in the token ledger
	pred   float64 // the usage the token pacer expected of it
}

// Acquire admits one attempt: a concurrency slot, the end of any
// congestion pause, then request and token budget. The caller must end the
// attempt with Done, Throttled or Cancel.
func (l *Limiter) Acquire(ctx context.Context, tokens int64) (Ticket, error) {
	if err := l.slot(ctx); err != nil {
		return Ticket{}, err
	}
	t, err := l.pace(ctx, tokens)
	if err != nil {
		l.Cancel()
		return Ticket{}, err
	}
	return t, nil
}

func (l *Limiter) size() int {
	return min(l.max, max(1, int(l.limit)))
}

func (l *Limiter) slot(ctx context.Context) error {
	l.mu.Lock()
	if len(l.waiters) == 0 && l.inUse < l.size() {
		l.inUse++
		l.mu.Unlock()
		return nil
	}
	ch := make(chan struct{}, 1)
	l.waiters = append(l.waiters, ch)
	l.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		for i, w := range l.waiters {
			if w == ch {
				l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
				l.mu.Unlock()
				return ctx.Err()
			}
		}
		l.mu.Unlock()
		// Granted while we were giving up: hand the slot on.
		l.Cancel()
		return ctx.Err()
	}
}

// wake grants slots to waiters in arrival order; l.mu must be held.
func (l *Limiter) wake() {
	for len(l.waiters) > 0 && l.inUse < l.size() {
		ch := l.waiters[0]
		l.waiters = l.waiters[1:]
		l.inUse++
		ch <- struct{}{}
	}
}

func (l *Limiter) pace(ctx context.Context, tokens int64) (Ticket, error) {
	t := Ticket{}
	if l.tpm != nil {
		t.tokens = min(max(tokens, 1), l.tpmMax)
	}
	if l.rpm != nil || l.tpm != nil {
		// One attempt at a time waits for budget, in arrival order.
		select {
		case l.pacer <- struct{}{}:
		case <-ctx.Done():
			return Ticket{}, ctx.Err()
		}
		defer func() { <-l.pacer }()
	}
	for {
		now := l.clock.Now()
		l.mu.Lock()
		if until := l.pausedUntil; now.Before(until) {
			l.mu.Unlock()
			if err := l.clock.Sleep(ctx, until.Sub(now)); err != nil {
				return Ticket{}, err
			}
			continue
		}
		delay := l.take(now, &t)
		if delay == 0 {
			t.epoch = l.epoch
			l.mu.Unlock()
			return t, nil
		}
		sctx, wake := ctx, func() {}
		if l.tpm != nil {
			sctx, wake = context.WithCancel(ctx)
			l.wakePacer = wake
		}
		l.mu.Unlock()
		err := l.clock.Sleep(sctx, delay)
		l.mu.Lock()
		l.wakePacer = nil
		l.mu.Unlock()
		wake()
		if ctx.Err() != nil {
			return Ticket{}, ctx.Err()
		}
		if err != nil && sctx == ctx {
			return Ticket{}, err
		}
	}
}

// paceSlack absorbs the float rounding of x/time/rate: a budget that is due
// within it counts as there.
const paceSlack = time.Microsecond

// take takes one request and n tokens of budget at now if both are there,
// and returns 0; otherwise it takes nothing and returns how long until they
// will be. Budget is only ever taken at the moment the attempt goes: a
// reservation of a future instant, slept on, would fire late together with
// every other one when the process wakes from a pause (SIGSTOP, a laptop
// lid, a stalled VM), bursting past the limit; taken at the real time, the
// budget a pause let accumulate is capped by the bucket's burst, and the
// time lost is not made up. l.mu must be held.
func (l *Limiter) take(now time.Time, t *Ticket) time.Duration {
	var delay time.Duration
	var reqRes *rate.Reservation
	var at time.Time
	if l.rpm != nil {
		at = l.rpmTime(now)
		reqRes = l.rpm.ReserveN(at, 1)
		delay = reqRes.DelayFrom(now)
	}
	if l.tpm != nil && delay <= paceSlack {
		var d time.Duration
		if d, t.id, t.pred = l.tpm.take(now, t.tokens); d > paceSlack {
			delay = d
		}
	}
	if delay <= paceSlack {
		if reqRes != nil {
			l.rpmDue = at.Add(reqRes.DelayFrom(at))
		}
		return 0
	}
	// Nothing else reserved in between (l.mu is held), so cancelling gives
	// back exactly what was reserved (the token budget took nothing).
	if reqRes != nil {
		reqRes.CancelAt(at)
	}
	return delay
}

// lateWake is how late, as a share of the request interval, an attempt may
// go after its request was due and still be counted as going when due. A
// pacer sleeps until its request is due and wakes a little late (timer and
// scheduler latency, about 0.5 ms a wake on a loaded 2-core machine); with a
// burst of 1 the bucket is full at the due time and that lateness was lost on
// every request: 1.1% of the configured rate over 1,000 requests. Counting a
// slightly late start at its due time gives the lateness back without
// admitting a burst: due times stay at least an interval T apart and each
// start lies within lateWake*T after its due time, so any window of length W
// holds at most floor((W + lateWake*T)/T) + 1 starts, which for W = 1 s is
// the per-second rate plus the burst of 1, as before. A start later than that
// (a pause, an idle provider) counts from when it goes: the time is lost,
// not made up.
const lateWake = 0.25

// rpmTime is the time at which the request bucket is read for an attempt at
// now: the next due time when now is at most lateWake intervals past it,
// else now; never earlier than a time handed to the bucket before (x/time/rate
// counts refill from the last time it saw, so its times must not go
// backwards). l.mu must be held.
func (l *Limiter) rpmTime(now time.Time) time.Time {
	at := now
	if !l.rpmDue.IsZero() {
		interval := time.Duration(float64(time.Second) / float64(l.rpm.Limit()))
		due := l.rpmDue.Add(interval)
		if late := now.Sub(due); late >= 0 && late <= time.Duration(lateWake*float64(interval)) {
			at = due
		}
	}
	if at.Before(l.rpmAt) {
		at = l.rpmAt
	}
	l.rpmAt = at
	return at
}

// Correct settles the token budget once the server reported usage: the
// start's charge becomes the usage, tokens beyond the estimate delay later
// calls, tokens not used are given back at once, and the attempt waiting
// for budget, if any, wakes to see them.
func (l *Limiter) Correct(t Ticket, used int64) {
	if l.tpm == nil || t.tokens == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tpm.settle(t.id, t.tokens, t.pred, used)
	if l.wakePacer != nil {
		l.wakePacer()
		l.wakePacer = nil
	}
}

// Done releases the slot of an attempt that ended in a success or in a
// failure other than a 429 (see Throttled). A success grows the adaptive
// limits.
func (l *Limiter) Done(success bool) {
	l.mu.Lock()
	l.inUse--
	l.record(false)
	if success {
		if l.limit < float64(l.max) {
			l.limit = math.Min(float64(l.max), l.limit+1/l.limit)
		}
		if l.factor < 1 {
			l.factor = math.Min(1, l.factor+rateRecovery)
			l.applyFactor()
		}
	}
	l.wake()
	l.mu.Unlock()
}

// Cancel releases the slot of an admitted attempt that was never sent, or
// whose caller gave up: it says nothing about the provider.
func (l *Limiter) Cancel() {
	l.mu.Lock()
	l.inUse--
	l.wake()
	l.mu.Unlock()
}

// Throttled releases the slot of an attempt answered 429 (retryable: an
// exhausted quota is no congestion) and reports whether the 429 was
// congestion. wait is the server's Retry-After, if any.
//
// A congestion 429 halves concurrency and the rate factor and pauses new
// attempts until now+wait. Only the first one among the attempts admitted
// since the last cut acts, and 429s of attempts admitted before it are not
// recorded: a round of in-flight calls that all hit the same limit is one
// congestion event, not many, and their evidence is spent by the cut.
func (l *Limiter) Throttled(t Ticket, wait time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inUse--
	defer l.wake()
	l.throttledN++
	if t.epoch != l.epoch {
		return false
	}
	l.record(true)
	if float64(l.recent429) <= congestionShare*congestionWindow {
		return false
	}
	l.epoch++
	l.recent, l.recent429 = [congestionWindow]bool{}, 0
	l.limit = math.Max(1, l.limit/2)
	if l.rpm != nil || l.tpm != nil {
		l.factor = math.Max(minRateFactor, l.factor/2)
		l.applyFactor()
	}
	if wait > 0 {
		if until := l.clock.Now().Add(wait); until.After(l.pausedUntil) {
			l.pausedUntil = until
		}
	}
	return true
}

// record adds an attempt's outcome to the congestion window; l.mu must be held.
func (l *Limiter) record(throttled bool) {
	if l.recent[l.recentNext] {
		l.recent429--
	}
	l.recent[l.recentNext] = throttled
	if throttled {
		l.recent429++
	}
	l.recentNext = (l.recentNext + 1) % congestionWindow
}

// applyFactor sets the buckets' rates from the factor; l.mu must be held.
func (l *Limiter) applyFactor() {
	now := l.clock.Now()
	if l.rpm != nil {
		l.rpm.SetLimitAt(l.rpmTime(now), rate.Limit(l.rpmBase*l.factor))
	}
	if l.tpm != nil {
		l.tpm.setFactor(l.factor)
	}
}

func (l *Limiter) State() LimitState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LimitState{
		InFlight: l.inUse, Waiting: len(l.waiters), Concurrency: l.limit, MaxConcurrency: l.max, RateFactor: l.factor,
		Throttled: l.throttledN, Recent429: l.recent429, PausedUntil: l.pausedUntil,
	}
}

// Rates are the current requests and tokens per second (0: unlimited).
func (l *Limiter) Rates() (requests, tokens float64) {
	if l.rpm != nil {
		requests = float64(l.rpm.Limit())
	}
	if l.tpm != nil {
		l.mu.Lock()
		tokens = l.tpm.rate
		l.mu.Unlock()
	}
	return requests, tokens
}
