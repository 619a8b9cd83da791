package httpcall

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of the retry policy; stages/llm re-exports them and declares the
// provider settings that override them.
const (
	DefaultMaxRetries  = 6
	DefaultBaseBackoff = time.Second
	DefaultMaxBackoff  = 60 * time.Second
	DefaultTimeout     = 120 * time.Second
	// MaxServerWait bounds a wait a server asks for (Retry-After, reset
	// headers). Waits longer than the back-off cap are honoured, because
	// retrying earlier only earns another 429, but a day-long Retry-After
	// from a misconfigured proxy must not stall a run silently.
	MaxServerWait = 10 * time.Minute
)

// RetryableStatus reports whether an HTTP status is worth another attempt:
// rate limits, timeouts, conflicts and server errors. 400/401/403/404 and the
// other client errors fail at once: asking again cannot change the answer.
// 501 and 505 are permanent refusals of the method or protocol.
func RetryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return false
	}
	return status >= 500 && status <= 599
}

// Backoff is the wait before retry number attempt (1-based) when the server
// named none: exponential from base, capped.
func Backoff(attempt int, base, limit time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// EqualJitter keeps half of the wait and randomises the other half, so many
// callers that failed together do not retry together, yet none retries
// sooner than half the back-off.
func EqualJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// ServerWait reads how long the server asked us to wait. Retry-After wins
// (seconds or an HTTP date). Without it, a 429's x-ratelimit-reset-* headers
// say when a budget refills; a reset is only believed for a budget that is
// exhausted (remaining header at 0, or fewer tokens left than this request
// needs) or whose remaining count was not sent, because OpenAI-style servers
// send both resets on every reply and the tokens reset is the time to a full
// bucket, often minutes, not the time until this request fits.
func ServerWait(h http.Header, status int, now time.Time, tokens int64) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if d, ok := parseRetryAfter(h.Get("Retry-After"), now); ok {
		return min(d, MaxServerWait), true
	}
	if status != http.StatusTooManyRequests {
		return 0, false
	}
	var wait time.Duration
	found := false
	if d, ok := parseReset(h.Get("x-ratelimit-reset-requests"), now); ok && exhausted(h.Get("x-ratelimit-remaining-requests"), 1) {
		wait, found = max(wait, d), true
	}
	if d, ok := parseReset(h.Get("x-ratelimit-reset-tokens"), now); ok && exhausted(h.Get("x-ratelimit-remaining-tokens"), tokens) {
		wait, found = max(wait, d), true
	}
	return min(wait, MaxServerWait), found
}

func exhausted(remaining string, need int64) bool {
	if remaining == "" {
		return true
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(remaining), 64)
	if err != nil {
		return true
	}
	return n < float64(need)
}

// parseRetryAfter reads Retry-After as delay-seconds (fractions tolerated:
// some gateways send them) or as an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0, false
		}
		return time.Duration(min(secs, MaxServerWait.Seconds()) * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
	}
	return 0, false
}

// parseReset reads an x-ratelimit-reset-* value. OpenAI sends Go-style
// durations ("1s", "6m0s", "20ms"); other gateways send plain seconds or a
// Unix time in seconds or milliseconds.
func parseReset(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			return 0, false
		}
		return min(d, MaxServerWait), true
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	var d time.Duration
	switch {
	case n >= 1e12: // Unix milliseconds
		d = time.UnixMilli(int64(n)).Sub(now)
	case n >= 1e9: // Unix seconds
		d = time.Unix(int64(n), 0).Sub(now)
	default:
		d = time.Duration(min(n, MaxServerWait.Seconds()) * float64(time.Second))
	}
	if d <= 0 {
		return 0, false
	}
	return d, true
}
