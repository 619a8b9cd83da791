package ratelimit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Health is a provider's breaker count shared by every process that sends
// with its key: the consecutive failed attempts (server failures:
// 5xx, timeouts, connection failures) of all of them with no success
// between, when the first failed, and the last one's status and message
// (scrubbed by the client before it gets here: the state holds no
// secret). Each process's breaker trips on the fleet's count, so
// breaker_failures failures in total, on any mix of workers, make the
// provider unavailable to every worker.
type Health struct {
	state State
	now   func() time.Time
}

// NewHealth is the shared count over state; now is the clock (time.Now
// when nil; every sharer must use a wall clock: since is absolute).
func NewHealth(state State, now func() time.Time) *Health {
	if now == nil {
		now = time.Now
	}
	return &Health{state: state, now: now}
}

// healthValue is the shared value, as JSON.
type healthValue struct {
	Failed  int       `json:"failed"`
	Since   time.Time `json:"since"`
	Status  int       `json:"status,omitempty"`
	Message string    `json:"message,omitempty"`
}

func (h *Health) load(ctx context.Context) (healthValue, uint64, error) {
	b, rev, err := h.state.Load(ctx)
	if err != nil {
		return healthValue{}, 0, fmt.Errorf("shared breaker: %w", err)
	}
	var v healthValue
	if rev != 0 && json.Unmarshal(b, &v) != nil {
		v = healthValue{} // not ours: no failures
	}
	return v, rev, nil
}

// Failures is the fleet's count: failed attempts in a row, when the first
// failed, the last one's status and message.
func (h *Health) Failures(ctx context.Context) (int, time.Time, int, string, error) {
	v, _, err := h.load(ctx)
	return v.Failed, v.Since, v.Status, v.Message, err
}

// Failed counts one failed attempt (status and message: its failure) and
// returns the fleet's count after it and when the first of them failed.
func (h *Health) Failed(ctx context.Context, status int, message string) (int, time.Time, error) {
	for range maxConflicts {
		v, rev, err := h.load(ctx)
		if err != nil {
			return 0, time.Time{}, err
		}
		if v.Failed == 0 {
			v.Since = h.now()
		}
		v.Failed++
		v.Status, v.Message = status, message
		b, err := json.Marshal(v)
		if err != nil {
			return 0, time.Time{}, err
		}
		ok, err := h.state.CompareAndSet(ctx, b, rev)
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("shared breaker: %w", err)
		}
		if ok {
			return v.Failed, v.Since, nil
		}
	}
	return 0, time.Time{}, errors.New("shared breaker: the shared state keeps changing under every write")
}

// Succeeded is a success: the fleet's count starts again from 0. It
// writes only when the count is not 0 already.
func (h *Health) Succeeded(ctx context.Context) error {
	for range maxConflicts {
		v, rev, err := h.load(ctx)
		if err != nil || v.Failed == 0 {
			return err
		}
		b, err := json.Marshal(healthValue{})
		if err != nil {
			return err
		}
		ok, err := h.state.CompareAndSet(ctx, b, rev)
		if err != nil {
			return fmt.Errorf("shared breaker: %w", err)
		}
		if ok {
			return nil
		}
	}
	return errors.New("shared breaker: the shared state keeps changing under every write")
}
