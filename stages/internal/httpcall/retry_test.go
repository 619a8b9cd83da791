package httpcall

import (
	"net/http"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

func TestParseRetryAfter(t *testing.T) {
	now := llmtest.Epoch
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"7", 7 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"86400", MaxServerWait, true},
		{"", 0, false},
		{"0", 0, false},
		{"-3", 0, false},
		{"soon", 0, false},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseReset(t *testing.T) {
	now := llmtest.Epoch
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1s", time.Second, true},
		{"6m0s", 6 * time.Minute, true},
		{"20ms", 20 * time.Millisecond, true},
		{"1m30.5s", 90*time.Second + 500*time.Millisecond, true},
		{"12", 12 * time.Second, true},
		{"2.5", 2500 * time.Millisecond, true},
		{"1735689630", 30 * time.Second, true},          // Unix seconds
		{"1735689600500", 500 * time.Millisecond, true}, // Unix milliseconds
		{"0s", 0, false},
		{"", 0, false},
		{"tomorrow", 0, false},
		{"1735689000", 0, false}, // in the past
	}
	for _, tt := range tests {
		got, ok := parseReset(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseReset(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestServerWait(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	tests := []struct {
		name   string
		header http.Header
		status int
		tokens int64
		want   time.Duration
		ok     bool
	}{
		{"nothing", h(), 429, 100, 0, false},
		{"Retry-After on 503", h("Retry-After", "4"), 503, 100, 4 * time.Second, true},
		{"resets ignored on 503", h("x-ratelimit-reset-requests", "4s"), 503, 100, 0, false},
		{"requests reset, no remaining header", h("x-ratelimit-reset-requests", "4s"), 429, 100, 4 * time.Second, true},
		{"both resets, no remaining: the longer", h("x-ratelimit-reset-requests", "4s", "x-ratelimit-reset-tokens", "9s"), 429, 100, 9 * time.Second, true},
		{"tokens left suffice: requests reset", h("x-ratelimit-reset-requests", "4s", "x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-tokens", "9s", "x-ratelimit-remaining-tokens", "5000"), 429, 100, 4 * time.Second, true},
		{"too few tokens left: tokens reset", h("x-ratelimit-reset-requests", "4s", "x-ratelimit-remaining-requests", "3",
			"x-ratelimit-reset-tokens", "9s", "x-ratelimit-remaining-tokens", "50"), 429, 100, 9 * time.Second, true},
		{"neither exhausted", h("x-ratelimit-reset-requests", "4s", "x-ratelimit-remaining-requests", "3",
			"x-ratelimit-reset-tokens", "9s", "x-ratelimit-remaining-tokens", "5000"), 429, 100, 0, false},
		{"capped", h("x-ratelimit-reset-tokens", "3h"), 429, 100, MaxServerWait, true},
	}
	for _, tt := range tests {
		got, ok := ServerWait(tt.header, tt.status, llmtest.Epoch, tt.tokens)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: serverWait = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i, w := range want {
		if got := Backoff(i+1, time.Second, time.Minute); got != w*time.Second {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w*time.Second)
		}
	}
	if got := Backoff(3, 250*time.Millisecond, time.Minute); got != time.Second {
		t.Errorf("backoff from 250ms, attempt 3 = %v, want 1s", got)
	}
	for i := 0; i < 1000; i++ {
		if j := EqualJitter(8 * time.Second); j < 4*time.Second || j > 8*time.Second {
			t.Fatalf("EqualJitter(8s) = %v, outside [4s, 8s]", j)
		}
	}
}

func TestRetryableStatus(t *testing.T) {
	retry := []int{408, 409, 425, 429, 500, 502, 503, 504, 529}
	never := []int{400, 401, 403, 404, 405, 413, 422, 501, 505}
	for _, s := range retry {
		if !RetryableStatus(s) {
			t.Errorf("%d not retried", s)
		}
	}
	for _, s := range never {
		if RetryableStatus(s) {
			t.Errorf("%d retried", s)
		}
	}
}
