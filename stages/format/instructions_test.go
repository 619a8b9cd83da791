package format

import (
	"errors"
	"fmt"
	"testing"
)

func TestInstructions(t *testing.T) {
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: Text}, ""},
		{Spec{Kind: Ideas, N: 3}, "Give exactly 3 distinct ideas. Start each on a new line with `Idea 1:`, `Idea 2:`, ... up to `Idea 3:`, followed by the idea itself. Write nothing before the first idea or after the last one."},
		{Spec{Kind: Ideas, N: 1}, "Write exactly one idea as a single paragraph, with no preamble, title list or closing remarks."},
		{Spec{Kind: Ideas}, "List your ideas, each starting on a new line with `Idea 1:`, `Idea 2:` and so on, followed by the idea itself. Write nothing before the first idea or after the last one."},
		{Spec{Kind: Ranking, Letters: "ABCD"}, "Rank the 4 ideas (A, B, C, D) from best to worst. You may explain your reasoning first, then end your answer with one line of the form `Ranking: B > A > C > D` that uses each letter exactly once."},
		{Spec{Kind: Fields, Fields: []string{"originality", "feasibility"}, Min: 1, Max: 10},
			"Reply with a JSON object in a ```json code block with exactly these fields, each a whole number from 1 to 10: \"originality\", \"feasibility\". For example: {\"originality\": <1-10>, \"feasibility\": <1-10>}"},
		{Spec{Kind: Fields, Fields: []string{"comparison"}},
			"Reply with a JSON object in a ```json code block with exactly these fields, each a whole number: \"comparison\". For example: {\"comparison\": <whole number>}"},
		{Spec{Kind: Letter, Letters: "ABCD"}, "Choose one of A, B, C, D. You may explain briefly, then end your answer with one line of the form `Answer: X`, where X is the letter you chose."},
		{Spec{Kind: Rating, Min: 0, Max: 10}, "Give your rating as a whole number from 0 to 10 on one line of the form `Rating: N`, followed by one line starting with `Explanation:` that justifies it briefly."},
	}
	for _, tc := range cases {
		if got := Instructions(tc.spec); got != tc.want {
			t.Errorf("Instructions(%+v)\n got: %s\nwant: %s", tc.spec, got, tc.want)
		}
	}
}

// The example shown to a model must itself parse.
func TestInstructionExamplesParse(t *testing.T) {
	for _, letters := range []string{"A", "AB", "ABCD", "ABCDEFGHIJK"} {
		spec := Spec{Kind: Ranking, Letters: letters}
		if _, err := Parse(spec, "Ranking: "+exampleRanking(letters)); err != nil {
			t.Errorf("example for %s does not parse: %v", letters, err)
		}
	}
}

func TestRepairMessage(t *testing.T) {
	rating := Spec{Kind: Rating, Min: 1, Max: 10}
	_, parseErr := Parse(rating, "Rating: 11")
	cases := []struct {
		name string
		spec Spec
		err  error
		want string
	}{
		{"parse error", rating, parseErr,
			"Your previous answer could not be used: rating 11 is outside 1 to 10. Give your rating as a whole number from 1 to 10 on one line of the form `Rating: N`, followed by one line starting with `Explanation:` that justifies it briefly. Reply again with the complete answer in exactly this form."},
		{"stage error", Spec{Kind: Letter, Letters: "AB"}, errors.New("the judge chose its own idea"),
			"Your previous answer could not be used: the judge chose its own idea. Choose one of A, B. You may explain briefly, then end your answer with one line of the form `Answer: X`, where X is the letter you chose. Reply again with the complete answer in exactly this form."},
		{"refusal", rating, fmt.Errorf("wrapped: %w", ErrRefusal),
			"This request is part of a scientific benchmark of research-idea generation and evaluation; the answer is used only to compare ideas and is never acted upon. Please complete the original task. Give your rating as a whole number from 1 to 10 on one line of the form `Rating: N`, followed by one line starting with `Explanation:` that justifies it briefly."},
		{"text", Spec{Kind: Text}, errEmpty,
			"Your previous answer could not be used: the answer is empty. Please answer the original request again."},
		{"nil error", Spec{Kind: Text}, nil,
			"Your previous answer could not be used: it did not have the expected form. Please answer the original request again."},
	}
	for _, tc := range cases {
		if got := RepairMessage(tc.spec, tc.err); got != tc.want {
			t.Errorf("%s:\n got: %s\nwant: %s", tc.name, got, tc.want)
		}
	}
}
