package liveideabench

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

// rawBoard is hand-written raw data for three models. Model m1 (the one
// worked by hand): keywords k1 (Physics) and k2 (Biology), two ideas each;
// k1/1 was refused once and answered, k2/1 dropped as too long. Its eight
// judgements of o(riginality), f(easibility), c(larity):
//
//	k1/0: (7,5,6) mean 6     (8,6,7) mean 7     (6,4,5) mean 5
//	k1/1: (9,3,7) mean 19/3  (5,5,5) mean 5     (7,6,8) mean 7
//	k2/0: (4,8,7) mean 19/3  (6,7,8) mean 7     one judgement failed
//
//	originality = (7+8+6+9+5+7+4+6)/8 = 6.5
//	feasibility = (5+6+4+3+5+6+8+7)/8 = 5.5
//	clarity     = (6+7+5+7+5+8+7+8)/8 = 6.625
//	fluency     = the k1 pair answered B = 7 (v2) or 6.666666 (v1); the k2 pair is dropped
//	flexibility = "paper": the 30th percentile of (o + f + fluency of k1) / 3 over k1's six
//	              judgements (k2 has no fluency): o + f = 10,10,12,12,13,14, h = 0.3 x 5 = 1.5,
//	              so (11 + fluency) / 3 = 6 (v2)
//	              "judged_mean": the 30th percentile of the per-judgement means
//	              5,5,6,19/3,19/3,7,7,7: h = 0.3 x 7 = 2.1, 6 + 0.1 x (19/3 - 6) = 181/30
//	average     = (fluency + 5.5 + 6.5 + flexibility) / 4: (7 + 5.5 + 6.5 + 6) / 4 = 6.25 (v2, paper)
//
// Per domain, Physics has k1's six judgements (originality 42/6 = 7) and
// the pair; Biology k2's two (originality 5). m2 has one judgement (9,9,9)
// and a pair A; m3 one (10,1,4) and a pair D.
type rawBoard struct {
	ideas, judgements, fluency []stages.In
	ups                        map[string][3]*stages.Upstream
}

func newRawBoard() *rawBoard {
	r := &rawBoard{ups: map[string][3]*stages.Upstream{}}
	for _, m := range []string{"m1", "m2", "m3"} {
		gen := &stages.Model{Name: m, Family: "f-" + m}
		r.ups[m] = [3]*stages.Upstream{
			{Address: `stage.generate_from_keyword.g["` + m + `"]`, Key: m, Generator: gen},
			{Address: `stage.judge_panel.j["` + m + `"]`, Key: m, Generator: gen},
			{Address: `stage.fluency.f["` + m + `"]`, Key: m, Generator: gen},
		}
	}
	idea := func(m, item string, slot int, v Idea) {
		b, _ := json.Marshal(v)
		r.ideas = append(r.ideas, stages.In{Dep: stages.Dep{Input: "ideas"}, Node: stages.NodeInfo{Item: item, Slot: slot}, From: r.ups[m][0], Output: b})
	}
	judged := func(m, item string, o, f, c int) {
		b, _ := json.Marshal(Judgement{Judge: "j", Scores: map[string]int{"originality": o, "feasibility": f, "clarity": c}, Mean: float64(o+f+c) / 3})
		r.judgements = append(r.judgements, stages.In{Dep: stages.Dep{Input: "judgements"}, Node: stages.NodeInfo{Item: item}, From: r.ups[m][1], Output: b})
	}
	raw := func(m, input, item string, out []byte) {
		x := stages.In{Dep: stages.Dep{Input: input}, Node: stages.NodeInfo{Item: item}, Output: out}
		if input == "judgements" {
			x.From = r.ups[m][1]
			r.judgements = append(r.judgements, x)
		} else {
			x.From = r.ups[m][2]
			r.fluency = append(r.fluency, x)
		}
	}
	idea("m1", "k1", 0, Idea{Keyword: "graphene", Domain: "Physics", Idea: "a"})
	idea("m1", "k1", 1, Idea{Keyword: "graphene", Domain: "Physics", Idea: "b", Refused: true, RefusalAnswer: "I cannot"})
	idea("m1", "k2", 0, Idea{Keyword: "ecotoxicology", Domain: "Biology", Idea: "c"})
	idea("m1", "k2", 1, Idea{Keyword: "ecotoxicology", Domain: "Biology", Dropped: true, Reason: "too_long"})
	judged("m1", "k1", 7, 5, 6)
	judged("m1", "k1", 8, 6, 7)
	judged("m1", "k1", 6, 4, 5)
	judged("m1", "k1", 9, 3, 7)
	judged("m1", "k1", 5, 5, 5)
	judged("m1", "k1", 7, 6, 8)
	judged("m1", "k2", 4, 8, 7)
	judged("m1", "k2", 6, 7, 8)
	raw("m1", "judgements", "k2", nil)
	for i := 0; i < 3; i++ {
		raw("m1", "judgements", "k2", droppedOutput)
	}
	raw("m1", "fluency", "k1", []byte(`{"letter":"B","judge":"j"}`))
	raw("m1", "fluency", "k2", droppedOutput)

	idea("m2", "k1", 0, Idea{Keyword: "graphene", Domain: "Physics", Idea: "d"})
	judged("m2", "k1", 9, 9, 9)
	raw("m2", "fluency", "k1", []byte(`{"letter":"A","judge":"j"}`))
	idea("m3", "k1", 0, Idea{Keyword: "graphene", Domain: "Physics", Idea: "e"})
	judged("m3", "k1", 10, 1, 4)
	raw("m3", "fluency", "k1", []byte(`{"letter":"D","judge":"j"}`))
	return r
}

func (r *rawBoard) all() []stages.In {
	return append(append(append([]stages.In{}, r.ideas...), r.judgements...), r.fluency...)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

func TestAggregateByHand(t *testing.T) {
	r := newRawBoard()
	for _, tc := range []struct {
		mapping, flexibility  string
		fluency, flex, m2, m3 float64 // m1's fluency and flexibility, m2's and m3's flexibility
		m2Fluency, m3Fluency  float64
	}{
		{"v2", FlexibilityPaper, 7, 6, 28.0 / 3, 12.0 / 3, 10, 1},
		{"v1", FlexibilityPaper, 6.666666, (11 + 6.666666) / 3, 28.0 / 3, 11.0 / 3, 10, 0},
		{"v2", FlexibilityJudgedMean, 7, 181.0 / 30, 9, 5, 10, 1},
		{"v1", FlexibilityJudgedMean, 6.666666, 181.0 / 30, 9, 5, 10, 0},
		// per keyword: k1's means o 7, f 29/6, fluency; k2 has no fluency.
		{"v2", FlexibilityPerKeyword, 7, (7 + 29.0/6 + 7) / 3, 28.0 / 3, 12.0 / 3, 10, 1},
	} {
		name := tc.mapping + " " + tc.flexibility
		g := newAggregator(aggOptions{mapping: FluencyMappings[tc.mapping], percentile: 30, flexibility: tc.flexibility})
		if err := g.addAll(r.all()); err != nil {
			t.Fatal(err)
		}
		ms, err := g.finish()
		if err != nil {
			t.Fatal(err)
		}
		m1 := ms[0]
		want := map[string]float64{"originality": 6.5, "feasibility": 5.5, "clarity": 6.625, "flexibility": tc.flex, "fluency": tc.fluency,
			"average": (tc.fluency + 5.5 + 6.5 + tc.flex) / 4}
		for k, v := range want {
			if !near(m1.Scores[k], v) {
				t.Errorf("%s m1 %s = %.15f, want %.15f", name, k, m1.Scores[k], v)
			}
		}
		if len(m1.Scores) != len(want) {
			t.Errorf("m1 scores %v", m1.Scores)
		}
		if !near(ms[1].Scores["flexibility"], tc.m2) || !near(ms[2].Scores["flexibility"], tc.m3) ||
			!near(ms[1].Scores["average"], (tc.m2Fluency+9+9+tc.m2)/4) || !near(ms[2].Scores["average"], (tc.m3Fluency+1+10+tc.m3)/4) {
			t.Errorf("%s m2 %v m3 %v", name, ms[1].Scores, ms[2].Scores)
		}
		counts := [...]int{m1.Ideas, m1.Refusals, m1.Dropped, m1.FailedIdeas, m1.Judgements, m1.Missing, m1.Pairs, m1.MissingPair}
		if counts != [...]int{4, 1, 1, 0, 8, 1, 1, 0} || m1.DropReasons["too_long"] != 1 {
			t.Errorf("m1 counts %v, drop reasons %v", counts, m1.DropReasons)
		}
		if !near(m1.Domains["Physics"]["originality"], 7) || !near(m1.Domains["Biology"]["originality"], 5) ||
			!near(m1.Domains["Physics"]["fluency"], tc.fluency) || !near(m1.Domains["Biology"]["mean"], (19.0/3+7)/2) {
			t.Errorf("m1 domains %v", m1.Domains)
		}
		// Ranks by average: m2, m1, m3. Pareto: m2 dominates m1; m3 has the
		// best originality.
		if ms[1].Rank != 1 || m1.Rank != 2 || ms[2].Rank != 3 {
			t.Errorf("ranks m1 %d m2 %d m3 %d", m1.Rank, ms[1].Rank, ms[2].Rank)
		}
		if m1.Pareto || !ms[1].Pareto || !ms[2].Pareto {
			t.Errorf("pareto m1 %v m2 %v m3 %v", m1.Pareto, ms[1].Pareto, ms[2].Pareto)
		}
	}
}

// liveideabench_score through its Layout: one model's inputs, the metric
// as Value, every metric and count in Extra.
func TestScoreStage(t *testing.T) {
	r := newRawBoard()
	ups := r.ups["m1"]
	var in []stages.In
	for _, x := range r.all() {
		if x.From == ups[0] || x.From == ups[1] || x.From == ups[2] {
			in = append(in, x)
		}
	}
	nodes, err := scoreType{}.Layout(&stages.Instance{Address: `stage.liveideabench_score.o["m1"]`,
		Params: stages.WithDefaults(scoreType{}, stages.Params{"ideas": ups[0], "judgements": ups[1], "fluency": ups[2], "metric": "originality"})})
	if err != nil {
		t.Fatal(err)
	}
	w, err := nodes[0].Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.Compute()
	if err != nil {
		t.Fatal(err)
	}
	var s stages.Score
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Value != 6.5 || s.Count != 8 || s.Missing != 1 || s.Extra["refusals"] != 1 || s.Extra["dropped"] != 1 ||
		s.Extra["fluency"] != 7 || s.PerItem["k1"] != 7 || s.PerItem["k2"] != 5 {
		t.Errorf("score %s", b)
	}
	// Inputs of two models are refused: the column is for one model.
	w, _ = nodes[0].Prepare(r.all())
	if _, err := w.Compute(); err == nil || !strings.Contains(err.Error(), "come from 3 models") {
		t.Errorf("three models: %v", err)
	}
	_, err = scoreType{}.Layout(&stages.Instance{Params: stages.WithDefaults(scoreType{}, stages.Params{"ideas": ups[0], "judgements": ups[1], "mapping": "v3"})})
	if pe, ok := err.(*stages.ParamError); !ok || pe.Param != "mapping" {
		t.Errorf("mapping v3: %v", err)
	}
}

// The leaderboard stage writes its files, with a published board beside.
func TestLeaderboardFiles(t *testing.T) {
	r := newRawBoard()
	cat := func(k int) *stages.Upstream {
		u := &stages.Upstream{Address: []string{"ideas", "judgements", "fluency"}[k]}
		for _, m := range []string{"m1", "m2", "m3"} {
			u.Nodes = append(u.Nodes, r.ups[m][k].Nodes...)
		}
		return u
	}
	pub := &stages.Upstream{Address: "dataset.published", Type: "dataset", Nodes: []stages.NodeInfo{{Item: "vendor/m1"}, {Item: "m2"}}}
	inst := &stages.Instance{Address: "stage.leaderboard.main", Params: stages.WithDefaults(leaderboardType{}, stages.Params{
		"ideas": []*stages.Upstream{cat(0)}, "judgements": []*stages.Upstream{cat(1)}, "fluency": []*stages.Upstream{cat(2)}, "published": pub})}
	nodes, err := leaderboardType{}.Layout(inst)
	if err != nil {
		t.Fatal(err)
	}
	row := func(model, short string, rank int, avg float64) stages.In {
		b, _ := json.Marshal(datasets.LeaderboardRow{Rank: rank, Model: model, ModelShort: short, Average: avg, Originality: avg, Feasibility: avg, Fluency: avg, Flexibility: avg})
		return stages.In{Dep: stages.Dep{Input: "published"}, Node: stages.NodeInfo{Item: model}, Output: b}
	}
	in := append(r.all(), row("vendor/m1", "m1", 1, 8), row("m2", "m2", 2, 7))
	// The judgements' records say the mock answered them: the board is synthetic.
	in[len(r.ideas)].Provenance = &stages.Provenance{Synthetic: true}
	w, err := nodes[0].Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.Compute()
	if err != nil {
		t.Fatal(err)
	}
	var f stages.Files
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var lb Leaderboard
	if err := json.Unmarshal([]byte(f.Files["leaderboard.main.json"]), &lb); err != nil {
		t.Fatal(err)
	}
	if strings.Join(lb.Pareto, ",") != "m3,m2" || lb.Models[0].Model != "m2" || strings.Join(lb.Domains, ",") != "Biology,Physics" {
		t.Errorf("leaderboard %s", f.Files["leaderboard.main.json"])
	}
	// m1 matched by short name, m2 by name, m3 unmatched; the two disagree
	// on their order, so tau-b is -1.
	p := lb.Published
	if p == nil || len(p.Rows) != 2 || p.TauB["average"] != -1 || strings.Join(p.Unmatched, ",") != "m3" {
		t.Fatalf("published %+v", p)
	}
	md := f.Files["leaderboard.main.md"]
	for _, s := range []string{"SYNTHETIC RESULTS", "| 1 | m2 |", "| 2 | m1 | 6.500 [5.00, 7.00] | 5.500 [4.83, 7.50] | 6.625 [6.33, 7.50] | 7.000 | 6.000 | 6.250 |", "| 1 | m2 | 9.000 | 9.000 |",
		"In brackets: 95% bootstrap intervals [low, high] over the model's keywords (1000 resamples of its keywords", "Kendall's tau-b, run vs published, over the 2 models both have: average -1.000;", "Not on the published leaderboard: m3."} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	if !strings.HasPrefix(f.Files["leaderboard.main.csv"], "rank,model,family,originality,originality_ci_low,originality_ci_high,feasibility,feasibility_ci_low,feasibility_ci_high,clarity,clarity_ci_low,clarity_ci_high,fluency,fluency_ci_low,fluency_ci_high,flexibility,flexibility_ci_low,flexibility_ci_high,average,average_ci_low,average_ci_high,pareto,") ||
		!strings.Contains(f.Files["leaderboard.main.csv"], "\n2,m1,f-m1,6.5,5,7,5.5,4.833333333333333,7.5,6.625,6.333333333333333,7.5,7,,,6,,,6.25,,,false,") {
		t.Errorf("csv:\n%s", f.Files["leaderboard.main.csv"])
	}
	// m1's two keywords bring 6 and 2 judgements (originality sums 42 and
	// 10): a resample draws k1 twice (7), both (52/8 = 6.5) or k2 twice
	// (5), each a quarter of the time or more, so the 2.5th and 97.5th
	// percentiles of 1,000 resamples are the extremes, exactly. Its one
	// fluency pair is k1's: a resample of k2 alone has no fluency, so
	// fluency, flexibility and the average have no interval; m2 and m3
	// have one keyword each, so none at all.
	want := map[string]Interval{"originality": {5, 7}, "feasibility": {29.0 / 6, 7.5}, "clarity": {38.0 / 6, 7.5}}
	for _, m := range lb.Models {
		switch {
		case m.Model == "m1" && !reflect.DeepEqual(m.Intervals, want):
			t.Errorf("m1's intervals %v, want %v", m.Intervals, want)
		case m.Model != "m1" && m.Intervals != nil:
			t.Errorf("%s (one keyword): intervals %v", m.Model, m.Intervals)
		}
	}
	if lb.CILevel != 0.95 || lb.Resamples != 1000 {
		t.Errorf("level %v, %d resamples", lb.CILevel, lb.Resamples)
	}
}

// parse = "authors" aggregates the authors' parser's reads: its scores
// (7.5 and 15 included, as their statistics would take them), its letters
// ("Answer: C" read as A), and leaves out and counts what it read nothing
// from; "strict" aggregates the strict parse of the same answers.
func TestAggregateAuthorsParse(t *testing.T) {
	gen := &stages.Model{Name: "m"}
	ju, fu := &stages.Upstream{Address: "j", Generator: gen}, &stages.Upstream{Address: "f", Generator: gen}
	mean := func(v float64) *float64 { return &v }
	var in []stages.In
	judge := func(item string, strict [2]int, authors *AuthorsScores) {
		b, _ := json.Marshal(Judgement{Judge: "j", Scores: map[string]int{"originality": strict[0], "feasibility": strict[1]}, Mean: float64(strict[0]+strict[1]) / 2, AuthorsParse: authors})
		in = append(in, stages.In{Dep: stages.Dep{Input: "judgements"}, Node: stages.NodeInfo{Item: item}, From: ju, Output: b})
	}
	pair := func(item, strict string, authors *AuthorsLetter) {
		b, _ := json.Marshal(FluencyOutput{Letter: strict, Judge: "j", AuthorsParse: authors})
		in = append(in, stages.In{Dep: stages.Dep{Input: "fluency"}, Node: stages.NodeInfo{Item: item}, From: fu, Output: b})
	}
	judge("k1", [2]int{7, 6}, &AuthorsScores{Valid: true, Scores: map[string]float64{"originality": 7.5, "feasibility": 6}, Mean: mean(6.75)})
	judge("k1", [2]int{8, 4}, &AuthorsScores{Valid: false, Reason: "no SCORES block"})
	judge("k2", [2]int{9, 2}, &AuthorsScores{Valid: true, Scores: map[string]float64{"originality": 15, "feasibility": 2}, Mean: mean(8.5)})
	pair("k1", "C", &AuthorsLetter{Letter: "A", Valid: true})
	pair("k2", "B", &AuthorsLetter{Valid: false})
	for _, tc := range []struct {
		parse                     string
		orig, feas, fluency       float64
		judgements, pairs, unread int
	}{
		{ParseStrict, 8, 4, (4.0 + 7) / 2, 3, 2, 0},
		{ParseAuthors, 11.25, 4, 10, 2, 1, 2},
	} {
		g := newAggregator(aggOptions{mapping: FluencyMappings["v2"], percentile: 30, parse: tc.parse})
		if err := g.addAll(in); err != nil {
			t.Fatal(err)
		}
		ms, err := g.finish()
		if err != nil {
			t.Fatal(err)
		}
		m := ms[0]
		if !near(m.Scores["originality"], tc.orig) || !near(m.Scores["feasibility"], tc.feas) || !near(m.Scores["fluency"], tc.fluency) ||
			m.Judgements != tc.judgements || m.Pairs != tc.pairs || m.Unread != tc.unread {
			t.Errorf("%s: scores %v, %d judgements, %d pairs, %d unread", tc.parse, m.Scores, m.Judgements, m.Pairs, m.Unread)
		}
	}
	if _, err := aggregateParams(stages.WithDefaults(scoreType{}, stages.Params{"parse": "lenient"})); err == nil || !strings.Contains(err.Error(), `parse = "lenient" is not one of "strict"`) {
		t.Errorf("parse lenient: %v", err)
	}
	if _, err := aggregateParams(stages.WithDefaults(scoreType{}, stages.Params{"flexibility": "p30"})); err == nil || !strings.Contains(err.Error(), `flexibility = "p30" is not one of "paper"`) {
		t.Errorf("flexibility p30: %v", err)
	}
}
