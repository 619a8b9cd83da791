// Package mix holds the stages that read several benchmarks' evaluators
// at once. cross_agreement aligns the units three evaluators score
// differently — IdeaBench's ranking against the target (one ranking per
// target), LiveIdeaBench's judge panel (one score per judge and idea) and
// ScholarEval's reviews (one review per idea) — on the (generator, item)
// pairs they share, and asks how far they agree, per idea and per model,
// with Kendall's tau-b and bootstrap intervals over the items.
package mix

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

func init() { stages.Register(crossType{}) }

type crossType struct{}

func (crossType) Name() string    { return "cross_agreement" }
func (crossType) Version() string { return "1" }

// The three kinds of evaluator, by the param that lists them; measure
// names are the param names, in this order everywhere.
var kinds = []struct {
	param, doc string
	accepts    []string
}{
	{"rankings", "IdeaBench rankings against the target (rank_ideas instances, one per generator): an idea's value is minus its position among the hypotheses (the mean over rotated rankings, and over the item's ideas when there are several), so higher is better, as for the others", []string{"rank_ideas"}},
	{"panels", "LiveIdeaBench judge panels (judge_panel instances, one per generator): an idea's value is the mean of its judges' means", []string{"judge_panel"}},
	{"reviews", "ScholarEval soundness reviews (soundness_review instances, one per generator): an idea's value is its review's score, the mean of its method scores (a contribution review has none)", []string{"soundness_review"}},
}

func (crossType) Params() []stages.Param {
	ps := []stages.Param{}
	for _, k := range kinds {
		ps = append(ps, stages.Param{Name: k.param, Kind: stages.Inputs, Accepts: k.accepts, Doc: k.doc})
	}
	return append(ps,
		stages.Param{Name: "panel_score", Kind: stages.String, Default: "", Doc: `the panel's value of an idea: "" (the mean of each judge's mean over its dimensions) or one dimension ("originality": does what the panel calls original survive a literature check?)`},
		stages.Param{Name: "resamples", Kind: stages.Int, Default: stats.DefaultResamples, Min: 100, Max: 100000, Doc: "bootstrap resamples of the items (targets or keywords), for every interval"},
		stages.Param{Name: "seed", Kind: stages.Int, Default: 0, Min: 0, Max: math.MaxInt32, Doc: "seed of the resampling; the same seed gives the same intervals"},
		stages.Param{Name: "confidence", Kind: stages.Number, Default: stats.DefaultLevel, Doc: "confidence level of the intervals, in (0, 1)"},
	)
}

// CrossOutput is cross_agreement's output.
//
// A unit is a (generator, item) pair: the generator's idea for the item
// (its ideas, when it gave several: a ranking's value is then their mean
// position, a panel's the mean over their judgements), the generator named
// by the instance's generator (what it inherits from the ideas it
// evaluates). ScholarEval's reviews read one idea an item, so a mix that
// reviews uses generate_ideas with n = 1, and a unit is one idea. A unit's
// value under each measure is oriented so that higher is better.
//
// PerIdea has one entry per pair of measures: tau-b over the units both
// scored. PerModel has one per pair too: tau-b between the generators'
// means over the CommonItems (the items every measure scored for every
// generator). Intervals resample the items with replacement (a resampled
// item brings all its units), percentile method.
type CrossOutput struct {
	Measures    []string                      `json:"measures"`
	Generators  []string                      `json:"generators"`
	Units       map[string]int                `json:"units"` // measure -> units it scored
	PerIdea     []MeasurePair                 `json:"per_idea"`
	PerModel    []MeasurePair                 `json:"per_model"`
	CommonItems int                           `json:"common_items"`
	Means       map[string]map[string]float64 `json:"means"` // measure -> generator -> mean over CommonItems
	Level       float64                       `json:"level"`
	Resamples   int                           `json:"resamples"`
	Seed        int                           `json:"seed"`
	Notes       []string                      `json:"notes,omitempty"`
}

// MeasurePair is the agreement of two measures. TauB and its interval are
// null when undefined (fewer than two shared units, or a constant one).
type MeasurePair struct {
	A      string   `json:"a"`
	B      string   `json:"b"`
	Shared int      `json:"shared"` // units (per idea) or generators (per model)
	TauB   *float64 `json:"tau_b"`
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
}

type config struct {
	measures []string
	ups      map[string][]*stages.Upstream
	panelDim string // "" : a judgement's mean
	opts     stats.Options
	seed     int
}

func readConfig(p stages.Params) (*config, error) {
	c := &config{ups: map[string][]*stages.Upstream{}, seed: p.Int("seed"), panelDim: p.String("panel_score")}
	for _, k := range kinds {
		ups := p.Inputs(k.param)
		if len(ups) == 0 {
			continue
		}
		c.measures = append(c.measures, k.param)
		c.ups[k.param] = ups
		seen := map[string]string{}
		for _, u := range ups {
			g := generatorOf(u)
			if prev, ok := seen[g]; ok {
				return nil, stages.ParamErrorf(k.param, "%s lists %s and %s, both of generator %s: list one instance per generator, so each idea has one value per measure", k.param, prev, u.Address, g)
			}
			seen[g] = u.Address
		}
	}
	if c.panelDim != "" && len(c.ups["panels"]) == 0 {
		return nil, stages.ParamErrorf("panel_score", "panel_score = %q names a panel dimension, but panels lists no judge_panel", c.panelDim)
	}
	if len(c.measures) < 2 {
		return nil, stages.ParamErrorf("rankings", "cross_agreement needs at least two of rankings, panels and reviews (got %d): agreement is between measures", len(c.measures))
	}
	c.opts = stats.Options{Resamples: p.Int("resamples"), Seed: uint64(c.seed), Level: p.Number("confidence")}
	if !(c.opts.Level > 0 && c.opts.Level < 1) {
		return nil, stages.ParamErrorf("confidence", "confidence = %v must be in (0, 1), e.g. 0.95", c.opts.Level)
	}
	return c, nil
}

// generatorOf names whose ideas an instance evaluates: its generator's
// model name, or "dataset" for ideas a dataset holds.
func generatorOf(u *stages.Upstream) string {
	if u.Generator != nil {
		return u.Generator.Name
	}
	return "dataset"
}

func (crossType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	c, err := readConfig(inst.Params)
	if err != nil {
		return nil, err
	}
	// in[i] answers deps[i]: measureOf[i] says which measure it is.
	var deps []stages.Dep
	var measureOf []string
	for _, m := range c.measures {
		n := 0
		for _, u := range c.ups[m] {
			n += len(u.Nodes)
		}
		for i := 0; i < n; i++ {
			deps = append(deps, stages.Dep{Input: m, Index: i})
			measureOf = append(measureOf, m)
		}
	}
	return []stages.Node{{
		Deps:         deps,
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				out, err := c.compute(measureOf, in)
				if err != nil {
					return nil, err
				}
				return stages.EncodeOutput(out)
			}}, nil
		},
	}}, nil
}

// unit is a generator's idea (or ideas) for an item.
type unit struct{ gen, item string }

// values maps each measure to its units' values.
type values map[string]map[unit]float64

func (c *config) compute(measureOf []string, in []stages.In) (*CrossOutput, error) {
	if len(in) != len(measureOf) {
		return nil, fmt.Errorf("cross_agreement: %d inputs for %d deps", len(in), len(measureOf))
	}
	// Per measure and unit, the node values to average (a panel's judges,
	// a rotated ranking's permutations).
	acc := map[string]map[unit][]float64{}
	for _, m := range c.measures {
		acc[m] = map[unit][]float64{}
	}
	for i, x := range in {
		if x.Output == nil || x.From == nil {
			continue // failed or skipped: the unit is missing under this measure
		}
		m := measureOf[i]
		v, ok, err := nodeValue(m, c.panelDim, x)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		u := unit{generatorOf(x.From), x.Node.Item}
		acc[m][u] = append(acc[m][u], v)
	}
	vals := values{}
	out := &CrossOutput{Measures: c.measures, Units: map[string]int{}, Means: map[string]map[string]float64{},
		Level: c.opts.Level, Resamples: c.opts.Resamples, Seed: c.seed}
	if out.Resamples == 0 {
		out.Resamples = stats.DefaultResamples
	}
	gens := map[string]bool{}
	for _, m := range c.measures {
		vals[m] = map[unit]float64{}
		for u, vs := range acc[m] {
			mean, _ := stats.Mean(vs)
			vals[m][u] = mean
			gens[u.gen] = true
		}
		out.Units[m] = len(vals[m])
	}
	out.Generators = slices.Sorted(maps.Keys(gens))

	// The items, in a fixed order: the resampling draws indices into it.
	itemSet := map[string]bool{}
	for _, m := range c.measures {
		for u := range vals[m] {
			itemSet[u.item] = true
		}
	}
	items := slices.Sorted(maps.Keys(itemSet))
	idx := make([]float64, len(items))
	for i := range idx {
		idx[i] = float64(i)
	}

	// Common items: every measure scored every generator's idea of them.
	var common []string
	for _, it := range items {
		all := true
		for _, m := range c.measures {
			for _, g := range out.Generators {
				if _, ok := vals[m][unit{g, it}]; !ok {
					all = false
				}
			}
		}
		if all {
			common = append(common, it)
		}
	}
	out.CommonItems = len(common)
	for _, m := range c.measures {
		out.Means[m] = map[string]float64{}
		for _, g := range out.Generators {
			if len(common) == 0 {
				break
			}
			var xs []float64
			for _, it := range common {
				xs = append(xs, vals[m][unit{g, it}])
			}
			out.Means[m][g], _ = stats.Mean(xs)
		}
	}
	commonIdx := make([]float64, len(common))
	for i := range commonIdx {
		commonIdx[i] = float64(i)
	}

	for i, a := range c.measures {
		for _, b := range c.measures[i+1:] {
			// Per idea: units both scored, grouped by item.
			perItem := make([][]unit, len(items))
			shared := 0
			for k, it := range items {
				for _, g := range out.Generators {
					u := unit{g, it}
					_, okA := vals[a][u]
					_, okB := vals[b][u]
					if okA && okB {
						perItem[k] = append(perItem[k], u)
						shared++
					}
				}
			}
			tauOf := func(draw []float64) float64 {
				var xs, ys []float64
				for _, d := range draw {
					for _, u := range perItem[int(d)] {
						xs, ys = append(xs, vals[a][u]), append(ys, vals[b][u])
					}
				}
				t, err := stats.KendallTauB(xs, ys)
				if err != nil {
					return math.NaN()
				}
				return t
			}
			out.PerIdea = append(out.PerIdea, pairOf(a, b, shared, idx, tauOf, c.opts, &out.Notes, "per idea"))

			// Per model: the generators' means over the resampled common items.
			meanTau := func(draw []float64) float64 {
				if len(out.Generators) < 2 || len(draw) == 0 {
					return math.NaN()
				}
				var xs, ys []float64
				for _, g := range out.Generators {
					var sa, sb float64
					for _, d := range draw {
						u := unit{g, common[int(d)]}
						sa += vals[a][u]
						sb += vals[b][u]
					}
					xs, ys = append(xs, sa/float64(len(draw))), append(ys, sb/float64(len(draw)))
				}
				t, err := stats.KendallTauB(xs, ys)
				if err != nil {
					return math.NaN()
				}
				return t
			}
			n := len(out.Generators)
			if len(common) == 0 {
				n = 0
			}
			out.PerModel = append(out.PerModel, pairOf(a, b, n, commonIdx, meanTau, c.opts, &out.Notes, "per model"))
		}
	}
	sort.Strings(out.Notes)
	return out, nil
}

// pairOf computes a pair's tau-b and its bootstrap interval over the
// items (draw holds item indices). An undefined tau (too few units, a
// constant measure) is null, with a note; a resample where it is
// undefined is left out of the interval, and counted in a note.
func pairOf(a, b string, shared int, idx []float64, tau func([]float64) float64, opts stats.Options, notes *[]string, what string) MeasurePair {
	p := MeasurePair{A: a, B: b, Shared: shared}
	t := tau(idx)
	if math.IsNaN(t) || shared < 2 {
		*notes = append(*notes, fmt.Sprintf("%s vs %s %s: tau-b is undefined (%d shared, or a measure constant over them)", a, b, what, shared))
		return p
	}
	p.TauB = &t
	undefined := 0
	iv, err := stats.Bootstrap(idx, func(draw []float64) float64 {
		v := tau(draw)
		if math.IsNaN(v) {
			undefined++
			return t // a degenerate resample neither widens nor narrows
		}
		return v
	}, opts)
	if err != nil {
		*notes = append(*notes, fmt.Sprintf("%s vs %s %s: no interval: %v", a, b, what, err))
		return p
	}
	lo, hi := iv.Lower, iv.Upper
	p.CILow, p.CIHigh = &lo, &hi
	if undefined > 0 {
		*notes = append(*notes, fmt.Sprintf("%s vs %s %s: %d resample(s) had tau-b undefined and count as the estimate", a, b, what, undefined))
	}
	return p
}

// nodeValue reads one node's value under measure m, oriented so that
// higher is better; ok is false for a dropped idea or a review without a
// score.
func nodeValue(m, panelDim string, x stages.In) (float64, bool, error) {
	switch m {
	case "rankings":
		var r struct {
			Order   []string          `json:"order"`
			Labels  map[string]string `json:"labels"`
			N       int               `json:"n"`
			Dropped bool              `json:"dropped"`
		}
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return 0, false, fmt.Errorf("decode ranking %s: %w", stages.NodeAddress(x), err)
		}
		if r.Dropped {
			return 0, false, nil
		}
		// Minus the mean position of the generator's ideas among the
		// hypotheses (the one idea's, with n = 1).
		sum, n := 0, 0
		for i, l := range r.Order {
			if r.Labels[l] != "target" {
				sum += i + 1
				n++
			}
		}
		if n == 0 {
			return 0, false, fmt.Errorf("%s: the ranking has no generated idea", stages.NodeAddress(x))
		}
		return -float64(sum) / float64(n), true, nil
	case "panels":
		var j struct {
			Mean    float64            `json:"mean"`
			Scores  map[string]float64 `json:"scores"`
			Dropped bool               `json:"dropped"`
		}
		if err := json.Unmarshal(x.Output, &j); err != nil {
			return 0, false, fmt.Errorf("decode judgement %s: %w", stages.NodeAddress(x), err)
		}
		if j.Dropped {
			return 0, false, nil
		}
		if panelDim == "" {
			return j.Mean, true, nil
		}
		v, ok := j.Scores[panelDim]
		if !ok {
			return 0, false, fmt.Errorf("%s has no %q score (it scores %s): set panel_score to one of the panel's dimensions", stages.NodeAddress(x), panelDim, strings.Join(slices.Sorted(maps.Keys(j.Scores)), ", "))
		}
		return v, true, nil
	case "reviews":
		var r struct {
			Score *float64 `json:"score"`
		}
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return 0, false, fmt.Errorf("decode review %s: %w", stages.NodeAddress(x), err)
		}
		if r.Score == nil {
			return 0, false, nil
		}
		return *r.Score, true, nil
	}
	return 0, false, fmt.Errorf("cross_agreement: unknown measure %q", m)
}
