package llmtest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// TransformersPath is the route of the token-embeddings sidecar
// (tools/token_embeddings_server.py) that the transformers kind talks to.
const TransformersPath = "/token_embeddings"

// TransformersRequest is one request a TransformersServer received, decoded.
type TransformersRequest struct {
	Model  string   `json:"model"`
	Inputs []string `json:"inputs"`
	Layer  *int     `json:"layer"`
	Body   []byte   `json:"-"`
	Status int      `json:"-"` // status sent
}

// TransformersServer is a fake of the token-embeddings sidecar, in its
// reply shapes. Tokenization is [CLS], the whitespace-separated words,
// [SEP], with the two special tokens flagged; the vector of token j of an
// input at layer L is TransformersVector(input, L, j), so it depends on
// its context, as a contextual embedding does, and on the layer. The
// server runs one model of Layers layers (default 48); a layer past it,
// another model or a batch over MaxBatch is refused as the sidecar
// refuses them.
type TransformersServer struct {
	URL      string
	Model    string // the model it runs; "" answers for any model asked
	Layers   int
	MaxBatch int // 0: no limit

	srv *httptest.Server
	mu  sync.Mutex
	// fail holds statuses for the next requests, in order (500, 429, ...).
	fail []int
	reqs []TransformersRequest
}

// NewTransformers starts a fake sidecar running model ("" for any); Close it.
func NewTransformers(model string) *TransformersServer {
	s := &TransformersServer{Model: model, Layers: 48}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down.
func (s *TransformersServer) Close() { s.srv.Close() }

// Client returns an HTTP client for the server.
func (s *TransformersServer) Client() *http.Client { return s.srv.Client() }

// Fail makes the next len(statuses) requests fail with those statuses.
func (s *TransformersServer) Fail(statuses ...int) {
	s.mu.Lock()
	s.fail = append(s.fail, statuses...)
	s.mu.Unlock()
}

// Requests returns every request received, in arrival order.
func (s *TransformersServer) Requests() []TransformersRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TransformersRequest(nil), s.reqs...)
}

// TransformersTokens is the fake tokenizer: [CLS], the words, [SEP].
func TransformersTokens(text string) []string {
	return append(append([]string{"[CLS]"}, strings.Fields(text)...), "[SEP]")
}

// TransformersVector is the vector of token j of input at layer: a unit
// vector of EmbeddingDim components hashed from the three.
func TransformersVector(input string, layer, j int) []float32 {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%d\x00%s", layer, j, input)))
	v := make([]float32, EmbeddingDim)
	var norm float64
	for i := range v {
		x := float64(int(sum[i%len(sum)])-128) + 0.5
		v[i] = float32(x)
		norm += x * x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(norm))
	}
	return v
}

func (s *TransformersServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req TransformersRequest
	decodeErr := json.Unmarshal(body, &req)
	req.Body = body
	s.mu.Lock()
	status := 0
	if len(s.fail) > 0 {
		status, s.fail = s.fail[0], s.fail[1:]
	}
	idx := len(s.reqs)
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	sent := s.reply(w, r, &req, decodeErr, status)
	s.mu.Lock()
	s.reqs[idx].Status = sent
	s.mu.Unlock()
}

func (s *TransformersServer) reply(w http.ResponseWriter, r *http.Request, req *TransformersRequest, decodeErr error, status int) int {
	fail := func(status int, msg string) int {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return status
	}
	model := req.Model
	if s.Model != "" {
		model = s.Model
	}
	layer := s.Layers
	if req.Layer != nil {
		layer = *req.Layer
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Path != TransformersPath:
		return fail(http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
	case status != 0:
		return fail(status, http.StatusText(status))
	case decodeErr != nil:
		return fail(http.StatusBadRequest, "the body is not JSON: "+decodeErr.Error())
	case len(req.Inputs) == 0:
		return fail(http.StatusBadRequest, "inputs is empty")
	case layer < 0 || layer > s.Layers:
		return fail(http.StatusBadRequest, fmt.Sprintf("layer %d is out of range: %s has %d layers (0 is the embedding output, %d the last)", layer, model, s.Layers, s.Layers))
	case s.MaxBatch > 0 && len(req.Inputs) > s.MaxBatch:
		return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("%d inputs, more than --max-batch %d", len(req.Inputs), s.MaxBatch))
	}
	type entry struct {
		Tokens  []string    `json:"tokens"`
		Special []bool      `json:"special"`
		Vectors [][]float32 `json:"vectors"`
	}
	out := struct {
		Model  string  `json:"model"`
		Layer  int     `json:"layer"`
		Inputs []entry `json:"inputs"`
	}{Model: model, Layer: layer}
	for _, in := range req.Inputs {
		toks := TransformersTokens(in)
		e := entry{Tokens: toks}
		for j := range toks {
			e.Special = append(e.Special, j == 0 || j == len(toks)-1)
			e.Vectors = append(e.Vectors, TransformersVector(in, layer, j))
		}
		out.Inputs = append(out.Inputs, e)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
	return http.StatusOK
}
