// Package llmtest is an in-process fake OpenAI-compatible server for tests and
// benchmarks. It speaks real HTTP (httptest), so the production client is
// exercised end to end, answers deterministically, records every request, and
// misbehaves on demand from a script of faults: delays, error statuses with
// rate-limit headers, bodies cut short, malformed JSON, empty choices.
package llmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Responder turns a chat request into the answer text.
type Responder func(req *openai.ChatCompletionRequest) string

// Fault scripts one reply. The zero Fault is a normal answer; fields combine
// (a Delay before a Status, a Text with a Reasoning, ...).
type Fault struct {
	Delay time.Duration // wait before replying; cut short if the client goes away

	Status  int    // non-zero and not 200: reply with this status and an OpenAI-style error body
	Message string // error message (default: the status text)
	Code    string // error code, e.g. "rate_limit_exceeded", "insufficient_quota"

	RetryAfter        string // Retry-After header, e.g. "7" or an HTTP date
	ResetRequests     string // x-ratelimit-reset-requests, e.g. "1s", "6m0s", "20ms"
	ResetTokens       string // x-ratelimit-reset-tokens
	RemainingRequests string // x-ratelimit-remaining-requests
	RemainingTokens   string // x-ratelimit-remaining-tokens

	ServedModel string // model name to report instead of the requested one (an endpoint that re-routed)

	// Vectors puts a bad vector in an embeddings reply: the last input's.
	Vectors VectorFault

	CutBody      bool // 200 whose body stops halfway through the JSON, then the connection closes
	Malformed    bool // 200 whose body is not valid JSON
	EmptyChoices bool // 200 with "choices": [] (embeddings: "data": [])

	// EchoHeaders: a 200 that repeats the request's headers, Authorization
	// included, in the answer text (embeddings: in the reported model), as
	// debugging proxies do; clients must mask the key in what they return.
	// With Status, the error message repeats the Authorization header
	// instead, as 401 messages do.
	EchoHeaders bool
	// EchoSpelling is how the echo is written in the reply's JSON: every
	// spelling decodes to the same headers (see Spelling).
	EchoSpelling Spelling
	// Type is the error object's "type" (default: the status's usual
	// one); a quota error may come with type "insufficient_quota" and no
	// code.
	Type string

	Text           string        // answer text instead of the Responder's
	Reasoning      string        // reasoning text sent beside the answer
	ReasoningField string        // JSON name of Reasoning: "reasoning_content" (default) or "reasoning"
	Usage          *openai.Usage // usage to report instead of the estimate
}

// Request is one request the server received.
type Request struct {
	Seq      int       // 1-based arrival order
	Time     time.Time // the server clock at arrival
	Path     string
	Remote   string // client address: distinct values count the connections used
	Header   http.Header
	Body     []byte
	Chat     *openai.ChatCompletionRequest // set for chat completions
	Embed    *EmbeddingRequest             // set for embeddings
	Fault    Fault                         // the script applied (zero: a normal answer)
	Status   int                           // status sent
	Answered bool                          // a complete successful body was written
	InFlight int                           // requests being served at arrival, this one included
}

// EmbeddingRequest is an embeddings request with its input normalised to a list.
type EmbeddingRequest struct {
	Model string
	Input []string
}

// Option configures a Server.
type Option func(*Server)

// WithClock sets the clock that stamps recorded requests (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithLatency delays every reply by d (on top of a fault's Delay).
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithResponder sets the answer function (default: DefaultResponder).
func WithResponder(r Responder) Option { return func(s *Server) { s.responder = r } }

// WithAPIKey makes the server demand "Authorization: Bearer key" and answer 401
// otherwise. Like some real endpoints, the 401 message repeats the key it was
// given, so tests can check that clients scrub it.
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// WithReversedEmbeddings makes embeddings replies list their vectors last
// input first, each with its right index, as servers are free to.
func WithReversedEmbeddings() Option { return func(s *Server) { s.reversed = true } }

// WithIgnoreN plays a server that ignores the n parameter: one choice always.
func WithIgnoreN() Option { return func(s *Server) { s.ignoreN = true } }

// WithChoiceText rewrites the text of choice i of a request asking for n
// choices (n > 1), after it is made; the usage follows the new texts. It
// plays a model one of whose choices is unusable.
func WithChoiceText(f func(n, i int, text string) string) Option {
	return func(s *Server) { s.choiceText = f }
}

// WithFingerprint sets the system_fingerprint reported (default "fp_llmtest").
func WithFingerprint(fp string) Option { return func(s *Server) { s.fingerprint = fp } }

// Server is the fake endpoint. All methods are safe for concurrent use.
type Server struct {
	ignoreN bool
	// URL is the base URL to configure a client with; it ends in /v1.
	URL string

	srv *httptest.Server

	now         func() time.Time
	latency     time.Duration
	apiKey      string
	fingerprint string
	reversed    bool
	choiceText  func(n, i int, text string) string

	mu          sync.Mutex
	responder   Responder
	queue       []Fault
	hook        func(r *Request) (Fault, bool)
	reqs        []Request
	inFlight    int
	maxInFlight int

	windows  []Window    // WithRateLimit's; empty: no limit
	admitted []time.Time // arrival times of the requests the limit accepted
	tokenSum []int64     // tokenSum[i]: tokens of admitted[:i]
	refused  int         // requests the limit answered 429
}

// New starts a server; Close it when done.
func New(opts ...Option) *Server {
	s := &Server{now: time.Now, fingerprint: "fp_llmtest", responder: DefaultResponder}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// HTTPClient returns a client whose transport keeps enough idle connections
// for n concurrent callers (the default keeps 2, which makes parallel tests
// and benchmarks measure connection setup instead of the code under test).
func (s *Server) HTTPClient(n int) *http.Client {
	t := s.srv.Client().Transport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = n
	t.MaxIdleConns = n
	return &http.Client{Transport: t}
}

// SetFingerprint changes the system_fingerprint reported from now on: an
// endpoint whose backend was updated under the same model name.
func (s *Server) SetFingerprint(fp string) {
	s.mu.Lock()
	s.fingerprint = fp
	s.mu.Unlock()
}

// Fingerprint is the system_fingerprint the server reports.
func (s *Server) Fingerprint() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fingerprint
}

// SetResponder replaces the answer function.
func (s *Server) SetResponder(r Responder) {
	s.mu.Lock()
	s.responder = r
	s.mu.Unlock()
}

// Enqueue appends faults to the script; each request takes the next one in
// arrival order. When the script is empty the hook (if any) decides.
func (s *Server) Enqueue(f ...Fault) {
	s.mu.Lock()
	s.queue = append(s.queue, f...)
	s.mu.Unlock()
}

// SetHook installs a per-request hook consulted when the script is empty: it
// sees the request (Seq, Time, parsed body) and returns the fault to apply, if any.
// It runs under the server's lock, so it must be quick and must not call the Server.
func (s *Server) SetHook(h func(r *Request) (Fault, bool)) {
	s.mu.Lock()
	s.hook = h
	s.mu.Unlock()
}

// Requests returns a copy of every recorded request in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count is the number of requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// BodyCounts counts the requests received per distinct request body, so a
// test can assert each batch went out exactly as often as it should.
func (s *Server) BodyCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, r := range s.reqs {
		out[string(r.Body)]++
	}
	return out
}

// MaxInFlight is the largest number of requests served at the same time.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// DefaultResponder answers "answer <hash>" where hash digests the model and
// messages: deterministic, distinct per prompt, and tied to no answer format.
func DefaultResponder(req *openai.ChatCompletionRequest) string {
	h := sha256.New()
	h.Write([]byte(req.Model))
	for _, m := range req.Messages {
		h.Write([]byte{0})
		h.Write([]byte(m.Role))
		h.Write([]byte{0})
		h.Write([]byte(m.Content))
	}
	return "answer " + hex.EncodeToString(h.Sum(nil))[:16]
}
