package httpcall

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Defaults of the circuit breaker; stages/llm re-exports them and declares
// the provider settings that override them.
const (
	// DefaultBreakerFailures is how many consecutive failed attempts (5xx,
	// timeouts, connection failures; retries count, each attempt is a
	// request the provider failed) declare a provider unavailable.
	DefaultBreakerFailures = 20
	// DefaultBreakerWindow is how long attempts may keep failing without a
	// single success before the provider is declared unavailable, however
	// few they were: slow failures (timeouts) never reach the count.
	DefaultBreakerWindow = 2 * time.Minute
	// RateLimitRefusals is how many requests in a row answered 429, each
	// sent once the wait the previous one asked for (Retry-After, the
	// reset headers, else the back-off) was over, with no success between
	// them, declare a provider unavailable: a quota spent, or a limit the
	// server never lifts. It is one call's default retry budget
	// (DefaultMaxRetries + 1 attempts), so with the default back-off a
	// provider is given at least a minute (1+2+4+8+16+32 s; half that with
	// jitter) to lift its limit. 429s that arrive while a counted one's
	// wait is running (a burst of calls refused together, new calls
	// refused in passing) do not count: one wait honoured is one refusal.
	RateLimitRefusals = DefaultMaxRetries + 1
)

// CodeInsufficientQuota is the error code of an exhausted account quota
// (OpenAI sends it with a 429): no retry and no later call can succeed.
const CodeInsufficientQuota = "insufficient_quota"

// ErrorCode is the code an *Error carries for an error object's code and
// type: the code, except that an exhausted quota is recognised by either
// (OpenAI sends both; some gateways only the type).
func ErrorCode(code, typ string) string {
	if code == "" && typ == CodeInsufficientQuota {
		return CodeInsufficientQuota
	}
	return code
}

// ErrUnavailable is the sentinel every *UnavailableError matches with
// errors.Is: the provider was declared unavailable and the call was failed
// (or stopped) without reaching it. stages/llm exports it as
// llm.ErrProviderUnavailable.
var ErrUnavailable = errors.New("provider unavailable")

// UnavailableError is the failure of a call to a provider whose breaker has
// tripped. The call that tripped it gets it wrapping its own failure; every
// later call gets it at once, without a request. errors.As reaches the
// *Error of the failure that tripped the breaker through Unwrap.
type UnavailableError struct {
	Provider string
	Reason   string // why the provider was declared unavailable, e.g. "credentials refused"
	Cause    *Error // the failed attempt that tripped the breaker; Attempts counts this call's attempts
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("provider %q unavailable (%s; later calls fail without a request): %s", e.Provider, e.Reason, e.Cause.detail())
}

// Is makes every UnavailableError match ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

func (e *UnavailableError) Unwrap() error { return e.Cause }

// Breaker declares one provider unavailable, for every caller sharing it,
// once its failures show that no call can succeed: at once on refused
// credentials or an exhausted quota; after Failures consecutive failed
// attempts, or Window of attempts failing without a success, when the
// server is down; and after RateLimitRefusals 429s in a row, each sent
// after the previous one's wait, when it only ever rate-limits. It stays
// tripped for the Client's life: credentials are read once, and a run
// stopped this way resumes from the cache when rerun.
//
// Until the provider's first good reply, attempts go one at a time (the
// probe): the first request probes the key and the endpoint, so a wrong key
// costs one request, not one per concurrent caller. A 429 does not prove
// the endpoint (a spent quota answers nothing else), and while probing the
// wait the last counted 429 asked for holds every call's next attempt, not
// only its own: an endpoint answering only 429 costs RateLimitRefusals
// requests however many calls wait on it. Once proven, an isolated 429
// delays only its own call (the Limiter slows the provider when 429s are
// congestion); but probeAfterRefusals counted 429s in a row send the
// provider back to probing until its next success, and an attempt that was
// admitted freely and is still queued for the limits then queues for the
// probe instead (Admission.Current).
type Breaker struct {
	clock    Clock
	provider string
	failures int
	window   time.Duration

	probe   chan struct{}   // held by the one attempt in flight while probing
	downCtx context.Context // done when tripped
	trip    context.CancelFunc

	mu      sync.Mutex
	probing bool          // attempts go one at a time: before the first good reply, and in a rate-limit streak
	open    chan struct{} // closed when probing ends; a new one each time it starts
	gen     uint64        // bumped each time probing starts again
	failed  int           // consecutive failed attempts
	since   time.Time     // when the first of them failed
	refused int           // 429s counted since the last success
	waitEnd time.Time     // when the wait of the last counted 429 ends
	err     *UnavailableError
}

// probeAfterRefusals is how many counted 429s in a row send a proven
// provider back to one attempt at a time: a 429, its wait honoured, and
// another 429 with nothing succeeding meanwhile is the provider refusing
// everyone, not one request.
const probeAfterRefusals = 2

// NewBreaker makes the breaker of one provider; failures and window of 0
// take the defaults.
func NewBreaker(clock Clock, provider string, failures int, window time.Duration) *Breaker {
	if failures <= 0 {
		failures = DefaultBreakerFailures
	}
	if window <= 0 {
		window = DefaultBreakerWindow
	}
	b := &Breaker{clock: clock, provider: provider, failures: failures, window: window,
		probe: make(chan struct{}, 1), probing: true, open: make(chan struct{})}
	b.downCtx, b.trip = context.WithCancel(context.Background())
	return b
}

func noop() {}

// Admission is an attempt's turn, from Admit. Release it once the
// attempt's outcome is recorded (or the attempt is given up).
type Admission struct {
	b     *Breaker
	probe bool   // holds the probe
	gen   uint64 // the probing generation it was admitted in, when admitted freely
}

// Release gives the turn back.
func (a Admission) Release() {
	if a.probe {
		<-a.b.probe
	}
}

// Current reports whether the turn still stands: a probe's always does; a
// free one only while the provider has not gone back to probing since it
// was given. An attempt that queued for the rate limits meanwhile must not
// go: the provider refuses everyone, and one probe at a time asks.
func (a Admission) Current() bool {
	if a.b == nil || a.probe {
		return true
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return !a.b.probing && a.b.gen == a.gen
}

// Admit waits for an attempt's turn: at once while the provider is proven
// and not in a rate-limit streak, else for the probe and for the end of the
// last counted 429's wait. It fails with ErrUnavailable once the breaker
// has tripped, or with ctx's error.
func (b *Breaker) Admit(ctx context.Context) (Admission, error) {
	if b == nil {
		return Admission{}, nil
	}
	for {
		b.mu.Lock()
		probing, open, gen := b.probing, b.open, b.gen
		b.mu.Unlock()
		select {
		case <-b.downCtx.Done():
			return Admission{}, ErrUnavailable
		default:
		}
		if !probing {
			return Admission{b: b, gen: gen}, nil
		}
		select {
		case <-b.downCtx.Done():
			return Admission{}, ErrUnavailable
		case <-open:
			// Probing ended meanwhile: take a free turn.
		case b.probe <- struct{}{}:
			a := Admission{b: b, probe: true}
			if err := b.honourWait(ctx); err != nil {
				a.Release()
				return Admission{}, err
			}
			return a, nil
		case <-ctx.Done():
			return Admission{}, ctx.Err()
		}
	}
}

// honourWait holds the probe until the wait of the last counted 429 is
// over, unless probing ends meanwhile.
func (b *Breaker) honourWait(ctx context.Context) error {
	for {
		b.mu.Lock()
		end, probing := b.waitEnd, b.probing
		b.mu.Unlock()
		now := b.clock.Now()
		if !probing || !now.Before(end) {
			return nil
		}
		if err := b.clock.Sleep(ctx, end.Sub(now)); err != nil {
			return err
		}
	}
}

// Bind returns ctx, also ended when the breaker trips, for the waits of a
// call (rate limits, back-off): a call must not sleep on a provider already
// declared unavailable. Attempts themselves keep ctx: one in flight may
// still succeed, and its answer is paid for.
func (b *Breaker) Bind(ctx context.Context) (context.Context, func()) {
	if b == nil {
		return ctx, noop
	}
	wctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(b.downCtx, cancel)
	return wctx, func() { stop(); cancel() }
}

// Err is nil until the breaker trips; then it is the error of a call that
// made attempts attempts before it was stopped.
func (b *Breaker) Err(attempts int) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		return nil
	}
	cause := *b.err.Cause
	cause.Attempts = attempts
	return &UnavailableError{Provider: b.err.Provider, Reason: b.err.Reason, Cause: &cause}
}

// Record takes one attempt's outcome (nil: a success), the time it was
// sent and the wait its caller honours before the next attempt (the
// server's, else the back-off). It returns the *UnavailableError to fail
// the call with when this attempt tripped the breaker, else nil.
//
// Refused credentials (401, 403) and an exhausted quota trip it at once.
// Server-side failures (5xx, timeouts, connection failures, cut replies:
// the transient failures other than 429) count towards Failures and Window;
// only a success resets them. A 429 sent once the last counted one's wait
// was over counts towards RateLimitRefusals, and starts a wait of its own;
// only a success resets them too. Another client error is neither: the
// server answered, so it proves the endpoint and the key for the probe,
// but it is no success.
func (b *Breaker) Record(e *Error, sent time.Time, wait time.Duration) *UnavailableError {
	if b == nil {
		return nil
	}
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return nil // tripped by another attempt; Err tells this call
	}
	switch {
	case e == nil:
		b.failed, b.refused, b.waitEnd = 0, 0, time.Time{}
		b.stopProbing()
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return b.tripLocked("credentials refused", e)
	case e.Code == CodeInsufficientQuota:
		return b.tripLocked("quota exhausted", e)
	case e.Status == http.StatusTooManyRequests:
		if sent.Before(b.waitEnd) {
			return nil // refused while a counted refusal's wait ran: the same refusal
		}
		b.refused++
		b.waitEnd = now.Add(wait)
		if b.refused >= RateLimitRefusals {
			return b.tripLocked(fmt.Sprintf("rate limited: %d requests in a row answered 429, each sent after the wait the one before asked for, and none succeeded", b.refused), e)
		}
		if b.refused >= probeAfterRefusals && !b.probing {
			b.probing, b.open = true, make(chan struct{})
			b.gen++
		}
	case e.Retryable:
		if b.failed == 0 {
			b.since = now
		}
		b.failed++
		if b.failed >= b.failures {
			return b.tripLocked(fmt.Sprintf("%d consecutive failed requests", b.failed), e)
		}
		if d := now.Sub(b.since); d >= b.window {
			return b.tripLocked(fmt.Sprintf("no success in %s while requests kept failing (%d failed)", d.Round(time.Second), b.failed), e)
		}
	default:
		b.stopProbing()
	}
	return nil
}

// CountsAsFailure is whether e counts towards breaker_failures and
// breaker_seconds: a transient failure other than a 429 (a 5xx, a timeout,
// a connection failure, a cut reply).
func CountsAsFailure(e *Error) bool {
	return e != nil && e.Retryable && e.Status != http.StatusTooManyRequests &&
		e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden && e.Code != CodeInsufficientQuota
}

// Fleet takes the count of consecutive failed attempts that every process
// sharing the provider's key recorded together (SharedHealth): n of them,
// the first at since, last the latest (0: none since a success). It
// stands for the breaker's own count (the fleet's includes this
// process's) and trips the breaker as
// Record does, at Failures or after Window of failing, had all the
// attempts been this process's. It returns the *UnavailableError when it
// tripped the breaker.
func (b *Breaker) Fleet(n int, since time.Time, last *Error) *UnavailableError {
	if b == nil {
		return nil
	}
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return nil
	}
	if n <= 0 {
		b.failed = 0 // another process's success reset the count
		return nil
	}
	b.failed, b.since = n, since
	if n >= b.failures {
		return b.tripLocked(fmt.Sprintf("%d consecutive failed requests by the processes sharing its key", n), last)
	}
	if d := now.Sub(since); d >= b.window {
		return b.tripLocked(fmt.Sprintf("no success in %s while requests kept failing (%d failed, by the processes sharing its key)", d.Round(time.Second), n), last)
	}
	return nil
}

// stopProbing lets attempts go freely again; b.mu must be held.
func (b *Breaker) stopProbing() {
	if b.probing {
		b.probing = false
		close(b.open)
	}
}

// tripLocked declares the provider unavailable; b.mu must be held.
func (b *Breaker) tripLocked(reason string, e *Error) *UnavailableError {
	b.err = &UnavailableError{Provider: b.provider, Reason: reason, Cause: e}
	b.trip()
	return b.err
}

// BreakerState is a snapshot of a provider's breaker.
type BreakerState struct {
	Failed      int   // consecutive failed attempts
	Refused     int   // 429s counted towards RateLimitRefusals since the last success
	Unavailable error // the *UnavailableError once tripped, else nil
}

func (b *Breaker) State() BreakerState {
	if b == nil {
		return BreakerState{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := BreakerState{Failed: b.failed, Refused: b.refused}
	if b.err != nil {
		s.Unavailable = b.err
	}
	return s
}
