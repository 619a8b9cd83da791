package format

import "testing"

func rating(v int, expl string) *Answer { return &Answer{Rating: v, Explanation: expl} }

func TestParseRating(t *testing.T) {
	ten := Spec{Kind: Rating, Min: 1, Max: 10}
	zeroTen := Spec{Kind: Rating, Min: 0, Max: 10}
	runParseCases(t, []parseCase{
		{name: "label and explanation", spec: ten,
			text: "Rating: 7\nExplanation: Both target the same enzyme.", want: rating(7, "Both target the same enzyme.")},
		{name: "bold label out of ten", spec: ten,
			text: "**Rating:** 7/10\n\n**Explanation:** Same enzyme, different assay.", want: rating(7, "Same enzyme, different assay.")},
		{name: "whole float", spec: ten, text: "Rating: 7.0\nExplanation: close.", want: rating(7, "close.")},
		{name: "json", spec: ten, text: `{"rating": 7, "explanation": "same enzyme"}`, want: rating(7, "same enzyme")},
		{name: "json string in fence", spec: ten, text: "```json\n{\"Rating\": \"7/10\", \"Reason\": \"same enzyme\"}\n```", want: rating(7, "same enzyme")},
		{name: "rate phrase", spec: ten,
			text: "I would rate this 7 out of 10 because both study the enzyme.",
			want: rating(7, "I would rate this 7 out of 10 because both study the enzyme.")},
		{name: "rate phrase with article", spec: ten, text: "I'd rate it a 6/10.", want: rating(6, "I'd rate it a 6/10.")},
		{name: "explanation first", spec: ten,
			text: "Explanation: The idea and the abstract share the question.\nThey differ in data.\n\nRating: 8",
			want: rating(8, "The idea and the abstract share the question.\nThey differ in data.")},
		{name: "unlabelled prose keeps the text as explanation", spec: ten,
			text: "The overlap is large.\nOverall rating: 9\nThe methods match.",
			want: rating(9, "The overlap is large.\nThe methods match.")},
		{name: "score label with scale in parentheses", spec: ten, text: "Score (1-10): 5", want: rating(5, "")},
		{name: "bold number", spec: ten, text: "Rating: **4**\nExplanation: weak link.", want: rating(4, "weak link.")},
		{name: "last rating wins", spec: ten,
			text: "Initial rating: 5\nAfter rereading the abstract, I revise this.\nFinal rating: 6\nExplanation: closer than it first looked.",
			want: rating(6, "closer than it first looked.")},
		{name: "zero allowed on a 0-10 scale", spec: zeroTen, text: "Rating: 0\nExplanation: no overlap.", want: rating(0, "no overlap.")},
		{name: "markdown headings", spec: ten,
			text: "## Rating\n8\n\n## Explanation\nThe idea and the abstract test the same drug.", want: rating(8, "The idea and the abstract test the same drug.")},
		{name: "bare number", spec: ten, text: "7", want: rating(7, "")},
		{name: "lone fraction", spec: ten, text: "Overlap: 3/10. The texts share only a keyword.", want: rating(3, "Overlap: 3/10. The texts share only a keyword.")},
		{name: "think block", spec: ten, text: "<think>Rating: 2?</think>Rating: 8\nExplanation: strong.", want: rating(8, "strong.")},
		{name: "out of range", spec: ten, text: "Rating: 11\nExplanation: perfect.", errSub: "rating 11 is outside 1 to 10"},
		{name: "zero below range", spec: ten, text: "Rating: 0", errSub: "rating 0 is outside 1 to 10"},
		{name: "fraction", spec: ten, text: "Rating: 7.5", errSub: "rating 7.5 is not a whole number"},
		{name: "wrong scale", spec: ten, text: "Rating: 4/5", errSub: "rating 4/5 is on a scale to 5, expected 1 to 10"},
		{name: "json not a number", spec: ten, text: `{"rating": "high"}`, errSub: `rating "high" is not a number`},
		{name: "conflicting fractions", spec: ten, text: "Method overlap 8/10, data overlap 2/10.", errSub: "found no rating"},
		{name: "no rating", spec: ten, text: "The idea and the abstract are related.", errSub: "found no rating"},
		{name: "refusal", spec: ten, text: "I'm sorry, but I can't provide a rating for this content.", errSub: "declined", refusal: true},
	})
}
