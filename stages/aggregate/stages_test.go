package aggregate

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// node is one upstream node as a test gives it: nil output = failed.
type node struct {
	item   string
	slot   int
	output any // marshalled to JSON; nil: the node failed
}

// upstream builds an Upstream of typ from nodes and the In values the
// engine would hand a node depending on all of them.
func upstream(address, typ, key string, nodes ...node) (*stages.Upstream, []stages.In) {
	u := &stages.Upstream{Address: address, Type: typ, Key: key}
	var ins []stages.In
	for i, n := range nodes {
		info := stages.NodeInfo{Item: n.item, Slot: n.slot}
		u.Nodes = append(u.Nodes, info)
		var out []byte
		if n.output != nil {
			out, _ = json.Marshal(n.output)
		}
		ins = append(ins, stages.In{Dep: stages.Dep{Index: i}, Node: info, From: u, Output: out})
	}
	return u, ins
}

// scoreUp is an aggregate upstream whose output is s.
func scoreUp(address, key string, s stages.Score) (*stages.Upstream, []stages.In) {
	return upstream(address, "insight_score", key, node{output: s})
}

// run lays out typ with params (defaults filled) and computes its one node.
func run(t *testing.T, typ stages.Type, params stages.Params, in []stages.In) ([]byte, error) {
	t.Helper()
	nodes, err := typ.Layout(&stages.Instance{Address: "stage.x", Params: stages.WithDefaults(typ, params)})
	if err != nil {
		return nil, err
	}
	if len(nodes) != 1 || !nodes[0].AllowMissing || len(nodes[0].Deps) != len(in) {
		t.Fatalf("%s: %d nodes (want one aggregate over %d deps)", typ.Name(), len(nodes), len(in))
	}
	w, err := nodes[0].Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	return w.Compute()
}

// runOut runs the node and decodes its output.
func runOut[T any](t *testing.T, typ stages.Type, params stages.Params, in []stages.In) T {
	t.Helper()
	var v T
	b, err := run(t, typ, params, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReadItems(t *testing.T) {
	// A per-item upstream with three permutations: an item's value is the
	// mean over them; one failed permutation makes the item missing; a
	// dropped node drops its item.
	up, ins := upstream("stage.rank_ideas.r", "rank_ideas", "",
		node{"a", 0, map[string]any{"target_rank": 1}}, node{"a", 1, map[string]any{"target_rank": 2}}, node{"a", 2, map[string]any{"target_rank": 4}},
		node{"b", 0, map[string]any{"target_rank": 3}}, node{"b", 1, nil}, node{"b", 2, map[string]any{"target_rank": 3}},
		node{"c", 0, map[string]any{"dropped": true}}, node{"c", 1, map[string]any{"dropped": true}}, node{"c", 2, map[string]any{"dropped": true}},
		node{"d", 0, map[string]any{"target_rank": 2}}, node{"d", 1, map[string]any{"target_rank": 2}}, node{"d", 2, map[string]any{"target_rank": 2}},
	)
	iv, err := readItems(up, ins, "target_rank")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(iv.items) != "[a d]" || !near(iv.values["a"], 7.0/3) || iv.values["d"] != 2 || iv.missing != 1 || iv.dropped != 1 {
		t.Errorf("per-item: %+v", iv)
	}

	// A Score's per-item values, sorted by item, with its counts.
	up, ins = scoreUp("stage.insight_score.n", "", stages.Score{Value: 0.5, Count: 2, Missing: 3, Extra: map[string]float64{"dropped": 1}, PerItem: map[string]float64{"z": 1, "y": 0}})
	iv, err = readItems(up, ins, "")
	if err != nil || fmt.Sprint(iv.column()) != "[0 1]" || fmt.Sprint(iv.items) != "[y z]" || iv.missing != 3 || iv.dropped != 1 {
		t.Errorf("score: %+v, %v", iv, err)
	}

	// Errors name the node and say what to change.
	for _, tt := range []struct {
		name, field string
		nodes       []node
		want        string
	}{
		{"no field", "score", []node{{"a", 0, map[string]any{"target_rank": 1, "n": 3}}}, `missing field "score" in stage.u/a (what value_field names; the output has n, target_rank)`},
		{"not a number", "label", []node{{"a", 1, map[string]any{"label": "x"}}}, `stage.u, item "a", slot 1: value_field "label" holds a string, not a number`},
		{"not an object", "a.b", []node{{"a", 0, map[string]any{"a": 2}}}, `value_field "a.b": "a" is a number, not an object`},
	} {
		up, ins := upstream("stage.u", "judge_panel", "", tt.nodes...)
		if _, err := readItems(up, ins, tt.field); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v; want %q", tt.name, err, tt.want)
		}
	}
	up, ins = scoreUp("stage.s", "", stages.Score{Count: 3})
	if _, err := readItems(up, ins, ""); err == nil || !strings.Contains(err.Error(), "keeps no per-item values") {
		t.Errorf("score without per-item values: %v", err)
	}
	up, ins = upstream("stage.s", "insight_score", "", node{})
	if _, err := readItems(up, ins, ""); err == nil || !strings.Contains(err.Error(), "failed or was skipped") {
		t.Errorf("failed score: %v", err)
	}
}

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares v, as indented JSON, with testdata/name: the output
// shapes report and plot code reads, kept in view.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestParamErrors(t *testing.T) {
	score, _ := scoreUp("stage.insight_score.n", "", stages.Score{})
	perItem, _ := upstream("stage.judge_panel.j", "judge_panel", "", node{"a", 0, map[string]any{}})
	two := []*stages.Upstream{score, score}
	tests := []struct {
		typ    stages.Type
		params stages.Params
		param  string
		want   string
	}{
		{bootstrapType{}, stages.Params{}, "scores", "scores is required"},
		{bootstrapType{}, stages.Params{"scores": score, "statistic": "mode"}, "statistic", `statistic = "mode" is not one of`},
		{bootstrapType{}, stages.Params{"scores": score, "statistic": "percentile"}, "statistic", "needs p"},
		{bootstrapType{}, stages.Params{"scores": score, "statistic": "percentile", "p": 130.0}, "p", "not in [0, 100]"},
		{bootstrapType{}, stages.Params{"scores": score, "p": 30.0}, "p", `p only applies to statistic = "percentile"`},
		{bootstrapType{}, stages.Params{"scores": score, "confidence": 95.0}, "confidence", "must be in (0, 1)"},
		{bootstrapType{}, stages.Params{"scores": score, "method": "bc"}, "method", `method = "bc" is not one of`},
		{bootstrapType{}, stages.Params{"scores": perItem}, "scores", "set value_field"},
		{aggregateType{}, stages.Params{"scores": perItem}, "scores", "set value_field"},
		{compareType{}, stages.Params{"scores": []*stages.Upstream{score}}, "scores", "at least two"},
		{compareType{}, stages.Params{"scores": two}, "", ""}, // named by address (keys are empty): no error
		{agreementType{}, stages.Params{"judgements": []*stages.Upstream{}}, "judgements", "at least one"},
		{agreementType{}, stages.Params{"judgements": []*stages.Upstream{perItem}, "coders": "all"}, "coders", `coders = "all" is not one of`},
		{agreementType{}, stages.Params{"judgements": []*stages.Upstream{perItem}, "coders": "field"}, "coder_field", `exactly when coders = "field"`},
		{agreementType{}, stages.Params{"judgements": []*stages.Upstream{perItem}, "coders": "instance"}, "coders", "at least two judging instances"},
		{agreementType{}, stages.Params{"judgements": []*stages.Upstream{perItem}, "value_field": "v", "metric": "cardinal"}, "metric", `metric = "cardinal"`},
		{agreementType{}, stages.Params{"judgements": []*stages.Upstream{perItem}, "value_field": "v", "kappa_weights": "square"}, "kappa_weights", `kappa_weights = "square"`},
		{agreementType{}, stages.Params{"judgements": []*stages.Upstream{score}}, "judgements", "aggregate score"},
	}
	for _, tt := range tests {
		_, err := tt.typ.Layout(&stages.Instance{Params: stages.WithDefaults(tt.typ, tt.params)})
		if tt.param == "" {
			if err != nil {
				t.Errorf("%s %v: %v", tt.typ.Name(), tt.params, err)
			}
			continue
		}
		var pe *stages.ParamError
		if !errors.As(err, &pe) || pe.Param != tt.param || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: error %v; want a ParamError at %s containing %q", tt.typ.Name(), tt.params, err, tt.param, tt.want)
		}
	}
}

func TestAggregateAndBootstrap(t *testing.T) {
	per := map[string]float64{"a": 0.1, "b": 0.4, "c": 0.5, "d": 0.9, "e": 1}
	up, ins := scoreUp("stage.insight_score.n", "k", stages.Score{Count: 5, Missing: 1, PerItem: per})

	// Hand-worked: sorted 0.1 0.4 0.5 0.9 1; mean 2.9/5 = 0.58, median
	// 0.5, 30th percentile at h = 4·0.3 = 1.2: 0.4 + 0.2·0.1 = 0.42.
	for _, tt := range []struct {
		params stages.Params
		want   float64
		label  string
	}{
		{stages.Params{}, 0.58, "mean"},
		{stages.Params{"statistic": "median"}, 0.5, "median"},
		{stages.Params{"statistic": "percentile", "p": 30.0}, 0.42, "p30"},
		{stages.Params{"statistic": "percentile", "p": 12.5}, 0.1 + 0.5*0.3, "p12.5"},
	} {
		tt.params["scores"] = up
		a := runOut[AggregateOutput](t, aggregateType{}, tt.params, ins)
		if !near(a.Value, tt.want) || a.Statistic != tt.label || a.Count != 5 || a.Missing != 1 || len(a.PerItem) != 5 {
			t.Errorf("aggregate %v: %+v; want %v", tt.params, a, tt.want)
		}
		b := runOut[BootstrapOutput](t, bootstrapType{}, tt.params, ins)
		if tt.label == "p30" {
			golden(t, "bootstrap.json", b)
		}
		// The stage's interval is stats.Bootstrap's on the items in order.
		st, _ := readStatistic(stages.WithDefaults(bootstrapType{}, tt.params))
		ci, err := stats.Bootstrap([]float64{0.1, 0.4, 0.5, 0.9, 1}, st.fn(), stats.Options{Resamples: 1000, Level: 0.95})
		if err != nil {
			t.Fatal(err)
		}
		if !near(b.Value, tt.want) || b.Extra["ci_low"] != ci.Lower || b.Extra["ci_high"] != ci.Upper || b.Extra["ci_level"] != 0.95 || b.Extra["resamples"] != 1000 || b.Statistic != tt.label || b.Method != "percentile" {
			t.Errorf("bootstrap %v: %+v; want %+v", tt.params, b, ci)
		}
	}

	// Determinism: the same seed gives the same bytes; another seed
	// another interval.
	p := stages.Params{"scores": up, "seed": 4}
	first, err1 := run(t, bootstrapType{}, p, ins)
	again, err2 := run(t, bootstrapType{}, p, ins)
	other, err3 := run(t, bootstrapType{}, stages.Params{"scores": up, "seed": 5}, ins)
	if err1 != nil || err2 != nil || err3 != nil || string(first) != string(again) || string(first) == string(other) {
		t.Errorf("seeded runs:\n%s\n%s\n%s", first, again, other)
	}

	// No item scored: counts, no interval.
	up, ins = scoreUp("stage.insight_score.n", "", stages.Score{Missing: 4})
	b := runOut[BootstrapOutput](t, bootstrapType{}, stages.Params{"scores": up}, ins)
	if b.Count != 0 || b.Missing != 4 || b.Value != 0 || len(b.Extra) != 1 {
		t.Errorf("empty: %+v", b)
	}

	// BCa where it is undefined fails with what to change. (Every item
	// scored the same: the statistic without any one item is the same, so
	// the acceleration is 0/0, where SciPy's interval is NaN.)
	up, ins = scoreUp("stage.insight_score.n", "", stages.Score{Count: 4, PerItem: map[string]float64{"a": 2, "b": 2, "c": 2, "d": 2}})
	_, err := run(t, bootstrapType{}, stages.Params{"scores": up, "statistic": "percentile", "p": 0.0, "method": "bca"}, ins)
	if !errors.Is(err, stats.ErrUndefined) || !strings.Contains(err.Error(), `set method = "percentile"`) {
		t.Errorf("BCa on ties: %v", err)
	}
}

func TestCompare(t *testing.T) {
	// b scores every shared item 0.25 below a: the paired interval is
	// exactly [0.25, 0.25] and no resample is <= 0. a also scored "x",
	// which b did not; b scored "y" and "z", which a did not.
	a := map[string]float64{"i1": 1.25, "i2": 9.25, "i3": 3.25, "x": 0}
	b := map[string]float64{"i1": 1, "i2": 9, "i3": 3, "y": 5, "z": 6}
	c := map[string]float64{"i1": 2, "i2": 8, "i3": 3, "x": 1}
	ua, ia := scoreUp("stage.s[\"a\"]", "a", stages.Score{Count: 4, PerItem: a})
	ub, ib := scoreUp("stage.s[\"b\"]", "b", stages.Score{Count: 5, Missing: 2, Extra: map[string]float64{"dropped": 1}, PerItem: b})
	uc, ic := scoreUp("stage.s[\"c\"]", "c", stages.Score{Count: 4, PerItem: c})
	ups := []*stages.Upstream{ua, ub, uc}
	in := append(append(append([]stages.In(nil), ia...), ib...), ic...)

	out := runOut[CompareOutput](t, compareType{}, stages.Params{"scores": ups}, in)
	if fmt.Sprint(out.Models) != "[a b c]" || len(out.Pairs) != 3 || out.Resamples != 1000 || out.Method != "percentile" {
		t.Fatalf("compare: %+v", out)
	}
	if fmt.Sprint(out.Counts) != "[{a 4 0 0} {b 5 2 1} {c 4 0 0}]" {
		t.Errorf("counts %v", out.Counts)
	}
	golden(t, "compare.json", out)
	var got []string
	for _, p := range out.Pairs {
		got = append(got, p.A+"-"+p.B)
	}
	if strings.Join(got, " ") != "a-b a-c b-c" {
		t.Errorf("default pairs %v; want every pair in order", got)
	}
	ab := out.Pairs[0]
	if ab.Shared != 3 || ab.OnlyA != 1 || ab.OnlyB != 2 || ab.Result == nil || !near(ab.Result.Diff, 0.25) || !near(ab.Result.CILow, 0.25) || !near(ab.Result.CIHigh, 0.25) || ab.Result.ShareNonPositive != 0 || !near(ab.Result.MeanA, 13.75/3) {
		t.Errorf("a vs b: %+v %+v", ab, ab.Result)
	}
	// a - c on i1 i2 i3 x: -0.75, 1.25, 0.25, -1; mean -0.0625.
	ac := out.Pairs[1]
	want, err := stats.PairedBootstrap([]float64{1.25, 9.25, 3.25, 0}, []float64{2, 8, 3, 1}, stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ac.Shared != 4 || ac.OnlyA != 0 || !near(ac.Result.Diff, -0.0625) || ac.Result.CILow != want.Diff.Lower || ac.Result.CIHigh != want.Diff.Upper || ac.Result.ShareNonPositive != want.ShareNonPositive {
		t.Errorf("a vs c: %+v %+v; want %+v", ac, ac.Result, want)
	}

	// The leaderboard uses the items all three scored (i1-i3): means a
	// 13.75/3, b 13/3, c 13/3, so a ranks 1 and b, c share rank 2.
	if out.LeaderboardItems != 3 || len(out.Leaderboard) != 3 {
		t.Fatalf("leaderboard: %+v", out)
	}
	lb := stats.Options{}
	wantLB, err := stats.Leaderboard([][]float64{{1.25, 9.25, 3.25}, {1, 9, 3}, {2, 8, 3}}, stats.MeanStat, lb)
	if err != nil {
		t.Fatal(err)
	}
	for m, s := range out.Leaderboard {
		w := wantLB[m]
		if s.Model != out.Models[m] || s.Mean != w.Score.Estimate || s.CILow != w.Score.Lower || s.CIHigh != w.Score.Upper || s.Rank != w.Rank || s.RankLow != w.RankLower || s.RankHigh != w.RankUpper || s.ArenaRank != w.ArenaRank {
			t.Errorf("standing %d: %+v; want %+v", m, s, w)
		}
	}
	if r := []int{out.Leaderboard[0].Rank, out.Leaderboard[1].Rank, out.Leaderboard[2].Rank}; fmt.Sprint(r) != "[1 2 2]" {
		t.Errorf("ranks %v; want [1 2 2]", r)
	}

	// Chosen pairs, in the order given; B - A is the negation.
	out = runOut[CompareOutput](t, compareType{}, stages.Params{"scores": ups, "pairs": []string{"c vs a"}}, in)
	if len(out.Pairs) != 1 || out.Pairs[0].A != "c" || !near(out.Pairs[0].Result.Diff, 0.0625) {
		t.Errorf("pairs = [c vs a]: %+v", out.Pairs)
	}
	for _, tt := range []struct{ pair, want string }{
		{"a - b", `pair "a - b" is not "A vs B" (e.g. "a vs b")`},
		{"a vs d", `pair "a vs d": "d" is none of the compared instances (a, b, c)`},
		{"a vs a", `compares "a" with itself`},
	} {
		_, err := run(t, compareType{}, stages.Params{"scores": ups, "pairs": []string{tt.pair}}, in)
		var pe *stages.ParamError
		if !errors.As(err, &pe) || pe.Param != "pairs" || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("pair %q: %v; want %q", tt.pair, err, tt.want)
		}
	}

	// No shared item: a note, no result.
	ud, id := scoreUp("stage.s[\"d\"]", "d", stages.Score{Count: 1, PerItem: map[string]float64{"q": 1}})
	out = runOut[CompareOutput](t, compareType{}, stages.Params{"scores": []*stages.Upstream{ua, ud}}, append(append([]stages.In(nil), ia...), id...))
	if p := out.Pairs[0]; p.Result != nil || p.Shared != 0 || p.OnlyA != 4 || p.OnlyB != 1 || p.Note == "" || out.Leaderboard != nil || out.LeaderboardNote == "" {
		t.Errorf("disjoint: %+v", p)
	}
}

// TestAgreementPanel reads Krippendorff's (2011) worked example as a judge
// panel would give it (one node per unit and judge, the judge's name in
// each output, missing judgements absent) and gets the paper's alphas.
func TestAgreementPanel(t *testing.T) {
	N := math.NaN()
	data := [][]float64{
		{1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N},
		{1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3},
		{N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N},
		{1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N},
	}
	var nodes []node
	for u := range data[0] {
		for c, row := range data {
			if !math.IsNaN(row[u]) {
				nodes = append(nodes, node{fmt.Sprintf("unit%02d", u), c, map[string]any{"judge": string(rune('A' + c)), "scores": map[string]any{"originality": row[u]}}})
			}
		}
	}
	up, ins := upstream("stage.judge_panel.p", "judge_panel", "", nodes...)
	for _, tt := range []struct {
		metric string
		want   float64
	}{{"nominal", 0.743}, {"ordinal", 0.815}, {"interval", 0.849}} {
		out := runOut[AgreementOutput](t, agreementType{}, stages.Params{"judgements": []*stages.Upstream{up}, "coder_field": "judge", "value_field": "scores.originality", "metric": tt.metric}, ins)
		if math.Round(out.Value*1000)/1000 != tt.want || out.Extra["alpha"] != out.Value || fmt.Sprint(out.Coders) != "[A B C D]" || out.Count != 11 || out.Extra["units"] != 12 || len(out.Pairs) != 6 {
			t.Errorf("%s: %+v; want alpha %v", tt.metric, out, tt.want)
		}
	}

	golden(t, "agreement.json", runOut[AgreementOutput](t, agreementType{}, stages.Params{"judgements": []*stages.Upstream{up}, "coder_field": "judge", "value_field": "scores.originality"}, ins))

	// Hand-worked pair statistics: coders A and B share units 0-8, where
	// they differ only on unit 5 (1 vs 2). Unweighted kappa: categories
	// 1 2 3 4; A: 1×3 2×3 3×2 4×1, B: 1×2 2×4 3×2 4×1 over 9 units;
	// p_o = 8/9, p_e = (3·2 + 3·4 + 2·2 + 1·1)/81 = 23/81, kappa =
	// (72/81 - 23/81)/(58/81) = 49/58.
	out := runOut[AgreementOutput](t, agreementType{}, stages.Params{"judgements": []*stages.Upstream{up}, "coder_field": "judge", "value_field": "scores.originality", "kappa_weights": "none"}, ins)
	ab := out.Pairs[0]
	if ab.A != "A" || ab.B != "B" || ab.Shared != 9 || ab.Kappa == nil || !near(*ab.Kappa, 49.0/58) {
		t.Errorf("A-B: %+v (kappa %v); want 49/58", ab, deref(ab.Kappa))
	}
	tau, _ := stats.KendallTauB([]float64{1, 2, 3, 3, 2, 1, 4, 1, 2}, []float64{1, 2, 3, 3, 2, 2, 4, 1, 2})
	if ab.TauB == nil || *ab.TauB != tau {
		t.Errorf("A-B tau-b %v; want %v", deref(ab.TauB), tau)
	}

	// The same data as one node per unit holding every judge's score
	// (coders = "keys"; null: not judged).
	nodes = nil
	for u := range data[0] {
		byJudge := map[string]any{}
		for c, row := range data {
			if !math.IsNaN(row[u]) {
				byJudge[string(rune('A'+c))] = row[u]
			} else if c == 0 {
				byJudge["A"] = nil
			}
		}
		nodes = append(nodes, node{fmt.Sprintf("unit%02d", u), 0, map[string]any{"scores": byJudge}})
	}
	kup, kins := upstream("stage.judge_panel.k", "judge_panel", "", nodes...)
	keyed := runOut[AgreementOutput](t, agreementType{}, stages.Params{"judgements": []*stages.Upstream{kup}, "coders": "keys", "value_field": "scores", "metric": "interval"}, kins)
	if math.Round(keyed.Value*1000)/1000 != 0.849 || fmt.Sprint(keyed.Coders) != "[A B C D]" || keyed.Count != 11 {
		t.Errorf("keys: %+v", keyed)
	}
	kup, kins = upstream("stage.judge_panel.k", "judge_panel", "", node{"u", 0, map[string]any{"scores": map[string]any{"A": "high"}}})
	if _, err := run(t, agreementType{}, stages.Params{"judgements": []*stages.Upstream{kup}, "coders": "keys", "value_field": "scores"}, kins); err == nil || !strings.Contains(err.Error(), `coder "A" has a string, not a number`) {
		t.Errorf("keys, a string: %v", err)
	}

	// A judge who judged a unit twice is refused, not averaged.
	nodes = nil
	for u := range data[0] {
		for c, row := range data {
			if !math.IsNaN(row[u]) {
				nodes = append(nodes, node{fmt.Sprintf("unit%02d", u), c, map[string]any{"judge": string(rune('A' + c)), "scores": map[string]any{"originality": row[u]}}})
			}
		}
	}
	nodes = append(nodes, node{"unit00", 9, map[string]any{"judge": "A", "scores": map[string]any{"originality": 2}}})
	up, ins = upstream("stage.judge_panel.p", "judge_panel", "", nodes...)
	_, err := run(t, agreementType{}, stages.Params{"judgements": []*stages.Upstream{up}, "coder_field": "judge", "value_field": "scores.originality"}, ins)
	if err == nil || !strings.Contains(err.Error(), `coder "A" judged unit "unit00" twice`) {
		t.Errorf("duplicate judgement: %v", err)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// rank is a rank_ideas output: order of letters, what they stand for.
func rank(targetRank int, order string, labels map[string]string) map[string]any {
	o := strings.Split(order, "")
	return map[string]any{"order": o, "labels": labels, "target_rank": targetRank, "n": len(o) - 1}
}

func TestAgreementPermutations(t *testing.T) {
	// Two targets, three permutations each (slots). Letters differ by
	// permutation; order_tau_b compares what was ranked. Target t1: the
	// three orderings are target > idea 0 > idea 1, the same, and idea 0
	// > target > idea 1: taus 1, 1/3, 1/3. t2: its two rankings agree
	// (idea 1 > idea 0 > target): 1.
	l1 := map[string]string{"A": "target", "B": "idea 0", "C": "idea 1"}
	l2 := map[string]string{"A": "idea 1", "B": "target", "C": "idea 0"}
	up, ins := upstream("stage.rank_ideas.r", "rank_ideas", "",
		node{"t1", 0, rank(1, "ABC", l1)}, node{"t1", 1, rank(1, "BCA", l2)}, node{"t1", 2, rank(2, "CBA", l2)},
		node{"t2", 0, rank(3, "CBA", l1)}, node{"t2", 1, rank(3, "ACB", l2)}, node{"t2", 2, nil},
		node{"t3", 0, map[string]any{"dropped": true}},
	)
	out := runOut[AgreementOutput](t, agreementType{}, stages.Params{"judgements": []*stages.Upstream{up}}, ins)
	if fmt.Sprint(out.Coders) != "[slot 0 slot 1 slot 2]" || out.Missing != 1 || out.Extra["dropped"] != 1 || out.Extra["units"] != 2 {
		t.Errorf("permutations: %+v", out)
	}
	// t2's third permutation failed: t1 contributes 3 pairs, t2 one.
	if got := out.Extra["order_tau_b"]; !near(got, (1+1.0/3+1.0/3+1)/4) {
		t.Errorf("order_tau_b = %v; want %v", got, (1+1.0/3+1.0/3+1)/4)
	}
	// Alpha over target ranks (ordinal): units t1 (1, 1, 2) and t2 (3, 3).
	want, err := stats.KrippendorffAlpha([][]float64{{1, 3}, {1, 3}, {2, math.NaN()}}, stats.OrdinalMetric)
	if err != nil || out.Value != want || out.Count != 2 {
		t.Errorf("alpha %v (count %d); want %v, %v", out.Value, out.Count, want, err)
	}

	// Constant judgements: alpha undefined, said in Notes, Count 0.
	up, ins = upstream("stage.rank_ideas.r", "rank_ideas", "",
		node{"t1", 0, rank(1, "AB", l1)}, node{"t1", 1, rank(1, "AB", l1)})
	out = runOut[AgreementOutput](t, agreementType{}, stages.Params{"judgements": []*stages.Upstream{up}}, ins)
	if out.Count != 0 || out.Value != 0 || len(out.Notes) == 0 || !strings.Contains(out.Notes[0], "alpha undefined") {
		t.Errorf("constant: %+v", out)
	}
	if _, ok := out.Extra["alpha"]; ok {
		t.Errorf("undefined alpha in Extra: %+v", out.Extra)
	}
}
