package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

func TestRetriesPerFault(t *testing.T) {
	s := time.Second
	tests := []struct {
		name         string
		faults       []llmtest.Fault
		maxRetries   int // -1: default
		wantAttempts int
		wantSleeps   []time.Duration
		wantStatus   int  // of the returned error; 0 when the call succeeds
		wantRetry    bool // returned error's Retryable
	}{
		{name: "no fault", maxRetries: -1, wantAttempts: 1},
		{name: "429 without headers", faults: []llmtest.Fault{{Status: 429}}, maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{s}},
		{name: "429 Retry-After seconds", faults: []llmtest.Fault{{Status: 429, RetryAfter: "7"}}, maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{7 * s}},
		{name: "429 Retry-After fraction", faults: []llmtest.Fault{{Status: 429, RetryAfter: "0.25"}}, maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{250 * time.Millisecond}},
		{name: "429 Retry-After HTTP date", faults: []llmtest.Fault{{Status: 429, RetryAfter: llmtest.Epoch.Add(30 * s).Format(http.TimeFormat)}},
			maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{30 * s}},
		{name: "429 reset-requests 20ms", faults: []llmtest.Fault{{Status: 429, ResetRequests: "20ms", RemainingRequests: "0"}},
			maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{20 * time.Millisecond}},
		{name: "429 reset-tokens 6m0s", faults: []llmtest.Fault{{Status: 429, ResetTokens: "6m0s", RemainingTokens: "0"}},
			maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{6 * time.Minute}},
		{name: "429 both resets, only requests exhausted", faults: []llmtest.Fault{{Status: 429, ResetRequests: "1s", RemainingRequests: "0",
			ResetTokens: "6m0s", RemainingTokens: "150000"}}, maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{s}},
		{name: "Retry-After wins over resets", faults: []llmtest.Fault{{Status: 429, RetryAfter: "2", ResetRequests: "9s"}},
			maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{2 * s}},
		{name: "500 502 503", faults: []llmtest.Fault{{Status: 500}, {Status: 502}, {Status: 503}}, maxRetries: -1, wantAttempts: 4,
			wantSleeps: []time.Duration{s, 2 * s, 4 * s}},
		{name: "503 Retry-After", faults: []llmtest.Fault{{Status: 503, RetryAfter: "3"}}, maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{3 * s}},
		{name: "cut body", faults: []llmtest.Fault{{CutBody: true}}, maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{s}},
		{name: "malformed JSON", faults: []llmtest.Fault{{Malformed: true}}, maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{s}},
		{name: "empty choices", faults: []llmtest.Fault{{EmptyChoices: true}}, maxRetries: -1, wantAttempts: 2, wantSleeps: []time.Duration{s}},
		{name: "always 500: 1 + 6 retries", faults: repeat(llmtest.Fault{Status: 500}, 7), maxRetries: -1, wantAttempts: 7,
			wantSleeps: []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s}, wantStatus: 500, wantRetry: true},
		{name: "back-off capped at 60s", faults: repeat(llmtest.Fault{Status: 502}, 9), maxRetries: 8, wantAttempts: 9,
			wantSleeps: []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 60 * s, 60 * s}, wantStatus: 502, wantRetry: true},
		{name: "no retries configured", faults: []llmtest.Fault{{Status: 500}}, maxRetries: 0, wantAttempts: 1, wantStatus: 500, wantRetry: true},
		{name: "400", faults: []llmtest.Fault{{Status: 400}}, maxRetries: -1, wantAttempts: 1, wantStatus: 400},
		{name: "401", faults: []llmtest.Fault{{Status: 401}}, maxRetries: -1, wantAttempts: 1, wantStatus: 401},
		{name: "403", faults: []llmtest.Fault{{Status: 403}}, maxRetries: -1, wantAttempts: 1, wantStatus: 403},
		{name: "404", faults: []llmtest.Fault{{Status: 404}}, maxRetries: -1, wantAttempts: 1, wantStatus: 404},
		{name: "422", faults: []llmtest.Fault{{Status: 422}}, maxRetries: -1, wantAttempts: 1, wantStatus: 422},
		{name: "501", faults: []llmtest.Fault{{Status: 501}}, maxRetries: -1, wantAttempts: 1, wantStatus: 501},
		{name: "429 insufficient_quota", faults: []llmtest.Fault{{Status: 429, Code: "insufficient_quota"}}, maxRetries: -1, wantAttempts: 1, wantStatus: 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.New()
			defer srv.Close()
			srv.Enqueue(tt.faults...)
			clock := llmtest.NewFakeClock(time.Time{})
			p := testProvider(srv)
			p.MaxRetries = tt.maxRetries
			p.BreakerSeconds = 3600 // the longest back-off chain here outlasts the breaker's default two minutes
			c := newTestClient(t, srv, p, clock)
			resp, err := c.Complete(bg, userRequest("m1", "hello"))
			if got := srv.Count(); got != tt.wantAttempts {
				t.Errorf("server saw %d requests, want %d", got, tt.wantAttempts)
			}
			if got := clock.Sleeps(); fmt.Sprint(got) != fmt.Sprint(tt.wantSleeps) {
				t.Errorf("sleeps = %v, want %v", got, tt.wantSleeps)
			}
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if resp.Attempts != tt.wantAttempts || resp.Status != 200 {
					t.Errorf("Attempts, Status = %d, %d; want %d, 200", resp.Attempts, resp.Status, tt.wantAttempts)
				}
				return
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want *APIError", err, err)
			}
			if apiErr.Status != tt.wantStatus || apiErr.Retryable != tt.wantRetry || apiErr.Attempts != tt.wantAttempts {
				t.Errorf("APIError = %+v, want status %d retryable %v attempts %d", apiErr, tt.wantStatus, tt.wantRetry, tt.wantAttempts)
			}
		})
	}
}

func repeat(f llmtest.Fault, n int) []llmtest.Fault {
	out := make([]llmtest.Fault, n)
	for i := range out {
		out[i] = f
	}
	return out
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		name  string
		fault llmtest.Fault
		want  []string
	}{
		{"401 names the env var", llmtest.Fault{Status: 401, Message: "Incorrect API key provided"},
			[]string{`provider "fake" unavailable (credentials refused; later calls fail without a request): HTTP 401: authentication failed: Incorrect API key provided`, "environment variable TEST_KEY"}},
		{"404 names model and base URL", llmtest.Fault{Status: 404, Message: "The model `m1` does not exist"},
			[]string{"HTTP 404: not found: The model `m1` does not exist", `model name "m1"`, "/v1"}},
		{"400 keeps the server's message", llmtest.Fault{Status: 400, Message: "max_tokens is too large"},
			[]string{"HTTP 400: bad request: max_tokens is too large"}},
		{"403", llmtest.Fault{Status: 403, Message: "region not supported"}, []string{"HTTP 403: permission denied: region not supported"}},
		{"quota", llmtest.Fault{Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota"},
			[]string{"HTTP 429: quota exhausted (not retried): You exceeded your current quota"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New()
			defer srv.Close()
			srv.Enqueue(tt.fault)
			c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
			_, err := c.Complete(bg, userRequest("m1", "hello"))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestTimeoutRetried(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Delay: time.Minute})
	clock := llmtest.NewFakeClock(time.Time{})
	p := testProvider(srv)
	p.TimeoutSeconds = 0.02
	c := newTestClient(t, srv, p, clock)
	resp, err := c.Complete(bg, userRequest("m1", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 2 || srv.Count() != 2 || fmt.Sprint(clock.Sleeps()) != "[1s]" {
		t.Fatalf("attempts %d, server count %d, sleeps %v; want 2, 2, [1s]", resp.Attempts, srv.Count(), clock.Sleeps())
	}

	// Every attempt timing out: the error says so and is marked retryable.
	srv.Enqueue(repeat(llmtest.Fault{Delay: time.Minute}, 2)...)
	p.MaxRetries = 1
	c = newTestClient(t, srv, p, clock)
	_, err = c.Complete(bg, userRequest("m1", "hello"))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 0 || !apiErr.Retryable || apiErr.Attempts != 2 ||
		!strings.Contains(apiErr.Message, "no reply within 20ms") {
		t.Fatalf("err = %v", err)
	}
}

func TestConnectionErrorRetried(t *testing.T) {
	srv := llmtest.New()
	p := testProvider(srv)
	p.MaxRetries = 2
	clock := llmtest.NewFakeClock(time.Time{})
	c := newTestClient(t, srv, p, clock)
	srv.Close()
	_, err := c.Complete(bg, userRequest("m1", "hello"))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 0 || !apiErr.Retryable || apiErr.Attempts != 3 ||
		!strings.Contains(apiErr.Message, "connection failed") {
		t.Fatalf("err = %v", err)
	}
	if fmt.Sprint(clock.Sleeps()) != "[1s 2s]" {
		t.Errorf("sleeps = %v", clock.Sleeps())
	}
}

func TestContextCancelStopsRetrying(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Status: 500})
	ctx, cancel := context.WithCancel(bg)
	clock := &cancellingClock{FakeClock: llmtest.NewFakeClock(time.Time{}), cancel: cancel}
	c := newTestClient(t, srv, testProvider(srv), clock)
	_, err := c.Complete(ctx, userRequest("m1", "hello"))
	if !errors.Is(err, context.Canceled) || srv.Count() != 1 {
		t.Fatalf("err = %v after %d requests; want context.Canceled after 1", err, srv.Count())
	}
}

// cancellingClock cancels the caller's context when asked to sleep, as a
// user's Ctrl-C during a back-off would.
type cancellingClock struct {
	*llmtest.FakeClock
	cancel func()
}

func (c *cancellingClock) Sleep(ctx context.Context, d time.Duration) error {
	c.cancel()
	return c.FakeClock.Sleep(ctx, d)
}

func TestRequestMapping(t *testing.T) {
	zero, topP, seed := 0.0, 0.9, 42
	tests := []struct {
		name string
		req  Request
		want []string // substrings of the JSON body sent
		not  []string
	}{
		{name: "sampling parameters",
			req: Request{Model: "m1", Messages: []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}},
				Temperature: &zero, TopP: &topP, MaxTokens: 100, Seed: &seed, Stop: []string{"###"}, JSONMode: true},
			want: []string{`"model":"m1"`, `"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`,
				`"max_tokens":100`, `"temperature":1e-45`, `"top_p":0.9`, `"stop":["###"]`, `"seed":42`, `"response_format":{"type":"json_object"}`},
			not: []string{"max_completion_tokens"}},
		{name: "JSON schema wins over JSON mode",
			req: Request{Model: "m1", Messages: []Message{{Role: "user", Content: "hi"}}, JSONMode: true,
				JSONSchema: []byte(`{"type":"object","properties":{"score":{"type":"integer"}},"required":["score"]}`)},
			want: []string{`"response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object","properties":{"score":{"type":"integer"}},"required":["score"]},"strict":true}}`}},
		{name: "unset parameters are omitted", req: userRequest("m1", "hi"),
			not: []string{"temperature", "top_p", "max_tokens", "seed", "stop", "response_format"}},
		{name: "reasoning model takes max_completion_tokens", req: Request{Model: "o3-mini", Messages: []Message{{Role: "user", Content: "hi"}}, MaxTokens: 500},
			want: []string{`"max_completion_tokens":500`}, not: []string{`"max_tokens"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New()
			defer srv.Close()
			c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
			if _, err := c.Complete(bg, tt.req); err != nil {
				t.Fatal(err)
			}
			body := string(srv.Requests()[0].Body)
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body %s lacks %s", body, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(body, n) {
					t.Errorf("body %s has %s", body, n)
				}
			}
		})
	}
}

func TestRefusedBeforeSending(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
	temp := 0.7
	_, err := c.Complete(bg, Request{Model: "o3-mini", Messages: []Message{{Role: "user", Content: "hi"}}, Temperature: &temp})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Retryable || srv.Count() != 0 || !strings.Contains(err.Error(), `model "o3-mini" refused before sending`) {
		t.Fatalf("err = %v, server count %d", err, srv.Count())
	}
}

func TestHeaders(t *testing.T) {
	srv := llmtest.New(llmtest.WithAPIKey(testKey))
	defer srv.Close()
	p := testProvider(srv)
	p.OrgEnv = "TEST_ORG"
	p.Headers = map[string]string{"X-Title": "ideaflow"}
	p.HeaderEnv = map[string]string{"X-Gateway-Token": "TEST_GATEWAY"}
	c := newTestClient(t, srv, p, llmtest.NewFakeClock(time.Time{}),
		testEnv(map[string]string{"TEST_KEY": testKey, "TEST_ORG": "org-42", "TEST_GATEWAY": "gw-secret"}))
	if _, err := c.Complete(bg, userRequest("m1", "hi")); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	want := map[string]string{"Authorization": "Bearer " + testKey, "Openai-Organization": "org-42", "X-Title": "ideaflow", "X-Gateway-Token": "gw-secret"}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, h.Get(k), v)
		}
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		p    Provider
		env  map[string]string
		want string
	}{
		{"missing key", Provider{Name: "oa", Kind: "openai", APIKeyEnv: "OA_KEY"}, nil,
			`provider "oa": the API key is read from environment variable OA_KEY, which is not set or empty; set it in the shell that runs ideaflow (export OA_KEY=...)`},
		{"empty key", Provider{Name: "oa", Kind: "openai", APIKeyEnv: "OA_KEY"}, map[string]string{"OA_KEY": "  "}, "OA_KEY, which is not set or empty"},
		{"missing org", Provider{Name: "oa", Kind: "openai", OrgEnv: "OA_ORG"}, nil, "the organisation id is read from environment variable OA_ORG"},
		{"missing secret header", Provider{Name: "oa", Kind: "openai", HeaderEnv: map[string]string{"X-Token": "OA_TOK"}}, nil, "header X-Token is read from environment variable OA_TOK"},
		{"bad base_url", Provider{Name: "oa", Kind: "openai", BaseURL: "localhost:8000"}, nil, `base_url "localhost:8000" is not an http(s) URL`},
		{"unknown kind", Provider{Name: "x", Kind: "anthropic"}, nil, `unknown kind "anthropic"`},
		{"negative rpm", Provider{Name: "x", Kind: "openai", RequestsPerMinute: -1}, nil, "requests_per_minute must be 0 (unlimited) or 1 to 1000000000, got -1"},
		{"negative concurrency", Provider{Name: "x", Kind: "mock", MaxConcurrency: -2}, nil, "max_concurrency must be 0 (the default, 64) or 1 to 1024, got -2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.p, testEnv(tt.env))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// A local server without a key: no api_key_env, no Authorization header.
	srv := llmtest.New()
	defer srv.Close()
	c, err := New(Provider{Name: "local", Kind: "openai", BaseURL: srv.URL}, testEnv(nil), WithHTTPClient(srv.HTTPClient(1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(bg, userRequest("m1", "hi")); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none", h)
	}
}

func TestResponseFields(t *testing.T) {
	tests := []struct {
		name          string
		fault         llmtest.Fault
		wantText      string
		wantReasoning string
		wantUsage     Usage
		wantEstimated bool
	}{
		{name: "plain", fault: llmtest.Fault{Text: "Answer: B"}, wantText: "Answer: B", wantUsage: Usage{InputTokens: 2, OutputTokens: 3}},
		{name: "reasoning_content", fault: llmtest.Fault{Text: "Answer: B", Reasoning: "A is weaker than B"},
			wantText: "Answer: B", wantReasoning: "A is weaker than B", wantUsage: Usage{InputTokens: 2, OutputTokens: 3}},
		{name: "reasoning", fault: llmtest.Fault{Text: "Answer: B", Reasoning: "A is weaker", ReasoningField: "reasoning"},
			wantText: "Answer: B", wantReasoning: "A is weaker", wantUsage: Usage{InputTokens: 2, OutputTokens: 3}},
		{name: "think block in content", fault: llmtest.Fault{Text: "<think>\nA is weaker\n</think>\n\nAnswer: B"},
			wantText: "Answer: B", wantReasoning: "A is weaker", wantUsage: Usage{InputTokens: 2, OutputTokens: 10}},
		{name: "usage reported", fault: llmtest.Fault{Text: "x", Usage: &openai.Usage{PromptTokens: 120, CompletionTokens: 7}},
			wantText: "x", wantUsage: Usage{InputTokens: 120, OutputTokens: 7}},
		{name: "no usage reported: estimated", fault: llmtest.Fault{Text: "twelve bytes", Usage: &openai.Usage{}},
			wantText: "twelve bytes", wantUsage: Usage{InputTokens: 2, OutputTokens: 3}, wantEstimated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.WithFingerprint("fp_abc"))
			defer srv.Close()
			srv.Enqueue(tt.fault)
			c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
			resp, err := c.Complete(bg, userRequest("gpt-x", "hello")) // "hello": 2 tokens
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != tt.wantText || resp.Reasoning != tt.wantReasoning {
				t.Errorf("Text, Reasoning = %q, %q; want %q, %q", resp.Text, resp.Reasoning, tt.wantText, tt.wantReasoning)
			}
			if resp.Usage != tt.wantUsage || resp.UsageEstimated != tt.wantEstimated {
				t.Errorf("Usage = %+v estimated %v, want %+v %v", resp.Usage, resp.UsageEstimated, tt.wantUsage, tt.wantEstimated)
			}
			if resp.Model != "gpt-x" || resp.SystemFingerprint != "fp_abc" || resp.Status != 200 || resp.Attempts != 1 {
				t.Errorf("Model %q fingerprint %q status %d attempts %d", resp.Model, resp.SystemFingerprint, resp.Status, resp.Attempts)
			}
		})
	}
}

func TestEmbed(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Status: 503}, llmtest.Fault{EmptyChoices: true})
	clock := llmtest.NewFakeClock(time.Time{})
	c := newTestClient(t, srv, testProvider(srv), clock)
	inputs := []string{"alpha beta", "gamma"}
	vecs, usage, err := c.Embed(bg, "emb-1", inputs)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 3 || fmt.Sprint(clock.Sleeps()) != "[1s 2s]" {
		t.Errorf("requests %d sleeps %v; want 3, [1s 2s]", srv.Count(), clock.Sleeps())
	}
	for i, in := range inputs {
		if fmt.Sprint(vecs[i]) != fmt.Sprint(llmtest.Vector("emb-1", in)) {
			t.Errorf("vector %d = %v, want %v", i, vecs[i], llmtest.Vector("emb-1", in))
		}
	}
	if usage != (Usage{InputTokens: 3 + 2}) {
		t.Errorf("usage = %+v, want 5 input tokens", usage)
	}
	if got := srv.Requests()[2].Embed; got.Model != "emb-1" || fmt.Sprint(got.Input) != fmt.Sprint(inputs) {
		t.Errorf("request = %+v", got)
	}
	if v, u, err := c.Embed(bg, "emb-1", nil); v != nil || u != (Usage{}) || err != nil || srv.Count() != 3 {
		t.Errorf("empty input made a call or returned %v %v %v", v, u, err)
	}
}

// TestIntermittentFaults: 200 calls from 16 goroutines while every 7th
// request fails (429, 500 or a cut body in turn). Every call must come back
// answered with its own text, and the server must have answered each prompt
// exactly once: no success was thrown away and asked again.
func TestIntermittentFaults(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	faults := []llmtest.Fault{{Status: 429}, {Status: 500}, {CutBody: true}}
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
		if r.Seq%7 == 0 {
			return faults[(r.Seq/7)%3], true
		}
		return llmtest.Fault{}, false
	})
	p := testProvider(srv)
	p.MaxConcurrency = 16
	c := newTestClient(t, srv, p, llmtest.NewFakeClock(time.Time{}))

	const calls = 200
	texts := make([]string, calls)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				resp, err := c.Complete(bg, userRequest("m1", fmt.Sprintf("call %d", i)))
				errs[i] = err
				if err == nil {
					texts[i] = resp.Text
				}
			}
		}()
	}
	for i := 0; i < calls; i++ {
		work <- i
	}
	close(work)
	wg.Wait()

	for i := 0; i < calls; i++ {
		want := llmtest.DefaultResponder(&openai.ChatCompletionRequest{Model: "m1",
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: fmt.Sprintf("call %d", i)}}})
		if errs[i] != nil || texts[i] != want {
			t.Fatalf("call %d: %q, %v; want %q", i, texts[i], errs[i], want)
		}
	}
	answered := map[string]int{}
	failed := 0
	for _, r := range srv.Requests() {
		if r.Answered {
			answered[r.Chat.Messages[0].Content]++
		} else {
			failed++
		}
	}
	// n requests with n - floor(n/7) = 200 successes: n = 233, 33 of them faults.
	if srv.Count() != 233 || failed != 33 || len(answered) != calls {
		t.Fatalf("requests %d, failed %d, prompts answered %d; want 233, 33, 200", srv.Count(), failed, len(answered))
	}
	for prompt, n := range answered {
		if n != 1 {
			t.Errorf("%q answered %d times", prompt, n)
		}
	}
}

func TestQuotaExhaustionIsNoCongestion(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Status: 429, Code: "insufficient_quota"})
	p := testProvider(srv)
	p.MaxConcurrency = 8
	c := newTestClient(t, srv, p, llmtest.NewFakeClock(time.Time{}))
	if _, err := c.Complete(bg, userRequest("m1", "hi")); err == nil {
		t.Fatal("no error")
	}
	if s := c.Limits(); s.Concurrency != 8 || s.Throttled != 0 {
		t.Fatalf("limits after an exhausted quota: %+v, want untouched", s)
	}
}
