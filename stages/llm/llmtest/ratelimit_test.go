package llmtest

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// The rate limit counts requests and tokens over sliding windows on the
// server's clock: a request that would put a window over its bound is
// answered 429 with Retry-After saying when it fits, and is not counted;
// at that time it is accepted.
func TestRateLimitSlidingWindows(t *testing.T) {
	var mu sync.Mutex
	now := Epoch
	at := func(d time.Duration) {
		mu.Lock()
		now = Epoch.Add(d)
		mu.Unlock()
	}
	// "hello world!" is 3 tokens, max_tokens 7: 10 a request.
	srv := New(WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now }),
		WithRateLimit(Window{Length: time.Second, Requests: 2}, Window{Length: time.Minute, Tokens: 45}))
	defer srv.Close()
	body := `{"model":"m1","max_tokens":7,"messages":[{"role":"user","content":"hello world!"}]}`
	steps := []struct {
		at         time.Duration
		status     int
		retryAfter string
	}{
		{0, 200, ""},
		{100 * time.Millisecond, 200, ""},
		{200 * time.Millisecond, 429, "0.800"},   // 2 in the second from 0: the first leaves at 1 s
		{time.Second, 200, ""},                   // (0 s, 1 s] holds only 0.1 s's
		{1050 * time.Millisecond, 429, "0.050"},  // 0.1 s's leaves at 1.1 s
		{1100 * time.Millisecond, 200, ""},       // 40 tokens in the minute
		{1300 * time.Millisecond, 429, "58.700"}, // 50 > 45 tokens: 0 s's 10 leave at 60 s
		{60 * time.Second, 200, ""},
		{60050 * time.Millisecond, 429, "0.050"}, // 0.1 s's tokens leave at 60.1 s
		{60100 * time.Millisecond, 200, ""},
	}
	for i, st := range steps {
		at(st.at)
		resp, _, err := post(t, srv.srv.Client(), srv.URL+"/chat/completions", body, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != st.status || resp.Header.Get("Retry-After") != st.retryAfter {
			t.Fatalf("step %d at %v: %d, Retry-After %q; want %d, %q", i, st.at, resp.StatusCode, resp.Header.Get("Retry-After"), st.status, st.retryAfter)
		}
	}
	acc := srv.Accepted()
	if len(acc) != 6 || srv.Refused() != 4 || acc[5].Tokens != 10 || !acc[5].Time.Equal(Epoch.Add(60100*time.Millisecond)) {
		t.Fatalf("accepted %+v, refused %d", acc, srv.Refused())
	}
	if srv.Requests()[2].Status != http.StatusTooManyRequests {
		t.Fatal("the refusal is not recorded")
	}
}
