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

// TestSecretsNeverReturned: no text a client returns carries a secret, for
// every kind: answers and vectors' metadata from servers that echo the
// request headers in a 200, and error messages that quote the key, where
// the key straddles the cut of the error excerpt.
func TestSecretsNeverReturned(t *testing.T) {
	straddle := strings.Repeat("e", httpcall.ErrorExcerpt-5) + testKey
	var texts []string
	collect := func(err error, more ...string) {
		if err != nil {
			texts = append(texts, err.Error(), fmt.Sprintf("%+v", err))
		}
		texts = append(texts, more...)
	}

	chat := llmtest.New(llmtest.WithAPIKey(testKey))
	defer chat.Close()
	chat.Enqueue(llmtest.Fault{EchoHeaders: true}, llmtest.Fault{EchoHeaders: true},
		llmtest.Fault{Status: 400, Message: straddle}, llmtest.Fault{Status: 400, Message: straddle})
	oa := serviceClient(t, testProvider(chat), WithHTTPClient(chat.HTTPClient(1)))
	resp, err := oa.(Client).Complete(bg, userRequest("m1", "hi"))
	if err != nil || !strings.Contains(resp.Text, "Authorization: Bearer "+httpcall.Redacted) {
		t.Fatalf("echoed chat answer: %v %+v", err, resp)
	}
	collect(err, resp.Text, resp.Reasoning, resp.Model)
	sresp, err := oa.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a")})
	collect(err, sresp.Model, string(sresp.Body))
	_, err = oa.(Client).Complete(bg, userRequest("m1", "hi"))
	collect(err)
	_, err = oa.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a")})
	collect(err)

	emb := llmtest.New(llmtest.WithAPIKey(testKey))
	defer emb.Close()
	emb.Enqueue(llmtest.Fault{EchoHeaders: true}, llmtest.Fault{Status: 500, Message: straddle})
	p := provider(t, "emb", "embeddings", emb.URL, map[string]any{"api_key_env": "TEST_KEY", "max_retries": 0})
	ec := serviceClient(t, p, WithHTTPClient(emb.HTTPClient(1)))
	sresp, err = ec.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a")})
	if err != nil || !strings.Contains(sresp.Model, httpcall.Redacted) {
		t.Fatalf("echoed embeddings model: %v %+v", err, sresp)
	}
	collect(err, sresp.Model)
	_, err = ec.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a")})
	collect(err)

	tei := llmtest.NewTEI(llmtest.WithTEIAPIKey(testKey))
	defer tei.Close()
	tei.Enqueue(llmtest.TEIFault{Path: llmtest.TEITokenizePath, EchoHeaders: true}, llmtest.TEIFault{Path: llmtest.TEITokenizePath, Status: 424, Message: straddle})
	tc := serviceClient(t, provider(t, "tei", "tei", tei.URL, map[string]any{"api_key_env": "TEST_KEY"}), WithHTTPClient(tei.Client()))
	sresp, err = tc.Call(bg, ServiceRequest{Op: OpTokenEmbeddings, Body: inputBodyOf("some words")})
	if err != nil || !strings.Contains(string(sresp.Body), httpcall.Redacted) {
		t.Fatalf("echoed tokens: %v %+v", err, sresp)
	}
	collect(err, string(sresp.Body))
	_, err = tc.Call(bg, ServiceRequest{Op: OpTokenEmbeddings, Body: inputBodyOf("some words")})
	collect(err)

	if len(texts) < 12 {
		t.Fatalf("collected %d texts", len(texts))
	}
	for _, s := range texts {
		// Any 8 bytes of the key would narrow a search for the rest.
		for i := 0; i+8 <= len(testKey); i++ {
			if strings.Contains(s, testKey[i:i+8]) {
				t.Errorf("text holds %q of the key: %s", testKey[i:i+8], s)
				break
			}
		}
	}
}

// TestPlaceholderKeyNotMasked: a key under 8 bytes is a placeholder for a
// server that checks none; masking it would garble every answer.
func TestPlaceholderKeyNotMasked(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Text: "x marks the spot, xx"})
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(time.Time{}), testEnv(map[string]string{"TEST_KEY": "x"}))
	resp, err := c.Complete(bg, userRequest("m1", "hi"))
	if err != nil || resp.Text != "x marks the spot, xx" {
		t.Fatalf("answer = %q, %v", resp.Text, err)
	}
}

// TestReplySizeCap: a reply over max_reply_bytes fails at once, naming the
// setting, for chat and for services alike.
func TestReplySizeCap(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Fault{Text: strings.Repeat("y", 5000)})
	p := testProvider(srv)
	p.MaxReplyBytes = 4096
	c := newTestClient(t, srv, p, llmtest.NewFakeClock(time.Time{}))
	_, err := c.Complete(bg, userRequest("m1", "hi"))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Retryable || srv.Count() != 1 ||
		!strings.Contains(err.Error(), "reply larger than 4096 bytes (max_reply_bytes;") {
		t.Fatalf("chat over the cap: %v after %d requests", err, srv.Count())
	}
	emb := llmtest.New()
	defer emb.Close()
	ec := serviceClient(t, provider(t, "emb", "embeddings", emb.URL, map[string]any{"max_reply_bytes": 100}), WithHTTPClient(emb.HTTPClient(1)))
	_, err = ec.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a", "b")})
	if err == nil || !strings.Contains(err.Error(), "max_reply_bytes") || emb.Count() != 1 {
		t.Fatalf("embeddings over the cap: %v after %d requests", err, emb.Count())
	}
	if _, err := c.Complete(bg, userRequest("m1", "hi")); err != nil {
		t.Fatalf("a reply under the cap: %v", err)
	}
}
