package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

// OpLayerTokenMatching is OpTokenMatching over the token embeddings of a
// chosen hidden layer, as bert_score computes BERTScore (its default layer
// per model: 40 of 48 for microsoft/deberta-xlarge-mnli, 17 for
// roberta-large). Body {"reference": "text", "candidates": ["text", ...],
// "layer": L, "special_tokens": "keep"}: L is the output of the model's
// L-th layer (0: the embedding layer; the model's number of layers: its
// last); special_tokens "keep" keeps the tokenizer's special tokens
// ([CLS], [SEP], <s>, </s>) as tokens to match, flagged, and omitted drops
// them. Reply body as OpTokenMatching's, and with "keep" also
// "reference_special": [bool, ...] and per match "special": [bool, ...],
// parallel to the token lists, so a scorer can weigh the special tokens 0
// while they stay match targets, as bert_score does. Kinds: transformers
// (the sidecar tools/token_embeddings_server.py), mock. As with
// OpTokenMatching, the reduction is part of the op's meaning: a change to
// it takes a new op name.
const OpLayerTokenMatching = "layer_token_matching"

// SpecialTokensKeep is the special_tokens value of a matching request that
// keeps the special tokens.
const SpecialTokensKeep = "keep"

// TransformersPath is the sidecar's route: POST {base_url}/token_embeddings.
const TransformersPath = "/token_embeddings"

// DefaultTransformersBatch is the transformers kind's default max_batch:
// the texts of one request, all run through the model at once.
const DefaultTransformersBatch = 8

func init() {
	// The mock kind is registered by mock.go, whose init runs first (files
	// initialise in name order); the mock serves the layered matching
	// offline like every other operation.
	RegisterMockOp(OpLayerTokenMatching, mockLayerMatching)
	register(KindInfo{
		Name: "transformers",
		Doc: "a token-embeddings sidecar serving any hidden layer of a Hugging Face model (tools/token_embeddings_server.py, " +
			"HuggingFace transformers): POST {base_url}" + TransformersPath + ` with {"model", "inputs", "layer"}, ` +
			"the tokens, special-token flags and vectors of each input, tokenized as bert_score tokenizes; " +
			"layer_token_matching (bert_score's layers) and token_matching (the final layer) reduce them to BERTScore's matching before caching.",
		Ops:                []string{OpLayerTokenMatching, OpTokenMatching},
		AnswererDoc:        "the class endpoint and endpoint_identity, by default the normalised base_url",
		DefaultConcurrency: 4,
		Settings: withSettings(httpSettings(4), requiredBaseURL("http://localhost:8090"),
			maxBatch(DefaultTransformersBatch, "texts per request; halved after a 413")),
		open: func(p Provider, o options) (Client, error) {
			k, _ := LookupKind("transformers")
			if p.BaseURL == "" {
				return nil, fmt.Errorf("provider %q: kind %q has no default endpoint: set base_url", p.Name, k.Name)
			}
			c, err := newConn(k, p, o)
			if err != nil {
				return nil, err
			}
			return &transformersClient{noChat: noChat{p.Name, p.Kind}, conn: c, auth: c.bearer(),
				url: strings.TrimRight(p.BaseURL, "/") + TransformersPath, batch: c.p.Int("max_batch")}, nil
		},
	})
}

// TransformersRequest is the sidecar's request body. Layer nil asks for
// the model's last layer.
type TransformersRequest struct {
	Model  string   `json:"model"`
	Inputs []string `json:"inputs"`
	Layer  *int     `json:"layer,omitempty"`
}

// TransformersReply is the sidecar's reply body: the model and layer it
// ran, and per input, in order, every token (special ones included), its
// special flag and its vector.
type TransformersReply struct {
	Model  string              `json:"model"`
	Layer  int                 `json:"layer"`
	Inputs []TransformersEntry `json:"inputs"`
}

// TransformersEntry is one input's tokens in a TransformersReply.
type TransformersEntry struct {
	Tokens  []string    `json:"tokens"`
	Special []bool      `json:"special"`
	Vectors [][]float32 `json:"vectors"`
}

// transformersClient is the transformers kind.
type transformersClient struct {
	noChat
	*conn
	auth http.Header
	url  string

	mu    sync.Mutex
	batch int // max_batch, lowered by every 413
}

func (t *transformersClient) Embed(_ context.Context, _ string, _ []string) ([][]float32, Usage, error) {
	return nil, Usage{}, unservedOp(t.p.Name, t.kind, OpEmbeddings)
}

// decodeMatchingBody reads a matching request: the texts (the reference
// first), the layer (nil: the final layer) and whether special tokens are
// kept. OpLayerTokenMatching needs a layer.
func decodeMatchingBody(provider string, req ServiceRequest) ([]string, *int, bool, error) {
	var b matchingRequest
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return nil, nil, false, &APIError{Provider: provider, Message: fmt.Sprintf(`%s request body is not {"reference": "text", "candidates": ["text", ...]}: %v`, req.Op, err)}
	}
	switch {
	case req.Op == OpLayerTokenMatching && b.Layer == nil:
		return nil, nil, false, &APIError{Provider: provider, Message: fmt.Sprintf(`%s request body has no "layer"`, req.Op)}
	case req.Op == OpTokenMatching && b.Layer != nil:
		return nil, nil, false, &APIError{Provider: provider, Message: fmt.Sprintf(`%s is the final layer; a "layer" is asked for with %s`, req.Op, OpLayerTokenMatching)}
	case b.Layer != nil && *b.Layer < 0:
		return nil, nil, false, &APIError{Provider: provider, Message: fmt.Sprintf("layer %d is negative", *b.Layer)}
	case b.SpecialTokens != "" && b.SpecialTokens != SpecialTokensKeep:
		return nil, nil, false, &APIError{Provider: provider, Message: fmt.Sprintf(`special_tokens %q is not %q (omit it to drop them)`, b.SpecialTokens, SpecialTokensKeep)}
	}
	return append([]string{b.Reference}, b.Candidates...), b.Layer, b.SpecialTokens == SpecialTokensKeep, nil
}

// keepsSpecial reports whether a token_matching request keeps special
// tokens (a body that does not decode keeps none; decodeMatching reports it).
func keepsSpecial(req ServiceRequest) bool {
	var b matchingRequest
	return json.Unmarshal(req.Body, &b) == nil && b.SpecialTokens == SpecialTokensKeep
}

func (t *transformersClient) Call(ctx context.Context, req ServiceRequest) (*ServiceResponse, error) {
	if req.Op != OpLayerTokenMatching && req.Op != OpTokenMatching {
		return nil, unservedOp(t.p.Name, t.kind, req.Op)
	}
	inputs, layer, keep, err := decodeMatchingBody(t.p.Name, req)
	if err != nil {
		return nil, err
	}
	r := &teiResult{entries: make([]tokenEntry, 0, len(inputs)), keepSpecial: keep, shape: t.dims.shape(OpLayerTokenMatching, req.Model)}
	if err := t.run(ctx, req.Model, layer, inputs, r); err != nil {
		return nil, err
	}
	t.dims.learn(OpLayerTokenMatching, req.Model, r.shape)
	return &ServiceResponse{Body: encodeBody(matchTokens(r.entries)), Model: req.Model, Usage: r.usage, Status: r.status, Attempts: r.attempts}, nil
}

func (t *transformersClient) maxBatch() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.batch
}

// run embeds inputs in batches of the current max_batch, appending to r in
// input order; a 413 halves the batches from then on.
func (t *transformersClient) run(ctx context.Context, model string, layer *int, inputs []string, r *teiResult) error {
	for len(inputs) > 0 {
		batch := inputs[:min(len(inputs), t.maxBatch())]
		inputs = inputs[len(batch):]
		err := t.runBatch(ctx, model, layer, batch, r)
		var e *APIError
		if errors.As(err, &e) && (e.Status == http.StatusRequestEntityTooLarge || e.Code == httpcall.CodeReplyTooLarge) && len(batch) > 1 {
			half := (len(batch) + 1) / 2
			t.mu.Lock()
			t.batch = min(t.batch, half)
			t.mu.Unlock()
			t.caller.Log.Warn().Int("batch", len(batch)).Int("max_batch", half).Msg("batch too large for the server: halving")
			if err := t.run(ctx, model, layer, batch, r); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *transformersClient) runBatch(ctx context.Context, model string, layer *int, batch []string, r *teiResult) error {
	var est int64
	for _, in := range batch {
		est += textTokens(in)
	}
	var reply TransformersReply
	var counted int64
	attempts, status, err := t.caller.Do(ctx, OpLayerTokenMatching+" "+TransformersPath, model, est, false, func(ctx context.Context, _ *httpcall.Capture) (httpcall.Tokens, error) {
		reply = TransformersReply{}
		if err := httpcall.PostJSON(ctx, t.http, t.url, t.auth, TransformersRequest{Model: model, Inputs: batch, Layer: layer}, &reply); err != nil {
			return httpcall.Tokens{}, err
		}
		if len(reply.Inputs) != len(batch) {
			return httpcall.Tokens{}, fmt.Errorf("%w: %d inputs embedded for %d", errIncompleteEmbeddings, len(reply.Inputs), len(batch))
		}
		counted = 0
		s := r.shape // kept only if the whole batch passes
		for i, e := range reply.Inputs {
			if len(e.Tokens) != len(e.Vectors) || len(e.Tokens) != len(e.Special) {
				return httpcall.Tokens{}, fmt.Errorf("%w: input %d has %d tokens, %d special flags and %d vectors", errIncompleteEmbeddings, i, len(e.Tokens), len(e.Special), len(e.Vectors))
			}
			// The vectors are checked on arrival like TEI's and the
			// embeddings kind's (vectors.go), so a bad reply is retried,
			// never scored.
			if err := s.checkAll(e.Vectors, func(j int) string { return fmt.Sprintf("input %d, token %d", i, j) }); err != nil {
				return httpcall.Tokens{}, err
			}
			counted += int64(len(e.Tokens))
		}
		r.shape = s
		return httpcall.Tokens{In: counted}, nil
	}, t.classify(model))
	r.attempts += attempts
	r.status = status
	if err != nil {
		return err
	}
	// A sidecar serving another model or layer than asked would cache its
	// vectors under this request's key: refuse the reply.
	if reply.Model != model {
		return &APIError{Provider: t.p.Name, Status: status, Message: fmt.Sprintf(
			"the server at %s runs model %q, not %q: start it with --model %s, or name its model in the model block", t.url, reply.Model, model, model)}
	}
	if layer != nil && reply.Layer != *layer {
		return &APIError{Provider: t.p.Name, Status: status, Message: fmt.Sprintf("the server answered with layer %d for layer %d", reply.Layer, *layer)}
	}
	for _, e := range reply.Inputs {
		out := tokenEntry{Tokens: []string{}, Vectors: [][]float32{}}
		if r.keepSpecial {
			out.Special = []bool{}
		}
		for j, tok := range e.Tokens {
			if e.Special[j] && !r.keepSpecial {
				continue
			}
			out.Tokens = append(out.Tokens, t.cred.scrub.Scrub(tok)) // decoded: see openAIClient.scrubDecoded
			out.Vectors = append(out.Vectors, e.Vectors[j])
			if r.keepSpecial {
				out.Special = append(out.Special, e.Special[j])
			}
		}
		r.entries = append(r.entries, out)
	}
	r.usage.InputTokens += counted
	return nil
}

// classify reads the sidecar's errors, {"error": "..."}: 400 a request it
// cannot serve (a layer past the model's, another model), 413 a batch over
// its limit, 5xx a failure of the model.
func (t *transformersClient) classify(model string) httpcall.Classify {
	return func(err error, cp *httpcall.Capture) *httpcall.Error {
		var se *httpcall.StatusError
		switch {
		case errors.As(err, &se):
			msg, kind := httpcall.ErrorMessage(se.Body)
			if msg == "" {
				msg = http.StatusText(se.Status)
			}
			e := &httpcall.Error{Status: se.Status, Code: kind, Retryable: httpcall.RetryableStatus(se.Status)}
			switch se.Status {
			case http.StatusRequestEntityTooLarge:
				e.Message = "batch over the server's limit: " + msg + "; batches are halved automatically"
			case http.StatusBadRequest:
				e.Message = "the server cannot serve this request (not retried): " + msg
			default:
				e.Message = t.explain(se.Status, kind, msg, model)
			}
			return e
		case errors.Is(err, errIncompleteEmbeddings):
			return &httpcall.Error{Status: cp.Status, Message: err.Error(), Retryable: true}
		}
		return nil
	}
}

// mockEntries are the mock's token embeddings of inputs: the
// whitespace-separated words, each its own hashed vector (model and layer
// in the hash), with a [CLS] before and a [SEP] after, flagged, when
// special tokens are kept. Without them and without a layer the vectors
// are the mock's token_embeddings, so existing matchings are unchanged.
func mockEntries(model string, layer *int, inputs []string, keep bool) []tokenEntry {
	key := model
	if layer != nil {
		key = fmt.Sprintf("%s\x00layer %d", model, *layer)
	}
	out := make([]tokenEntry, len(inputs))
	for i, in := range inputs {
		e := tokenEntry{Tokens: []string{}, Vectors: [][]float32{}}
		words := strings.Fields(in)
		if keep {
			e.Special = []bool{}
			words = append(append([]string{"[CLS]"}, words...), "[SEP]")
		}
		for j, tok := range words {
			e.Tokens = append(e.Tokens, tok)
			e.Vectors = append(e.Vectors, mockVector(key, tok))
			if keep {
				e.Special = append(e.Special, j == 0 || j == len(words)-1)
			}
		}
		out[i] = e
	}
	return out
}

// mockLayerMatching is the mock's OpLayerTokenMatching.
func mockLayerMatching(_ context.Context, p Provider, req ServiceRequest) (*ServiceResponse, error) {
	inputs, layer, keep, err := decodeMatchingBody(p.Name, req)
	if err != nil {
		return nil, err
	}
	resp := &ServiceResponse{Model: req.Model, Attempts: 1}
	for _, in := range inputs {
		resp.Usage.InputTokens += textTokens(in)
	}
	resp.Body = encodeBody(matchTokens(mockEntries(req.Model, layer, inputs, keep)))
	return resp, nil
}
