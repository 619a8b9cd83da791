package liveideabench

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/ideaflow/ideaflow/internal/shareddata"
	"github.com/ideaflow/ideaflow/stages"
)

// testdata/flexibility.json: crafted judgements and fluency letters of one
// model, and its flexibility under each composite (see its "source").
type flexGolden struct {
	Cases []struct {
		Name       string `json:"name"`
		Mapping    string `json:"mapping"`
		Judgements []struct {
			Keyword                           string
			Originality, Feasibility, Clarity int
		} `json:"judgements"`
		Fluency []struct {
			Keyword, Letter string
		} `json:"fluency"`
		Want map[string]float64 `json:"want"`
	} `json:"cases"`
}

// Flexibility on crafted per-keyword scores, computed the paper's way and
// the two others, equals the values computed independently in Python.
func TestFlexibilityGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/flexibility.json")
	if err != nil {
		t.Fatal(err)
	}
	var g flexGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	gen := &stages.Model{Name: "m", Family: "f"}
	ideasUp := &stages.Upstream{Address: "stage.generate_from_keyword.g", Generator: gen}
	judgeUp := &stages.Upstream{Address: "stage.judge_panel.j", Generator: gen}
	fluUp := &stages.Upstream{Address: "stage.fluency.f", Generator: gen}
	for _, c := range g.Cases {
		var in []stages.In
		for _, j := range c.Judgements {
			out, _ := json.Marshal(Judgement{Judge: "j", Scores: map[string]int{"originality": j.Originality, "feasibility": j.Feasibility, "clarity": j.Clarity},
				Mean: float64(j.Originality+j.Feasibility+j.Clarity) / 3})
			in = append(in, stages.In{Dep: stages.Dep{Input: "judgements"}, Node: stages.NodeInfo{Item: j.Keyword}, From: judgeUp, Output: out})
		}
		for _, f := range c.Fluency {
			out, _ := json.Marshal(FluencyOutput{Letter: f.Letter, Judge: "j"})
			in = append(in, stages.In{Dep: stages.Dep{Input: "fluency"}, Node: stages.NodeInfo{Item: f.Keyword}, From: fluUp, Output: out})
		}
		in = append(in, stages.In{Dep: stages.Dep{Input: "ideas"}, Node: stages.NodeInfo{Item: "k1"}, From: ideasUp, Output: []byte(`{"keyword":"k1","idea":"x"}`)})
		for _, flex := range []string{FlexibilityPaper, FlexibilityPerKeyword, FlexibilityJudgedMean} {
			agg := newAggregator(aggOptions{mapping: FluencyMappings[c.Mapping], percentile: 30, flexibility: flex})
			if err := agg.addAll(in); err != nil {
				t.Fatal(err)
			}
			ms, err := agg.finish()
			if err != nil {
				t.Fatal(err)
			}
			want, ok := c.Want[flex]
			if !ok {
				t.Fatalf("%s: no %s in golden", c.Name, flex)
			}
			if got := ms[0].Scores["flexibility"]; math.Abs(got-want) > 1e-12 {
				t.Errorf("%s (%s) %s: %.15f, want %.15f", c.Name, c.Mapping, flex, got, want)
			}
		}
		// The paper's composite and ideaflow's former one differ on these
		// scores: the fix changes the number.
		if math.Abs(c.Want[FlexibilityPaper]-c.Want[FlexibilityJudgedMean]) < 0.1 {
			t.Errorf("%s: the crafted scores do not tell the paper's formula from the judged mean", c.Name)
		}
	}
}

// Each of the 20 flexibility values of the published December 2024
// leaderboard is of the form the paper's formula yields on 1-10 scores and
// the v1 fluency mapping: 3 x flexibility = (originality + feasibility, a
// whole number) + one fluency score (0, 3.333333, 6.666666 or 10). Neither
// the per-judgement mean of the two judged scores ((o + f) / 2) nor
// hash.py's four-decimal mapping yields all of them.
func TestPublishedFlexibilityIsThePapersForm(t *testing.T) {
	f, err := os.Open(shareddata.Path(t, "liveideabench/results/LiveIdeaBench-202412.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "Flexibility" {
			col = i
		}
	}
	if col < 0 || len(rows) != 21 {
		t.Fatalf("header %v, %d rows", rows[0], len(rows))
	}
	whole := func(x float64) bool { return math.Abs(x-math.Round(x)) < 1e-9 }
	fits := func(v float64, mapping map[string]float64) bool {
		for _, fl := range mapping {
			if whole(3*v - fl) {
				return true
			}
		}
		return false
	}
	hashpy, halves := 0, 0
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[col], 64)
		if err != nil {
			t.Fatal(err)
		}
		if !fits(v, FluencyMappings["v1"]) {
			t.Errorf("%s: flexibility %v: 3 x it = %v is no whole number plus a v1 fluency score", r[1], v, 3*v)
		}
		if fits(v, FluencyMappings["v1_hashpy"]) {
			hashpy++
		}
		if whole(2 * v) {
			halves++
		}
	}
	if hashpy == 20 || halves == 20 {
		t.Errorf("%d values fit hash.py's four-decimal mapping, %d are halves: the test no longer tells the formulas apart", hashpy, halves)
	}
	t.Logf("the paper's form fits 20 of 20; hash.py's four-decimal mapping %d, (o + f) / 2 %d", hashpy, halves)
}
