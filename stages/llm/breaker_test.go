package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// concurrently makes n calls at once (released together) and returns their errors.
func concurrently(n int, call func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = call(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// unavailable asserts err is the breaker's error for provider "fake", with
// the given status as its cause, and returns it.
func unavailable(t *testing.T, err error, status int) *UnavailableError {
	t.Helper()
	var u *UnavailableError
	if !errors.Is(err, ErrProviderUnavailable) || !errors.As(err, &u) {
		t.Fatalf("err = %v (%T), want one matching ErrProviderUnavailable", err, err)
	}
	var apiErr *APIError
	if u.Provider != "fake" || u.Cause == nil || u.Cause.Status != status || !errors.As(err, &apiErr) || apiErr != u.Cause {
		t.Fatalf("UnavailableError = %+v (cause %+v), want provider fake, cause status %d reachable by errors.As", u, u.Cause, status)
	}
	return u
}

// TestAuthFailureStopsProvider: 50 callers at once against a provider that
// refuses the key make exactly one request between them; every call fails
// with ErrProviderUnavailable carrying the refusal, and so does every later
// call, without a request.
func TestAuthFailureStopsProvider(t *testing.T) {
	tests := []struct {
		name   string
		status int
		opts   []llmtest.Option
		hook   func(*llmtest.Request) (llmtest.Fault, bool)
	}{
		{name: "401 wrong key", status: http.StatusUnauthorized, opts: []llmtest.Option{llmtest.WithAPIKey("sk-the-right-key")}},
		{name: "403", status: http.StatusForbidden, hook: func(*llmtest.Request) (llmtest.Fault, bool) {
			return llmtest.Fault{Status: http.StatusForbidden, Message: "key not allowed"}, true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(tt.opts...)
			defer srv.Close()
			if tt.hook != nil {
				srv.SetHook(tt.hook)
			}
			p := testProvider(srv)
			p.MaxConcurrency = 32
			c := newTestClient(t, srv, p, llmtest.NewFakeClock(time.Time{}))
			errs := concurrently(50, func(i int) error {
				_, err := c.Complete(bg, userRequest("m1", fmt.Sprint(i)))
				return err
			})
			if got := srv.Count(); got != 1 {
				t.Fatalf("server saw %d requests, want 1", got)
			}
			sent := 0
			for _, err := range errs {
				u := unavailable(t, err, tt.status)
				sent += u.Cause.Attempts
			}
			if sent != 1 {
				t.Errorf("the calls' errors count %d requests, want 1", sent)
			}
			if _, err := c.Complete(bg, userRequest("m1", "later")); unavailable(t, err, tt.status).Cause.Attempts != 0 || srv.Count() != 1 {
				t.Errorf("a later call: %v, server count %d; want no request", err, srv.Count())
			}
			if err := c.Unavailable(); !errors.Is(err, ErrProviderUnavailable) {
				t.Errorf("Unavailable() = %v", err)
			}
			if s := c.Limits(); s.InFlight != 0 || s.Waiting != 0 {
				t.Errorf("slots leaked: %+v", s)
			}
		})
	}
}

// TestAuthFailureStopsServiceCalls: the breaker is the provider's, so a key
// refused on an embeddings call also stops its chat calls.
func TestAuthFailureStopsServiceCalls(t *testing.T) {
	srv := llmtest.New(llmtest.WithAPIKey("sk-the-right-key"))
	defer srv.Close()
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}))
	_, err := c.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "emb-1", Body: inputBodyOf("a", "b")})
	unavailable(t, err, http.StatusUnauthorized)
	_, err = c.Complete(bg, userRequest("m1", "hi"))
	unavailable(t, err, http.StatusUnauthorized)
	if srv.Count() != 1 {
		t.Fatalf("server saw %d requests, want 1", srv.Count())
	}
}

func always(status int) func(*llmtest.Request) (llmtest.Fault, bool) {
	return func(*llmtest.Request) (llmtest.Fault, bool) { return llmtest.Fault{Status: status}, true }
}

// TestServerFailuresTripBreaker: against an endpoint answering only 500s,
// the 20th failed request, retries included, trips the breaker: the calls
// in turn make 7, 7 and 6 requests, and the fourth makes none.
func TestServerFailuresTripBreaker(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.SetHook(always(500))
	// Millisecond back-off keeps the fake clock far from the 2-minute rule.
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}), WithBaseBackoff(time.Millisecond))
	wantAttempts := []int{7, 7, 6, 0}
	for i, want := range wantAttempts {
		_, err := c.Complete(bg, userRequest("m1", fmt.Sprint(i)))
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Attempts != want || apiErr.Status != 500 {
			t.Fatalf("call %d: %v, want an HTTP 500 after %d attempts", i+1, err, want)
		}
		if tripped := errors.Is(err, ErrProviderUnavailable); tripped != (i >= 2) {
			t.Fatalf("call %d: %v; unavailable %v, want %v", i+1, err, tripped, i >= 2)
		}
	}
	if got := srv.Count(); got != DefaultBreakerFailures {
		t.Fatalf("server saw %d requests, want %d", got, DefaultBreakerFailures)
	}
	u := unavailable(t, c.Unavailable(), 500)
	if u.Reason != "20 consecutive failed requests" {
		t.Errorf("reason %q", u.Reason)
	}
}

// TestServerFailuresTripBreakerConcurrently: the same with 50 callers at
// once: still exactly 20 requests, and every call that did not give up on
// its own retries first fails with ErrProviderUnavailable.
func TestServerFailuresTripBreakerConcurrently(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.SetHook(always(503))
	p := testProvider(srv)
	p.MaxConcurrency = 32
	c := newTestClient(t, srv, p, llmtest.NewFakeClock(time.Time{}), WithBaseBackoff(time.Millisecond))
	errs := concurrently(50, func(i int) error {
		_, err := c.Complete(bg, userRequest("m1", fmt.Sprint(i)))
		return err
	})
	if got := srv.Count(); got != DefaultBreakerFailures {
		t.Fatalf("server saw %d requests, want %d", got, DefaultBreakerFailures)
	}
	sent, tripped := 0, 0
	for _, err := range errs {
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 503 {
			t.Fatalf("err = %v, want an HTTP 503", err)
		}
		sent += apiErr.Attempts
		if errors.Is(err, ErrProviderUnavailable) {
			tripped++
		} else if apiErr.Attempts != DefaultMaxRetries+1 {
			t.Errorf("a call failed on its own after %d attempts, before its retries ran out: %v", apiErr.Attempts, err)
		}
	}
	if sent != DefaultBreakerFailures || tripped < 50-DefaultBreakerFailures/(DefaultMaxRetries+1) {
		t.Errorf("errors count %d requests, %d calls stopped by the breaker", sent, tripped)
	}
}

// TestSuccessResetsFailureCount: 19 failures, a success, 19 failures, a
// success: still available. Then breaker_failures = 20 consecutive ones trip it.
func TestSuccessResetsFailureCount(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	for i := 0; i < 2; i++ {
		srv.Enqueue(repeat(llmtest.Fault{Status: 502}, DefaultBreakerFailures-1)...)
		srv.Enqueue(llmtest.Fault{})
	}
	srv.SetHook(always(502))
	p := testProvider(srv)
	p.MaxRetries = 0
	c := newTestClient(t, srv, p, llmtest.NewFakeClock(time.Time{}))
	for i := 0; i < 2*DefaultBreakerFailures; i++ {
		_, err := c.Complete(bg, userRequest("m1", fmt.Sprint(i)))
		if errors.Is(err, ErrProviderUnavailable) {
			t.Fatalf("call %d tripped the breaker: %v", i+1, err)
		}
	}
	for i := 1; i <= DefaultBreakerFailures; i++ {
		_, err := c.Complete(bg, userRequest("m1", "x"))
		if got := errors.Is(err, ErrProviderUnavailable); got != (i == DefaultBreakerFailures) {
			t.Fatalf("failure %d after the last success: unavailable %v (%v)", i, got, err)
		}
	}
}

// TestBreakerFailuresSetting: breaker_failures lowers the count.
func TestBreakerFailuresSetting(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.SetHook(always(500))
	p := testProvider(srv)
	if err := p.Set("breaker_failures", 3); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, srv, p, llmtest.NewFakeClock(time.Time{}), WithBaseBackoff(time.Millisecond))
	_, err := c.Complete(bg, userRequest("m1", "x"))
	if unavailable(t, err, 500).Cause.Attempts != 3 || srv.Count() != 3 {
		t.Fatalf("%v after %d requests, want unavailable after 3", err, srv.Count())
	}
}

// TestBreakerWindow: under the fake clock, failures two minutes apart trip
// the breaker however few they are; a success in between starts the window
// again.
func TestBreakerWindow(t *testing.T) {
	tests := []struct {
		name        string
		successAt   int // the call, counted from 1, answered normally; 0: none
		wantTripped int // the call that trips it; 0: none
	}{
		{"failing for two minutes", 0, 3},
		{"a success restarts the window", 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := llmtest.NewFakeClock(time.Time{})
			srv := llmtest.New(llmtest.WithClock(clock.Now))
			defer srv.Close()
			srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
				return llmtest.Fault{Status: 504}, r.Seq != tt.successAt
			})
			p := testProvider(srv)
			p.MaxRetries = 0
			c := newTestClient(t, srv, p, clock)
			// Calls at 0, 1m59s and 2m: the first and the last are
			// DefaultBreakerWindow apart.
			advance := []time.Duration{0, time.Minute + 59*time.Second, time.Second}
			for i, d := range advance {
				clock.Advance(d)
				_, err := c.Complete(bg, userRequest("m1", fmt.Sprint(i)))
				if got, want := errors.Is(err, ErrProviderUnavailable), i+1 == tt.wantTripped; got != want {
					t.Fatalf("call %d at %v: unavailable %v, want %v (%v)", i+1, clock.Now().Sub(llmtest.Epoch), got, want, err)
				}
			}
			if tt.wantTripped == 0 {
				return
			}
			u := unavailable(t, c.Unavailable(), 504)
			if u.Reason != "no success in 2m0s while requests kept failing (3 failed)" {
				t.Errorf("reason %q", u.Reason)
			}
			if _, err := c.Complete(bg, userRequest("m1", "later")); !errors.Is(err, ErrProviderUnavailable) || srv.Count() != 3 {
				t.Errorf("later call: %v after %d requests", err, srv.Count())
			}
		})
	}
}

// TestTripEndsWaits: a call sleeping on a 10-minute Retry-After fails as
// soon as another call trips the breaker, without its retry. Inside a
// synctest bubble virtual time only moves when every goroutine waits, so
// "as soon" is exact: no time passes at all.
func TestTripEndsWaits(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Status: 503, RetryAfter: "600"}, llmtest.Fault{Status: 401})
	synctest.Test(t, func(t *testing.T) {
		c, err := New(testProvider(srv), testEnv(map[string]string{"TEST_KEY": testKey}), WithHTTPClient(&http.Client{Transport: srv.Transport()}))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		sleeping := make(chan error)
		go func() { _, err := c.Complete(bg, userRequest("m1", "slow")); sleeping <- err }()
		synctest.Wait() // the first call got its 503 and sleeps
		_, err = c.Complete(bg, userRequest("m1", "refused"))
		unavailable(t, err, 401)
		err = <-sleeping
		if u := unavailable(t, err, 401); u.Cause.Attempts != 1 || time.Since(start) != 0 || srv.Count() != 2 {
			t.Fatalf("sleeping call: %v after %v, server count %d; want it stopped at once after its 1 attempt", err, time.Since(start), srv.Count())
		}
	})
}

// TestTEIAuthFailureStopsProvider: the tei kind shares the plumbing: a
// refused key on /tokenize stops the provider after that one request.
func TestTEIAuthFailureStopsProvider(t *testing.T) {
	srv := llmtest.NewTEI(llmtest.WithTEIAPIKey("sk-the-right-key"))
	defer srv.Close()
	p := teiProvider(t, srv, 0)
	p.APIKeyEnv = "TEST_KEY"
	c := serviceClient(t, p, WithHTTPClient(srv.Client()))
	for i := 0; i < 3; i++ {
		_, _, err := tokenCall(t, c, "graph neural networks")
		var u *UnavailableError
		if !errors.Is(err, ErrProviderUnavailable) || !errors.As(err, &u) || u.Provider != "tei" || u.Cause.Status != http.StatusUnauthorized {
			t.Fatalf("call %d: %v, want the provider unavailable after a 401", i+1, err)
		}
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("server saw %d requests, want 1", n)
	}
}

// rateLimitReason is the breaker's reason once 429s persist.
var rateLimitReason = fmt.Sprintf("rate limited: %d requests in a row answered 429, each sent after the wait the one before asked for, and none succeeded", RateLimitRefusals)

// TestRateLimitOnlyEndpoint: an endpoint that answers nothing but 429 (a
// spent quota sent as a plain rate limit) is declared unavailable after
// RateLimitRefusals requests, each sent once the wait the one before asked
// for was over, however many calls wait on it and whether or not they may
// retry; every call then fails with ErrProviderUnavailable without a
// request. An exhausted quota the server names as such (by code, or by
// type alone) costs one request.
func TestRateLimitOnlyEndpoint(t *testing.T) {
	tests := []struct {
		name       string
		fault      llmtest.Fault
		callers    int
		maxRetries int // -1: the default
		want       int // requests
		reason     string
		waits      string // the waits the fake clock was asked for; "" to skip
	}{
		{"50 callers, Retry-After: 1", llmtest.Fault{Status: 429, RetryAfter: "1"}, 50, -1, RateLimitRefusals, rateLimitReason, ""},
		{"one caller, no Retry-After: the back-off", llmtest.Fault{Status: 429}, 1, -1, RateLimitRefusals, rateLimitReason, "[1s 2s 4s 8s 16s 32s]"},
		{"calls without retries wait for each other", llmtest.Fault{Status: 429, RetryAfter: "3"}, 1, 0, RateLimitRefusals, rateLimitReason, "[3s 3s 3s 3s 3s 3s]"},
		{"quota exhausted, by code", llmtest.Fault{Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota"}, 50, -1, 1, "quota exhausted", "[]"},
		{"quota exhausted, by type only", llmtest.Fault{Status: 429, Type: "insufficient_quota", Message: "You exceeded your current quota"}, 50, -1, 1, "quota exhausted", "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := llmtest.NewFakeClock(time.Time{})
			srv := llmtest.New(llmtest.WithClock(clock.Now))
			defer srv.Close()
			srv.SetHook(func(*llmtest.Request) (llmtest.Fault, bool) { return tt.fault, true })
			p := testProvider(srv)
			p.MaxConcurrency = 32
			p.MaxRetries = tt.maxRetries
			c := newTestClient(t, srv, p, clock)
			var errs []error
			if tt.callers > 1 {
				errs = concurrently(tt.callers, func(i int) error {
					_, err := c.Complete(bg, userRequest("m1", fmt.Sprint(i)))
					return err
				})
			} else {
				for i := 0; i < 20 && c.Unavailable() == nil; i++ {
					_, err := c.Complete(bg, userRequest("m1", fmt.Sprint(i)))
					errs = append(errs, err)
				}
			}
			if got := srv.Count(); got != tt.want {
				t.Fatalf("server saw %d requests, want %d", got, tt.want)
			}
			sent := 0
			for i, err := range errs {
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.Status != 429 {
					t.Fatalf("call %d: %v, want an HTTP 429", i+1, err)
				}
				sent += apiErr.Attempts
				if tt.callers > 1 || i == len(errs)-1 {
					unavailable(t, err, 429)
				} else if errors.Is(err, ErrProviderUnavailable) {
					t.Fatalf("call %d of %d tripped the breaker: %v", i+1, len(errs), err)
				}
			}
			if sent != tt.want {
				t.Errorf("the calls' errors count %d requests, want %d", sent, tt.want)
			}
			if u := unavailable(t, c.Unavailable(), 429); u.Reason != tt.reason {
				t.Errorf("reason %q, want %q", u.Reason, tt.reason)
			}
			if _, err := c.Complete(bg, userRequest("m1", "later")); unavailable(t, err, 429).Cause.Attempts != 0 || srv.Count() != tt.want {
				t.Errorf("a later call: %v, server count %d; want no request", err, srv.Count())
			}
			if tt.waits != "" && fmt.Sprint(clock.Sleeps()) != tt.waits {
				t.Errorf("waits %v, want %s", clock.Sleeps(), tt.waits)
			}
			// Each request went once the wait before it was over.
			reqs := srv.Requests()
			for i := 1; i < len(reqs) && tt.fault.RetryAfter == "1"; i++ {
				if d := reqs[i].Time.Sub(reqs[i-1].Time); d < time.Second {
					t.Errorf("request %d went %v after the one before, inside its Retry-After", i+1, d)
				}
			}
			if s := c.Limits(); s.InFlight != 0 || s.Waiting != 0 {
				t.Errorf("slots leaked: %+v", s)
			}
		})
	}
}

// TestRateLimitedAfterSuccess: a provider that answered, then only answers
// 429 (its quota spent in the middle of a run). One call at a time: the
// success, then RateLimitRefusals requests of the next call. Fifty callers
// at once on 8 slots: the first 429s arrive together and count once; once
// two counted 429s show the provider refusing everyone, attempts go one at
// a time again, so the cost is the first wave plus the bound, not the
// bound per caller (7 x 49 requests).
func TestRateLimitedAfterSuccess(t *testing.T) {
	t.Run("one call at a time", func(t *testing.T) {
		clock := llmtest.NewFakeClock(time.Time{})
		srv := llmtest.New(llmtest.WithClock(clock.Now))
		defer srv.Close()
		srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
			return llmtest.Fault{Status: 429, RetryAfter: "2"}, r.Seq > 1
		})
		p := testProvider(srv)
		p.MaxConcurrency = 1
		c := newTestClient(t, srv, p, clock)
		if _, err := c.Complete(bg, userRequest("m1", "first")); err != nil {
			t.Fatal(err)
		}
		_, err := c.Complete(bg, userRequest("m1", "second"))
		if u := unavailable(t, err, 429); u.Cause.Attempts != RateLimitRefusals || u.Reason != rateLimitReason {
			t.Fatalf("%v after %d attempts", err, u.Cause.Attempts)
		}
		if srv.Count() != 1+RateLimitRefusals || clock.Slept() != time.Duration(RateLimitRefusals-1)*2*time.Second {
			t.Errorf("%d requests, %v waited; want %d, %v", srv.Count(), clock.Slept(), 1+RateLimitRefusals, time.Duration(RateLimitRefusals-1)*2*time.Second)
		}
	})
	t.Run("50 callers", func(t *testing.T) {
		srv := llmtest.New()
		defer srv.Close()
		srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
			return llmtest.Fault{Status: 429, RetryAfter: "1"}, r.Seq > 1
		})
		synctest.Test(t, func(t *testing.T) {
			p := testProvider(srv)
			p.MaxConcurrency = 8
			c, err := New(p, testEnv(map[string]string{"TEST_KEY": testKey}), WithHTTPClient(&http.Client{Transport: srv.Transport()}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Complete(bg, userRequest("m1", "first")); err != nil {
				t.Fatal(err)
			}
			errs := concurrently(49, func(i int) error {
				_, err := c.Complete(bg, userRequest("m1", fmt.Sprint(i)))
				return err
			})
			for _, err := range errs {
				unavailable(t, err, 429)
			}
			// The success, the 49 first attempts, at most one wave of
			// retries in the 8 slots before the second counted 429, then
			// one probe at a time up to the bound.
			if got, most := srv.Count(), 1+49+8+RateLimitRefusals; got > most {
				t.Errorf("server saw %d requests, want at most %d", got, most)
			}
			t.Logf("%d requests", srv.Count())
		})
	})
}

// TestRateLimitStreakEndsAtSuccess: 429 streaks one short of the bound,
// each ended by a success, never trip the breaker; the bound counts from
// the last success.
func TestRateLimitStreakEndsAtSuccess(t *testing.T) {
	clock := llmtest.NewFakeClock(time.Time{})
	srv := llmtest.New(llmtest.WithClock(clock.Now))
	defer srv.Close()
	for i := 0; i < 3; i++ {
		srv.Enqueue(repeat(llmtest.Fault{Status: 429, RetryAfter: "1"}, RateLimitRefusals-1)...)
		srv.Enqueue(llmtest.Fault{})
	}
	srv.SetHook(func(*llmtest.Request) (llmtest.Fault, bool) { return llmtest.Fault{Status: 429, RetryAfter: "1"}, true })
	p := testProvider(srv)
	p.MaxRetries = 20
	c := newTestClient(t, srv, p, clock)
	for i := 0; i < 3; i++ {
		if _, err := c.Complete(bg, userRequest("m1", fmt.Sprint(i))); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	_, err := c.Complete(bg, userRequest("m1", "last"))
	if u := unavailable(t, err, 429); u.Cause.Attempts != RateLimitRefusals || srv.Count() != 3*RateLimitRefusals+RateLimitRefusals {
		t.Fatalf("%v after %d attempts, %d requests", err, u.Cause.Attempts, srv.Count())
	}
}

// TestRateLimitOnlyServices: the embeddings and tei kinds share the
// plumbing: an endpoint answering only 429 costs RateLimitRefusals requests
// there too, and a quota error in an embeddings error body one.
func TestRateLimitOnlyServices(t *testing.T) {
	emb := llmtest.New()
	defer emb.Close()
	emb.SetHook(func(*llmtest.Request) (llmtest.Fault, bool) { return llmtest.Fault{Status: 429, RetryAfter: "1"}, true })
	ec := serviceClient(t, provider(t, "emb", "embeddings", emb.URL, nil), WithHTTPClient(emb.HTTPClient(8)), WithClock(llmtest.NewFakeClock(time.Time{})))
	errs := concurrently(20, func(i int) error {
		_, err := ec.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf(fmt.Sprint(i))})
		return err
	})
	for _, err := range errs {
		if !errors.Is(err, ErrProviderUnavailable) {
			t.Fatalf("embeddings: %v", err)
		}
	}
	if emb.Count() != RateLimitRefusals {
		t.Errorf("embeddings: %d requests, want %d", emb.Count(), RateLimitRefusals)
	}

	quota := llmtest.New()
	defer quota.Close()
	quota.SetHook(func(*llmtest.Request) (llmtest.Fault, bool) {
		return llmtest.Fault{Status: 429, Type: "insufficient_quota", Message: "You exceeded your current quota"}, true
	})
	qc := serviceClient(t, provider(t, "emb", "embeddings", quota.URL, nil), WithHTTPClient(quota.HTTPClient(8)), WithClock(llmtest.NewFakeClock(time.Time{})))
	_, err := qc.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a")})
	var u *UnavailableError
	if !errors.As(err, &u) || u.Reason != "quota exhausted" || quota.Count() != 1 || !strings.Contains(err.Error(), "quota exhausted (not retried)") {
		t.Errorf("embeddings quota: %v after %d requests", err, quota.Count())
	}

	tei := llmtest.NewTEI()
	defer tei.Close()
	for i := 0; i < 3*RateLimitRefusals; i++ {
		tei.Enqueue(llmtest.TEIFault{Status: 429, RetryAfter: "1"})
	}
	tc := serviceClient(t, teiProvider(t, tei, 0), WithHTTPClient(tei.Client()), WithClock(llmtest.NewFakeClock(time.Time{})))
	for i := 0; i < 3; i++ {
		if _, _, err := tokenCall(t, tc, "graph neural networks"); !errors.Is(err, ErrProviderUnavailable) {
			t.Fatalf("tei call %d: %v", i+1, err)
		}
	}
	if n := tei.Count(""); n != RateLimitRefusals {
		t.Errorf("tei: %d requests, want %d", n, RateLimitRefusals)
	}
}
