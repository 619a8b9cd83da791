package llm

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// TestSecretsNeverLeak drives the paths where a key could escape (a 401
// whose message echoes the key, retried 500s, a connection failure, success)
// with a debug-level logger, and checks no log line or error holds a secret.
func TestSecretsNeverLeak(t *testing.T) {
	const org, gateway = "org-PRIVATE-77", "gw-PRIVATE-88"
	secrets := []string{testKey, org, gateway}
	env := testEnv(map[string]string{"TEST_KEY": testKey, "TEST_ORG": org, "TEST_GATEWAY": gateway})
	var logs bytes.Buffer
	logger := zerolog.New(&logs).Level(zerolog.DebugLevel)
	var errs []string
	check := func(err error) {
		if err != nil {
			errs = append(errs, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
		}
	}
	provider := func(srv *llmtest.Server) Provider {
		p := testProvider(srv)
		p.OrgEnv = "TEST_ORG"
		p.HeaderEnv = map[string]string{"X-Gateway-Token": "TEST_GATEWAY"}
		p.MaxRetries = 2
		return p
	}

	// 401: the server's message repeats the Authorization header it received.
	wrong := llmtest.New(llmtest.WithAPIKey("sk-the-right-one"))
	c := newTestClient(t, wrong, provider(wrong), llmtest.NewFakeClock(time.Time{}), env, WithLogger(logger))
	_, err := c.Complete(bg, userRequest("m1", "hi"))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || wrong.Count() != 1 {
		t.Fatalf("401 path: %v after %d requests", err, wrong.Count())
	}
	if !strings.Contains(err.Error(), "environment variable TEST_KEY") || !strings.Contains(err.Error(), "Bearer "+httpcall.Redacted) {
		t.Errorf("401 error %q should name TEST_KEY and show the echoed key httpcall.Redacted", err)
	}
	check(err)
	wrong.Close()

	// Retried 500s whose messages echo the secret header, then success.
	srv := llmtest.New(llmtest.WithAPIKey(testKey))
	srv.Enqueue(llmtest.Fault{Status: 500, Message: "upstream rejected token " + gateway}, llmtest.Fault{Status: 502, Message: "org " + org + " overloaded"})
	c = newTestClient(t, srv, provider(srv), llmtest.NewFakeClock(time.Time{}), env, WithLogger(logger))
	if _, err := c.Complete(bg, userRequest("m1", "hi")); err != nil {
		t.Fatalf("success path: %v", err)
	}
	srv.Enqueue(repeat(llmtest.Fault{Status: 503, Message: "key " + testKey + " is throttled"}, 3)...)
	_, err = c.Complete(bg, userRequest("m1", "hi"))
	check(err)
	if err == nil || !strings.Contains(err.Error(), "key "+httpcall.Redacted+" is throttled") {
		t.Errorf("exhausted retries: %v", err)
	}

	// Connection failure.
	srv.Close()
	_, err = c.Complete(bg, userRequest("m1", "hi"))
	check(err)
	_, _, err = c.Embed(bg, "emb", []string{"x"})
	check(err)

	out := logs.String()
	if !strings.Contains(out, `"message":"retrying model call"`) || !strings.Contains(out, `"message":"model call done"`) {
		t.Fatalf("expected retry and success lines at debug level, got:\n%s", out)
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("log holds secret %q:\n%s", s, out)
		}
		for _, e := range errs {
			if strings.Contains(e, s) {
				t.Errorf("error holds secret %q: %s", s, e)
			}
		}
	}
}
