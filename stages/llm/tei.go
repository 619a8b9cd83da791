package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
)

// DefaultTEIBatch is tei's default max_batch: text-embeddings-inference's
// own default --max-client-batch-size. A server started with a smaller one
// answers 413, and the client halves its batches from then on.
const DefaultTEIBatch = 32

func init() {
	register(KindInfo{
		Name: "tei",
		Doc: "Hugging Face text-embeddings-inference: contextual token embeddings of the model's final layer through POST {base_url}/tokenize " +
			"and POST {base_url}/embed_all, special tokens dropped (kept, flagged, when a token_matching request says so); token_matching reduces them to BERTScore's matching before caching. " +
			"For another layer (bert_score's defaults) use the transformers kind.",
		Ops:                []string{OpTokenEmbeddings, OpTokenMatching},
		AnswererDoc:        "the class endpoint and endpoint_identity, by default the normalised base_url",
		DefaultConcurrency: DefaultMaxConcurrency,
		Settings: withSettings(httpSettings(DefaultMaxConcurrency), requiredBaseURL("http://localhost:8080"),
			maxBatch(DefaultTEIBatch, "inputs per request; halved after a 413")),
		open: func(p Provider, o options) (Client, error) {
			k, _ := LookupKind("tei")
			if p.BaseURL == "" {
				return nil, fmt.Errorf("provider %q: kind %q has no default endpoint: set base_url", p.Name, k.Name)
			}
			c, err := newConn(k, p, o)
			if err != nil {
				return nil, err
			}
			base := strings.TrimRight(p.BaseURL, "/")
			return &teiClient{noChat: noChat{p.Name, p.Kind}, conn: c, auth: c.bearer(),
				tokenizeURL: base + "/tokenize", embedURL: base + "/embed_all", batch: c.p.Int("max_batch")}, nil
		},
	})
}

// teiClient is the tei kind.
type teiClient struct {
	noChat
	*conn
	auth                  http.Header
	tokenizeURL, embedURL string

	mu    sync.Mutex
	batch int // max_batch, lowered by every 413 to the size that was accepted after it
}

func (t *teiClient) Embed(_ context.Context, model string, _ []string) ([][]float32, Usage, error) {
	return nil, Usage{}, unservedOp(t.p.Name, t.kind, OpEmbeddings)
}

type teiToken struct {
	ID      int    `json:"id"`
	Text    string `json:"text"`
	Special bool   `json:"special"`
	Start   *int   `json:"start"`
	Stop    *int   `json:"stop"`
}

type teiTokenizeRequest struct {
	Inputs           []string `json:"inputs"`
	AddSpecialTokens bool     `json:"add_special_tokens"`
}

type teiEmbedRequest struct {
	Inputs []string `json:"inputs"`
}

type teiResult struct {
	entries          []tokenEntry
	keepSpecial      bool        // the request keeps special tokens, flagged
	shape            vectorShape // every token vector of the call, checked on arrival
	usage            Usage
	status, attempts int
}

func (t *teiClient) Call(ctx context.Context, req ServiceRequest) (*ServiceResponse, error) {
	var inputs []string
	var err error
	switch req.Op {
	case OpTokenEmbeddings:
		inputs, err = decodeInput(t.p.Name, req)
	case OpTokenMatching:
		inputs, err = decodeMatching(t.p.Name, req)
	default:
		return nil, unservedOp(t.p.Name, t.kind, req.Op)
	}
	if err != nil {
		return nil, err
	}
	r := &teiResult{entries: make([]tokenEntry, 0, len(inputs)), keepSpecial: keepsSpecial(req), shape: t.dims.shape(OpTokenEmbeddings, req.Model)}
	if err := t.run(ctx, req.Model, inputs, r); err != nil {
		return nil, err
	}
	t.dims.learn(OpTokenEmbeddings, req.Model, r.shape)
	var body any = tokenVectorsBody{Inputs: r.entries}
	if req.Op == OpTokenMatching {
		body = matchTokens(r.entries)
	}
	return &ServiceResponse{Body: encodeBody(body), Usage: r.usage, Status: r.status, Attempts: r.attempts}, nil
}

func (t *teiClient) maxBatch() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.batch
}

// run embeds inputs in batches of the current max_batch, appending to r in
// input order. Each batch is cut when it is sent, so a 413 met by one batch
// (or by a concurrent call) shrinks every batch after it.
func (t *teiClient) run(ctx context.Context, model string, inputs []string, r *teiResult) error {
	for len(inputs) > 0 {
		batch := inputs[:min(len(inputs), t.maxBatch())]
		inputs = inputs[len(batch):]
		err := t.runBatch(ctx, model, batch, r)
		var e *APIError
		if errors.As(err, &e) && (e.Status == http.StatusRequestEntityTooLarge || e.Code == httpcall.CodeReplyTooLarge) && len(batch) > 1 {
			// The server's batch limit is below this batch, or its token
			// vectors (hidden size x tokens x inputs) over max_reply_bytes:
			// remember the half that will be tried, and go again in halves.
			half := (len(batch) + 1) / 2
			t.mu.Lock()
			t.batch = min(t.batch, half)
			t.mu.Unlock()
			t.caller.Log.Warn().Int("batch", len(batch)).Int("max_batch", half).Msg("batch too large for the server: halving")
			if err := t.run(ctx, model, batch, r); err != nil {
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

// runBatch tokenizes and embeds one batch and keeps the vectors of the
// tokens that are not special (of every token, flagged, when the request
// keeps them).
func (t *teiClient) runBatch(ctx context.Context, model string, batch []string, r *teiResult) error {
	var est int64
	for _, in := range batch {
		est += textTokens(in)
	}
	var tokens [][]teiToken
	var counted int64
	err := t.post(ctx, model, est, t.tokenizeURL, teiTokenizeRequest{Inputs: batch, AddSpecialTokens: true}, func(b []byte) error {
		return httpcall.Decode(b, &tokens)
	}, r, func() (int64, error) {
		if len(tokens) != len(batch) {
			return 0, fmt.Errorf("%w: tokenization of %d inputs for %d", errIncompleteEmbeddings, len(tokens), len(batch))
		}
		counted = 0
		for _, toks := range tokens {
			counted += int64(len(toks))
		}
		return counted, nil
	})
	if err != nil {
		return err
	}
	var vectors [][][]float32
	base := len(r.entries) // the batch's first input, counted over the call
	err = t.post(ctx, model, counted, t.embedURL, teiEmbedRequest{Inputs: batch}, func(b []byte) error {
		// The reply is numbers and brackets only: a null anywhere is a
		// vector or a component missing, which decoding would make 0.
		if bytes.Contains(b, null) {
			return fmt.Errorf("%w: the reply holds null where a vector or a number belongs", errBadVectors)
		}
		return httpcall.Decode(b, &vectors)
	}, r, func() (int64, error) {
		if len(vectors) != len(batch) {
			return 0, fmt.Errorf("%w: %d inputs embedded for %d", errIncompleteEmbeddings, len(vectors), len(batch))
		}
		s := r.shape // kept only if the whole batch passes
		for i, vs := range vectors {
			if len(vs) == 0 && len(tokens[i]) > 0 {
				return 0, fmt.Errorf("%w: input %d has %d tokens and no token vectors", errBadVectors, base+i, len(tokens[i]))
			}
			if err := s.checkAll(vs, func(j int) string { return fmt.Sprintf("input %d, token %d", base+i, j) }); err != nil {
				return 0, err
			}
		}
		r.shape = s
		return counted, nil
	})
	if err != nil {
		return err
	}
	for i := range batch {
		if len(tokens[i]) != len(vectors[i]) {
			return &APIError{Provider: t.p.Name, Status: r.status, Message: fmt.Sprintf(
				"input %d has %d tokens but %d token vectors came back; is the server truncating inputs (--auto-truncate)?", i, len(tokens[i]), len(vectors[i]))}
		}
		e := tokenEntry{Tokens: []string{}, Vectors: [][]float32{}}
		if r.keepSpecial {
			e.Special = []bool{}
		}
		for j, tok := range tokens[i] {
			if tok.Special && !r.keepSpecial {
				continue
			}
			e.Tokens = append(e.Tokens, t.cred.scrub.Scrub(tok.Text)) // decoded: see openAIClient.scrubDecoded
			e.Vectors = append(e.Vectors, vectors[i][j])
			if r.keepSpecial {
				e.Special = append(e.Special, tok.Special)
			}
		}
		r.entries = append(r.entries, e)
	}
	// The server's own token count: every token it ran, special ones included.
	r.usage.InputTokens += counted
	return nil
}

// post makes one retried request; decode reads the reply's body, check
// validates what it decoded and returns the tokens it used.
func (t *teiClient) post(ctx context.Context, model string, est int64, url string, in any, decode func([]byte) error, r *teiResult, check func() (int64, error)) error {
	op := OpTokenEmbeddings + " " + url[strings.LastIndexByte(url, '/'):]
	attempts, status, err := t.caller.Do(ctx, op, model, est, false, func(ctx context.Context, _ *httpcall.Capture) (httpcall.Tokens, error) {
		b, err := httpcall.DoJSONRaw(ctx, t.http, http.MethodPost, url, t.auth, in)
		if err != nil {
			return httpcall.Tokens{}, err
		}
		if err := decode(b); err != nil {
			return httpcall.Tokens{}, err
		}
		n, err := check()
		return httpcall.Tokens{In: n}, err
	}, t.classify(model))
	r.attempts += attempts
	r.status = status
	return err
}

// classify reads text-embeddings-inference's errors, {"error": "...",
// "error_type": "..."}: 413 is a batch (or an input) over the server's
// limits, 424 a failure of the model itself, 429 an overloaded queue.
func (t *teiClient) classify(model string) httpcall.Classify {
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
				e.Message = "batch or input over the server's limits: " + msg +
					"; batches are halved automatically, so a single input is too long: shorten it or start the server with --auto-truncate"
			case http.StatusFailedDependency:
				e.Message = "model error (not retried): " + msg +
					"; text-embeddings-inference answers 424 when its model fails on the input, e.g. when the model it serves is not an embedding model"
			case http.StatusTooManyRequests:
				e.Message = "overloaded: " + msg
			default:
				e.Message = t.explain(se.Status, kind, msg, model)
			}
			return e
		case errors.Is(err, errIncompleteEmbeddings), errors.Is(err, errBadVectors):
			return &httpcall.Error{Status: cp.Status, Message: err.Error(), Retryable: true}
		}
		return nil
	}
}
