package llm

import (
	"fmt"
	"strings"
)

// APIError is a failed model call, after any retries. Status is the HTTP
// status of the last attempt, or 0 when no status came back (timeout,
// connection error, a request refused before sending). Retryable says whether
// the layer considered the failure transient; when it is set on a returned
// error the retry budget ran out.
type APIError struct {
	Provider  string
	Status    int
	Code      string // the server's error code when it gave one, e.g. "insufficient_quota"
	Message   string // never contains a secret: scrubbed when built
	Retryable bool
	Attempts  int // HTTP attempts made, retries included
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider %q: ", e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d: ", e.Status)
	}
	b.WriteString(e.Message)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (gave up after %d attempts)", e.Attempts)
	}
	return b.String()
}

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

func excerpt(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "..."
}

// scrubber replaces secret values (API key, organisation, secret headers)
// with a placeholder. Every message that leaves the layer passes through it:
// servers and HTTP libraries echo request details in their errors.
type scrubber []string

const redacted = "[REDACTED]"

func (s scrubber) scrub(msg string) string {
	for _, secret := range s {
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, redacted)
		}
	}
	return msg
}
