package format

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParse measures one parse of a realistic answer per kind.
func BenchmarkParse(b *testing.B) {
	longIdeas, err := os.ReadFile(filepath.Join("testdata", "ideas", "gpt4o_bold_labeled.txt"))
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		spec Spec
		text string
	}{
		{"text", Spec{Kind: Text}, "<think>short plan</think>\nSelf-healing polymer binders for silicon anodes, tested in half cells over 500 cycles."},
		{"ideas", Spec{Kind: Ideas, N: 3}, string(longIdeas)},
		{"ranking", Spec{Kind: Ranking, Letters: "ABCD"},
			"Let me compare the four ideas on novelty.\n\n1. **Idea B** \u2013 clearer than A and D, with a concrete test.\n2. **Idea A**: better than D because it has data.\n3. **Idea D** (beats C on feasibility)\n4. **Idea C** - weakest, behind A and B.\n\nFinal ranking: B > A > D > C"},
		{"fields", Spec{Kind: Fields, Fields: []string{"originality", "feasibility", "clarity"}, Min: 1, Max: 10},
			"Here is my assessment of the idea.\n\n```json\n{\n  // a new angle on an old problem\n  \"originality\": 7,\n  \"feasibility\": \"4/10\",\n  \"clarity\": 8.0,\n}\n```\nThe main risk is cost."},
		{"letter", Spec{Kind: Letter, Letters: "ABCD"},
			"Idea 1 and idea 2 both target sepsis. It is not A, since the problems match, and not D, since the methods differ.\n\nAnswer: C"},
		{"rating", Spec{Kind: Rating, Min: 0, Max: 10},
			"**Rating:** 7/10\n\n**Explanation:** Both texts target the same enzyme and propose a similar inhibitor screen, but the abstract adds an in-vivo validation the idea lacks."},
	}
	for _, tc := range cases {
		if _, err := Parse(tc.spec, tc.text); err != nil {
			b.Fatalf("%s: benchmark input does not parse: %v", tc.name, err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(tc.spec, tc.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSynthesize(b *testing.B) {
	spec := Spec{Kind: Ideas, N: 3}
	r := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	for b.Loop() {
		Synthesize(spec, r, "gut microbiome parkinson")
	}
}
