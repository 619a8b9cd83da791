package ideabench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// letterOrder reads which candidate each letter shows from a node's labels.
func letterOrderOf(t *testing.T, c *stages.Call) string {
	t.Helper()
	letters := c.Request.Format.Letters
	out, err := c.Output(&format.Answer{Ranking: strings.Split(letters, "")})
	if err != nil {
		t.Fatal(err)
	}
	var r RankOutput
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(letters, "") {
		got = append(got, l+"="+r.Labels[l])
	}
	return strings.Join(got, " ")
}

// The letter order of each fixed order mode, per ranking: target_first and
// target_last one ranking each; rotate n+1, the target at every position
// once and the ideas in sample order around it.
func TestRankOrders(t *testing.T) {
	tests := []struct {
		name string
		gen  stages.Params
		rank stages.Params
		want []string // per permutation
	}{
		{"target_first", stages.Params{"n": 2}, stages.Params{"order": "target_first"},
			[]string{"A=target B=idea 0 C=idea 1"}},
		{"target_last", stages.Params{"n": 2}, stages.Params{"order": "target_last"},
			[]string{"A=idea 0 B=idea 1 C=target"}},
		{"rotate, independent", stages.Params{"n": 2}, stages.Params{"order": "rotate", "permutations": 3},
			[]string{"A=target B=idea 0 C=idea 1", "A=idea 0 B=target C=idea 1", "A=idea 0 B=idea 1 C=target"}},
		{"rotate, batch", stages.Params{"mode": "batch", "n": 3}, stages.Params{"order": "rotate", "permutations": 4},
			[]string{"A=target B=idea 0 C=idea 1 D=idea 2", "A=idea 0 B=target C=idea 1 D=idea 2", "A=idea 0 B=idea 1 C=target D=idea 2", "A=idea 0 B=idea 1 C=idea 2 D=target"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newRankFixture(t, tc.gen, tc.rank, "p1")
			if len(f.rank) != len(tc.want) {
				t.Fatalf("%d rankings, want %d", len(f.rank), len(tc.want))
			}
			ideas := [][]string{{"i0"}, {"i1"}}
			if tc.gen.String("mode") == "batch" {
				ideas = [][]string{{"i0", "i1", "i2"}}
			}
			for p, n := range f.rank {
				c := call(t, n, f.inputs(t, n, ideas, record(t, "p1")))
				if got := letterOrderOf(t, c); got != tc.want[p] {
					t.Errorf("ranking %d: %s, want %s", p, got, tc.want[p])
				}
				if c.Request.Sample != p {
					t.Errorf("ranking %d sent as sample %d", p, c.Request.Sample)
				}
			}
		})
	}
}

// rotate needs permutations = n+1: refused at layout where n is known
// (independent samples), at the ranking where only the answer tells
// (batch).
func TestRankRotatePermutations(t *testing.T) {
	ds := datasetUp("p1")
	ideas := &stages.Upstream{Address: "stage.generate_ideas.main", Type: "generate_ideas", Nodes: ds.Nodes, Source: ds}
	for _, tc := range []struct {
		params stages.Params
		want   string
	}{
		{stages.Params{"order": "rotate"}, `order = "rotate" ranks once per position of the target, so permutations must be n+1, the ideas per target plus one (got 1)`},
		{stages.Params{"order": "target_last", "permutations": 2}, `order = "target_last" always gives the same letter order, so permutations must be 1 (got 2)`},
	} {
		p := stages.Params{"ideas": ideas, "judge": testJudge, "quality": novelty}
		for k, v := range tc.params {
			p[k] = v
		}
		_, err := rankType{}.Layout(&stages.Instance{Address: "stage.rank_ideas.x", Params: stages.WithDefaults(rankType{}, p)})
		checkParamError(t, err, "permutations", tc.want)
	}
	f := newRankFixture(t, stages.Params{"n": 2}, nil, "p1")
	_, err := rankType{}.Layout(&stages.Instance{Address: "stage.rank_ideas.x", Params: stages.WithDefaults(rankType{}, stages.Params{
		"ideas": f.ideas, "judge": testJudge, "quality": novelty, "order": "rotate", "permutations": 4})})
	checkParamError(t, err, "permutations", `order = "rotate" ranks once per position of the target: with 2 ideas per target permutations must be 3 (got 4)`)

	const (
		wrong3 = `item "p1" has 3 ideas, so order = "rotate" needs permutations = 4 (got 3): set permutations = 4`
		wrong5 = `item "p1" has 3 ideas, so order = "rotate" needs permutations = 4 (got 5): set permutations = 4`
	)
	for _, tc := range []struct {
		perms int
		want  []string // per ranking: "" for fine, else the error
	}{
		{3, []string{wrong3, wrong3, wrong3}},
		{5, []string{wrong5, wrong5, wrong5, wrong5, wrong5}},
	} {
		f := newRankFixture(t, stages.Params{"mode": "batch", "n": 3}, stages.Params{"order": "rotate", "permutations": tc.perms}, "p1")
		for p, n := range f.rank {
			_, err := n.Prepare(f.inputs(t, n, [][]string{{"i0", "i1", "i2"}}, record(t, "p1")))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want[p] {
				t.Errorf("permutations %d, ranking %d: error %q, want %q", tc.perms, p, got, tc.want[p])
			}
		}
	}
}
