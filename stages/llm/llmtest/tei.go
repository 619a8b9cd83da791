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

// TEI paths: Hugging Face text-embeddings-inference's tokenizer and
// all-token embedding routes.
const (
	TEITokenizePath = "/tokenize"
	TEIEmbedAllPath = "/embed_all"
)

// TEIFault scripts one reply of a TEIServer. The zero TEIFault is a normal answer.
type TEIFault struct {
	Path        string // the route it applies to ("" for whichever comes next)
	Status      int    // reply with this status and a TEI-style error body
	Message     string // error message (default: the status text)
	RetryAfter  string // Retry-After header
	EchoHeaders bool   // a 200 whose token texts repeat the request's Authorization header (with Status: its error message)
	// EchoSpelling is how the echo is written in the reply's JSON.
	EchoSpelling Spelling
	// Vectors puts a bad vector in an embed_all reply: the last input's
	// last token vector.
	Vectors VectorFault
}

// TEIRequest is one request a TEIServer received.
type TEIRequest struct {
	Seq    int
	Path   string
	Header http.Header
	Body   []byte
	Inputs []string
	Status int // status sent
}

// TEIOption configures a TEIServer.
type TEIOption func(*TEIServer)

// WithTEIMaxBatch makes the server refuse with 413 any request of more than
// n inputs, as text-embeddings-inference does above --max-client-batch-size.
func WithTEIMaxBatch(n int) TEIOption { return func(s *TEIServer) { s.maxBatch = n } }

// WithTEIAPIKey makes the server demand "Authorization: Bearer key" (401 otherwise).
func WithTEIAPIKey(key string) TEIOption { return func(s *TEIServer) { s.apiKey = key } }

// TEIServer is a fake text-embeddings-inference server. Tokenization is
// [CLS], the whitespace-separated words of the input with their byte
// offsets, [SEP]; the vector of token j of an input is TEIVector(input, j),
// so it depends on its context as a contextual embedding does.
type TEIServer struct {
	URL string // base URL: the routes hang directly under it

	srv      *httptest.Server
	maxBatch int
	apiKey   string

	mu    sync.Mutex
	queue []TEIFault
	reqs  []TEIRequest
}

// NewTEI starts a TEI server; Close it when done.
func NewTEI(opts ...TEIOption) *TEIServer {
	s := &TEIServer{}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down.
func (s *TEIServer) Close() { s.srv.Close() }

// Client returns an HTTP client for the server.
func (s *TEIServer) Client() *http.Client { return s.srv.Client() }

// Enqueue appends faults to the script; each applies to the next request to
// its path, in arrival order.
func (s *TEIServer) Enqueue(f ...TEIFault) {
	s.mu.Lock()
	s.queue = append(s.queue, f...)
	s.mu.Unlock()
}

// Requests returns every recorded request in arrival order.
func (s *TEIServer) Requests() []TEIRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TEIRequest(nil), s.reqs...)
}

// Count is the number of requests received on path ("" for all).
func (s *TEIServer) Count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.reqs {
		if path == "" || r.Path == path {
			n++
		}
	}
	return n
}

// BodyCounts counts the requests received per path and distinct body,
// keyed "path body".
func (s *TEIServer) BodyCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, r := range s.reqs {
		out[r.Path+" "+string(r.Body)]++
	}
	return out
}

// TEIToken is one token of the fake tokenizer, in TEI's reply shape.
type TEIToken struct {
	ID      int    `json:"id"`
	Text    string `json:"text"`
	Special bool   `json:"special"`
	Start   *int   `json:"start"`
	Stop    *int   `json:"stop"`
}

// TEITokenize is the fake tokenizer: [CLS], each whitespace-separated word
// with its byte offsets, [SEP].
func TEITokenize(text string) []TEIToken {
	out := []TEIToken{{ID: 101, Text: "[CLS]", Special: true}}
	pos := 0
	for _, w := range strings.Fields(text) {
		start := pos + strings.Index(text[pos:], w)
		stop := start + len(w)
		pos = stop
		out = append(out, TEIToken{ID: 1000 + int(sha256.Sum256([]byte(w))[0]), Text: w, Start: &start, Stop: &stop})
	}
	return append(out, TEIToken{ID: 102, Text: "[SEP]", Special: true})
}

// TEIVector is the embedding of token j of input: a unit vector of
// EmbeddingDim components hashed from the input and the position.
func TEIVector(input string, j int) []float32 {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s", j, input)))
	v := make([]float32, EmbeddingDim)
	var norm float64
	for i := range v {
		x := float64(int(sum[i])-128) + 0.5
		v[i] = float32(x)
		norm += x * x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(norm))
	}
	return v
}

func (s *TEIServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var in struct {
		Inputs json.RawMessage `json:"inputs"`
	}
	rec := TEIRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if err := json.Unmarshal(body, &in); err == nil {
		if json.Unmarshal(in.Inputs, &rec.Inputs) != nil {
			var one string
			if json.Unmarshal(in.Inputs, &one) == nil {
				rec.Inputs = []string{one}
			}
		}
	}
	s.mu.Lock()
	rec.Seq = len(s.reqs) + 1
	var f TEIFault
	for i, q := range s.queue {
		if q.Path == "" || q.Path == rec.Path {
			f = q
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			break
		}
	}
	idx := len(s.reqs)
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()
	status := s.reply(w, &rec, f)
	s.mu.Lock()
	s.reqs[idx].Status = status
	s.mu.Unlock()
}

func (s *TEIServer) reply(w http.ResponseWriter, rec *TEIRequest, f TEIFault) int {
	fail := func(status int, msg, kind string) int {
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if f.EchoHeaders && status == f.Status {
			msg += "; you sent: " + echoMarker
		}
		b, _ := json.Marshal(map[string]string{"error": msg, "error_type": kind})
		_, _ = w.Write(splice(b, rec.Header.Get("Authorization"), f.EchoSpelling))
		return status
	}
	switch {
	case rec.Path != TEITokenizePath && rec.Path != TEIEmbedAllPath:
		return fail(http.StatusNotFound, "unknown path "+rec.Path, "not_found")
	case s.apiKey != "" && rec.Header.Get("Authorization") != "Bearer "+s.apiKey:
		return fail(http.StatusUnauthorized, "unauthorized", "unauthorized")
	case f.Status != 0 && f.Status != http.StatusOK:
		msg := f.Message
		if msg == "" {
			msg = http.StatusText(f.Status)
		}
		return fail(f.Status, msg, teiErrorType(f.Status))
	case len(rec.Inputs) == 0:
		return fail(http.StatusBadRequest, "`inputs` cannot be empty", "empty")
	case s.maxBatch > 0 && len(rec.Inputs) > s.maxBatch:
		return fail(http.StatusRequestEntityTooLarge,
			fmt.Sprintf("batch size %d > maximum allowed batch size %d", len(rec.Inputs), s.maxBatch), "validation")
	}
	var out any
	if rec.Path == TEITokenizePath {
		toks := make([][]TEIToken, len(rec.Inputs))
		for i, in := range rec.Inputs {
			toks[i] = TEITokenize(in)
			if f.EchoHeaders && len(toks[i]) > 2 {
				toks[i][1].Text = echoMarker // spliced in, spelled, once encoded
			}
		}
		out = toks
	} else {
		vecs := make([][]json.RawMessage, len(rec.Inputs))
		for i, in := range rec.Inputs {
			var vs [][]float32
			for j := range TEITokenize(in) {
				vs = append(vs, TEIVector(in, j))
			}
			fault := VectorsOK
			if i == len(rec.Inputs)-1 {
				fault = f.Vectors
			}
			vecs[i] = vectorsJSON(vs, fault)
		}
		out = vecs
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fail(http.StatusInternalServerError, err.Error(), "backend")
	}
	if rec.Path == TEIEmbedAllPath {
		last := rec.Inputs[len(rec.Inputs)-1]
		b = spliceVector(b, TEIVector(last, len(TEITokenize(last))-1), f.Vectors)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(splice(b, rec.Header.Get("Authorization"), f.EchoSpelling))
	return http.StatusOK
}

// teiErrorType is the error_type text-embeddings-inference sends with a status.
func teiErrorType(status int) string {
	switch status {
	case http.StatusRequestEntityTooLarge:
		return "validation"
	case http.StatusFailedDependency:
		return "backend"
	case http.StatusTooManyRequests:
		return "overloaded"
	case http.StatusServiceUnavailable:
		return "unhealthy"
	case http.StatusUnprocessableEntity:
		return "tokenizer"
	}
	return "backend"
}
