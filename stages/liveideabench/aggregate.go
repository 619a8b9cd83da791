package liveideabench

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// The aggregation shared by liveideabench_score (one model, one column of a
// report) and leaderboard (every model): from the ideas, the judgements and
// the fluency pairs of each model,
//
//	originality, feasibility, clarity, ...  mean over all the model's judgements of that score
//	fluency                                 mean over the model's pairs of the pair's score (mapping)
//	flexibility                             the 30th percentile (linear interpolation) of the
//	                                        per-judgement mean score (Judgement.Mean)
//	average                                 mean of fluency, feasibility, originality, flexibility
//
// with per-(model, domain) means of every score and of the per-judgement
// mean, and the counts of ideas, refusals, dropped ideas (by reason),
// failed ideas, missing judgements and missing pairs.

// ModelStats is one model's line of the leaderboard. A metric without data
// (no fluency pairs, a dimension not judged) is absent.
type ModelStats struct {
	Model       string             `json:"model"`
	Family      string             `json:"family,omitempty"`
	Rank        int                `json:"rank,omitempty"` // by average, 1 = best; ties share a rank
	Scores      map[string]float64 `json:"scores"`         // originality, feasibility, clarity, ..., fluency, flexibility, average
	Pareto      bool               `json:"pareto"`         // on the Pareto front of originality vs feasibility
	Ideas       int                `json:"ideas"`          // idea nodes, dropped and failed included
	Refusals    int                `json:"refusals"`       // ideas whose first answer was a refusal
	Dropped     int                `json:"dropped"`        // ideas excluded (too long, too short, refused twice)
	DropReasons map[string]int     `json:"drop_reasons,omitempty"`
	FailedIdeas int                `json:"failed_ideas"`
	Judgements  int                `json:"judgements"`         // judgements scored
	Missing     int                `json:"missing_judgements"` // failed, or skipped because the idea failed
	Pairs       int                `json:"pairs"`              // fluency pairs scored
	MissingPair int                `json:"missing_pairs"`
	// Domains holds, per keyword domain, the means of every score and of the
	// per-judgement mean ("mean"), over that domain's judgements (fluency:
	// pairs): the heatmap's cells.
	Domains map[string]map[string]float64 `json:"domains,omitempty"`
}

// modelAcc accumulates one model.
type modelAcc struct {
	stats    *ModelStats
	dims     map[string][]float64
	means    []float64
	fluency  []float64
	byDomain map[string]map[string][]float64
	perItem  map[string]map[string][]float64 // metric -> item -> values
}

func (a *modelAcc) add(domain, item, metric string, v float64) {
	if domain != "" {
		d := a.byDomain[domain]
		if d == nil {
			d = map[string][]float64{}
			a.byDomain[domain] = d
		}
		d[metric] = append(d[metric], v)
	}
	m := a.perItem[metric]
	if m == nil {
		m = map[string][]float64{}
		a.perItem[metric] = m
	}
	m[item] = append(m[item], v)
}

// aggregator groups inputs by the model that generated them.
type aggregator struct {
	mapping    map[string]float64
	percentile float64
	order      []string
	models     map[string]*modelAcc
	domains    map[string]string // item -> domain, from the ideas
}

func newAggregator(mapping map[string]float64, percentile float64) *aggregator {
	return &aggregator{mapping: mapping, percentile: percentile, models: map[string]*modelAcc{}, domains: map[string]string{}}
}

// modelOf names the model an input's instance belongs to: its generator,
// else its instance key, else its address.
func modelOf(u *stages.Upstream) (string, string) {
	switch {
	case u == nil:
		return "", ""
	case u.Generator != nil:
		return u.Generator.Name, u.Generator.Family
	case u.Key != "":
		return u.Key, ""
	}
	return u.Address, ""
}

func (g *aggregator) model(x *stages.In) *modelAcc {
	name, family := modelOf(x.From)
	a := g.models[name]
	if a == nil {
		a = &modelAcc{stats: &ModelStats{Model: name, Family: family, DropReasons: map[string]int{}},
			dims: map[string][]float64{}, byDomain: map[string]map[string][]float64{}, perItem: map[string]map[string][]float64{}}
		g.models[name] = a
		g.order = append(g.order, name)
	}
	return a
}

func (g *aggregator) addIdeas(in []stages.In) error {
	for i := range in {
		x := &in[i]
		a := g.model(x)
		a.stats.Ideas++
		if x.Output == nil {
			a.stats.FailedIdeas++
			continue
		}
		var idea Idea
		if err := json.Unmarshal(x.Output, &idea); err != nil {
			return fmt.Errorf("idea of %q: %w", x.Node.Item, err)
		}
		if idea.Domain != "" {
			g.domains[x.Node.Item] = idea.Domain
		}
		if idea.Refused || idea.Reason == "refused" {
			a.stats.Refusals++
		}
		if idea.Dropped {
			a.stats.Dropped++
			a.stats.DropReasons[idea.Reason]++
		}
	}
	return nil
}

func (g *aggregator) addJudgements(in []stages.In) error {
	for i := range in {
		x := &in[i]
		a := g.model(x)
		if x.Output == nil {
			a.stats.Missing++
			continue
		}
		var j Judgement
		if err := json.Unmarshal(x.Output, &j); err != nil {
			return fmt.Errorf("judgement of %q: %w", x.Node.Item, err)
		}
		if j.Dropped {
			continue // the idea's drop is counted with the ideas
		}
		if j.Scores == nil {
			return stages.MissingField(*x, "a judgement's scores", "scores")
		}
		if stages.LacksField(x.Output, "mean") {
			return stages.MissingField(*x, "a judgement's mean score (flexibility)", "mean")
		}
		a.stats.Judgements++
		domain, item := g.domains[x.Node.Item], x.Node.Item
		for d, v := range j.Scores {
			a.dims[d] = append(a.dims[d], float64(v))
			a.add(domain, item, d, float64(v))
		}
		a.means = append(a.means, j.Mean)
		a.add(domain, item, "mean", j.Mean)
	}
	return nil
}

func (g *aggregator) addFluency(in []stages.In) error {
	for i := range in {
		x := &in[i]
		a := g.model(x)
		if x.Output == nil {
			a.stats.MissingPair++
			continue
		}
		var o FluencyOutput
		if err := json.Unmarshal(x.Output, &o); err != nil {
			return fmt.Errorf("fluency of %q: %w", x.Node.Item, err)
		}
		if o.Dropped {
			continue
		}
		if o.Letter == "" && o.Score == nil {
			return stages.MissingField(*x, "a fluency pair's letter or score", "letter", "score")
		}
		v, err := fluencyScore(&o, g.mapping)
		if err != nil {
			return fmt.Errorf("fluency of %q: %w", x.Node.Item, err)
		}
		a.stats.Pairs++
		a.fluency = append(a.fluency, v)
		a.add(g.domains[x.Node.Item], x.Node.Item, "fluency", v)
	}
	return nil
}

// finish computes every model's scores, in the order models were first
// seen, then ranks and the Pareto front.
func (g *aggregator) finish() ([]*ModelStats, error) {
	out := make([]*ModelStats, 0, len(g.order))
	for _, name := range g.order {
		a := g.models[name]
		s := a.stats
		s.Scores = map[string]float64{}
		for d, vs := range a.dims {
			s.Scores[d] = mean(vs)
		}
		if len(a.fluency) > 0 {
			s.Scores["fluency"] = mean(a.fluency)
		}
		if len(a.means) > 0 {
			p, err := stats.Percentile(a.means, g.percentile)
			if err != nil {
				return nil, fmt.Errorf("flexibility of %s: %w", name, err)
			}
			s.Scores["flexibility"] = p
		}
		four := []string{"fluency", "feasibility", "originality", "flexibility"}
		var vs []float64
		for _, m := range four {
			if v, ok := s.Scores[m]; ok {
				vs = append(vs, v)
			}
		}
		if len(vs) == len(four) {
			s.Scores["average"] = mean(vs)
		}
		if len(a.byDomain) > 0 {
			s.Domains = map[string]map[string]float64{}
			for d, ms := range a.byDomain {
				s.Domains[d] = map[string]float64{}
				for m, vs := range ms {
					s.Domains[d][m] = mean(vs)
				}
			}
		}
		if len(s.DropReasons) == 0 {
			s.DropReasons = nil
		}
		out = append(out, s)
	}
	rankAndPareto(out)
	return out, nil
}

// mean of a non-empty slice, summed in order (so equal inputs give equal
// bits whatever map order produced them upstream).
func mean(vs []float64) float64 {
	sum := 0.0
	for _, v := range vs {
		sum += v
	}
	return sum / float64(len(vs))
}

// rankAndPareto ranks models by average (competition ranking: ties share a
// rank, the next rank skips) and marks the Pareto front of originality vs
// feasibility: a model no other model matches or beats on both and beats
// on one.
func rankAndPareto(ms []*ModelStats) {
	for _, m := range ms {
		if v, ok := m.Scores["average"]; ok {
			m.Rank = 1
			for _, o := range ms {
				if w, ok := o.Scores["average"]; ok && w > v {
					m.Rank++
				}
			}
		}
		o1, ok1 := m.Scores["originality"]
		f1, ok2 := m.Scores["feasibility"]
		if !ok1 || !ok2 {
			continue
		}
		m.Pareto = true
		for _, n := range ms {
			o2, ok1 := n.Scores["originality"]
			f2, ok2 := n.Scores["feasibility"]
			if ok1 && ok2 && o2 >= o1 && f2 >= f1 && (o2 > o1 || f2 > f1) {
				m.Pareto = false
				break
			}
		}
	}
}

// sortedByRank returns ms ordered by rank (unranked last), then name.
func sortedByRank(ms []*ModelStats) []*ModelStats {
	out := append([]*ModelStats(nil), ms...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := out[i].Rank, out[j].Rank
		if ri == 0 {
			ri = math.MaxInt
		}
		if rj == 0 {
			rj = math.MaxInt
		}
		if ri != rj {
			return ri < rj
		}
		return out[i].Model < out[j].Model
	})
	return out
}

// perItemMeans averages a metric's values per item.
func perItemMeans(m map[string][]float64) map[string]float64 {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]float64, len(m))
	for item, vs := range m {
		out[item] = mean(vs)
	}
	return out
}
