package ideabench

import (
	"math"
	"reflect"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

func rankIn(t testing.TB, item string, slot int, out any) stages.In {
	in := stages.In{Node: stages.NodeInfo{Item: item, Slot: slot}}
	switch v := out.(type) {
	case nil:
	case RankOutput:
		in.Output = mustJSON(t, v)
	case string:
		in.Output = []byte(v)
	}
	return in
}

func ranked(n, rank int) RankOutput { return RankOutput{N: n, TargetRank: rank} }

// The paper's worked values (its appendix on the effect of n).
func TestInsightScoreWorkedValues(t *testing.T) {
	tests := []struct {
		n, rank int
		want    float64
		exact   float64
	}{
		{3, 3, 0.667, 2.0 / 3},
		{10, 5, 0.4, 0.4},
		{6, 4, 0.5, 0.5},
		{10, 7, 0.6, 0.6},
		{3, 1, 0, 0},
		{3, 4, 1, 1},
	}
	for _, tc := range tests {
		s, err := InsightScore([]stages.In{rankIn(t, "p1", 0, ranked(tc.n, tc.rank))})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(s.Value-tc.want) > 0.0005 || s.Value != tc.exact {
			t.Errorf("n=%d rank %d: %v, want %v", tc.n, tc.rank, s.Value, tc.want)
		}
		if s.Count != 1 || s.Missing != 0 || s.Extra["n"] != float64(tc.n) || s.Extra["dropped"] != 0 {
			t.Errorf("n=%d rank %d: %+v", tc.n, tc.rank, s)
		}
	}
}

func TestInsightScoreAggregates(t *testing.T) {
	in := []stages.In{
		rankIn(t, "p1", 0, ranked(3, 1)), rankIn(t, "p1", 1, ranked(3, 3)), // (0 + 2/3) / 2 = 1/3
		rankIn(t, "p2", 0, ranked(3, 4)), rankIn(t, "p2", 1, ranked(3, 4)), // 1
		rankIn(t, "p3", 0, ranked(3, 2)), rankIn(t, "p3", 1, nil), // one permutation failed: missing
		rankIn(t, "p4", 0, `{"dropped":true}`), rankIn(t, "p4", 1, `{"dropped":true}`),
		rankIn(t, "p5", 0, nil), rankIn(t, "p5", 1, nil), // both failed: missing
	}
	s, err := InsightScore(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &stages.Score{
		Value: (1.0/3 + 1) / 2, Count: 2, Missing: 2,
		Extra:   map[string]float64{"n": 3, "dropped": 1, "mean_rank": (2.0 + 4) / 2}, // ranks 2 and 4 of n+1 = 4
		PerItem: map[string]float64{"p1": 1.0 / 3, "p2": 1},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("score %+v\nwant %+v", s, want)
	}
}

func TestInsightScoreNothingScored(t *testing.T) {
	s, err := InsightScore([]stages.In{rankIn(t, "p1", 0, `{"dropped":true}`), rankIn(t, "p2", 0, nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := &stages.Score{Missing: 1, Extra: map[string]float64{"dropped": 1}, PerItem: map[string]float64{}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("score %+v, want %+v", s, want)
	}
}

func TestInsightScoreErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []stages.In
		want string
	}{
		{"mixed n", []stages.In{rankIn(t, "p1", 0, ranked(3, 1)), rankIn(t, "p2", 0, ranked(5, 1))},
			`targets "p1" and "p2" were ranked with different numbers of ideas (n = 3 and 5); Insight Scores are only comparable at equal n`},
		{"rank out of range", []stages.In{rankIn(t, "p1", 0, ranked(3, 5))}, `ranking of "p1" has target rank 5 with n = 3; want 1..n+1`},
		{"not a ranking", []stages.In{rankIn(t, "p1", 0, `[1]`)}, `decode ranking of "p1": json: cannot unmarshal array into Go value of type ideabench.RankOutput`},
	}
	for _, tc := range tests {
		if _, err := InsightScore(tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestInsightLayoutAndOutput(t *testing.T) {
	f := newRankFixture(t, stages.Params{"n": 3}, stages.Params{"permutations": 2}, "p1", "p2")
	ranks := stageUp(`stage.rank_ideas.novelty["gen-model"]`, "rank_ideas", "gen-model", f.rank, f.ds)
	nodes := layout(t, insightType{}, `stage.insight_score.novelty["gen-model"]`, stages.Params{"ranks": ranks})
	if len(nodes) != 1 {
		t.Fatalf("%d nodes, want 1", len(nodes))
	}
	n := nodes[0]
	want := []stages.Dep{{Input: "ranks", Index: 0}, {Input: "ranks", Index: 1}, {Input: "ranks", Index: 2}, {Input: "ranks", Index: 3}}
	if n.Item != "" || n.Slot != 0 || !n.AllowMissing || !reflect.DeepEqual(n.Deps, want) {
		t.Errorf("node %+v", n)
	}
	in := []stages.In{
		rankIn(t, "p1", 0, ranked(3, 3)), rankIn(t, "p1", 1, ranked(3, 3)),
		rankIn(t, "p2", 0, ranked(3, 1)), rankIn(t, "p2", 1, ranked(3, 2)),
	}
	out := compute(t, n, in)
	const wantOut = `{"value":0.41666666666666663,"count":2,"missing":0,"extra":{"dropped":0,"mean_rank":2.25,"n":3},"per_item":{"p1":0.6666666666666666,"p2":0.16666666666666666}}` // mean_rank: (3 + (1+2)/2) / 2
	if string(out) != wantOut {
		t.Errorf("output\n got %s\nwant %s", out, wantOut)
	}
}

func TestInsightParamErrors(t *testing.T) {
	_, err := insightType{}.Layout(&stages.Instance{Address: "stage.insight_score.x", Params: stages.Params{}})
	checkParamError(t, err, "ranks", "ranks is required")
}
