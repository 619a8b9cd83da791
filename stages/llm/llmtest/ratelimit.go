package llmtest

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// Window is one sliding window a rate-limited server enforces: in any
// span of Length (the arrival times t with now-Length < t <= now), at most
// Requests accepted requests and Tokens of their tokens (0: no bound).
type Window struct {
	Length   time.Duration
	Requests int
	Tokens   int64
}

// Admitted is one request the rate limit accepted: its arrival time on
// the server's clock and the tokens it counted.
type Admitted struct {
	Time   time.Time
	Tokens int64
}

// WithRateLimit makes the server enforce windows the way a provider
// enforces requests and tokens per minute: a request that would put more
// than a window allows in any span of its length is answered 429
// ("rate_limit_exceeded") with Retry-After (fractional seconds) set to
// when it would fit, and is not counted. A request's tokens are its
// messages' Tokens plus its max_tokens (or max_completion_tokens), as providers count a request
// against tokens per minute when it arrives. A scripted fault or the hook
// takes precedence: only a request with no fault is checked.
func WithRateLimit(windows ...Window) Option {
	return func(s *Server) { s.windows = windows }
}

// Accepted is every request the rate limit accepted, in arrival order.
func (s *Server) Accepted() []Admitted {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Admitted, len(s.admitted))
	for i, t := range s.admitted {
		out[i] = Admitted{Time: t, Tokens: s.tokenSum[i+1] - s.tokenSum[i]}
	}
	return out
}

// Refused is how many requests the rate limit answered 429.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// requestTokens is what a chat request counts against a token window.
func requestTokens(rec *Request) int64 {
	if rec.Chat == nil {
		if rec.Embed == nil {
			return 0
		}
		var n int64
		for _, in := range rec.Embed.Input {
			n += int64(Tokens(in))
		}
		return n
	}
	var n int64
	for _, m := range rec.Chat.Messages {
		n += int64(Tokens(m.Content))
	}
	completion := rec.Chat.MaxCompletionTokens
	if completion == 0 {
		//lint:ignore SA1019 max_tokens is what the client sends (stages/llm/openai.go); providers count it as the one field.
		completion = rec.Chat.MaxTokens
	}
	return n + int64(completion)
}

// limit admits rec at now or returns the 429 that refuses it; s.mu must be
// held. Admitted times are appended in arrival order (now is read under
// the lock), so each window's members are a suffix found by binary search
// and their tokens a difference of prefix sums.
func (s *Server) limit(rec *Request, now time.Time) (Fault, bool) {
	if len(s.windows) == 0 {
		return Fault{}, false
	}
	if len(s.tokenSum) == 0 {
		s.tokenSum = []int64{0}
	}
	tokens := requestTokens(rec)
	n := len(s.admitted)
	var wait time.Duration
	for _, w := range s.windows {
		first := sort.Search(n, func(i int) bool { return s.admitted[i].After(now.Add(-w.Length)) })
		// The request fits once enough of the oldest members left the
		// window: member i leaves at admitted[i]+Length.
		leave := first
		if w.Requests > 0 && n-first+1 > w.Requests {
			leave = max(leave, n-w.Requests+1)
		}
		if w.Tokens > 0 {
			for leave < n && s.tokenSum[n]-s.tokenSum[leave]+tokens > w.Tokens {
				leave++
			}
		}
		if leave > first {
			wait = max(wait, s.admitted[leave-1].Add(w.Length).Sub(now))
		}
	}
	if wait > 0 {
		s.refused++
		secs := strconv.FormatFloat(wait.Seconds(), 'f', 3, 64)
		if wait < time.Millisecond {
			secs = "0.001"
		}
		return Fault{Status: http.StatusTooManyRequests, Code: "rate_limit_exceeded", RetryAfter: secs,
			Message: fmt.Sprintf("Rate limit reached: try again in %ss", secs)}, true
	}
	s.admitted = append(s.admitted, now)
	s.tokenSum = append(s.tokenSum, s.tokenSum[n]+tokens)
	return Fault{}, false
}
