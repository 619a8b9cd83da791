// Package llm is the single path every model and service call in ideaflow
// takes: a registry of provider kinds (kinds.go) — an OpenAI-compatible chat
// client (go-openai), OpenAI-compatible embeddings, text-embeddings-inference
// token embeddings, the offline mock — sharing per-provider rate limits,
// retries and secret scrubbing (stages/internal/httpcall), plus usage
// accounting and structured-output repair.
package llm

import (
	"context"
	"encoding/json"

	"github.com/ideaflow/ideaflow/stages/format"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // system, user, assistant
	Content string `json:"content"`
}

// Request is one chat completion request as the stage rendered it. Every field
// here is part of the node's cache key (the engine hashes it); nothing secret
// or operational (timeouts, limits) belongs here.
type Request struct {
	Model       string      `json:"model"`
	Messages    []Message   `json:"messages"`
	Temperature *float64    `json:"temperature,omitempty"`
	TopP        *float64    `json:"top_p,omitempty"`
	MaxTokens   int         `json:"max_tokens,omitempty"`
	Seed        *int        `json:"seed,omitempty"`
	Stop        []string    `json:"stop,omitempty"`
	JSONMode    bool        `json:"json_mode,omitempty"` // ask for response_format json_object where supported
	Sample      int         `json:"sample"`              // sample index: distinguishes independent samples
	Format      format.Spec `json:"format"`              // expected answer shape (drives mock + parser)

	// JSONSchema, when set, asks for response_format json_schema (strict)
	// with this schema; it wins over JSONMode.
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

// Usage is token usage reported by the server (or estimated by the mock).
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// CachedTokens is the part of InputTokens the server read from its
	// prompt cache (usage.prompt_tokens_details.cached_tokens), which
	// providers bill at a discount; 0 when none or not reported.
	CachedTokens int64 `json:"cached_tokens,omitempty"`
}

// Response is one completion.
type Response struct {
	Text              string // the answer (message content)
	Reasoning         string // reasoning_content / reasoning, kept out of the answer
	Model             string // model the server says answered
	SystemFingerprint string
	Usage             Usage
	UsageEstimated    bool // the server reported no usage: Usage is the ~4-bytes-per-token estimate
	Status            int  // HTTP status of the final attempt (0 for mock)
	Attempts          int  // HTTP attempts made (retries included)
}

// Client is one provider's connection. Implementations are safe for concurrent use
// and apply the provider's rate limits and retries themselves.
type Client interface {
	Complete(ctx context.Context, req Request) (*Response, error)
	Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error)
	// Synthetic reports whether answers are made up (the mock provider).
	Synthetic() bool
}

// ChoicesClient asks one request for several independent samples of the
// same prompt (the OpenAI n parameter), so the input is sent and billed
// once. Answer i stands for samples[i]; fewer answers than samples means the
// endpoint ignored n, and the caller asks for the rest one by one. Clients
// of kinds with the n_choices setting implement it.
type ChoicesClient interface {
	CompleteChoices(ctx context.Context, req Request, samples []int) ([]*Response, error)
}
