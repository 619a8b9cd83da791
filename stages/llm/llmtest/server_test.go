package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func post(t *testing.T, c *http.Client, url, body string, header map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

const chatBody = `{"model":"m1","messages":[{"role":"user","content":"hello world!"}]}`

func TestFaults(t *testing.T) {
	tests := []struct {
		name       string
		fault      Fault
		wantStatus int
		wantHeader map[string]string
		check      func(t *testing.T, body []byte, readErr error)
	}{
		{name: "normal answer", wantStatus: 200, check: func(t *testing.T, body []byte, err error) {
			var r openai.ChatCompletionResponse
			if err := json.Unmarshal(body, &r); err != nil {
				t.Fatal(err)
			}
			want := DefaultResponder(&openai.ChatCompletionRequest{Model: "m1", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hello world!"}}})
			if len(r.Choices) != 1 || r.Choices[0].Message.Content != want {
				t.Fatalf("choices = %+v, want content %q", r.Choices, want)
			}
			if r.Model != "m1" || r.SystemFingerprint != "fp_llmtest" {
				t.Errorf("model, fingerprint = %q, %q", r.Model, r.SystemFingerprint)
			}
			// "hello world!" is 12 bytes: 3 tokens; the answer is 23 bytes: 6 tokens.
			if r.Usage.PromptTokens != 3 || r.Usage.CompletionTokens != 6 || r.Usage.TotalTokens != 9 {
				t.Errorf("usage = %+v, want 3 + 6 = 9", r.Usage)
			}
		}},
		{name: "429 with headers", fault: Fault{Status: 429, RetryAfter: "7", ResetRequests: "20ms", ResetTokens: "6m0s", RemainingRequests: "0", RemainingTokens: "10"},
			wantStatus: 429, wantHeader: map[string]string{"Retry-After": "7", "X-Ratelimit-Reset-Requests": "20ms", "X-Ratelimit-Reset-Tokens": "6m0s",
				"X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Remaining-Tokens": "10"},
			check: func(t *testing.T, body []byte, err error) {
				var e openai.ErrorResponse
				if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Message != "Too Many Requests" || e.Error.Type != "rate_limit_error" {
					t.Fatalf("error body %s (%v)", body, err)
				}
			}},
		{name: "503 with message and code", fault: Fault{Status: 503, Message: "overloaded", Code: "busy"}, wantStatus: 503,
			check: func(t *testing.T, body []byte, err error) {
				if !bytes.Contains(body, []byte(`"message":"overloaded"`)) || !bytes.Contains(body, []byte(`"code":"busy"`)) {
					t.Fatalf("body %s", body)
				}
			}},
		{name: "cut body", fault: Fault{CutBody: true}, wantStatus: 200, check: func(t *testing.T, body []byte, err error) {
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("read error = %v, want unexpected EOF", err)
			}
			if json.Valid(body) || !bytes.HasPrefix(body, []byte(`{"id":"chatcmpl-1"`)) {
				t.Fatalf("body %q should be the start of a valid reply", body)
			}
		}},
		{name: "malformed", fault: Fault{Malformed: true}, wantStatus: 200, check: func(t *testing.T, body []byte, err error) {
			var v any
			if json.NewDecoder(bytes.NewReader(body)).Decode(&v) == nil {
				t.Fatalf("body %s decodes", body)
			}
		}},
		{name: "empty choices", fault: Fault{EmptyChoices: true}, wantStatus: 200, check: func(t *testing.T, body []byte, err error) {
			if !bytes.Contains(body, []byte(`"choices":[]`)) {
				t.Fatalf("body %s", body)
			}
		}},
		{name: "reasoning field", fault: Fault{Text: "B", Reasoning: "thought", ReasoningField: "reasoning"}, wantStatus: 200,
			check: func(t *testing.T, body []byte, err error) {
				if !bytes.Contains(body, []byte(`"content":"B","reasoning":"thought"`)) {
					t.Fatalf("body %s", body)
				}
			}},
		{name: "reasoning_content", fault: Fault{Text: "B", Reasoning: "thought"}, wantStatus: 200,
			check: func(t *testing.T, body []byte, err error) {
				if !bytes.Contains(body, []byte(`"content":"B","reasoning_content":"thought"`)) {
					t.Fatalf("body %s", body)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := New()
			defer s.Close()
			s.Enqueue(tt.fault)
			resp, body, err := post(t, s.HTTPClient(1), s.URL+"/chat/completions", chatBody, nil)
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			for k, v := range tt.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			tt.check(t, body, err)
			reqs := s.Requests()
			if len(reqs) != 1 || reqs[0].Seq != 1 || reqs[0].Status != tt.wantStatus || reqs[0].Chat == nil || reqs[0].Chat.Model != "m1" {
				t.Fatalf("recorded %+v", reqs)
			}
			wantAnswered := tt.wantStatus == 200 && !tt.fault.CutBody && !tt.fault.Malformed
			if reqs[0].Answered != wantAnswered {
				t.Errorf("Answered = %v, want %v", reqs[0].Answered, wantAnswered)
			}
		})
	}
}

func TestScriptOrderHookAndClock(t *testing.T) {
	clock := NewFakeClock(time.Time{})
	s := New(WithClock(clock.Now))
	defer s.Close()
	s.Enqueue(Fault{Status: 500}, Fault{Status: 502})
	s.SetHook(func(r *Request) (Fault, bool) {
		if r.Seq%2 == 0 {
			return Fault{Status: 429}, true
		}
		return Fault{}, false
	})
	c := s.HTTPClient(1)
	var got []int
	for i := 0; i < 6; i++ {
		resp, _, err := post(t, c, s.URL+"/chat/completions", chatBody, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.StatusCode)
		clock.Advance(time.Second)
	}
	want := []int{500, 502, 200, 429, 200, 429}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses = %v, want %v", got, want)
		}
	}
	for i, r := range s.Requests() {
		if want := Epoch.Add(time.Duration(i) * time.Second); !r.Time.Equal(want) {
			t.Errorf("request %d time = %v, want %v", i+1, r.Time, want)
		}
	}
	if s.Count() != 6 {
		t.Errorf("Count = %d, want 6", s.Count())
	}
}

func TestAPIKey(t *testing.T) {
	s := New(WithAPIKey("k-right"))
	defer s.Close()
	resp, body, err := post(t, s.HTTPClient(1), s.URL+"/chat/completions", chatBody, map[string]string{"Authorization": "Bearer k-wrong"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 401 || !bytes.Contains(body, []byte("Bearer k-wrong")) {
		t.Fatalf("status %d body %s: want 401 echoing the presented key", resp.StatusCode, body)
	}
	resp, _, err = post(t, s.HTTPClient(1), s.URL+"/chat/completions", chatBody, map[string]string{"Authorization": "Bearer k-right"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("right key: %v %v", resp.StatusCode, err)
	}
}

func TestEmbeddings(t *testing.T) {
	s := New()
	defer s.Close()
	for _, body := range []string{`{"model":"e1","input":["alpha","beta gamma"]}`, `{"model":"e1","input":"alpha"}`} {
		resp, b, err := post(t, s.HTTPClient(1), s.URL+"/embeddings", body, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", body, resp.StatusCode, err)
		}
		var r openai.EmbeddingResponse
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.Data[0].Index != 0 || len(r.Data[0].Embedding) != EmbeddingDim {
			t.Fatalf("data %+v", r.Data)
		}
		for i, v := range Vector("e1", "alpha") {
			if r.Data[0].Embedding[i] != v {
				t.Fatalf("vector differs from Vector at %d", i)
			}
		}
	}
	var norm float64
	for _, x := range Vector("e1", "alpha") {
		norm += float64(x) * float64(x)
	}
	if norm < 0.9999 || norm > 1.0001 {
		t.Errorf("|Vector|^2 = %v, want 1", norm)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || len(reqs[0].Embed.Input) != 2 || reqs[1].Embed.Input[0] != "alpha" {
		t.Fatalf("recorded %+v", reqs)
	}
}

func TestDelayAndInFlight(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Fault{Delay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/chat/completions", strings.NewReader(chatBody))
	if _, err := s.HTTPClient(1).Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if s.MaxInFlight() != 1 {
		t.Errorf("MaxInFlight = %d, want 1", s.MaxInFlight())
	}
}

func TestInMemoryTransport(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Fault{CutBody: true})
	c := &http.Client{Transport: s.Transport()}
	_, body, err := post(t, c, s.URL+"/chat/completions", chatBody, nil)
	if err != nil {
		t.Fatal(err)
	}
	if json.Valid(body) {
		t.Fatalf("cut body %q is valid JSON", body)
	}
	resp, body, err := post(t, c, s.URL+"/chat/completions", chatBody, nil)
	if err != nil || resp.StatusCode != 200 || !json.Valid(body) {
		t.Fatalf("second call: %v %s", err, body)
	}
}

func TestFakeClock(t *testing.T) {
	c := NewFakeClock(time.Time{})
	ctx := context.Background()
	_ = c.Sleep(ctx, 2*time.Second)
	_ = c.Sleep(ctx, 0)
	_ = c.Sleep(ctx, 500*time.Millisecond)
	c.Advance(time.Minute)
	if got := c.Sleeps(); len(got) != 2 || got[0] != 2*time.Second || got[1] != 500*time.Millisecond {
		t.Fatalf("Sleeps = %v", got)
	}
	if c.Slept() != 2500*time.Millisecond || !c.Now().Equal(Epoch.Add(62500*time.Millisecond)) {
		t.Fatalf("Slept %v Now %v", c.Slept(), c.Now())
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Sleep(cctx, time.Second); !errors.Is(err, context.Canceled) || len(c.Sleeps()) != 2 {
		t.Fatalf("cancelled sleep: %v, sleeps %v", err, c.Sleeps())
	}
}
