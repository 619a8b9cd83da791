package llm

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// runCalls makes n calls from workers goroutines; call i sends prompt(i).
func runCalls(t testing.TB, c Client, n, workers int, prompt func(i int) Request) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if _, err := c.Complete(bg, prompt(i)); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

func requestTimes(srv *llmtest.Server) ([]time.Time, []int) {
	reqs := srv.Requests()
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Time.Before(reqs[j].Time) })
	times := make([]time.Time, len(reqs))
	ones := make([]int, len(reqs))
	for i, r := range reqs {
		times[i], ones[i] = r.Time, 1
	}
	return times, ones
}

// TestRequestsPerMinute: with requests_per_minute = 60 and a fake clock, 160
// calls from 8 goroutines start exactly one second apart and no 60 s window
// holds more than 60 starts.
func TestRequestsPerMinute(t *testing.T) {
	clock := llmtest.NewFakeClock(time.Time{})
	srv := llmtest.New(llmtest.WithClock(clock.Now))
	defer srv.Close()
	p := testProvider(srv)
	p.RequestsPerMinute = 60
	p.MaxConcurrency = 1 // one sleeper at a time: the fake clock then stands for wall time
	c := newTestClient(t, srv, p, clock)
	runCalls(t, c, 160, 8, func(i int) Request { return userRequest("m1", fmt.Sprint(i)) })

	times, ones := requestTimes(srv)
	for i, at := range times {
		if want := llmtest.Epoch.Add(time.Duration(i) * time.Second); !at.Equal(want) {
			t.Fatalf("request %d started at %v, want %v", i, at.Sub(llmtest.Epoch), want.Sub(llmtest.Epoch))
		}
	}
	if got := llmtest.MostInWindow(times, ones, time.Minute); got != 60 {
		t.Errorf("max requests in a 60 s window = %d, want 60", got)
	}
	sleeps := clock.Sleeps()
	if len(sleeps) != 159 || clock.Slept() != 159*time.Second {
		t.Errorf("%d sleeps totalling %v, want 159 of 1s", len(sleeps), clock.Slept())
	}
}

// TestRequestsPerMinuteConcurrent runs the same limit with 32 calls in
// flight on the real clock inside a synctest bubble, where time is virtual
// and advances only when every goroutine waits, so the timestamps are exact.
func TestRequestsPerMinuteConcurrent(t *testing.T) {
	srv := llmtest.New() // outside the bubble: only its in-memory transport is used inside
	defer srv.Close()
	synctest.Test(t, func(t *testing.T) {
		p := testProvider(srv)
		p.RequestsPerMinute = 60
		p.MaxConcurrency = 32
		c, err := New(p, testEnv(map[string]string{"TEST_KEY": testKey}), WithHTTPClient(&http.Client{Transport: srv.Transport()}))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		runCalls(t, c, 150, 48, func(i int) Request { return userRequest("m1", fmt.Sprint(i)) })
		times, ones := requestTimes(srv)
		if got := llmtest.MostInWindow(times, ones, time.Minute); got != 60 {
			t.Errorf("max requests in a 60 s window = %d, want 60", got)
		}
		if first, last := times[0].Sub(start), times[len(times)-1].Sub(start); first != 0 || last != 149*time.Second {
			t.Errorf("first, last start = %v, %v; want 0s, 2m29s", first, last)
		}
	})
}

// tpmResponder answers 240 bytes (60 tokens), so a 160-byte prompt (40
// tokens) with max_tokens 60 uses exactly its estimate of 100 tokens.
func tpmResponder(*openai.ChatCompletionRequest) string { return strings.Repeat("y", 240) }

func tpmRequest(i int) Request {
	r := userRequest("m1", fmt.Sprintf("%-160d", i))
	r.MaxTokens = 60
	return r
}

// TestTokensPerMinute: 1200 tokens per minute (20 per second) and requests
// of 100 tokens start exactly 5 s apart; no 60 s window holds more than 1200
// reported tokens.
func TestTokensPerMinute(t *testing.T) {
	clock := llmtest.NewFakeClock(time.Time{})
	srv := llmtest.New(llmtest.WithClock(clock.Now), llmtest.WithResponder(tpmResponder))
	defer srv.Close()
	p := testProvider(srv)
	p.TokensPerMinute = 1200
	p.MaxConcurrency = 1
	c := newTestClient(t, srv, p, clock)
	if est := EstimateTokens(tpmRequest(0)); est != 100 {
		t.Fatalf("estimate = %d, want 100", est)
	}
	runCalls(t, c, 40, 4, tpmRequest)

	reqs := srv.Requests()
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Time.Before(reqs[j].Time) })
	times := make([]time.Time, len(reqs))
	tokens := make([]int, len(reqs))
	for i, r := range reqs {
		times[i] = r.Time
		tokens[i] = llmtest.Tokens(r.Chat.Messages[0].Content) + 60
		if want := llmtest.Epoch.Add(time.Duration(i) * 5 * time.Second); !r.Time.Equal(want) {
			t.Fatalf("request %d started at %v, want %v", i, r.Time.Sub(llmtest.Epoch), want.Sub(llmtest.Epoch))
		}
	}
	if got := llmtest.MostInWindow(times, tokens, time.Minute); got != 1200 {
		t.Errorf("max tokens in a 60 s window = %d, want 1200", got)
	}
}

// overestimated: a request without max_tokens whose estimate (16 prompt
// tokens + DefaultCompletionEstimate = 1040) is exactly 5 times what the
// server reports it used (16 + 192 = 208), as when max_tokens is unset.
const overestimatedUse = 208

func overestimatedRequest(i int) Request { return userRequest("m1", fmt.Sprintf("%-64d", i)) }

func overestimatedResponder(*openai.ChatCompletionRequest) string { return strings.Repeat("y", 4*192) }

// TestTokensPerMinuteOverestimated: with estimates 5x the real usage and 32
// calls in flight (50 ms each), tokens_per_minute = 60,000 is used to at
// least 95% over five minutes and no 60 s window of starts ever holds more
// than 60,000 reported tokens. Inside a synctest bubble time is virtual, so
// both hold exactly on every run. (Before settling woke the waiting call,
// 19-20% was used.)
func TestTokensPerMinuteOverestimated(t *testing.T) {
	const tpm, span = 60000, 5 * time.Minute
	srv := llmtest.New(llmtest.WithLatency(50*time.Millisecond), llmtest.WithResponder(overestimatedResponder))
	defer srv.Close()
	synctest.Test(t, func(t *testing.T) {
		p := testProvider(srv)
		p.TokensPerMinute = tpm
		p.MaxConcurrency = 32
		c, err := New(p, testEnv(map[string]string{"TEST_KEY": testKey}), WithHTTPClient(&http.Client{Transport: srv.Transport()}))
		if err != nil {
			t.Fatal(err)
		}
		if est := EstimateTokens(overestimatedRequest(0)); est != 5*overestimatedUse {
			t.Fatalf("estimate = %d, want %d", est, 5*overestimatedUse)
		}
		start := time.Now()
		calls := int(1.1 * tpm * span.Minutes() / overestimatedUse) // more than the span can take
		runCalls(t, c, calls, 64, overestimatedRequest)

		times, used := usageTimes(srv)
		maxWindow := llmtest.MostInWindow(times, used, time.Minute)
		if maxWindow > tpm {
			t.Errorf("a 60 s window of starts holds %d reported tokens, over tokens_per_minute = %d", maxWindow, tpm)
		}
		var inSpan int
		for i, at := range times {
			if at.Sub(start) < span {
				inSpan += used[i]
			}
		}
		share := float64(inSpan) / (tpm * span.Minutes())
		t.Logf("%d tokens in %v (%.2f%% of the budget); busiest 60 s window %d", inSpan, span, 100*share, maxWindow)
		if share < 0.95 {
			t.Errorf("%d tokens used in %v: %.1f%% of tokens_per_minute, want at least 95%%", inSpan, span, 100*share)
		}
	})
}

// usageTimes are the requests' start times, sorted, with the tokens the
// server reported each used.
func usageTimes(srv *llmtest.Server) ([]time.Time, []int) {
	reqs := srv.Requests()
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Time.Before(reqs[j].Time) })
	times := make([]time.Time, len(reqs))
	used := make([]int, len(reqs))
	for i, r := range reqs {
		times[i] = r.Time
		used[i] = llmtest.Tokens(r.Chat.Messages[0].Content) + llmtest.Tokens(overestimatedResponder(r.Chat))
	}
	return times, used
}

// TestTokenBudgetCorrection: the reported usage settles the estimate taken
// before the call, which shows in how long the next call waits.
func TestTokenBudgetCorrection(t *testing.T) {
	tests := []struct {
		name     string
		usage    openai.Usage
		wantWait time.Duration
	}{
		{"usage equals the estimate", openai.Usage{PromptTokens: 40, CompletionTokens: 60}, 5 * time.Second},             // 100 tokens at 20/s
		{"usage above the estimate", openai.Usage{PromptTokens: 40, CompletionTokens: 260}, 15 * time.Second},            // 200 more owed
		{"usage below the estimate", openai.Usage{PromptTokens: 10, CompletionTokens: 10}, 1 * time.Second},              // 80 returned
		{"usage far above a minute's budget", openai.Usage{PromptTokens: 40, CompletionTokens: 2460}, 125 * time.Second}, // 2400 owed
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := llmtest.NewFakeClock(time.Time{})
			srv := llmtest.New(llmtest.WithClock(clock.Now))
			defer srv.Close()
			srv.Enqueue(llmtest.Fault{Usage: &tt.usage})
			p := testProvider(srv)
			p.TokensPerMinute = 1200
			c := newTestClient(t, srv, p, clock)
			for i := 0; i < 2; i++ {
				if _, err := c.Complete(bg, tpmRequest(i)); err != nil {
					t.Fatal(err)
				}
			}
			if got := clock.Sleeps(); len(got) != 1 || got[0] != tt.wantWait {
				t.Errorf("sleeps = %v, want [%v]", got, tt.wantWait)
			}
		})
	}
}

// TestAdaptiveBackoff: 17 429s among 19 attempts (more than a quarter of
// the last 64) are congestion and halve the effective concurrency and rate
// once; each success then adds 1/limit to the concurrency and 2% to the
// rate, back to the configured limits. (A success every 6 429s keeps the
// breaker from declaring the provider rate-limited for good.)
func TestAdaptiveBackoff(t *testing.T) {
	clock := llmtest.NewFakeClock(time.Time{})
	srv := llmtest.New(llmtest.WithClock(clock.Now))
	defer srv.Close()
	for _, n := range []int{6, 6, 5} {
		srv.Enqueue(repeat(llmtest.Fault{Status: 429, RetryAfter: "1"}, n)...)
		srv.Enqueue(llmtest.Fault{})
	}
	p := testProvider(srv)
	p.MaxConcurrency = 8
	p.RequestsPerMinute = 600
	c := newTestClient(t, srv, p, clock)
	call := func() {
		t.Helper()
		if _, err := c.Complete(bg, userRequest("m1", "x")); err != nil {
			t.Fatal(err)
		}
	}
	call() // six 429s, then a success
	call() // six more, then a success
	call() // five more, the last of them congestion, then a success
	if s := c.caller.Breaker.State(); s.Refused != 0 || s.Unavailable != nil {
		t.Fatalf("breaker after the successes: %+v", s)
	}
	steps := []struct {
		conc, factor float64
	}{
		{4.25, 0.52}, // 8 -> 4 and rate 1 -> 0.5 by the 17th 429; +1/4, +0.02
		{4.25 + 1/4.25, 0.54},
	}
	for i, want := range steps {
		if i > 0 {
			call()
		}
		got := c.Limits()
		if !near(got.Concurrency, want.conc) || !near(got.RateFactor, want.factor) || got.Throttled != 17 {
			t.Fatalf("after success %d: %+v, want concurrency %v, rate factor %v, 17 throttled", i+1, got, want.conc, want.factor)
		}
		if lim := c.rps(); !near(lim, 10*want.factor) {
			t.Fatalf("requests/s = %v, want %v", lim, 10*want.factor)
		}
	}
	for i := 0; i < 60; i++ {
		call()
	}
	if got, rps := c.Limits(), c.rps(); got.Concurrency != 8 || got.RateFactor != 1 || rps != 10 {
		t.Fatalf("after recovery: %+v, rpm limit %v; want concurrency 8, factor 1, 10/s", got, rps)
	}
}

// TestIsolated429sDelayOnlyTheirCall: 400 calls from 32 goroutines, the
// first attempt of every tenth call answered 429 with Retry-After: 1. Each
// 429 delays its own retry by exactly the second the server asked for and
// nothing else: the waits total one second per 429, no call waits for
// another's Retry-After, and the 32 slots are never cut.
//
// It runs inside a synctest bubble on the real clock, so time is virtual and
// the server's 10 ms latency is exact: while one call sleeps out its second,
// the others keep succeeding, as against a real server. (A fake clock whose
// Sleep advances one shared time at once does not model that: one call's
// second passed for everyone, so another call's 429 could land a "second
// later" with no success between, which the breaker rightly reads as the
// provider refusing everyone; that flaked in 3 of 900 runs.) Which call
// gets a 429 depends on the call, not on arrival order, and one call before
// the others proves the provider, so no 429 is ever the breaker's probe. The
// outcome is then the same in every interleaving: every counted 429 is
// followed, within its second, by a success of some other call or of its own
// retry, and no 64 consecutive outcomes hold more than 10 429s (the
// congestion threshold is 16).
func TestIsolated429sDelayOnlyTheirCall(t *testing.T) {
	const calls, workers = 400, 32
	srv := llmtest.New(llmtest.WithLatency(10 * time.Millisecond)) // outside the bubble: only its in-memory transport is used inside
	defer srv.Close()
	seen := map[string]bool{}
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) { // called under the server's lock
		prompt := r.Chat.Messages[0].Content
		first := !seen[prompt]
		seen[prompt] = true
		var i int
		_, err := fmt.Sscan(prompt, &i)
		return llmtest.Fault{Status: 429, RetryAfter: "1"}, err == nil && first && i%10 == 0
	})
	synctest.Test(t, func(t *testing.T) {
		clock := &sleepLog{}
		p := testProvider(srv)
		p.MaxConcurrency = workers
		c, err := New(p, WithClock(clock), WithJitter(identity), testEnv(map[string]string{"TEST_KEY": testKey}),
			WithHTTPClient(&http.Client{Transport: srv.Transport()}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(bg, userRequest("m1", "prove the provider")); err != nil {
			t.Fatal(err)
		}
		runCalls(t, c, calls, workers, func(i int) Request { return userRequest("m1", fmt.Sprint(i)) })
		s := c.(*openAIClient).Limits()
		const throttled = calls / 10
		if srv.Count() != 1+calls+throttled || s.Throttled != throttled {
			t.Fatalf("%d requests, %d throttled; want %d, %d", srv.Count(), s.Throttled, 1+calls+throttled, throttled)
		}
		if got := clock.sleeps(); len(got) != throttled || sum(got) != throttled*time.Second {
			t.Errorf("waits %v, want %d of 1s", got, throttled)
		}
		if s.Concurrency != workers || !s.PausedUntil.IsZero() || srv.MaxInFlight() != workers {
			t.Errorf("limits after isolated 429s: %+v, server saw %d at once; want concurrency %d, no pause", s, srv.MaxInFlight(), workers)
		}
		if b := c.(*openAIClient).caller.Breaker.State(); b.Refused > 1 || b.Unavailable != nil {
			t.Errorf("breaker after isolated 429s: %+v", b)
		}
	})
}

// sleepLog is the real clock (virtual inside a synctest bubble) recording
// every wait asked of it.
type sleepLog struct {
	mu sync.Mutex
	d  []time.Duration
}

func (c *sleepLog) Now() time.Time { return time.Now() }

func (c *sleepLog) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.mu.Lock()
		c.d = append(c.d, d)
		c.mu.Unlock()
	}
	return RealClock.Sleep(ctx, d)
}

func (c *sleepLog) sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.d...)
}

func sum(ds []time.Duration) (total time.Duration) {
	for _, d := range ds {
		total += d
	}
	return total
}

func (c *openAIClient) rps() float64 {
	r, _ := c.caller.Limiter.Rates()
	return r
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestMaxConcurrencyOverHTTP: the server never sees more calls at once than
// max_concurrency, with 32 callers.
func TestMaxConcurrencyOverHTTP(t *testing.T) {
	srv := llmtest.New(llmtest.WithLatency(2 * time.Millisecond))
	defer srv.Close()
	p := testProvider(srv)
	p.MaxConcurrency = 4
	c := newTestClient(t, srv, p, RealClock)
	runCalls(t, c, 64, 32, func(i int) Request { return userRequest("m1", fmt.Sprint(i)) })
	if got := srv.MaxInFlight(); got < 1 || got > 4 {
		t.Fatalf("server saw %d calls at once, want at most 4", got)
	}
	if s := c.Limits(); s.InFlight != 0 || s.Waiting != 0 {
		t.Fatalf("slots leaked: %+v", s)
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		req  Request
		want int64
	}{
		{Request{Messages: []Message{{Content: "12345678"}}, MaxTokens: 10}, 2 + 10},
		{Request{Messages: []Message{{Content: "123456789"}, {Content: "1"}}, MaxTokens: 1}, 3 + 1 + 1},
		{Request{Messages: []Message{{Content: ""}}}, DefaultCompletionEstimate},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.req); got != tt.want {
			t.Errorf("EstimateTokens(%+v) = %d, want %d", tt.req, got, tt.want)
		}
	}
}
