package aggregate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// compareType is the compare stage: paired bootstrap differences between
// models scored on the same items.
type compareType struct{}

func (compareType) Name() string    { return "compare" }
func (compareType) Version() string { return "1" }

// pairSep separates the two models of a pairs entry.
const pairSep = " vs "

func (compareType) Params() []stages.Param {
	return append([]stages.Param{
		{Name: "scores", Kind: stages.Inputs, Required: true, Doc: "the score instances to compare, one per model (e.g. [stage.insight_score.novelty], which lists every instance); each is named by its instance key"},
		{Name: "pairs", Kind: stages.StringList, Doc: `the pairs to compare, each "A vs B" with A and B instance keys (the difference is A - B); default: every pair, in the order listed`},
		{Name: "value_field", Kind: stages.String, Default: "", Doc: "for per-item upstreams: dotted path of the number in each node's output (default: known per type, rank_ideas: target_rank); aggregate scores need none"},
	}, bootstrapParams()...)
}

// CompareOutput is the compare stage's output (node output JSON; it writes
// no files). Models names the compared instances in the order listed
// (their instance keys, or addresses for instances without a key); Pairs
// holds one entry per compared pair, in the order of the pairs param (or,
// by default, every pair i < j of Models as (Models[i], Models[j])).
type CompareOutput struct {
	Models []string `json:"models"`
	// Counts says, per model in Models order, how many items it scored
	// and how many were missing or dropped upstream (for footnotes).
	Counts []ModelCounts `json:"counts"`
	Pairs  []Pair        `json:"pairs"`
	// Leaderboard ranks every model (in Models order) by its mean over the
	// items all models scored (LeaderboardItems of them), with rank
	// intervals from the same resamples; nil when no item is shared by
	// all, with LeaderboardNote saying why.
	Leaderboard      []Standing `json:"leaderboard,omitempty"`
	LeaderboardItems int        `json:"leaderboard_items"`
	LeaderboardNote  string     `json:"leaderboard_note,omitempty"`
	Method           string     `json:"method"`    // "percentile" or "bca"
	Level            float64    `json:"level"`     // confidence level of every interval
	Resamples        int        `json:"resamples"` // resamples of every pair
	Seed             int        `json:"seed"`
}

// ModelCounts are one compared model's item counts.
type ModelCounts struct {
	Model   string `json:"model"`
	Items   int    `json:"items"`   // items with a score
	Missing int    `json:"missing"` // items whose inputs failed or were skipped
	Dropped int    `json:"dropped"` // items dropped upstream
}

// Standing is one model's place on the leaderboard (stats.Leaderboard):
// ranks count from 1 (highest mean), tied models share the better rank.
type Standing struct {
	Model  string  `json:"model"`
	Mean   float64 `json:"mean"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	Rank   int     `json:"rank"`
	// RankLow and RankHigh are the 2.5% and 97.5% points (at Level 0.95)
	// of the model's rank over the resamples: "ranked RankLow to RankHigh".
	RankLow  int `json:"rank_low"`
	RankHigh int `json:"rank_high"`
	// ArenaRank is Chatbot Arena's rank: 1 + the number of models whose
	// CILow exceeds this model's CIHigh.
	ArenaRank int `json:"arena_rank"`
}

// Pair is the paired comparison of A and B on the items both scored.
type Pair struct {
	A string `json:"a"`
	B string `json:"b"`
	// Shared counts the items both scored, the only ones compared; OnlyA
	// and OnlyB count items only one side scored (excluded).
	Shared int `json:"shared"`
	OnlyA  int `json:"only_a"`
	OnlyB  int `json:"only_b"`
	// Result is nil when the pair shares no item (or BCa is undefined for
	// its data); Note then says why.
	Result *PairResult `json:"result,omitempty"`
	Note   string      `json:"note,omitempty"`
}

// PairResult is the paired bootstrap of mean(A_i - B_i) over shared items.
type PairResult struct {
	MeanA float64 `json:"mean_a"` // A's mean over the shared items
	MeanB float64 `json:"mean_b"`
	Diff  float64 `json:"diff"` // MeanA - MeanB
	// CILow and CIHigh bound Diff at the output's Level.
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// ShareNonPositive is the share of resamples whose mean difference is
	// <= 0: a one-sided bootstrap p-value for "A scores higher than B".
	ShareNonPositive float64 `json:"share_non_positive"`
}

// names returns the instances' names: their keys when every one has a
// distinct non-empty key, else their addresses.
func names(ups []*stages.Upstream) []string {
	out := make([]string, len(ups))
	seen := map[string]bool{}
	for i, u := range ups {
		if u.Key == "" || seen[u.Key] {
			for j, u := range ups {
				out[j] = u.Address
			}
			return out
		}
		seen[u.Key] = true
		out[i] = u.Key
	}
	return out
}

func (compareType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	ups := inst.Params.Inputs("scores")
	if len(ups) < 2 {
		return nil, stages.ParamErrorf("scores", "compare needs at least two score instances, got %d; list a stage with an instance per model (e.g. scores = [stage.insight_score.novelty])", len(ups))
	}
	fields := make([]string, len(ups))
	for i, u := range ups {
		f, err := fieldFor("scores", inst.Params.String("value_field"), u)
		if err != nil {
			return nil, err
		}
		fields[i] = f
	}
	opts, err := readOptions(inst.Params)
	if err != nil {
		return nil, err
	}
	models := names(ups)
	pairs, err := readPairs(inst.Params.Strings("pairs"), models)
	if err != nil {
		return nil, err
	}
	var deps []stages.Dep
	offsets := make([]int, len(ups)+1)
	for i, u := range ups {
		offsets[i+1] = offsets[i] + len(u.Nodes)
		for j := range u.Nodes {
			deps = append(deps, stages.Dep{Input: "scores", Index: offsets[i] + j})
		}
	}
	method, seed := inst.Params.String("method"), inst.Params.Int("seed")
	return []stages.Node{{
		Deps:         deps,
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				vals := make([]*itemValues, len(ups))
				for i, u := range ups {
					iv, err := readItems(u, in[offsets[i]:offsets[i+1]], fields[i])
					if err != nil {
						return nil, err
					}
					vals[i] = iv
				}
				out := CompareOutput{Models: models, Method: method, Level: opts.Level, Resamples: opts.Resamples, Seed: seed}
				for m, v := range vals {
					out.Counts = append(out.Counts, ModelCounts{Model: models[m], Items: len(v.items), Missing: v.missing, Dropped: v.dropped})
				}
				for _, pr := range pairs {
					p, err := comparePair(models[pr[0]], models[pr[1]], vals[pr[0]], vals[pr[1]], opts)
					if err != nil {
						return nil, err
					}
					out.Pairs = append(out.Pairs, p)
				}
				if err := leaderboard(&out, vals, opts); err != nil {
					return nil, err
				}
				return stages.EncodeOutput(out)
			}}, nil
		},
	}}, nil
}

// readPairs resolves the pairs param to index pairs into models.
func readPairs(spec []string, models []string) ([][2]int, error) {
	if len(spec) == 0 {
		var out [][2]int
		for i := range models {
			for j := i + 1; j < len(models); j++ {
				out = append(out, [2]int{i, j})
			}
		}
		return out, nil
	}
	index := map[string]int{}
	for i, m := range models {
		index[m] = i
	}
	var out [][2]int
	for _, s := range spec {
		a, b, ok := strings.Cut(s, pairSep)
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		if !ok || a == "" || b == "" {
			return nil, stages.ParamErrorf("pairs", "pair %q is not \"A vs B\" (e.g. %q)", s, models[0]+pairSep+models[1])
		}
		var pr [2]int
		for k, name := range []string{a, b} {
			i, ok := index[name]
			if !ok {
				return nil, stages.ParamErrorf("pairs", "pair %q: %q is none of the compared instances (%s)", s, name, strings.Join(models, ", "))
			}
			pr[k] = i
		}
		if pr[0] == pr[1] {
			return nil, stages.ParamErrorf("pairs", "pair %q compares %q with itself", s, a)
		}
		out = append(out, pr)
	}
	return out, nil
}

// comparePair bootstraps A - B on the items both scored.
func comparePair(a, b string, va, vb *itemValues, opts stats.Options) (Pair, error) {
	p := Pair{A: a, B: b}
	var xa, xb []float64
	for _, it := range va.items {
		if y, ok := vb.values[it]; ok {
			xa = append(xa, va.values[it])
			xb = append(xb, y)
		} else {
			p.OnlyA++
		}
	}
	p.Shared = len(xa)
	p.OnlyB = len(vb.items) - p.Shared
	if p.Shared == 0 {
		p.Note = "no item scored by both"
		return p, nil
	}
	res, err := stats.PairedBootstrap(xa, xb, opts)
	if err != nil {
		if opts.Method == stats.BCa && errors.Is(err, stats.ErrUndefined) {
			p.Note = fmt.Sprintf("BCa undefined for these differences (%v); method = \"percentile\" is defined for any data", err)
			return p, nil
		}
		return p, fmt.Errorf("compare %s vs %s: %w", a, b, err)
	}
	ma, _ := stats.Mean(xa)
	mb, _ := stats.Mean(xb)
	p.Result = &PairResult{MeanA: ma, MeanB: mb, Diff: res.Diff.Estimate, CILow: res.Diff.Lower, CIHigh: res.Diff.Upper, ShareNonPositive: res.ShareNonPositive}
	return p, nil
}

// leaderboard fills out's leaderboard from the items every model scored.
func leaderboard(out *CompareOutput, vals []*itemValues, opts stats.Options) error {
	var common []string
	for _, it := range vals[0].items {
		all := true
		for _, v := range vals[1:] {
			if _, ok := v.values[it]; !ok {
				all = false
				break
			}
		}
		if all {
			common = append(common, it)
		}
	}
	out.LeaderboardItems = len(common)
	if len(common) == 0 {
		out.LeaderboardNote = "no item scored by every model"
		return nil
	}
	scores := make([][]float64, len(vals))
	for m, v := range vals {
		for _, it := range common {
			scores[m] = append(scores[m], v.values[it])
		}
	}
	st, err := stats.Leaderboard(scores, stats.MeanStat, opts)
	if err != nil {
		if opts.Method == stats.BCa && errors.Is(err, stats.ErrUndefined) {
			out.LeaderboardNote = fmt.Sprintf("BCa undefined for these scores (%v); method = \"percentile\" is defined for any data", err)
			return nil
		}
		return fmt.Errorf("leaderboard: %w", err)
	}
	for m, s := range st {
		out.Leaderboard = append(out.Leaderboard, Standing{
			Model: out.Models[m], Mean: s.Score.Estimate, CILow: s.Score.Lower, CIHigh: s.Score.Upper,
			Rank: s.Rank, RankLow: s.RankLower, RankHigh: s.RankUpper, ArenaRank: s.ArenaRank,
		})
	}
	return nil
}
