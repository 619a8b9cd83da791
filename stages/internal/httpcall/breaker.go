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
)

// CodeInsufficientQuota is the error code of an exhausted account quota
// (OpenAI sends it with a 429): no retry and no later call can succeed.
const CodeInsufficientQuota = "insufficient_quota"

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
// credentials or an exhausted quota, and after Failures consecutive failed
// attempts, or Window of attempts failing without a success, when the
// server is down. It stays tripped for the Client's life: credentials are
// read once, and a run stopped this way resumes from the cache when rerun.
//
// Until the provider's first good reply, attempts go one at a time: the
// first request probes the key and the endpoint, so a wrong key costs one
// request, not one per concurrent caller.
type Breaker struct {
	clock    Clock
	provider string
	failures int
	window   time.Duration

	probe   chan struct{}   // held by the one attempt in flight before the first good reply
	proven  chan struct{}   // closed at the first good reply
	downCtx context.Context // done when tripped
	trip    context.CancelFunc

	mu       sync.Mutex
	isProven bool
	failed   int       // consecutive failed attempts
	since    time.Time // when the first of them failed
	err      *UnavailableError
}

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
		probe: make(chan struct{}, 1), proven: make(chan struct{})}
	b.downCtx, b.trip = context.WithCancel(context.Background())
	return b
}

func noop() {}

// Admit waits for an attempt's turn: at once once the provider has given a
// good reply, else for the probe. It fails with ErrUnavailable once the
// breaker has tripped, or with ctx's error. release must be called once the
// attempt's outcome is recorded.
func (b *Breaker) Admit(ctx context.Context) (release func(), err error) {
	if b == nil {
		return noop, nil
	}
	select {
	case <-b.downCtx.Done():
		return nil, ErrUnavailable
	case <-b.proven:
		return noop, nil
	default:
	}
	select {
	case <-b.downCtx.Done():
		return nil, ErrUnavailable
	case <-b.proven:
		return noop, nil
	case b.probe <- struct{}{}:
		return func() { <-b.probe }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
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

// Record takes one attempt's outcome (nil: a success). It returns the
// *UnavailableError to fail the call with when this attempt tripped the
// breaker, else nil.
//
// Refused credentials (401, 403) and an exhausted quota trip it at once.
// Server-side failures (5xx, timeouts, connection failures, cut replies:
// the transient failures other than 429) count towards Failures and Window;
// only a success resets them. A 429 or another client error is neither: the
// server answered, so it proves the endpoint and the key for the probe, but
// it is no success.
func (b *Breaker) Record(e *Error) *UnavailableError {
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
		b.failed = 0
		b.prove()
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return b.tripLocked("credentials refused", e)
	case e.Code == CodeInsufficientQuota:
		return b.tripLocked("quota exhausted", e)
	case e.Retryable && e.Status != http.StatusTooManyRequests:
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
		b.prove()
	}
	return nil
}

// prove opens the probe gate; b.mu must be held.
func (b *Breaker) prove() {
	if !b.isProven {
		b.isProven = true
		close(b.proven)
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
	Unavailable error // the *UnavailableError once tripped, else nil
}

func (b *Breaker) State() BreakerState {
	if b == nil {
		return BreakerState{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := BreakerState{Failed: b.failed}
	if b.err != nil {
		s.Unavailable = b.err
	}
	return s
}
