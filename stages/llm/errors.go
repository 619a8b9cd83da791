package llm

import (
	"fmt"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

// APIError is a failed call, after any retries; see httpcall.Error. Status
// is the HTTP status of the last attempt, or 0 when none came back; Retryable
// set on a returned error means the retry budget ran out.
type APIError = httpcall.Error

// ErrProviderUnavailable is matched (errors.Is) by the error of every call
// to a provider declared unavailable: refused credentials (401, 403), an
// exhausted quota, a breaker tripped by server failures (see
// breaker_failures and breaker_seconds), or RateLimitRefusals 429s in a row
// each sent after the wait the one before asked for. The call that tripped it made its
// requests; every later call on the same Client fails at once without one.
// errors.As with *UnavailableError gives the provider's name, the reason
// and the failure that tripped it (an *APIError, also reachable by
// errors.As directly).
var ErrProviderUnavailable = httpcall.ErrUnavailable

// UnavailableError is the error of a call to a provider declared
// unavailable; see ErrProviderUnavailable and httpcall.UnavailableError.
type UnavailableError = httpcall.UnavailableError

// ParseError is an answer that stayed unparseable (or unacceptable to the
// stage) after every repair. Raw is the last answer as the model gave it.
type ParseError struct {
	Raw      string
	Err      error
	Attempts int // model calls made, repairs included
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("answer still unusable after %d attempts: %v (last answer: %q)", e.Attempts, e.Err, excerpt(e.Raw, 160))
}

func (e *ParseError) Unwrap() error { return e.Err }

func excerpt(s string, n int) string { return httpcall.Excerpt(s, n) }
