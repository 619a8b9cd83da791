package ratelimit

import (
	"context"
	"errors"
	"time"
)

// Shared is a provider's limits shared with every process that sends with
// its key: requests per minute (one unit a request) and tokens per minute
// (a request's estimated tokens), each a GCRA over its own state; nil for
// a limit not set. It is what a provider's client waits on before each
// request (llm.SharedLimit). Health, when set, is the breaker's count of
// failures shared the same way; the GCRAs carry the 429 slowdown (Slow,
// Recover), so what one process learns of the provider every process
// acts on.
type Shared struct {
	Requests, Tokens *GCRA
	Health           *Health
	// Clock is what Wait sleeps on (nil: the wall clock). The GCRAs' and
	// Health's clocks must be its Now.
	Clock Clock
}

// Clock is a time source a wait can be told to sleep on (a fake one in
// tests; the client's, llm.Clock, has this shape).
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Reserve books a request of tokens estimated tokens on both limits, as
// of one reading of the clock, and returns when both allow it (never
// before that reading). Both bookings hold
// whether or not the caller waits: they are this request's slots.
func (s *Shared) Reserve(ctx context.Context, tokens int64) (time.Time, error) {
	now := s.now()
	var at time.Time
	for _, b := range []struct {
		g    *GCRA
		cost float64
	}{{s.Requests, 1}, {s.Tokens, float64(max(tokens, 1))}} {
		if b.g == nil {
			continue
		}
		t, err := b.g.ReserveAt(ctx, b.cost, now)
		if err != nil {
			return time.Time{}, err
		}
		if t.After(at) {
			at = t
		}
	}
	return at, nil
}

// Wait is Reserve, then sleeps until the booked time.
func (s *Shared) Wait(ctx context.Context, tokens int64) error {
	at, err := s.Reserve(ctx, tokens)
	if err != nil {
		return err
	}
	d := at.Sub(s.now())
	if d <= 0 {
		return nil
	}
	if s.Clock != nil {
		return s.Clock.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// now is the limits' clock (the wall clock when none is set).
func (s *Shared) now() time.Time {
	if s.Clock != nil {
		return s.Clock.Now()
	}
	for _, g := range []*GCRA{s.Requests, s.Tokens} {
		if g != nil {
			return g.now()
		}
	}
	return time.Now()
}

// Hold holds every sharer's requests for d from now (a 429's Retry-After).
func (s *Shared) Hold(ctx context.Context, d time.Duration) error {
	var errs []error
	for _, g := range []*GCRA{s.Requests, s.Tokens} {
		if g != nil {
			errs = append(errs, g.Hold(ctx, g.now().Add(d)))
		}
	}
	return errors.Join(errs...)
}

// Slow halves both limits' factor for every sharer (see GCRA.Slow): a
// congestion 429 of an attempt admitted at admitted.
func (s *Shared) Slow(ctx context.Context, admitted time.Time) error {
	var errs []error
	for _, g := range []*GCRA{s.Requests, s.Tokens} {
		if g != nil {
			_, err := g.Slow(ctx, admitted)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Recover wins back a success's share of both limits' rate (see
// GCRA.Recover).
func (s *Shared) Recover(ctx context.Context) error {
	var errs []error
	for _, g := range []*GCRA{s.Requests, s.Tokens} {
		if g != nil {
			errs = append(errs, g.Recover(ctx))
		}
	}
	return errors.Join(errs...)
}

// Failures, Failed and Succeeded are Health's (no count when Health is
// nil: every process counts alone).
func (s *Shared) Failures(ctx context.Context) (int, time.Time, int, string, error) {
	if s.Health == nil {
		return 0, time.Time{}, 0, "", nil
	}
	return s.Health.Failures(ctx)
}

func (s *Shared) Failed(ctx context.Context, status int, message string) (int, time.Time, error) {
	if s.Health == nil {
		return 0, time.Time{}, nil
	}
	return s.Health.Failed(ctx, status, message)
}

func (s *Shared) Succeeded(ctx context.Context) error {
	if s.Health == nil {
		return nil
	}
	return s.Health.Succeeded(ctx)
}
