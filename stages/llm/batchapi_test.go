package llm

import (
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// TestCachedTokensRecorded: usage.prompt_tokens_details.cached_tokens
// reaches Usage.CachedTokens, on one answer and on n choices (the first
// carries the input, so it carries the cached part of it too), and Ask sums it.
func TestCachedTokensRecorded(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	u := &openai.Usage{PromptTokens: 1200, CompletionTokens: 7, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 1024}}
	srv.Enqueue(llmtest.Fault{Text: "x", Usage: u}, llmtest.Fault{Text: "y", Usage: u})
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(llmtest.Epoch))
	r, err := c.Complete(bg, userRequest("m", "p"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Usage{InputTokens: 1200, OutputTokens: 7, CachedTokens: 1024}); r.Usage != want {
		t.Fatalf("usage %+v, want %+v", r.Usage, want)
	}
	ar := userRequest("m", "p")
	ar.Format = format.Spec{Kind: format.Text}
	out, err := Ask(bg, c, ar, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if out.Usage.CachedTokens != 1024 {
		t.Fatalf("Ask usage %+v, want 1024 cached", out.Usage)
	}
	srv.Enqueue(llmtest.Fault{Usage: u})
	rs, err := c.CompleteChoices(bg, userRequest("m", "q"), []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Usage.CachedTokens != 1024 || rs[1].Usage.CachedTokens != 0 {
		t.Fatalf("choices cached %d, %d; want 1024, 0", rs[0].Usage.CachedTokens, rs[1].Usage.CachedTokens)
	}
}

// TestDecodeChatIsComplete: a reply body given to DecodeChat yields the
// Response Complete returned for it (Status and Attempts aside), secrets
// masked the same way.
func TestDecodeChatIsComplete(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	u := &openai.Usage{PromptTokens: 40, CompletionTokens: 9, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 32}}
	srv.Enqueue(llmtest.Fault{Text: "<think>\nhm " + testKey + "\n</think>\nAnswer: " + testKey, Usage: u, Reasoning: ""})
	c := newTestClient(t, srv, testProvider(srv), llmtest.NewFakeClock(llmtest.Epoch))
	req := userRequest("m", "p")
	r, err := c.Complete(bg, req)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	// Rebuild the reply the server sent, unmasked, from what it recorded:
	// DecodeChat must mask it itself.
	body := []byte(`{"id":"x","object":"chat.completion","model":"m","system_fingerprint":"fp_llmtest","choices":[{"index":0,"message":{"role":"assistant","content":"<think>\nhm ` +
		testKey + `\n</think>\nAnswer: ` + testKey + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49,"prompt_tokens_details":{"cached_tokens":32}}}`)
	d, err := c.DecodeChat(req, body)
	if err != nil {
		t.Fatal(err)
	}
	d.Status, d.Attempts = r.Status, r.Attempts
	if *d != *r {
		t.Fatalf("DecodeChat %+v\nComplete   %+v (request %d)", *d, *r, len(reqs))
	}
	if d.Text == "Answer: "+testKey {
		t.Fatal("key not masked")
	}
}
