package llm

import "github.com/ideaflow/ideaflow/stages/internal/httpcall"

// Defaults of the retry policy, declared in httpcall (every provider kind
// shares that code) and re-exported for the engine and the CLI.
const (
	DefaultMaxRetries  = httpcall.DefaultMaxRetries
	DefaultBaseBackoff = httpcall.DefaultBaseBackoff
	DefaultMaxBackoff  = httpcall.DefaultMaxBackoff
	DefaultTimeout     = httpcall.DefaultTimeout
	// DefaultMaxReplyBytes is the default of max_reply_bytes.
	DefaultMaxReplyBytes = httpcall.DefaultMaxReply
	// DefaultBreakerFailures and DefaultBreakerWindow are the defaults of
	// breaker_failures and breaker_seconds.
	DefaultBreakerFailures = httpcall.DefaultBreakerFailures
	DefaultBreakerWindow   = httpcall.DefaultBreakerWindow
	// RateLimitRefusals is how many 429s in a row, each sent after the
	// wait the one before asked for, declare a provider unavailable (see
	// httpcall.RateLimitRefusals).
	RateLimitRefusals = httpcall.RateLimitRefusals
)

const (
	// DefaultMaxConcurrency is max_concurrency's default for remote endpoints.
	DefaultMaxConcurrency = 32
	// DefaultCompletionEstimate stands in for max_tokens when a request sets
	// none, in the token budget taken before a call.
	DefaultCompletionEstimate = 1024
)

// EstimateTokens is the token budget a request takes from tokens_per_minute
// before it is sent: its messages at ~4 bytes per token plus the completion
// it may produce (max_tokens, or DefaultCompletionEstimate when unset). The
// reported usage corrects the budget afterwards.
func EstimateTokens(req Request) int64 {
	var n int64
	for _, m := range req.Messages {
		n += textTokens(m.Content)
	}
	if req.MaxTokens > 0 {
		return n + int64(req.MaxTokens)
	}
	return n + DefaultCompletionEstimate
}

// textTokens is the ~4-bytes-per-token rule, rounded up so that no text is free.
func textTokens(s string) int64 { return (int64(len(s)) + 3) / 4 }

// LimitState is a snapshot of a provider's adaptive limits.
type LimitState = httpcall.LimitState

// Limited is implemented by clients that enforce provider limits, so a run
// summary can show how hard a provider pushed back.
type Limited interface {
	Limits() LimitState
}

// Availability is implemented by clients that can declare their provider
// unavailable (every HTTP kind), so that whoever holds the client can stop
// sending it work without making a call.
type Availability interface {
	// Unavailable is nil while calls may be sent, and the
	// *UnavailableError every call now fails with once the provider has
	// been declared unavailable.
	Unavailable() error
}
