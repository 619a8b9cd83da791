package llm

import (
	"context"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

const testKey = "sk-test-SECRET-1234"

// testEnv is the environment the tests' clients read secrets from.
func testEnv(vars map[string]string) Option {
	return WithEnv(func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
}

func identity(d time.Duration) time.Duration { return d }

// testProvider points a provider block at srv.
func testProvider(srv *llmtest.Server) Provider {
	return Provider{Name: "fake", Kind: "openai", BaseURL: srv.URL, APIKeyEnv: "TEST_KEY", MaxRetries: -1, RepairAttempts: -1}
}

// newTestClient builds a client on srv with a fake clock and exact (unjittered) back-off.
func newTestClient(t testing.TB, srv *llmtest.Server, p Provider, clock Clock, opts ...Option) *openAIClient {
	t.Helper()
	base := []Option{WithClock(clock), WithJitter(identity), WithHTTPClient(srv.HTTPClient(64)),
		testEnv(map[string]string{"TEST_KEY": testKey})}
	c, err := New(p, append(base, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c.(*openAIClient)
}

func userRequest(model, prompt string) Request {
	return Request{Model: model, Messages: []Message{{Role: "user", Content: prompt}}}
}

var bg = context.Background()
