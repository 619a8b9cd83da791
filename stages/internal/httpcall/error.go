package httpcall

import (
	"fmt"
	"strings"
)

// Error is a failed call, after any retries. Status is the HTTP status of the
// last attempt, or 0 when no status came back (timeout, connection error, a
// request refused before sending). Retryable says whether the failure was
// considered transient; when it is set on a returned error the retry budget
// ran out. stages/llm exports it as llm.APIError.
type Error struct {
	Provider  string
	Status    int
	Code      string // the server's error code when it gave one, e.g. "insufficient_quota"
	Message   string // never contains a secret: scrubbed when built
	Retryable bool
	Attempts  int // HTTP attempts made, retries included
}

func (e *Error) Error() string {
	return fmt.Sprintf("provider %q: %s", e.Provider, e.detail())
}

// detail is the message without the provider's name, for errors that name
// it themselves.
func (e *Error) detail() string {
	var b strings.Builder
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d: ", e.Status)
	}
	b.WriteString(e.Message)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (gave up after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Excerpt trims s and cuts it to n runes, marking the cut. Callers scrub
// before cutting: a secret straddling the cut would otherwise survive in part.
func Excerpt(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "..."
}

// ErrorExcerpt is how much of an error body an error message quotes.
const ErrorExcerpt = 300
