package llmtest

import (
	"context"
	"sync"
	"time"
)

// Epoch is where every FakeClock starts unless told otherwise: a fixed instant,
// so timestamps in test failures read the same on every run.
var Epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// FakeClock is a clock for tests: Sleep returns at once and moves time forward
// by the requested duration, and every requested duration is recorded so a
// test can assert how long the code under test chose to wait. It satisfies
// llm.Clock structurally (this package cannot import llm: llm's own tests use it).
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewFakeClock starts a fake clock at start (Epoch when zero).
func NewFakeClock(start time.Time) *FakeClock {
	if start.IsZero() {
		start = Epoch
	}
	return &FakeClock{now: start}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep records d and advances the fake time by it. A non-positive d is a
// no-op that is not recorded, matching how a real timer treats it. A cancelled
// context wins over the sleep, as with a real clock.
func (c *FakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

// Advance moves the fake time forward without recording a sleep.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Sleeps returns a copy of every recorded sleep, in call order.
func (c *FakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Slept is the sum of every recorded sleep.
func (c *FakeClock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var total time.Duration
	for _, d := range c.sleeps {
		total += d
	}
	return total
}
