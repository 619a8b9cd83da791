package llm

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/ideaflow/ideaflow/stages/format"
)

func newMockClient(t *testing.T, seed int64) Client {
	t.Helper()
	c, err := New(Provider{Name: "demo", Kind: "mock", Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ideasRequest(sample int) Request {
	return Request{Model: "mock-large", Sample: sample, Format: format.Spec{Kind: format.Ideas, N: 3},
		Messages: []Message{{Role: "system", Content: "You are a biomedical researcher."},
			{Role: "user", Content: "Propose ideas about protein folding. Protein folding matters for enzyme design."}}}
}

func TestMockDeterminism(t *testing.T) {
	a, b := newMockClient(t, 1), newMockClient(t, 1)
	r1, err := a.Complete(bg, ideasRequest(0))
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := b.Complete(bg, ideasRequest(0))
	if r1.Text != r2.Text || r1.Text == "" {
		t.Fatalf("same request, different answers:\n%s\n---\n%s", r1.Text, r2.Text)
	}
	variants := map[string]Request{"sample": ideasRequest(1), "model": func() Request { r := ideasRequest(0); r.Model = "mock-small"; return r }()}
	seed := 3
	variants["request seed"] = func() Request { r := ideasRequest(0); r.Seed = &seed; return r }()
	for name, req := range variants {
		r, _ := a.Complete(bg, req)
		if r.Text == r1.Text {
			t.Errorf("changing the %s did not change the answer", name)
		}
	}
	if r, _ := newMockClient(t, 2).Complete(bg, ideasRequest(0)); r.Text == r1.Text {
		t.Error("changing the provider seed did not change the answer")
	}
	ans, err := format.Parse(ideasRequest(0).Format, r1.Text)
	if err != nil || len(ans.Ideas) != 3 {
		t.Fatalf("mock answer does not parse as 3 ideas: %v\n%s", err, r1.Text)
	}
	if !a.Synthetic() || r1.Model != "mock-large" || r1.SystemFingerprint != "mock-seed-1" || !r1.UsageEstimated || r1.Attempts != 1 {
		t.Errorf("response metadata %+v", r1)
	}
	// 32 + 79 bytes of prompt: 8 + 20 tokens.
	if r1.Usage.InputTokens != 28 || r1.Usage.OutputTokens != textTokens(r1.Text) {
		t.Errorf("usage %+v", r1.Usage)
	}
}

func TestMockAnswersEveryFormat(t *testing.T) {
	specs := []format.Spec{
		{Kind: format.Text},
		{Kind: format.Ideas, N: 5},
		{Kind: format.Ranking, Letters: "ABCD"},
		{Kind: format.Fields, Fields: []string{"originality", "feasibility"}, Min: 1, Max: 10},
		{Kind: format.Letter, Letters: "ABCD"},
		{Kind: format.Rating, Min: 1, Max: 10},
	}
	c := newMockClient(t, 7)
	for _, spec := range specs {
		for sample := 0; sample < 20; sample++ {
			req := ideasRequest(sample)
			req.Format = spec
			out, err := Ask(bg, c, req, nil, 0)
			if err != nil || len(out.Attempts) != 1 {
				t.Fatalf("%s sample %d: %v", spec.Kind, sample, err)
			}
		}
	}
}

func TestMockTopic(t *testing.T) {
	tests := []struct {
		msgs []Message
		want string
	}{
		{[]Message{{Role: "user", Content: "Keyword: graphene. Write about graphene and batteries, graphene again."}}, "graphene keyword batteries"},
		{[]Message{{Role: "user", Content: "first"}, {Role: "assistant", Content: "x"}, {Role: "user", Content: "Quantum sensing with diamonds"}}, "quantum sensing diamonds"},
		{[]Message{{Role: "system", Content: "only a system prompt"}}, ""},
	}
	for _, tt := range tests {
		if got := topic(tt.msgs); got != tt.want {
			t.Errorf("topic(%v) = %q, want %q", tt.msgs, got, tt.want)
		}
	}
}

func TestMockEmbed(t *testing.T) {
	c := newMockClient(t, 1)
	texts := []string{"protein folding dynamics", "protein folding dynamics", "Protein folding, dynamics!", "galaxy cluster lensing", ""}
	vecs, usage, err := c.Embed(bg, "emb", texts)
	if err != nil {
		t.Fatal(err)
	}
	if usage.InputTokens != 6+6+7+6+0 {
		t.Errorf("usage = %+v", usage)
	}
	for i, v := range vecs {
		if len(v) != MockEmbeddingDim || math.Abs(dot(v, v)-1) > 1e-6 {
			t.Fatalf("vector %d: len %d, |v|^2 %v; want unit length %d", i, len(v), dot(v, v), MockEmbeddingDim)
		}
	}
	if got := dot(vecs[0], vecs[1]); math.Abs(got-1) > 1e-6 {
		t.Errorf("identical texts: cosine %v, want 1", got)
	}
	if got := dot(vecs[0], vecs[2]); math.Abs(got-1) > 1e-6 {
		t.Errorf("same words, other case and punctuation: cosine %v, want 1", got)
	}
	if got := dot(vecs[0], vecs[3]); got > 0.5 {
		t.Errorf("unrelated texts: cosine %v, want well below 1", got)
	}
	other, _, _ := c.Embed(bg, "emb-2", texts[:1])
	if dot(other[0], vecs[0]) > 0.99 {
		t.Error("another embedding model gave the same vector")
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestMockHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	cancel()
	c := newMockClient(t, 1)
	if _, err := c.Complete(ctx, ideasRequest(0)); !errors.Is(err, context.Canceled) {
		t.Errorf("Complete: %v", err)
	}
	if _, _, err := c.Embed(ctx, "emb", []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed: %v", err)
	}
}
