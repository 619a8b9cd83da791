package format

import "testing"

// TestParseFluencyLetter: answers to LiveIdeaBench's fluency question
// ("ONLY ANSWER A/B/C/D, DO NOT EXPLAIN"), as judges give them. The
// original code keeps the letters of the answer and reads the first, so
// "Answer: B" counts as A; these must read the letter chosen.
func TestParseFluencyLetter(t *testing.T) {
	abcd := Spec{Kind: Letter, Letters: "ABCD"}
	runParseCases(t, []parseCase{
		{name: "answer label", spec: abcd, text: "Answer: B", want: letter("B")},
		{name: "answer label bold letter", spec: abcd, text: "Answer: **D**", want: letter("D")},
		{name: "bold letter", spec: abcd, text: "**B**", want: letter("B")},
		{name: "parenthesised", spec: abcd, text: "(C)", want: letter("C")},
		{name: "bare A", spec: abcd, text: "A", want: letter("A")},
		{name: "A with period", spec: abcd, text: "A.", want: letter("A")},
		{name: "lower case", spec: abcd, text: "b", want: letter("B")},
		{name: "letter and option text", spec: abcd, text: "B. Different ideas but addressing similar problems.", want: letter("B")},
		{name: "A and option text", spec: abcd, text: "A. Completely different ideas addressing different problems, despite relating to the same keyword.", want: letter("A")},
		{name: "bold option", spec: abcd, text: "**C. Similar ideas addressing similar or identical problems.**", want: letter("C")},
		{name: "letter dash text", spec: abcd, text: "D - Academically identical", want: letter("D")},
		{name: "letter parenthesis text", spec: abcd, text: "B) Different ideas but addressing similar problems", want: letter("B")},
		{name: "reasoning first then label", spec: abcd,
			text: "Both ideas use graphene membranes for desalination, but the first tunes pore size while the second adds a photothermal layer. They target the same problem with different mechanisms.\n\nAnswer: B",
			want: letter("B")},
		{name: "reasoning first then bare letter", spec: abcd,
			text: "The two ideas address different problems: one is diagnostic, the other therapeutic.\n\nA",
			want: letter("A")},
		{name: "the answer is", spec: abcd, text: "The answer is **C**.", want: letter("C")},
		{name: "json", spec: abcd, text: `{"answer": "D"}`, want: letter("D")},
		{name: "think block", spec: abcd, text: "<think>They share the problem. A? No, B.</think>\n\nB", want: letter("B")},
		{name: "option word", spec: abcd, text: "Option C", want: letter("C")},
		{name: "boxed", spec: abcd, text: `\boxed{B}`, want: letter("B")},
		{name: "final answer heading", spec: abcd, text: "### Final Answer\n\n**B**", want: letter("B")},
		{name: "letter slash list is not an answer", spec: abcd, text: "A/B/C/D", errSub: "ambiguous answer"},
		{name: "E is not an option", spec: abcd, text: "Answer: E", errSub: "answer E is not one of A, B, C, D"},
	})
}
