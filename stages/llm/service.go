package llm

import (
	"context"
	"encoding/json"
)

// Service operations: the non-chat requests a provider kind may serve. Each
// is one cached, rate-limited, retried, budgeted call, exactly like a chat
// completion; the engine keys it on the operation, the model name, the body
// and who answers (the provider's Answerer: its class and identity), never
// on the provider block's name or its credentials.
const (
	// OpEmbeddings: sentence embeddings. Body {"input": ["text", ...]};
	// reply body {"vectors": [[float, ...], ...]}, one vector per input, in
	// input order. Kinds: embeddings and openai (OpenAI-compatible POST
	// {base_url}/embeddings), mock.
	OpEmbeddings = "embeddings"
	// OpTokenEmbeddings: contextual token embeddings, special tokens
	// ([CLS], [SEP], <s>, ...) dropped. Body {"input": ["text", ...]};
	// reply body {"inputs": [{"tokens": ["tok", ...], "vectors": [[float,
	// ...], ...]}, ...]}, one entry per input, one vector per kept token.
	// Kinds: tei (text-embeddings-inference POST /tokenize + POST
	// /embed_all), mock.
	OpTokenEmbeddings = "token_embeddings"
	// OpTokenMatching: BERTScore's greedy matching of candidates with a
	// reference (similarity.Match), computed by the client from the
	// server's token embeddings of the model's final layer, special tokens
	// dropped (with "special_tokens": "keep" in the body they are kept as
	// tokens to match and flagged, as bert_score keeps [CLS] and [SEP]: see
	// OpLayerTokenMatching for the reply's flags), so that what is
	// cached is two numbers per token and never the vectors (hundreds per
	// token: at IdeaBench Table 1's full size, tens of GB). Body
	// {"reference": "text", "candidates": ["text", ...]}; reply body
	// {"reference_tokens": ["tok", ...], "matches": [{"tokens": ["tok",
	// ...], "cand_best": [float, ...], "ref_best": [float, ...]}, ...]},
	// one match per candidate in order: cand_best[i] is candidate token
	// i's best cosine with a reference token, ref_best[j] reference token
	// j's best with a candidate token. Vectors are compared as the server
	// sent them (float32, widened). Kinds: tei, mock. The reduction is part
	// of what the op means, yet not of a request's key: a change to it
	// (another matching, another summation) must take a new op name, so
	// cached matchings are never mixed with new ones.
	OpTokenMatching = "token_matching"
)

// ServiceRequest is one non-chat request as a stage renders it. Every field is
// key material; nothing secret or operational belongs here.
type ServiceRequest struct {
	Op    string          `json:"op"`
	Model string          `json:"model,omitempty"` // the model (or index) the service runs; "" when the service has none
	Body  json.RawMessage `json:"body"`            // canonical JSON of the operation's request
}

// ServiceResponse is a service call's reply, normalised to the operation's
// documented reply shape (so a cached reply does not depend on which server
// kind produced it).
type ServiceResponse struct {
	Body     json.RawMessage
	Model    string // model the server says answered, when it says
	Usage    Usage  // InputTokens: tokens (or units) the server billed or the client estimated
	Status   int    // HTTP status of the final attempt (0 for the mock)
	Attempts int    // HTTP attempts made, retries and batch splits included
}

// ServiceClient serves non-chat operations. A Client returned by New
// implements it when its provider kind lists operations; callers type-assert.
// Implementations are safe for concurrent use and apply the provider's limits
// and retries themselves.
type ServiceClient interface {
	Call(ctx context.Context, req ServiceRequest) (*ServiceResponse, error)
	// Synthetic reports whether replies are made up (the mock provider).
	Synthetic() bool
}
