package httpcall

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"
)

// Reply-size cap: the provider setting, its default and the error. A reply
// over the cap is not retried: the same request earns the same reply.
const (
	ReplyCapSetting = "max_reply_bytes"
	DefaultMaxReply = 4 << 20
	// CodeReplyTooLarge is the Error.Code of a reply over the cap, so a
	// client that batches can ask for less instead.
	CodeReplyTooLarge = "reply_too_large"
)

// Tokens are what one successful attempt used: the server's counts, or the
// caller's estimate when the server gave none.
type Tokens struct{ In, Out int64 }

// Attempt makes one HTTP exchange. ctx carries the per-request timeout and
// cp, which the Transport fills in.
type Attempt func(ctx context.Context, cp *Capture) (Tokens, error)

// Classify reads one failed attempt the way its API reports failures. It
// returns nil for a failure it does not recognise; the Caller then applies
// the generic reading (timeout, cut body, connection failure). It need not
// scrub: the Caller does.
type Classify func(err error, cp *Capture) *Error

// Caller runs attempts under one provider's limits, retry policy and
// breaker. One Caller serves every client of a provider block, so all its
// kinds of call share one set of limits and one breaker.
type Caller struct {
	Provider   string
	Limiter    *Limiter
	Breaker    *Breaker // nil: never declared unavailable
	Clock      Clock
	Log        zerolog.Logger
	Scrub      *Scrubber
	MaxRetries int
	Base, Cap  time.Duration                     // back-off: first wait and ceiling
	Jitter     func(time.Duration) time.Duration // spreads waits; EqualJitter in production
	Timeout    time.Duration                     // per attempt
	MaxReply   int64                             // the Transport's cap, for the error message
	// Shared, when set, is the provider's limits shared with other
	// processes (workers on other machines sending with the same key):
	// every attempt waits on it after the local limits admitted it, and a
	// 429's Retry-After holds it, so every sharer backs off.
	Shared Shared
}

// Shared is a rate limit kept with other processes (see Caller.Shared).
type Shared interface {
	// Wait books one request of tokens estimated tokens and returns when
	// it may be sent.
	Wait(ctx context.Context, tokens int64) error
	// Hold makes every sharer wait d from now before its next request.
	Hold(ctx context.Context, d time.Duration) error
}

// SharedHealth is the breaker's count of failures kept with other
// processes, implemented by a Shared that has one: every attempt reads the
// count before it goes (and the breaker trips on it, without a request,
// once the processes together reached breaker_failures, or failed for
// breaker_seconds), every server failure adds to it, and a success resets
// the failures counted before it was sent. Local counting is unchanged
// without one.
type SharedHealth interface {
	// Failures is the count of consecutive failed attempts, when the first
	// failed, and the last one's status and message.
	Failures(ctx context.Context) (n int, since time.Time, status int, message string, err error)
	// Failed adds one failed attempt (its status and scrubbed message) and
	// returns the count after it and when the first of them failed.
	Failed(ctx context.Context, status int, message string) (n int, since time.Time, err error)
	// Succeeded resets the count.
	Succeeded(ctx context.Context) error
}

// SharedSlowdown is the 429 slowdown kept with other processes,
// implemented by a Shared whose limits carry it: a congestion 429 (see
// Limiter.Throttled) halves the shared rate for every process, once per
// round (an attempt admitted before the last cut does not cut again), and
// each success wins a share back. The Limiter's own slowdown is unchanged.
type SharedSlowdown interface {
	Slow(ctx context.Context, admitted time.Time) error
	Recover(ctx context.Context) error
}

// Do runs attempt until it succeeds, fails for good, or the retry budget is
// spent. est is the token budget taken from tokens_per_minute before each
// attempt. It returns the attempts made and the final HTTP status; a failure
// is an *Error, an *UnavailableError once the provider's breaker has tripped
// (then no further attempt is made, by this call or any later one), or
// ctx's error.
func (c *Caller) Do(ctx context.Context, op, model string, est int64, keepBody bool, attempt Attempt, classify Classify) (int, int, error) {
	// Waits end when the breaker trips: a call queued behind the limits or
	// sleeping before a retry fails at once instead.
	wctx, stop := c.Breaker.Bind(ctx)
	defer stop()
	health, _ := c.Shared.(SharedHealth)
	slow, _ := c.Shared.(SharedSlowdown)
	for n := 1; ; n++ {
		var adm Admission
		var t Ticket
		for {
			var err error
			if adm, err = c.Breaker.Admit(wctx); err != nil {
				return c.stopped(n-1, 0, op, model, "waiting for the provider's turn", err)
			}
			if t, err = c.Limiter.Acquire(wctx, est); err != nil {
				adm.Release()
				return c.stopped(n-1, 0, op, model, "waiting for the rate limits", err)
			}
			if adm.Current() {
				break
			}
			// The provider went back to one attempt at a time while this
			// one queued for the limits: queue for the probe instead.
			c.Limiter.Cancel()
			adm.Release()
		}
		release := adm.Release
		if c.Shared != nil {
			if err := c.Shared.Wait(wctx, est); err != nil {
				c.Limiter.Cancel()
				release()
				return c.stopped(n-1, 0, op, model, "waiting for the shared rate limit", err)
			}
		}
		fleetFailed := c.fleetCheck(ctx, health)
		if err := c.Breaker.Err(n - 1); err != nil { // tripped while this attempt waited for its turn (or by the fleet's count)
			c.Limiter.Cancel()
			release()
			return n - 1, 0, err
		}
		cp := &Capture{KeepBody: keepBody}
		actx, cancel := context.WithTimeout(WithCapture(ctx, cp), c.Timeout)
		start := c.Clock.Now()
		used, callErr := attempt(actx, cp)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if callErr == nil {
			c.Limiter.Done(true)
			c.Limiter.Correct(t, used.In+used.Out)
			c.Breaker.Record(nil, start, 0)
			release()
			if health != nil && fleetFailed > 0 {
				if err := health.Succeeded(ctx); err != nil {
					c.Log.Warn().Err(err).Msg("telling the shared breaker of a success")
				}
			}
			if slow != nil {
				if err := slow.Recover(ctx); err != nil {
					c.Log.Warn().Err(err).Msg("telling the shared rate limit of a success")
				}
			}
			c.Log.Debug().Str("op", op).Str("model", model).Int("attempt", n).Int("status", cp.Status).
				Dur("latency", c.Clock.Now().Sub(start)).Int64("tokens_in", used.In).Int64("tokens_out", used.Out).Msg("model call done")
			return n, cp.Status, nil
		}
		if ctx.Err() != nil { // the caller gave up: says nothing about the provider
			c.Limiter.Cancel()
			release()
			return n, cp.Status, fmt.Errorf("provider %q: %s call to %q: %w", c.Provider, op, model, ctx.Err())
		}
		e := c.classify(callErr, cp, timedOut, classify)
		e.Attempts = n
		var serverWait, wait time.Duration
		if e.Retryable {
			serverWait, _ = ServerWait(cp.Header, e.Status, c.Clock.Now(), est)
			if wait = serverWait; wait == 0 {
				wait = c.Jitter(Backoff(n, c.Base, c.Cap))
			}
		}
		// The server's wait delays this call's retry (below); only
		// congestion slows the provider for every call (see Limiter).
		if e.Retryable && e.Status == http.StatusTooManyRequests { // an exhausted quota (not retryable) is no congestion
			if c.Shared != nil && serverWait > 0 {
				if err := c.Shared.Hold(ctx, serverWait); err != nil {
					c.Log.Warn().Err(err).Msg("telling the shared rate limit of a 429")
				}
			}
			if c.Limiter.Throttled(t, serverWait) {
				if slow != nil {
					if err := slow.Slow(ctx, start); err != nil {
						c.Log.Warn().Err(err).Msg("telling the shared rate limit of congestion")
					}
				}
				c.Log.Warn().Str("op", op).Str("model", model).Float64("concurrency", c.Limiter.State().Concurrency).
					Dur("pause", serverWait).Msg("congestion: more than a quarter of recent requests answered 429; limits lowered")
			}
		} else {
			c.Limiter.Done(false)
		}
		// A failure shared: the breaker's count becomes the fleet's before
		// this one, and Record adds this one and trips on the sum.
		var unavailable *UnavailableError
		if health != nil && CountsAsFailure(e) {
			if n, since, err := health.Failed(ctx, e.Status, e.Message); err != nil {
				c.Log.Warn().Err(err).Msg("telling the shared breaker of a failure")
			} else {
				unavailable = c.Breaker.Fleet(n-1, since, e)
			}
		}
		if u := c.Breaker.Record(e, start, wait); unavailable == nil {
			unavailable = u
		}
		release()
		if unavailable != nil {
			c.Log.Error().Str("op", op).Str("model", model).Int("attempt", n).Int("status", e.Status).
				Str("reason", unavailable.Reason).Str("error", e.Message).Msg("provider unavailable: failing every later call")
			return n, e.Status, unavailable
		}
		if !e.Retryable || n > c.MaxRetries {
			c.Log.Debug().Str("op", op).Str("model", model).Int("attempt", n).Int("status", e.Status).
				Bool("retryable", e.Retryable).Str("error", e.Message).Msg("model call failed")
			return n, e.Status, e
		}
		c.Log.Warn().Str("op", op).Str("model", model).Int("attempt", n).Int("status", e.Status).
			Dur("wait", wait).Str("error", e.Message).Msg("retrying model call")
		if err := c.Clock.Sleep(wctx, wait); err != nil {
			return c.stopped(n, e.Status, op, model, "waiting to retry", err)
		}
	}
}

// fleetCheck reads the count of failures every process sharing the
// provider's key recorded and gives it to the breaker (it stands for the
// breaker's own, which trips on it as on its own); it returns the count
// (0: none, or no shared count). A
// shared state that cannot be read leaves the breaker to its own count.
func (c *Caller) fleetCheck(ctx context.Context, health SharedHealth) int {
	if health == nil {
		return 0
	}
	n, since, status, message, err := health.Failures(ctx)
	if err != nil {
		c.Log.Warn().Err(err).Msg("reading the shared breaker")
		return 0
	}
	c.Breaker.Fleet(n, since, &Error{Provider: c.Provider, Status: status, Message: message, Retryable: true})
	return n
}

// stopped is the error of a call whose wait ended after n attempts, the
// last with that status: the breaker's when it tripped meanwhile, else the
// context's.
func (c *Caller) stopped(n, status int, op, model, waiting string, err error) (int, int, error) {
	if u := c.Breaker.Err(n); u != nil {
		return n, status, u
	}
	return n, status, fmt.Errorf("provider %q: %s call to %q: %s: %w", c.Provider, op, model, waiting, err)
}

// classify reads one failed attempt: the size cap first (whatever the API
// library made of the truncated body), then the API's own reading, then the
// generic one. The message is scrubbed last, whatever produced it.
func (c *Caller) classify(err error, cp *Capture, timedOut bool, classify Classify) *Error {
	var e *Error
	switch {
	case cp.TooLarge:
		e = &Error{Status: cp.Status, Code: CodeReplyTooLarge, Message: fmt.Sprintf("reply larger than %d bytes (%s; raise it in the provider block if replies this large are expected)",
			c.MaxReply, ReplyCapSetting)}
	case timedOut:
		e = &Error{Message: fmt.Sprintf("no reply within %s (the provider's per-request timeout)", c.Timeout), Retryable: true}
	default:
		if classify != nil {
			e = classify(err, cp)
		}
		if e == nil {
			e = Generic(err, cp)
		}
	}
	e.Provider = c.Provider
	e.Message = c.Scrub.Scrub(e.Message)
	return e
}

// Generic reads a failure no API-specific rule recognised: an HTTP error
// status decides by itself; a 2xx whose body failed to decode was cut off
// or garbled in transit; anything else is a connection failure. All but
// the permanent statuses are retried.
func Generic(err error, cp *Capture) *Error {
	switch {
	case cp.Status >= 300:
		return &Error{Status: cp.Status, Message: err.Error(), Retryable: RetryableStatus(cp.Status)}
	case cp.Status >= 200:
		return &Error{Status: cp.Status, Message: "reply body cut off or not valid JSON: " + err.Error(), Retryable: true}
	}
	return &Error{Message: "connection failed: " + err.Error(), Retryable: true}
}
