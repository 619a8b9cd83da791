package llm

import "github.com/ideaflow/ideaflow/stages/internal/httpcall"

// Clock is the time source of rate limiting and back-off. Tests inject a fake
// whose Sleep returns at once and records the duration, so waits can be
// asserted exactly without sleeping (llmtest.FakeClock).
type Clock = httpcall.Clock

// RealClock is the wall clock.
var RealClock Clock = httpcall.RealClock
