package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

// DefaultEmbeddingBatch is the default max_batch of the OpenAI-compatible
// embeddings kinds: well under every server's input limit (OpenAI takes
// 2048 inputs; vLLM and TEI-backed gateways far fewer), large enough that a
// corpus needs few requests.
const DefaultEmbeddingBatch = 64

func init() {
	register(KindInfo{
		Name: "embeddings",
		Doc: "Any OpenAI-compatible embeddings endpoint (POST {base_url}/embeddings): OpenAI, vLLM, Ollama, " +
			"text-embeddings-inference's OpenAI route. Inputs are sent in batches of max_batch.",
		Ops:                []string{OpEmbeddings},
		AnswererDoc:        "the class endpoint and endpoint_identity, by default the normalised base_url",
		DefaultConcurrency: DefaultMaxConcurrency,
		Settings: withSettings(httpSettings(DefaultMaxConcurrency), requiredBaseURL("http://localhost:8000/v1"),
			maxBatch(DefaultEmbeddingBatch, "inputs per request")),
		open: func(p Provider, o options) (Client, error) {
			k, _ := LookupKind("embeddings")
			if p.BaseURL == "" {
				return nil, fmt.Errorf("provider %q: kind %q has no default endpoint: set base_url", p.Name, k.Name)
			}
			c, err := newConn(k, p, o)
			if err != nil {
				return nil, err
			}
			return &embeddingsClient{noChat: noChat{p.Name, p.Kind}, embedder: newEmbedder(c, p.BaseURL, c.bearer())}, nil
		},
	})
}

// requiredBaseURL is base_url for kinds with no default endpoint; it
// replaces the optional one of httpSettings.
func requiredBaseURL(example string) Setting {
	s := settingBaseURL
	s.Required = true
	s.Doc = "base URL of the endpoint, e.g. " + example
	return s
}

// embeddingsClient is the embeddings kind.
type embeddingsClient struct {
	noChat
	*embedder
}

// embedder serves OpEmbeddings against an OpenAI-compatible endpoint, for
// the embeddings kind and the openai kind alike.
type embedder struct {
	*conn
	url   string
	auth  http.Header
	batch int
}

func newEmbedder(c *conn, baseURL string, auth http.Header) *embedder {
	return &embedder{conn: c, url: strings.TrimRight(baseURL, "/") + "/embeddings", auth: auth, batch: c.p.Int("max_batch")}
}

func (e *embedder) Call(ctx context.Context, req ServiceRequest) (*ServiceResponse, error) {
	if req.Op != OpEmbeddings {
		return nil, unservedOp(e.p.Name, e.kind, req.Op)
	}
	inputs, err := decodeInput(e.p.Name, req)
	if err != nil {
		return nil, err
	}
	r, err := e.embed(ctx, req.Model, inputs)
	if err != nil {
		return nil, err
	}
	if r.vectors == nil { // no inputs: an empty list, not null
		r.vectors = [][]float32{}
	}
	return &ServiceResponse{Body: encodeBody(vectorsBody{Vectors: r.vectors}), Model: r.model, Usage: r.usage,
		Status: r.status, Attempts: r.attempts}, nil
}

// Embed is Client.Embed: OpEmbeddings without the JSON bodies.
func (e *embedder) Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error) {
	r, err := e.embed(ctx, model, inputs)
	if err != nil {
		return nil, Usage{}, err
	}
	return r.vectors, r.usage, nil
}

type embedResult struct {
	vectors          [][]float32
	usage            Usage
	model            string
	status, attempts int
}

type embeddingRequest struct {
	Model string   `json:"model,omitempty"`
	Input []string `json:"input"`
}

type embeddingReply struct {
	Data []struct {
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"` // decoded by decodeVector, which refuses nulls
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
	} `json:"usage"`
}

// embed sends inputs in batches of max_batch, one after the other (the
// engine runs calls in parallel; one call's batches share its slot
// fairly this way), and puts each batch's vectors back in input order by
// their index. Every vector is checked on arrival (see vectorShape): one
// length across the call's batches and the model's earlier replies,
// finite, not all zeros; a reply that fails is retried.
func (e *embedder) embed(ctx context.Context, model string, inputs []string) (embedResult, error) {
	var out embedResult
	if len(inputs) == 0 {
		return out, nil
	}
	out.vectors = make([][]float32, 0, len(inputs))
	shape := e.dims.shape(OpEmbeddings, model)
	for b, batch := range chunks(inputs, e.batch) {
		var est int64
		for _, in := range batch {
			est += textTokens(in)
		}
		var vecs [][]float32
		attempts, status, err := e.caller.Do(ctx, "embeddings", model, est, false, func(ctx context.Context, _ *httpcall.Capture) (httpcall.Tokens, error) {
			var reply embeddingReply
			if err := httpcall.PostJSON(ctx, e.http, e.url, e.auth, embeddingRequest{Model: model, Input: batch}, &reply); err != nil {
				return httpcall.Tokens{}, err
			}
			got, err := byIndex(reply, len(batch))
			if err != nil {
				return httpcall.Tokens{}, err
			}
			s := shape // kept only if the whole batch passes
			if err := s.checkAll(got, func(i int) string { return fmt.Sprintf("the vector of input %d", b*e.batch+i) }); err != nil {
				return httpcall.Tokens{}, err
			}
			vecs, shape = got, s
			in := reply.Usage.PromptTokens
			if in == 0 { // the server reported no usage: estimate it
				in = est
			}
			out.model = e.cred.scrub.Scrub(reply.Model) // decoded: see openAIClient.scrubDecoded
			out.usage.InputTokens += in
			return httpcall.Tokens{In: in}, nil
		}, e.classify(model))
		out.attempts += attempts
		out.status = status
		if err != nil {
			return embedResult{}, err
		}
		out.vectors = append(out.vectors, vecs...)
	}
	e.dims.learn(OpEmbeddings, model, shape)
	return out, nil
}

// byIndex orders a reply's vectors by their index: servers need not keep
// the input order.
func byIndex(reply embeddingReply, n int) ([][]float32, error) {
	if len(reply.Data) != n {
		return nil, fmt.Errorf("%w: %d vectors for %d inputs", errIncompleteEmbeddings, len(reply.Data), n)
	}
	out := make([][]float32, n)
	filled := make([]bool, n)
	for _, d := range reply.Data {
		if d.Index < 0 || d.Index >= n || filled[d.Index] {
			return nil, fmt.Errorf("%w: index %d", errIncompleteEmbeddings, d.Index)
		}
		v, err := decodeVector(d.Embedding, fmt.Sprintf("the vector at index %d", d.Index))
		if err != nil {
			return nil, err
		}
		out[d.Index], filled[d.Index] = v, true
	}
	return out, nil
}

// classify reads OpenAI-style failures of a plain-HTTP call.
func (e *embedder) classify(model string) httpcall.Classify {
	return func(err error, cp *httpcall.Capture) *httpcall.Error {
		var se *httpcall.StatusError
		switch {
		case errors.As(err, &se):
			msg, code := httpcall.ErrorMessage(se.Body)
			if msg == "" {
				msg = http.StatusText(se.Status)
			}
			return &httpcall.Error{Status: se.Status, Code: code, Message: e.explain(se.Status, code, msg, model),
				Retryable: httpcall.RetryableStatus(se.Status) && code != httpcall.CodeInsufficientQuota}
		case errors.Is(err, errIncompleteEmbeddings), errors.Is(err, errBadVectors):
			return &httpcall.Error{Status: cp.Status, Message: err.Error(), Retryable: true}
		}
		return nil
	}
}
