package ideabench

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// position_bias audits a judge for a preference for where an idea is shown,
// which the paper's fixed order (the target always first) cannot tell from
// quality. It reads a rank_ideas instance with order = "rotate" (every
// target shown once at every position) and, optionally, the same judge's
// rankings under target_first and shuffle, and reports:
//
//   - Value: the share of rotate rankings whose winner is the idea shown
//     first (letter A). A judge indifferent to position picks the first-shown
//     idea in 1/(n+1) of rankings, whatever the ideas, because rotation shows
//     every candidate first equally often across a target's rankings.
//   - p_value: the exact one-sided binomial test of at least that many
//     first-position wins among the rankings at success probability
//     1/(n+1). The rankings are treated as independent trials; the n+1
//     rankings of one target share its ideas, so the test is optimistic
//     when ideas differ a lot in quality (the rotation balances that in
//     expectation, not in each target).
//   - biased: 1 when p_value < alpha and the share exceeds 1/(n+1): the
//     rule that flags a judge preferring the first-listed idea.
//   - mean_rank_at_K and target_top_at_K: the target's mean rank, and the
//     share of rankings placing it first, when it was shown at position K.
//   - insight_rotate, insight_target_first, insight_shuffle: the Insight
//     Score under each order given, side by side (a gap between
//     target_first and shuffle is position bias in the paper's own number).

type positionType struct{}

func (positionType) Name() string    { return "position_bias" }
func (positionType) Version() string { return "1" }

func (positionType) Params() []stages.Param {
	return []stages.Param{
		{Name: "rotate", Kind: stages.Input, Required: true, Accepts: []string{"rank_ideas"}, Doc: `the judge's rankings with order = "rotate" (permutations = n+1)`},
		{Name: "target_first", Kind: stages.Input, Accepts: []string{"rank_ideas"}, Doc: `the same judge's rankings with order = "target_first" (the paper's order), for its Insight Score`},
		{Name: "shuffle", Kind: stages.Input, Accepts: []string{"rank_ideas"}, Doc: `the same judge's rankings with order = "shuffle", for its Insight Score`},
		{Name: "alpha", Kind: stages.Number, Default: 0.05, Doc: "significance level of the one-sided binomial test that flags a first-position preference"},
	}
}

func (positionType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	rot, err := stages.RequireInput(p, "rotate")
	if err != nil {
		return nil, err
	}
	alpha := p.Number("alpha")
	if !(alpha > 0 && alpha < 1) {
		return nil, stages.ParamErrorf("alpha", "alpha = %v must be between 0 and 1 (exclusive)", alpha)
	}
	deps := stages.AllDeps("rotate", rot)
	for _, name := range []string{"target_first", "shuffle"} {
		if u := p.Input(name); u != nil {
			deps = append(deps, stages.AllDeps(name, u)...)
		}
	}
	return []stages.Node{{Deps: deps, AllowMissing: true, Prepare: func(in []stages.In) (*stages.Work, error) {
		return &stages.Work{Compute: func() ([]byte, error) {
			s, err := PositionBias(in, alpha)
			if err != nil {
				return nil, err
			}
			return stages.EncodeOutput(s)
		}}, nil
	}}}, nil
}

// PositionBias computes the audit from position_bias inputs (Input
// "rotate", "target_first", "shuffle").
func PositionBias(in []stages.In, alpha float64) (*stages.Score, error) {
	byInput := map[string][]stages.In{}
	for _, x := range in {
		byInput[x.Input] = append(byInput[x.Input], x)
	}
	s := &stages.Score{Extra: map[string]float64{}, PerItem: map[string]float64{}}
	type item struct {
		wins, rankings int
		positions      map[int]bool
		missing, drop  bool
	}
	items := map[string]*item{}
	var order []string
	n := 0
	rankAt := map[int][]float64{}
	topAt := map[int][]float64{}
	for _, x := range byInput["rotate"] {
		it := items[x.Node.Item]
		if it == nil {
			it = &item{positions: map[int]bool{}}
			items[x.Node.Item] = it
			order = append(order, x.Node.Item)
		}
		if x.Output == nil {
			it.missing = true
			continue
		}
		var r RankOutput
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("decode ranking of %q: %w", x.Node.Item, err)
		}
		if r.Dropped {
			it.drop = true
			continue
		}
		if n == 0 {
			n = r.N
		} else if r.N != n {
			return nil, fmt.Errorf("target %q was ranked with n = %d ideas, others with %d; the expected share 1/(n+1) needs one n", x.Node.Item, r.N, n)
		}
		pos := strings.Index(letters, r.TargetLetter) + 1
		if pos < 1 || len(r.Order) == 0 {
			return nil, fmt.Errorf("ranking of %q has no target letter or no order", x.Node.Item)
		}
		if it.positions[pos] {
			return nil, fmt.Errorf(`target %q is shown at position %d in two rankings: rotate must be a rank_ideas instance with order = "rotate"`, x.Node.Item, pos)
		}
		it.positions[pos] = true
		it.rankings++
		if r.Order[0] == "A" {
			it.wins++
		}
		rankAt[pos] = append(rankAt[pos], float64(r.TargetRank))
		top := 0.0
		if r.TargetRank == 1 {
			top = 1
		}
		topAt[pos] = append(topAt[pos], top)
	}
	wins, total, dropped := 0, 0, 0
	for _, id := range order {
		it := items[id]
		switch {
		case it.drop:
			dropped++
		case it.missing:
			s.Missing++
		default:
			if it.rankings != n+1 {
				return nil, fmt.Errorf(`target %q has %d rankings with n = %d: rotate must be a rank_ideas instance with order = "rotate" (n+1 rankings per target)`, id, it.rankings, n)
			}
			wins += it.wins
			total += it.rankings
			s.PerItem[id] = float64(it.wins) / float64(it.rankings)
			s.Count++
		}
	}
	s.Extra["dropped"] = float64(dropped)
	s.Extra["rankings"] = float64(total)
	s.Extra["first_wins"] = float64(wins)
	if total > 0 {
		expected := 1 / float64(n+1)
		s.Value = float64(wins) / float64(total)
		s.Extra["n"] = float64(n)
		s.Extra["expected_share"] = expected
		s.Extra["p_value"] = BinomialUpperTail(wins, total, expected)
		s.Extra["biased"] = 0
		if s.Value > expected && s.Extra["p_value"] < alpha {
			s.Extra["biased"] = 1
		}
		positions := make([]int, 0, len(rankAt))
		for k := range rankAt {
			positions = append(positions, k)
		}
		sort.Ints(positions)
		for _, k := range positions {
			s.Extra["mean_rank_at_"+strconv.Itoa(k)] = mean(rankAt[k])
			s.Extra["target_top_at_"+strconv.Itoa(k)] = mean(topAt[k])
		}
	}
	for _, name := range []string{"rotate", "target_first", "shuffle"} {
		if len(byInput[name]) == 0 {
			continue
		}
		ins, err := InsightScore(byInput[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if ins.Count > 0 {
			s.Extra["insight_"+name] = ins.Value
		}
	}
	return s, nil
}

func mean(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// BinomialUpperTail is P(X >= k) for X ~ Binomial(n, p), summed exactly
// term by term in log space (n is at most a few hundred thousand rankings).
func BinomialUpperTail(k, n int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	if k > n {
		return 0
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	lgn, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for i := k; i <= n; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lgn - a - b + float64(i)*lp + float64(n-i)*lq)
	}
	return math.Min(sum, 1)
}
