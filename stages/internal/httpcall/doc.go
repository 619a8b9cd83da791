// Package httpcall is the HTTP plumbing every provider kind of stages/llm
// shares: the per-provider limiter (concurrency, requests and tokens per
// minute, lowered adaptively on 429s), retries with jittered exponential
// back-off that honour Retry-After and x-ratelimit-reset-*, the per-request
// timeout, the reply-size cap, and the scrubbing of secrets from every text
// an endpoint returns. What stays with each API is only how its failures
// are read: a Classify function turns one failed attempt into an *Error.
package httpcall
