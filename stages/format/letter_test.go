package format

import "testing"

func letter(l string) *Answer { return &Answer{Letter: l} }

func TestParseLetter(t *testing.T) {
	abcd := Spec{Kind: Letter, Letters: "ABCD"}
	runParseCases(t, []parseCase{
		{name: "bare", spec: abcd, text: "B", want: letter("B")},
		{name: "label", spec: abcd, text: "Answer: B", want: letter("B")},
		{name: "bold", spec: abcd, text: "**B**", want: letter("B")},
		{name: "parentheses", spec: abcd, text: "(B)", want: letter("B")},
		{name: "lower case with parenthesis", spec: abcd, text: "b)", want: letter("B")},
		{name: "sentence", spec: abcd, text: "The answer is B.", want: letter("B")},
		{name: "letter then option text", spec: abcd, text: "B. Different ideas on similar problems", want: letter("B")},
		{name: "json", spec: abcd, text: `{"answer": "B", "reason": "same problem, different method"}`, want: letter("B")},
		{name: "rationale then label", spec: abcd,
			text: "Idea 1 and idea 2 both target sepsis. It is not A, since the problems match, and not D, since the methods differ. B is tempting too.\n\nAnswer: C",
			want: letter("C")},
		{name: "bold label", spec: abcd, text: "**Final answer:** (C) Similar ideas", want: letter("C")},
		{name: "option word", spec: abcd, text: "Option D", want: letter("D")},
		{name: "choice label lower case", spec: abcd, text: "choice = d", want: letter("D")},
		{name: "boxed", spec: abcd, text: "The ideas are the same in substance, so $\\boxed{D}$", want: letter("D")},
		{name: "letter on the last line", spec: abcd, text: "Both ideas study the same pathway with the same method.\n\nD", want: letter("D")},
		{name: "I would choose", spec: abcd, text: "Given the overlap, I would choose C because the ideas are similar.", want: letter("C")},
		{name: "label with a word after", spec: abcd, text: "My answer is A because the two ideas address unrelated problems.", want: letter("A")},
		{name: "single mention", spec: abcd, text: "These ideas are similar, so the category is clearly C here.", want: letter("C")},
		{name: "think block", spec: abcd, text: "<think>A? or B?</think>\nAnswer: B", want: letter("B")},
		{name: "not an allowed letter", spec: abcd, text: "Answer: E", errSub: "answer E is not one of A, B, C, D"},
		{name: "ambiguous", spec: abcd, text: "Either A or C could apply here.", errSub: "ambiguous answer: it points to A and C"},
		{name: "first and last line disagree", spec: abcd, text: "A. Completely different\nB. Different\nC. Similar\nD. Identical", errSub: "ambiguous answer: it points to A and D"},
		{name: "no letter", spec: abcd, text: "The two ideas are somewhat related.", errSub: "found no answer letter"},
		{name: "article is not a letter", spec: abcd, text: "A similar idea appears in both texts.", errSub: "found no answer letter"},
		{name: "refusal", spec: abcd, text: "As an AI language model, I cannot judge these ideas.", errSub: "declined", refusal: true},
	})
}
