package llm

import (
	"fmt"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

// APIError is a failed call, after any retries; see httpcall.Error. Status
// is the HTTP status of the last attempt, or 0 when none came back; Retryable
// set on a returned error means the retry budget ran out.
type APIError = httpcall.Error

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
