package format

import (
	"strings"
	"testing"
)

func TestParseText(t *testing.T) {
	text := Spec{Kind: Text}
	runParseCases(t, []parseCase{
		{name: "trimmed", spec: text, text: "  An idea about enzymes.\n\n", want: &Answer{Text: "An idea about enzymes."}},
		{name: "markdown kept", spec: text, text: "**Final Idea:** enzymes", want: &Answer{Text: "**Final Idea:** enzymes"}},
		{name: "think block removed", spec: text, text: "<think>plan</think>\n\nThe idea.", want: &Answer{Text: "The idea."}},
		{name: "refusal returned as text", spec: text, text: "I'm sorry, but I can't help with that.", want: &Answer{Text: "I'm sorry, but I can't help with that."}},
		{name: "empty", spec: text, text: " \n\t", errSub: "the answer is empty"},
		{name: "unterminated think", spec: text, text: "<think>still reasoning when the tokens ran out", errSub: "the answer is empty"},
	})
}

func TestIsRefusal(t *testing.T) {
	cases := []struct {
		text string
		want bool
	}{
		{"I'm sorry, but I can't help with that.", true},
		{"I\u2019m sorry, but I can\u2019t assist with that request.", true},
		{"As an AI language model, I cannot generate content that could be used to cause harm.", true},
		{"I cannot help with creating biological weapons.", true},
		{"I apologize, but I am unable to provide ideas on this topic.", true},
		{"Sorry. I can't do that.", true},
		{"Unfortunately, I'm not able to help with this request. If you'd like, I can help with a different topic.", true},
		{"I must decline this request.", true},
		{"<think>The request is harmful.</think>I'm sorry, but I won't be able to help with this.", true},
		{"**I'm sorry, but I can't comply with this request.**", true},
		{"I'm sorry for the confusion earlier. Here are the ideas:\n1. alpha", false},
		{"As an AI language model, I cannot have personal opinions, but based on the criteria: Ranking: B > A", false},
		{"I'm sorry, but I can't access the papers. However, here are three ideas:\n1. alpha", false},
		{"I cannot be certain, but Answer: B", false},
		{"I can't rank these definitively.\nRanking: B > A > C", false},
		{"Rating: 7\nExplanation: I cannot help noticing the overlap.", false},
		{"The new catalyst cannot help but improve yields.", false},
		{"Unfortunately, we cannot provide reliable diagnoses today. 1. A breath test for sepsis.", false},
		{"", false},
	}
	for _, tc := range cases {
		if got := IsRefusal(tc.text); got != tc.want {
			t.Errorf("IsRefusal(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestRefusalErrorQuotesTheOpening(t *testing.T) {
	_, err := Parse(Spec{Kind: Rating, Min: 1, Max: 10}, "I'm sorry, but I can't help with that. It may be misused.")
	want := `the model declined to answer: "I'm sorry, but I can't help with that."`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestParseRejectsInvalidSpecs(t *testing.T) {
	cases := []struct {
		spec   Spec
		errSub string
	}{
		{Spec{}, "format kind is empty"},
		{Spec{Kind: "essay"}, `unknown format kind "essay"`},
		{Spec{Kind: Ideas, N: -1}, "n must not be negative"},
		{Spec{Kind: Ranking}, "ranking: no letters"},
		{Spec{Kind: Ranking, Letters: "ABA"}, "A listed twice"},
		{Spec{Kind: Letter, Letters: "A1"}, `'1' is not a letter A-Z`},
		{Spec{Kind: Fields}, "fields: no field names"},
		{Spec{Kind: Fields, Fields: []string{"clarity", "Clarity"}}, `field "Clarity" listed twice`},
		{Spec{Kind: Fields, Fields: []string{"--"}}, "has no letters or digits"},
		{Spec{Kind: Rating, Min: 5, Max: 1}, "min 5 is above max 1"},
	}
	for _, tc := range cases {
		_, err := Parse(tc.spec, "Rating: 3")
		if err == nil || !strings.Contains(err.Error(), tc.errSub) || !strings.HasPrefix(err.Error(), "invalid format spec: ") {
			t.Errorf("Parse with %+v: err = %v, want %q", tc.spec, err, tc.errSub)
		}
	}
}

func TestLowerCaseLettersInSpec(t *testing.T) {
	got, err := Parse(Spec{Kind: Ranking, Letters: "abc"}, "Ranking: C > A > B")
	checkParse(t, got, err, ranking("C", "A", "B"), "", false)
}
