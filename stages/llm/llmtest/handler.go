package llmtest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

const (
	chatPath  = "/v1/chat/completions"
	embedPath = "/v1/embeddings"
	// EmbeddingDim is the length of the vectors the default embedder returns.
	EmbeddingDim = 8
)

// Tokens is the server's token count for a text: ceil(bytes / 4), the same
// rule-of-thumb the client uses to estimate budgets before a call.
func Tokens(s string) int { return (len(s) + 3) / 4 }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "read body: "+err.Error(), "", "")
		return
	}
	rec := Request{Path: r.URL.Path, Remote: r.RemoteAddr, Header: r.Header.Clone(), Body: body}
	switch r.URL.Path {
	case chatPath:
		rec.Chat = new(openai.ChatCompletionRequest)
		if err := json.Unmarshal(body, rec.Chat); err != nil {
			writeError(w, http.StatusBadRequest, "invalid chat request: "+err.Error(), "", "invalid_request_error")
			return
		}
	case embedPath:
		e, err := parseEmbedding(body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid embeddings request: "+err.Error(), "", "invalid_request_error")
			return
		}
		rec.Embed = e
	default:
		writeError(w, http.StatusNotFound, "unknown path "+r.URL.Path, "not_found", "")
		return
	}

	s.mu.Lock()
	rec.Seq = len(s.reqs) + 1
	rec.Time = s.now()
	s.inFlight++
	rec.InFlight = s.inFlight
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	if len(s.queue) > 0 {
		rec.Fault = s.queue[0]
		s.queue = s.queue[1:]
	} else if s.hook != nil {
		if f, ok := s.hook(&rec); ok {
			rec.Fault = f
		}
	}
	if rec.Fault == (Fault{}) {
		if f, refused := s.limit(&rec, rec.Time); refused {
			rec.Fault = f
		}
	}
	respond := s.responder
	idx := len(s.reqs)
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()

	// The outcome is recorded before the reply's last byte leaves, so a
	// client that has its answer always finds it in Requests().
	settle := func(status int, answered bool) {
		s.mu.Lock()
		s.reqs[idx].Status = status
		s.reqs[idx].Answered = answered
		s.mu.Unlock()
	}
	s.reply(w, r, &rec, respond, settle)

	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
}

// reply writes the scripted reply; settle records the status sent (0 if the
// client went away first) and whether a complete successful body went out,
// just before the bytes that end the exchange are written.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, rec *Request, respond Responder, settle func(int, bool)) {
	f := rec.Fault
	if d := s.latency + f.Delay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			settle(0, false)
			return
		}
	}
	if s.apiKey != "" && rec.Header.Get("Authorization") != "Bearer "+s.apiKey {
		presented := rec.Header.Get("Authorization")
		settle(http.StatusUnauthorized, false)
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided: "+presented+".", "invalid_api_key", "")
		return
	}
	setHeader(w, "Retry-After", f.RetryAfter)
	setHeader(w, "x-ratelimit-reset-requests", f.ResetRequests)
	setHeader(w, "x-ratelimit-reset-tokens", f.ResetTokens)
	setHeader(w, "x-ratelimit-remaining-requests", f.RemainingRequests)
	setHeader(w, "x-ratelimit-remaining-tokens", f.RemainingTokens)
	if f.Status != 0 && f.Status != http.StatusOK {
		msg := f.Message
		if msg == "" {
			msg = http.StatusText(f.Status)
		}
		settle(f.Status, false)
		if f.EchoHeaders {
			body := errorBody(msg+"; you sent: "+echoMarker, f.Code, f.Type, f.Status)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.Status)
			_, _ = w.Write(splice(body, rec.Header.Get("Authorization"), f.EchoSpelling))
			return
		}
		writeError(w, f.Status, msg, f.Code, f.Type)
		return
	}
	if f.Malformed {
		// A trailing comma: invalid inside the first JSON value, so a decoder
		// cannot stop early and miss it.
		settle(http.StatusOK, false)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-bad","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"x"}},]}`)
		return
	}
	var payload any
	if rec.Chat != nil {
		payload = s.chatReply(rec, respond)
	} else {
		payload = embedReply(rec, s.reversed)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		settle(http.StatusInternalServerError, false)
		writeError(w, http.StatusInternalServerError, "encode reply: "+err.Error(), "", "")
		return
	}
	if f.EchoHeaders {
		b = splice(b, echo(rec.Header), f.EchoSpelling)
	}
	if rec.Embed != nil && len(rec.Embed.Input) > 0 {
		last := rec.Embed.Input[len(rec.Embed.Input)-1]
		b = spliceVector(b, Vector(rec.Embed.Model, last), f.Vectors)
	}
	if f.CutBody {
		settle(http.StatusOK, false)
		cutBody(w, b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	settle(http.StatusOK, true)
	if _, err := w.Write(b); err != nil {
		settle(http.StatusOK, false)
	}
}

type chatMessage struct {
	Role             string `json:"role"`
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content,omitempty"`
	Reasoning        string `json:"reasoning,omitempty"`
}

type chatChoice struct {
	Index        int         `json:"index"`
	Message      chatMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type chatResponse struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             openai.Usage `json:"usage"`
}

func (s *Server) chatReply(rec *Request, respond Responder) chatResponse {
	f := rec.Fault
	text := f.Text
	if text == "" {
		text = respond(rec.Chat)
	}
	if f.EchoHeaders {
		text += "\nyou sent:\n" + echoMarker // spliced in, spelled, once encoded
	}
	prompt := 0
	for _, m := range rec.Chat.Messages {
		prompt += Tokens(m.Content)
	}
	usage := openai.Usage{PromptTokens: prompt, CompletionTokens: Tokens(text)}
	if f.Usage != nil {
		usage = *f.Usage
	}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	msg := chatMessage{Role: "assistant", Content: text}
	if f.ReasoningField == "reasoning" {
		msg.Reasoning = f.Reasoning
	} else {
		msg.ReasoningContent = f.Reasoning
	}
	out := chatResponse{
		ID: fmt.Sprintf("chatcmpl-%d", rec.Seq), Object: "chat.completion", Created: rec.Time.Unix(),
		Model: servedModel(rec), SystemFingerprint: s.Fingerprint(), Usage: usage,
		Choices: []chatChoice{{Message: msg, FinishReason: "stop"}},
	}
	// n choices (the n parameter): each a distinct answer, the prompt
	// billed once, as OpenAI-compatible servers do. IgnoreN plays a server
	// that answers one choice whatever n says.
	if n := rec.Chat.N; n > 1 && !s.ignoreN && !f.EmptyChoices {
		for i := 1; i < n; i++ {
			t := fmt.Sprintf("%s (choice %d)", text, i)
			out.Choices = append(out.Choices, chatChoice{Index: i, Message: chatMessage{Role: "assistant", Content: t}, FinishReason: "stop"})
			out.Usage.CompletionTokens += Tokens(t)
		}
		if s.choiceText != nil {
			out.Usage.CompletionTokens = 0
			for i := range out.Choices {
				c := &out.Choices[i].Message
				c.Content = s.choiceText(n, i, c.Content)
				out.Usage.CompletionTokens += Tokens(c.Content)
			}
		}
		out.Usage.TotalTokens = out.Usage.PromptTokens + out.Usage.CompletionTokens
	}
	if f.EmptyChoices {
		out.Choices = []chatChoice{}
	}
	return out
}

type embeddingDatum struct {
	Object    string          `json:"object"`
	Embedding json.RawMessage `json:"embedding"`
	Index     int             `json:"index"`
}

type embeddingResponse struct {
	Object string           `json:"object"`
	Data   []embeddingDatum `json:"data"`
	Model  string           `json:"model"`
	Usage  openai.Usage     `json:"usage"`
}

func embedReply(rec *Request, reversed bool) embeddingResponse {
	out := embeddingResponse{Object: "list", Model: rec.Embed.Model, Data: []embeddingDatum{}}
	if rec.Fault.EchoHeaders {
		out.Model = echoMarker
	}
	vecs := make([][]float32, len(rec.Embed.Input))
	for i, in := range rec.Embed.Input {
		vecs[i] = Vector(rec.Embed.Model, in)
	}
	raw := vectorsJSON(vecs, rec.Fault.Vectors)
	for i, in := range rec.Embed.Input {
		out.Usage.PromptTokens += Tokens(in)
		if !rec.Fault.EmptyChoices {
			out.Data = append(out.Data, embeddingDatum{Object: "embedding", Embedding: raw[i], Index: i})
		}
	}
	out.Usage.TotalTokens = out.Usage.PromptTokens
	if reversed {
		for i, j := 0, len(out.Data)-1; i < j; i, j = i+1, j-1 {
			out.Data[i], out.Data[j] = out.Data[j], out.Data[i]
		}
	}
	return out
}

// echo renders request headers the way a debugging proxy repeats them.
func echo(h http.Header) string {
	var b strings.Builder
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(h[k], ", "))
	}
	return b.String()
}

// Vector is the default embedding of text: a unit vector of EmbeddingDim
// components derived from a hash of model and text.
func Vector(model, text string) []float32 {
	sum := sha256.Sum256([]byte(model + "\x00" + text))
	v := make([]float32, EmbeddingDim)
	var norm float64
	for i := range v {
		x := float64(int(sum[i])-128) + 0.5 // never all zero
		v[i] = float32(x)
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

func parseEmbedding(body []byte) (*EmbeddingRequest, error) {
	var raw struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, err
	}
	e := &EmbeddingRequest{Model: raw.Model}
	if err := json.Unmarshal(raw.Input, &e.Input); err == nil {
		return e, nil
	}
	var one string
	if err := json.Unmarshal(raw.Input, &one); err != nil {
		return nil, fmt.Errorf("input is neither a string nor a list of strings: %w", err)
	}
	e.Input = []string{one}
	return e, nil
}

func writeError(w http.ResponseWriter, status int, msg, code, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(msg, code, typ, status))
}

// errorBody is an OpenAI-style error object; typ "" is the status's usual type.
func errorBody(msg, code, typ string, status int) []byte {
	if typ == "" {
		typ = errorType(status)
	}
	var c any = code
	if code == "" {
		c = nil
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": c}})
	return append(b, '\n')
}

func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

func setHeader(w http.ResponseWriter, name, value string) {
	if value != "" {
		w.Header().Set(name, value)
	}
}

// cutBody promises the whole body in Content-Length, sends half of it and
// drops the connection, like a proxy or server dying mid-reply.
func cutBody(w http.ResponseWriter, b []byte) {
	half := b[:len(b)/2]
	hj, ok := w.(http.Hijacker)
	if !ok { // in-memory transport: a short body is all the client will see
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(half)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(b))
	_, _ = buf.Write(half)
	_ = buf.Flush()
}

// Transport serves requests by calling the server's handler in the calling
// goroutine, without sockets. Tests running inside a testing/synctest bubble
// need it: a goroutine blocked on a real socket never counts as idle there, so
// virtual time would stop.
func (s *Server) Transport() http.RoundTripper { return memTransport{s} }

type memTransport struct{ s *Server }

func (t memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil {
		r.Body = http.NoBody
	}
	defer r.Body.Close()
	rec := httptest.NewRecorder()
	t.s.serve(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

func servedModel(rec *Request) string {
	if rec.Fault.ServedModel != "" {
		return rec.Fault.ServedModel
	}
	return rec.Chat.Model
}
