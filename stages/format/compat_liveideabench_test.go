package format

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// compatGolden is testdata/compat_liveideabench.json: answers and what the
// authors' own parsers read from them (see its "source").
type compatGolden struct {
	Source string `json:"source"`
	Scores []struct {
		Name   string      `json:"name"`
		Answer string      `json:"answer"`
		V1     goldenScore `json:"v1"`
		V2     goldenScore `json:"v2"`
	} `json:"scores"`
	Letters []struct {
		Name    string `json:"name"`
		Answer  string `json:"answer"`
		Authors struct {
			Valid  bool   `json:"valid"`
			Letter string `json:"letter"`
		} `json:"authors"`
	} `json:"letters"`
}

type goldenScore struct {
	Valid  bool                       `json:"valid"`
	Scores map[string]json.RawMessage `json:"scores"`
}

func (g goldenScore) value(t *testing.T, k string) float64 {
	t.Helper()
	raw, ok := g.Scores[k]
	if !ok {
		t.Fatalf("golden has no %s", k)
	}
	if string(raw) == `"NaN"` {
		return math.NaN()
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func loadCompatGolden(t *testing.T) *compatGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/compat_liveideabench.json")
	if err != nil {
		t.Fatal(err)
	}
	var g compatGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func sameScores(t *testing.T, name string, got CompatScores, want goldenScore, keys []string) {
	t.Helper()
	if got.Valid != want.Valid {
		t.Errorf("%s: valid %v (%s), want %v", name, got.Valid, got.Reason, want.Valid)
		return
	}
	if !got.Valid {
		if got.Reason == "" || got.Scores != nil {
			t.Errorf("%s: an invalid read must say why and hold no scores: %+v", name, got)
		}
		return
	}
	if len(got.Scores) != len(keys) || got.Reason != "" {
		t.Errorf("%s: %+v, want exactly %v", name, got, keys)
	}
	for _, k := range keys {
		w := want.value(t, k)
		g, ok := got.Scores[k]
		if !ok || (g != w && !(math.IsNaN(g) && math.IsNaN(w))) {
			t.Errorf("%s: %s = %v (present %v), want %v", name, k, g, ok, w)
		}
	}
}

// Every answer shape of the golden file reads as the authors' v1 and v2
// score parsers read it.
func TestLiveIdeaBenchScoresCompat(t *testing.T) {
	g := loadCompatGolden(t)
	if len(g.Scores) < 10 {
		t.Fatalf("%d score shapes, want at least 10", len(g.Scores))
	}
	var v1Valid, v2Valid int
	for _, c := range g.Scores {
		sameScores(t, "v1 "+c.Name, LiveIdeaBenchScoresV1(c.Answer, []string{"originality", "feasibility"}), c.V1, []string{"originality", "feasibility"})
		sameScores(t, "v2 "+c.Name, LiveIdeaBenchScoresV2(c.Answer), c.V2, []string{"originality", "feasibility", "clarity"})
		if c.V1.Valid {
			v1Valid++
		}
		if c.V2.Valid {
			v2Valid++
		}
	}
	// Both outcomes are covered for both parsers.
	if v1Valid < 3 || v1Valid == len(g.Scores) || v2Valid < 3 || v2Valid == len(g.Scores) {
		t.Errorf("golden covers %d valid v1 reads and %d valid v2 reads of %d", v1Valid, v2Valid, len(g.Scores))
	}
}

// Every fluency answer of the golden file reads as hash.py reads it.
func TestLiveIdeaBenchLetterCompat(t *testing.T) {
	g := loadCompatGolden(t)
	if len(g.Letters) < 10 {
		t.Fatalf("%d letter shapes, want at least 10", len(g.Letters))
	}
	for _, c := range g.Letters {
		got := LiveIdeaBenchLetter(c.Answer)
		if got.Valid != c.Authors.Valid || got.Letter != c.Authors.Letter || (got.Valid == (got.Reason != "")) {
			t.Errorf("%s (%q): %+v, want %+v", c.Name, c.Answer, got, c.Authors)
		}
	}
}

// The strict parse and the authors' read of the same answer, side by side
// where they differ: the compatibility parse is the authors' read, never
// the strict one.
func TestLiveIdeaBenchCompatDiffersFromStrict(t *testing.T) {
	letters := Spec{Kind: Letter, Letters: "ABCD"}
	for _, c := range []struct{ answer, strict, authors string }{
		{"Answer: C", "C", "A"},
		{"Based on the descriptions, C", "C", "B"},
		{"**C**", "C", "C"},
	} {
		a, err := Parse(letters, c.answer)
		if err != nil || a.Letter != c.strict {
			t.Errorf("strict %q: %+v %v, want %s", c.answer, a, err, c.strict)
		}
		if got := LiveIdeaBenchLetter(c.answer); got.Letter != c.authors {
			t.Errorf("authors %q: %+v, want %s", c.answer, got, c.authors)
		}
	}
	scores := Spec{Kind: Scores, Fields: []string{"originality", "feasibility", "clarity"}, Min: 1, Max: 10}
	prose := "Originality: 8/10\nFeasibility: 7/10\nClarity: 9/10"
	if a, err := Parse(scores, prose); err != nil || a.Fields["originality"] != 8 || a.Fields["clarity"] != 9 {
		t.Errorf("strict %q: %+v %v", prose, a, err)
	}
	if got := LiveIdeaBenchScoresV2(prose); got.Valid {
		t.Errorf("authors %q: %+v, want no read (method 4 is case-sensitive)", prose, got)
	}
}

// extract_final_idea's cuts, as its Python gives them.
func TestLiveIdeaBenchFinalIdea(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Let me think.\n\n**Final Idea:** A soil sensor network.", "A soil sensor network."},
		{"**Final Idea**: Graphene filters.", "Graphene filters."},
		{"Reasoning... **final idea:** first. Then **Final Idea:** second.", "first. Then **Final Idea:** second."}, // the first occurrence
		{"My final idea should be bold. Final Idea: X", "should be bold. Final Idea: X"},                            // bare words cut
		{"Final Idea: X", ": X"}, // the colon stays
		{"  No marker at all.  ", "No marker at all."},
		{"**FINAL IDEA:**   Élan vital.\n", "Élan vital."},
		{"final idea", ""},
	} {
		if got := LiveIdeaBenchFinalIdea(c.in); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}
