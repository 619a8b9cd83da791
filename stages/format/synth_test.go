package format

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// synthSpecs covers every kind with the shapes stages use (IdeaBench n=3 and
// n=10 rankings with n+1 letters, LiveIdeaBench panels and fluency letters,
// ScholarEval 0-5 and -1 lower bounds) and edge cases (one letter, N=0).
var synthSpecs = []Spec{
	{Kind: Text},
	{Kind: Ideas, N: 0},
	{Kind: Ideas, N: 1},
	{Kind: Ideas, N: 3},
	{Kind: Ideas, N: 10},
	{Kind: Ranking, Letters: "A"},
	{Kind: Ranking, Letters: "ABCD"},
	{Kind: Ranking, Letters: "ABCDEFGHIJK"},
	{Kind: Fields, Fields: []string{"originality", "feasibility"}, Min: 1, Max: 10},
	{Kind: Fields, Fields: []string{"originality", "feasibility", "clarity_score"}, Min: 1, Max: 10},
	{Kind: Fields, Fields: []string{"relevance"}, Min: 0, Max: 5},
	{Kind: Fields, Fields: []string{"comparison"}, Min: -1},
	{Kind: Letter, Letters: "ABCD"},
	{Kind: Letter, Letters: "AB"},
	{Kind: Rating, Min: 0, Max: 10},
	{Kind: Rating, Min: 1, Max: 5},
	{Kind: Rating},
}

var synthTopics = []string{"", "sepsis", "gut microbiome parkinson", "solid state battery electrolytes interface", "**bold** [x](y) ```"}

// TestSynthesizeRoundTrip is the property the mock provider relies on: every
// synthetic answer parses, and parses to exactly the answer it was made from.
func TestSynthesizeRoundTrip(t *testing.T) {
	for _, spec := range synthSpecs {
		for seed := int64(0); seed < 300; seed++ {
			topic := synthTopics[seed%int64(len(synthTopics))]
			text, want := synthesize(spec, rand.New(rand.NewSource(seed)), topic)
			got, err := Parse(spec, text)
			if err != nil {
				t.Fatalf("spec %+v seed %d: Parse failed: %v\n--- answer ---\n%s", spec, seed, err, text)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("spec %+v seed %d:\n got: %#v\nwant: %#v\n--- answer ---\n%s", spec, seed, got, want, text)
			}
			if again := Synthesize(spec, rand.New(rand.NewSource(seed)), topic); again != text {
				t.Fatalf("spec %+v seed %d: Synthesize is not deterministic", spec, seed)
			}
		}
	}
}

func TestSynthesizedIdeasLength(t *testing.T) {
	for seed := int64(0); seed < 500; seed++ {
		topic := synthTopics[seed%4]
		_, want := synthesize(Spec{Kind: Ideas, N: 3}, rand.New(rand.NewSource(seed)), topic)
		for _, idea := range want.Ideas {
			n := len(strings.Fields(idea))
			if n < 60 || n > 100 {
				t.Fatalf("seed %d: idea has %d words, want 60-100: %q", seed, n, idea)
			}
			if topic != "" && !strings.Contains(idea, topic) {
				t.Fatalf("seed %d: idea does not mention %q: %q", seed, topic, idea)
			}
		}
	}
}

// TestSynthesizeVariesStyle checks that seeds reach every surface style, so a
// mock run exercises every parser path rather than one format.
func TestSynthesizeVariesStyle(t *testing.T) {
	styles := map[Kind][]string{
		Ideas:   {"Idea 1: ", "**Idea 1: ", "### Idea 1: ", "1) ", "```json\n[", "1. **", `{"ideas":`, "- **"},
		Ranking: {"\n\nRanking: ", "**Final ranking:**", "1. **Idea ", `{"ranking": [`, "Ranking: [", "At first glance", "ranking: "},
		Fields:  {"```json\n{\n", "// ", `"scores": {`, "/10\n", ".0", "{'"},
		Letter:  {"Answer: ", "**", `{"answer": `, "It is not ", "The answer is (", "(", ". The two ideas"},
		Rating:  {"Rating: ", "**Rating:** ", `{"explanation"`, "Explanation: ", "I would rate this ", ".0\n"},
	}
	specs := map[Kind]Spec{
		Ideas: {Kind: Ideas, N: 3}, Ranking: {Kind: Ranking, Letters: "ABCD"},
		Fields: {Kind: Fields, Fields: []string{"originality", "feasibility"}, Min: 1, Max: 10},
		Letter: {Kind: Letter, Letters: "ABCD"}, Rating: {Kind: Rating, Min: 1, Max: 10},
	}
	for kind, markers := range styles {
		seen := map[string]bool{}
		for seed := int64(0); seed < 200; seed++ {
			text := Synthesize(specs[kind], rand.New(rand.NewSource(seed)), "sepsis")
			for _, m := range markers {
				if strings.Contains(text, m) {
					seen[m] = true
				}
			}
		}
		for _, m := range markers {
			if !seen[m] {
				t.Errorf("%s: no synthetic answer in 200 seeds contains %q", kind, m)
			}
		}
	}
}
