package scholareval

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/stats"
)

func TestParseResult(t *testing.T) {
	for _, tc := range []struct {
		text     string
		score    int
		feedback string
		err      string
	}{
		{"Feedback: The review states it. [RESULT] 4", 4, "The review states it.", ""},
		{"Feedback: close.\n[RESULT]: 5", 5, "close.", ""},
		{"Feedback: x [Result] (3)", 3, "x", ""},
		{"Feedback: x [RESULT] 2/5", 2, "x", ""},
		{"Feedback: first [RESULT] 2 then revised [RESULT] 4", 4, "first [RESULT] 2 then revised", ""},
		{"Feedback: x [RESULT] 7", 0, "", "[RESULT] 7 is not a whole number from 1 to 5"},
		{"Feedback: x [RESULT] 3.5", 0, "", "not a whole number"},
		{"Feedback: x [RESULT] 4 ... [RESULT] 9", 0, "", "[RESULT] 9 is not a whole number"},
		{"Feedback: partly.\nScore: 3", 3, "partly.", ""},
		{"The review covers it.\nRating: 5/5", 5, "The review covers it.", ""},
		{"Feedback: weak.\n\n**2**", 2, "weak.", ""},
		{"The review does not mention it.", 0, "", "found no score"},
	} {
		score, feedback, err := ParseResult(tc.text)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.text, err, tc.err)
			}
			continue
		}
		if err != nil || score != tc.score || feedback != tc.feedback {
			t.Errorf("%q: %d %q %v, want %d %q", tc.text, score, feedback, err, tc.score, tc.feedback)
		}
	}
}

func TestParseMethods(t *testing.T) {
	rec := &idea{Idea: "plan", Cutoff: "2024-01-01"}
	out := parseMethods(rec, []string{
		"Train a GNN on molecules. Query: graph neural networks molecules",
		"train a GNN on molecules!", // a duplicate in other punctuation
		"Use message passing — Queries: message passing | molecular graphs | message passing",
		"A method without a query",
		"A fourth method past the cap. Query: q",
	}, 3, 2)
	want := []Method{
		{"Train a GNN on molecules.", []string{"graph neural networks molecules"}},
		{"Use message passing", []string{"message passing", "molecular graphs"}},
		{"A method without a query", []string{"A method without a query"}},
	}
	if !reflect.DeepEqual(out.Methods, want) || out.Dropped != 2 || len(out.Queries) != 4 || out.Cutoff != "2024-01-01" {
		t.Errorf("methods %+v dropped %d queries %+v", out.Methods, out.Dropped, out.Queries)
	}
}

func TestParseDimensions(t *testing.T) {
	out := parseDimensions(&idea{Idea: "plan"}, []string{
		"Method: a new loss Queries: contrastive loss | new loss",
		"method: a second method",
		"A statement without a dimension, which mentions a ratio 3:1 late in the sentence",
	}, 10, 3)
	if !reflect.DeepEqual(out.Dimensions, []string{"Method", "General"}) {
		t.Errorf("dimensions %v", out.Dimensions)
	}
	if s := out.Statements[1]; s.Dimension != "Method" || s.Statement != "a second method" || !reflect.DeepEqual(s.Queries, []string{"a second method"}) {
		t.Errorf("statement %+v", s)
	}
	if len(out.Queries) != 4 {
		t.Errorf("queries %+v", out.Queries)
	}
}

func TestCitations(t *testing.T) {
	retrieved := map[string]bool{"a1": true, "CorpusId:7": true}
	c := checkCitations(retrieved, "as shown [a1] and [CorpusId:7; b2]", "see [b2, c3] (not [a paper])")
	want := Citations{Retrieved: 2, Cited: []string{"CorpusId:7", "a1", "b2", "c3"}, Unretrieved: []string{"b2", "c3"}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("%+v, want %+v", c, want)
	}
}

func TestSections(t *testing.T) {
	text := "Intro line.\n## Strengths\n- one [a]\n* two\n**Weaknesses:**\n1. three\n\nSuggestions\n- four\n### References\n- T"
	s := sections(text, "strengths", "weaknesses", "suggestions", "references")
	want := map[string][]string{"strengths": {"one [a]", "two"}, "weaknesses": {"three"}, "suggestions": {"four"}, "references": {"T"}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("%v", s)
	}
}

func TestLLMReviewReferences(t *testing.T) {
	r := llmReview("## Weaknesses\n- w [x1]\n## References\n1. Curriculum learning\n2. Smith, J. \"A survey of imaginary results.\" Nature, 2021.\n3. curriculum learning")
	if !reflect.DeepEqual(r.References, []string{"Curriculum learning", "A survey of imaginary results"}) {
		t.Errorf("references %q", r.References)
	}
	if !reflect.DeepEqual(r.Citations.Unretrieved, []string{"x1"}) {
		t.Errorf("citations %+v", r.Citations)
	}
}

// Sampling keeps n papers chosen by the seeded hash, in input order, and
// does not depend on the order the papers came in.
func TestSamplePapers(t *testing.T) {
	var ps []Paper
	for _, id := range strings.Fields("p1 p2 p3 p4 p5 p6 p7 p8") {
		ps = append(ps, Paper{ID: id})
	}
	a := samplePapers(ps, 3, 0)
	rev := append([]Paper(nil), ps...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	b := samplePapers(rev, 3, 0)
	ids := func(ps []Paper) map[string]bool {
		m := map[string]bool{}
		for _, p := range ps {
			m[p.ID] = true
		}
		return m
	}
	if len(a) != 3 || !reflect.DeepEqual(ids(a), ids(b)) {
		t.Errorf("sample %v vs reversed %v", a, b)
	}
	if reflect.DeepEqual(ids(a), ids(samplePapers(ps, 3, 1))) && reflect.DeepEqual(ids(a), ids(samplePapers(ps, 3, 2))) {
		t.Errorf("seeds 0, 1 and 2 sample the same papers")
	}
	if got := samplePapers(ps[:2], 3, 0); len(got) != 2 {
		t.Errorf("fewer than n: %v", got)
	}
}

// coverage_score by hand: three judgments of two ideas, one failed.
func TestCoverageScore(t *testing.T) {
	rec := func(id string, lines ...datasets.RubricLine) stages.In {
		b, _ := json.Marshal(idea{ID: id, Domain: domainOf(id), Idea: "plan", Rubric: lines})
		return stages.In{Node: stages.NodeInfo{Item: id}, Output: b}
	}
	judged := func(item string, slot, score int) stages.In {
		in := stages.In{Node: stages.NodeInfo{Item: item, Slot: slot + 1}}
		if score > 0 {
			in.Output, _ = json.Marshal(CoverageOutput{Idea: item, Index: slot, Score: score})
		}
		return in
	}
	ws := datasets.RubricLine{Statement: "a", Type: "weakness", Axis: "soundness", Severity: "major"}
	sc := datasets.RubricLine{Statement: "b", Type: "strength", Axis: "contribution", Severity: "minor"}
	records := []stages.In{rec("ai_1", ws, sc), rec("eco_3", ws)}
	ins := []stages.In{judged("ai_1", 0, 4), judged("ai_1", 1, 2), judged("eco_3", 0, 0)}
	// An item whose expansion failed (the engine's node at slot 0): all
	// of its lines are missing.
	records = append(records, rec("eco_4", ws, sc))
	ins = append(ins, stages.In{Node: stages.NodeInfo{Item: "eco_4"}})
	for name, want := range map[string]stages.Score{
		"overall":        {Value: 3, Count: 2, Missing: 3, PerItem: map[string]float64{"ai_1#0": 4, "ai_1#1": 2}},
		"domain=eco":     {Value: 0, Count: 0, Missing: 3, PerItem: map[string]float64{}},
		"axis=soundness": {Value: 4, Count: 1, Missing: 2, PerItem: map[string]float64{"ai_1#0": 4}},
		"type=strength":  {Value: 2, Count: 1, Missing: 1, PerItem: map[string]float64{"ai_1#1": 2}},
	} {
		var g group
		for _, x := range groups([]string{"ai_1", "eco_3", "eco_4"}) {
			if x.name == name {
				g = x
			}
		}
		b, err := coverageScore(g, ins, records, nil)
		if err != nil {
			t.Fatal(err)
		}
		wb, _ := json.Marshal(want)
		if string(b) != string(wb) {
			t.Errorf("%s: %s, want %s", name, b, wb)
		}
	}
	if n := len(groups([]string{"ai_1", "eco_3", "ai_2"})); n != 9 {
		t.Errorf("%d groups, want 9", n)
	}
}

// Labels stand for content: the same element keeps its label wherever it
// sits; other content, another label.
func TestLabel(t *testing.T) {
	a, b := label("m", "x", 1), label("m", "x", 1)
	if a != b || a == label("m", "x", 2) || label("m", "ab", "c") == label("m", "a", "bc") {
		t.Error("labels do not follow their parts")
	}
}

// TestClusterCI: the interval resamples ideas, not lines. Two ideas, one
// with lines {5, 5}, the other {1}: a resample holds idea A twice (mean 5),
// B twice (1) or one of each (11/3); so every bound is one of those, the
// estimate is the pooled mean 11/3, and a fixed seed gives the same interval.
func TestClusterCI(t *testing.T) {
	by := map[string][]float64{"a": {5, 5}, "b": {1}}
	opts := stats.Options{Resamples: 1000, Seed: 3, Level: 0.95}
	iv, err := clusterCI(by, opts)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(iv.Estimate-11.0/3) > 1e-12 || iv.Lower != 1 || iv.Upper != 5 || iv.Level != 0.95 {
		t.Errorf("interval %+v, want estimate 11/3 in [1, 5]", iv)
	}
	again, _ := clusterCI(by, opts)
	if again != iv {
		t.Errorf("same seed, different interval: %+v vs %+v", again, iv)
	}
}
