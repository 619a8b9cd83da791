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
// request (llm.SharedLimit).
type Shared struct {
	Requests, Tokens *GCRA
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
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// now is the limits' clock (the wall clock when neither is set).
func (s *Shared) now() time.Time {
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
