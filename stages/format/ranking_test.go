package format

import "testing"

func ranking(letters ...string) *Answer { return &Answer{Ranking: letters} }

func TestParseRanking(t *testing.T) {
	abcd := Spec{Kind: Ranking, Letters: "ABCD"}
	badc := ranking("B", "A", "D", "C")
	runParseCases(t, []parseCase{
		{name: "arrows", spec: abcd, text: "B > A > D > C", want: badc},
		{name: "commas", spec: abcd, text: "B, A, D, C", want: badc},
		{name: "numbered lines", spec: abcd, text: "1. B\n2. A\n3. D\n4. C", want: badc},
		{name: "label with brackets", spec: abcd, text: "Ranking: [B, A, D, C]", want: badc},
		{name: "json in fence", spec: abcd, text: "```json\n{\"ranking\": [\"B\", \"A\", \"D\", \"C\"]}\n```", want: badc},
		{name: "json order string", spec: abcd, text: "Result: {\"order\": \"B > A > D > C\", \"confidence\": 0.7}", want: badc},
		{name: "json objects", spec: abcd, text: `[{"idea": "B", "why": "novel"}, {"idea": "A"}, {"idea": "D"}, {"idea": "C"}]`, want: badc},
		{name: "bold numbered", spec: abcd, text: "1. **B**\n2. **A**\n3. **D**\n4. **C**", want: badc},
		{name: "parenthesised letters", spec: abcd, text: "(B) > (A) > (D) > (C)", want: badc},
		{name: "Idea X words with unicode arrows", spec: abcd, text: "Idea B \u2192 Idea A \u2192 Idea D \u2192 Idea C", want: badc},
		{name: "lower case", spec: abcd, text: "ranking: b > a > d > c", want: badc},
		{name: "rationales mention other letters", spec: abcd,
			text: "1. B \u2013 clearer than A and D, with a concrete test.\n2. A: better than D because it has data.\n3. D (beats C on feasibility)\n4. C - weakest, behind A and B.",
			want: badc},
		{name: "final ranking overrides earlier prose", spec: abcd,
			text: "At first I leaned towards A > B > C > D, since A is the most detailed.\nOn reflection, B is more novel.\n\nFinal ranking: B > A > D > C",
			want: badc},
		{name: "final label wins over a later plain label", spec: abcd,
			text: "**Final Ranking:** B > A > D > C\n\nFor comparison, the ranking by length would be: A > B > C > D",
			want: badc},
		{name: "label then list below", spec: abcd,
			text: "After comparing the ideas, here is my ranking from best to worst:\n\n1. **Idea B** - most novel\n2. **Idea A** - solid\n3. **Idea D**\n4. **Idea C**",
			want: badc},
		{name: "analysis list then final list", spec: abcd,
			text: "1. Idea A: a careful extension of known work.\n2. Idea B: a bold new method.\n3. Idea C: incremental.\n4. Idea D: feasible but narrow.\n\nRanked:\n1. B\n2. A\n3. D\n4. C",
			want: badc},
		{name: "rationale line starting with a number", spec: abcd,
			text: "1. B\n10 participants would suffice to test it.\n2. A\n3. D\n4. C", want: badc},
		{name: "Rank N labels", spec: abcd, text: "Rank 1: Idea B\nRank 2: Idea A\nRank 3: Idea D\nRank 4: Idea C", want: badc},
		{name: "ordinals", spec: abcd, text: "1st: B\n2nd: A\n3rd: D\n4th: C", want: badc},
		{name: "then and finally", spec: abcd, text: "My ranking (best to worst): B, then A, then D, and finally C.", want: badc},
		{name: "rationale with commas in parentheses", spec: abcd, text: "Ranking: B (novel, feasible), A, D, C (vague, costly)", want: badc},
		{name: "one letter per line", spec: abcd, text: "Best to worst:\nB\nA\nD\nC", want: badc},
		{name: "spaces only", spec: abcd, text: "Ranking: B A D C", want: badc},
		{name: "inline numbering after label", spec: abcd, text: "Final ranking: 1. B 2. A 3. D 4. C", want: badc},
		{name: "think block reasoning ignored", spec: abcd, text: "<think>Maybe A > B > C > D.</think>\nRanking: B > A > D > C", want: badc},
		{name: "eleven letters including I", spec: Spec{Kind: Ranking, Letters: "ABCDEFGHIJK"},
			text: "Ranking: K > I > A > B > C > D > E > F > G > H > J",
			want: ranking("K", "I", "A", "B", "C", "D", "E", "F", "G", "H", "J")},
		{name: "missing letter", spec: abcd, text: "Ranking: B > A > D", errSub: "ranking B > A > D is invalid: missing C"},
		{name: "duplicate letter", spec: abcd, text: "Ranking: B > A > B > C", errSub: "repeated B; missing D"},
		{name: "duplicate letter beyond a complete ranking", spec: abcd, text: "Ranking: B > A > D > C > A",
			errSub: "ranking B > A > D > C > A is invalid: repeated A (use each of A, B, C, D exactly once)"},
		{name: "unknown letter", spec: abcd, text: "Ranking: B > A > E > C > D", errSub: "unknown E"},
		{name: "incomplete numbered list", spec: abcd, text: "1. B\n2. A\n3. C", errSub: "missing D"},
		{name: "analysis in presentation order is not a ranking", spec: abcd,
			text:   "**Idea A**: a careful extension of known work on the same pathway.\n**Idea B**: a bold new method that nobody has tried before.\n**Idea C**: an incremental change to an existing protocol.\n**Idea D**: feasible, but narrow in what it would show.\n\nOverall, B is the most novel, then A.",
			errSub: "found no ranking"},
		{name: "no ranking", spec: abcd, text: "All four ideas have merit and it is hard to choose.", errSub: "found no ranking"},
		{name: "refusal", spec: abcd, text: "I'm sorry, but I can't rank these ideas.", errSub: "declined", refusal: true},
	})
}
