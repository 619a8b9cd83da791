package llm

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/format"
)

func baselineRequest(model string, sample, n int, user string) Request {
	return Request{Model: model, Sample: sample, Format: format.Spec{Kind: format.Ideas, N: n},
		Messages: []Message{{Role: "system", Content: "You are a researcher."}, {Role: "user", Content: user}}}
}

const baselinePrompt = "Here are the abstracts:\n\nAbstract 2: Second abstract.\n\nAbstract 1: First abstract.\n\nAbstract 3: Third abstract.\n\n" +
	BaselineTargetMarker + " graphene pores separate lithium ions\n\nAnswer as a list."

func TestBaselineIdeas(t *testing.T) {
	for _, tc := range []struct {
		model     string
		sample, n int
		want      []string
	}{
		{BaselineCopyReference, 0, 1, []string{"First abstract."}},
		{BaselineCopyReference, 1, 1, []string{"Second abstract."}},
		{BaselineCopyReference, 3, 1, []string{"First abstract."}}, // cycles
		{BaselineCopyReference, 0, 3, []string{"First abstract.", "Second abstract.", "Third abstract."}},
		{BaselineCopyReference, 1, 2, []string{"Third abstract.", "First abstract."}},
		{BaselineTargetOracle, 0, 2, []string{"graphene pores separate lithium ions", "graphene pores separate lithium ions"}},
	} {
		got, err := BaselineIdeas(baselineRequest(tc.model, tc.sample, tc.n, baselinePrompt), 0)
		if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s sample %d n %d: %q, %v; want %q", tc.model, tc.sample, tc.n, got, err, tc.want)
		}
	}
	// Shuffled words: the target's words, another order, the same for the
	// same seed and sample, another for another sample.
	a, _ := BaselineIdeas(baselineRequest(BaselineShuffledWords, 0, 1, baselinePrompt), 7)
	again, _ := BaselineIdeas(baselineRequest(BaselineShuffledWords, 0, 1, baselinePrompt), 7)
	other, _ := BaselineIdeas(baselineRequest(BaselineShuffledWords, 1, 1, baselinePrompt), 7)
	sorted := func(s string) string { w := strings.Fields(s); sort.Strings(w); return strings.Join(w, " ") }
	if a[0] != again[0] || sorted(a[0]) != sorted("graphene pores separate lithium ions") || a[0] == "graphene pores separate lithium ions" || a[0] == other[0] {
		t.Errorf("shuffled: %q, again %q, sample 1 %q", a[0], again[0], other[0])
	}
}

func TestBaselineErrors(t *testing.T) {
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{baselineRequest("gpt-4o", 0, 1, baselinePrompt), `model "gpt-4o" is no baseline generator; name the model one of copy_reference, shuffled_words, target_oracle`},
		{baselineRequest(BaselineTargetOracle, 0, 1, "Abstract 1: x"), "set generate_ideas' target"},
		{baselineRequest(BaselineCopyReference, 0, 1, "no abstracts here"), `no "Abstract N: ..." line`},
		{Request{Model: BaselineTargetOracle, Format: format.Spec{Kind: format.Ranking, Letters: "AB"}}, "only generates ideas"},
	} {
		if _, err := BaselineIdeas(tc.req, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.req.Model, err, tc.want)
		}
	}
}

// The client's answer parses back to exactly the ideas it chose.
func TestBaselineAnswerParses(t *testing.T) {
	c, err := New(NewProvider("b", "baseline"))
	if err != nil {
		t.Fatal(err)
	}
	req := baselineRequest(BaselineCopyReference, 0, 3, baselinePrompt)
	resp, err := c.Complete(bg, req)
	if err != nil {
		t.Fatal(err)
	}
	a, err := format.Parse(req.Format, resp.Text)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal([]string{"First abstract.", "Second abstract.", "Third abstract."})
	if got, _ := json.Marshal(a.Ideas); string(got) != string(want) || c.Synthetic() {
		t.Errorf("parsed %s, want %s (synthetic %v)", got, want, c.Synthetic())
	}
}
