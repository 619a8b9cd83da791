package format

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSpecs are the specs every fuzz input is parsed against.
var fuzzSpecs = []Spec{
	{Kind: Text},
	{Kind: Ideas, N: 0},
	{Kind: Ideas, N: 1},
	{Kind: Ideas, N: 3},
	{Kind: Ranking, Letters: "ABCD"},
	{Kind: Ranking, Letters: "ABCDEFGHIJK"},
	{Kind: Fields, Fields: []string{"originality", "feasibility"}, Min: 1, Max: 10},
	{Kind: Letter, Letters: "ABCD"},
	{Kind: Rating, Min: 0, Max: 10},
}

// FuzzParse checks that Parse never panics and that whatever it accepts
// satisfies the spec. Its seed corpus (every synthetic style, the golden
// answers and some malformed input) runs with plain `go test`.
func FuzzParse(f *testing.F) {
	for _, spec := range synthSpecs {
		for seed := int64(0); seed < 8; seed++ {
			f.Add(Synthesize(spec, rand.New(rand.NewSource(seed)), "sepsis"))
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "ideas", "*.txt"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{"", "```", "```json\n{", "{\"a\": [", "<think>", "</think>", "1.\n2.\n3.", "Ranking:", "Answer:",
		"Rating: 99999999999999999999", "\\boxed{", "'\\u", "\"\\ud800\\u", strings.Repeat("[", 200), strings.Repeat("1. A\n", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, spec := range fuzzSpecs {
			a, err := Parse(spec, text)
			if err != nil {
				continue
			}
			checkInvariants(t, spec, a)
		}
	})
}

func checkInvariants(t *testing.T, spec Spec, a *Answer) {
	t.Helper()
	switch spec.Kind {
	case Text:
		if a.Text == "" || a.Text != strings.TrimSpace(a.Text) {
			t.Fatalf("text answer %q is empty or untrimmed", a.Text)
		}
	case Ideas:
		if (spec.N > 0 && len(a.Ideas) != spec.N) || len(a.Ideas) == 0 {
			t.Fatalf("got %d ideas for n=%d", len(a.Ideas), spec.N)
		}
		for _, idea := range a.Ideas {
			if idea == "" || idea != strings.TrimSpace(idea) {
				t.Fatalf("empty or untrimmed idea in %q", a.Ideas)
			}
		}
	case Ranking:
		if len(a.Ranking) != len(spec.Letters) {
			t.Fatalf("ranking %v has the wrong length for %s", a.Ranking, spec.Letters)
		}
		seen := map[string]bool{}
		for _, l := range a.Ranking {
			if len(l) != 1 || seen[l] || !strings.Contains(spec.Letters, l) {
				t.Fatalf("ranking %v is not a permutation of %s", a.Ranking, spec.Letters)
			}
			seen[l] = true
		}
	case Fields:
		if len(a.Fields) != len(spec.Fields) {
			t.Fatalf("fields %v do not match %v", a.Fields, spec.Fields)
		}
		for _, f := range spec.Fields {
			if v, ok := a.Fields[f]; !ok || v < spec.Min || v > spec.Max {
				t.Fatalf("field %s = %d (present %v) outside %d..%d", f, v, ok, spec.Min, spec.Max)
			}
		}
	case Letter:
		if len(a.Letter) != 1 || !strings.Contains(spec.Letters, a.Letter) {
			t.Fatalf("letter %q not in %s", a.Letter, spec.Letters)
		}
	case Rating:
		if a.Rating < spec.Min || a.Rating > spec.Max {
			t.Fatalf("rating %d outside %d..%d", a.Rating, spec.Min, spec.Max)
		}
	}
}
