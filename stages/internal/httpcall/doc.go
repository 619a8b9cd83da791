// Package httpcall is the HTTP plumbing every provider kind of stages/llm
// shares: the per-provider limiter (concurrency, requests and tokens per
// minute, lowered adaptively when 429s show congestion), retries with
// jittered exponential back-off that honour Retry-After and
// x-ratelimit-reset-*, the per-request timeout, the reply-size cap, the
// breaker that declares a provider unavailable (refused credentials, a
// spent quota, persistent server failures, persistent 429s), and the
// scrubbing of secrets, in every JSON spelling, from every text an
// endpoint returns. What stays with each API is only how its failures
// are read: a Classify function turns one failed attempt into an *Error.
package httpcall
