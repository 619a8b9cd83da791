package httpcall

import (
	"context"
	"time"
)

// Clock is the time source of rate limiting and back-off. Tests inject a fake
// whose Sleep returns at once and records the duration, so waits can be
// asserted exactly without sleeping.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, whichever comes first, and returns
	// ctx's error in the latter case.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
var RealClock Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
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
