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
//	flexibility                             the 30th percentile (linear interpolation) of a composite
//	                                        (the flexibility param, below)
//	average                                 mean of fluency, feasibility, originality, flexibility
//
// with per-(model, domain) means of every score and of the per-judgement
// mean, and the counts of ideas, refusals, dropped ideas (by reason),
// failed ideas, missing judgements and missing pairs.
//
// Flexibility's composite, by the flexibility param:
//
//	paper        per judgement: (originality + feasibility + fluency of its keyword) / 3, the
//	             keyword's fluency the mean of the model's pair scores for it; judgements of a
//	             keyword without a fluency pair are left out. The paper's Methods ("the 30th
//	             percentile of the combined scores (averaging originality, feasibility, and
//	             fluency) across various keywords"); every published December 2024 value is of
//	             this form: 3 x flexibility = a whole number + a fluency score.
//	per_keyword  per keyword: (mean originality + mean feasibility + fluency) / 3, over the
//	             model's keywords with all three.
//	judged_mean  per judgement: the mean of its judged dimensions, fluency left out (the
//	             authors' stats.ipynb plot of the 30th percentile at 6fc8285).
//
// With parse = "authors" every score is the authors' parser's read of the
// same answer (authors_parse); an answer it could not read is left out and
// counted (unread), where the authors' code would have asked again.

// Flexibility composites and parses (the params' values).
const (
	FlexibilityPaper      = "paper"
	FlexibilityPerKeyword = "per_keyword"
	FlexibilityJudgedMean = "judged_mean"

	ParseStrict  = "strict"
	ParseAuthors = "authors"
)

// aggOptions are the aggregates' params.
type aggOptions struct {
	mapping     map[string]float64
	percentile  float64
	flexibility string
	parse       string
}

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
	// Unread counts the judgements and pairs the authors' parser read
	// nothing from (parse = "authors"): left out of every score.
	Unread int `json:"unread,omitempty"`
	// FallbackRefused counts the ideas whose re-ask was refused too (judged,
	// unless drop_refused dropped them).
	FallbackRefused int `json:"fallback_refused,omitempty"`
	// Domains holds, per keyword domain, the means of every score and of the
	// per-judgement mean ("mean"), over that domain's judgements (fluency:
	// pairs): the heatmap's cells.
	Domains map[string]map[string]float64 `json:"domains,omitempty"`
	// Intervals holds, per metric of Scores, its 95% bootstrap interval
	// over the model's keywords (intervals.go); absent where undefined
	// (fewer than two keywords).
	Intervals map[string]Interval `json:"intervals,omitempty"`
}

// modelAcc accumulates one model.
type modelAcc struct {
	stats    *ModelStats
	dims     map[string][]float64
	judged   []judged // every judgement, in input order: flexibility's composites
	fluency  []float64
	byDomain map[string]map[string][]float64
	perItem  map[string]map[string][]float64 // metric -> item -> values
}

// judged is one judgement's scores as the aggregate reads them.
type judged struct {
	item   string
	scores map[string]float64
	mean   float64
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
	aggOptions
	order   []string
	models  map[string]*modelAcc
	domains map[string]string // item -> domain, from the ideas
}

func newAggregator(o aggOptions) *aggregator {
	if o.flexibility == "" {
		o.flexibility = FlexibilityPaper
	}
	if o.parse == "" {
		o.parse = ParseStrict
	}
	return &aggregator{aggOptions: o, models: map[string]*modelAcc{}, domains: map[string]string{}}
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
		if idea.FallbackRefused {
			a.stats.FallbackRefused++
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
		// What a judgement must carry depends on the reading counted: the
		// strict parse's scores, or (parse = "authors") those or the
		// authors' reading beside them. Another stage's authors_parse (a
		// ranking's) is no judgement's scores under the strict parse.
		switch {
		case g.parse != ParseAuthors && j.Scores == nil:
			return stages.MissingField(*x, "a judgement's scores", "scores")
		case j.Scores == nil && j.AuthorsParse == nil:
			return stages.MissingField(*x, "a judgement's scores", "scores", "authors_parse")
		}
		if g.parse != ParseAuthors && stages.LacksField(x.Output, "mean") {
			return stages.MissingField(*x, "a judgement's mean score (flexibility)", "mean")
		}
		scores, mean, ok := g.scoresOf(&j)
		if !ok {
			a.stats.Unread++
			continue
		}
		a.stats.Judgements++
		domain, item := g.domains[x.Node.Item], x.Node.Item
		for _, d := range sortedKeys(scores) {
			v := scores[d]
			a.dims[d] = append(a.dims[d], v)
			a.add(domain, item, d, v)
		}
		a.judged = append(a.judged, judged{item: item, scores: scores, mean: mean})
		a.add(domain, item, "mean", mean)
	}
	return nil
}

// scoresOf is a judgement's scores and their mean under the parse; ok is
// false when the authors' parser read nothing.
func (g *aggregator) scoresOf(j *Judgement) (map[string]float64, float64, bool) {
	if g.parse == ParseAuthors {
		ap := j.AuthorsParse
		if ap == nil || !ap.Valid || ap.Mean == nil {
			return nil, 0, false
		}
		return ap.Scores, *ap.Mean, true
	}
	out := make(map[string]float64, len(j.Scores))
	for d, v := range j.Scores {
		out[d] = float64(v)
	}
	return out, j.Mean, true
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
		switch { // as for judgements: authors_parse counts under parse = "authors" only
		case g.parse != ParseAuthors && o.Letter == "" && o.Score == nil:
			return stages.MissingField(*x, "a fluency pair's letter or score", "letter", "score")
		case o.Letter == "" && o.Score == nil && o.AuthorsParse == nil:
			return stages.MissingField(*x, "a fluency pair's letter or score", "letter", "score", "authors_parse")
		}
		if g.parse == ParseAuthors && o.Score == nil {
			if o.AuthorsParse == nil || !o.AuthorsParse.Valid {
				a.stats.Unread++
				continue
			}
			o.Letter = o.AuthorsParse.Letter
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
		if comp := g.composites(a); len(comp) > 0 {
			p, err := stats.Percentile(comp, g.percentile)
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

// composites are the values flexibility is the percentile of (see the
// flexibility param at the top of this file).
func (g *aggregator) composites(a *modelAcc) []float64 {
	vals, _ := g.itemComposites(a)
	return vals
}

// itemComposites are the composites and the keyword each is of (the
// keyword bootstrap resamples them by keyword).
func (g *aggregator) itemComposites(a *modelAcc) (vals []float64, items []string) {
	switch g.flexibility {
	case FlexibilityJudgedMean:
		for _, j := range a.judged {
			vals, items = append(vals, j.mean), append(items, j.item)
		}
	case FlexibilityPaper:
		flu := perItemMeans(a.perItem["fluency"])
		for _, j := range a.judged {
			o, ok1 := j.scores["originality"]
			f, ok2 := j.scores["feasibility"]
			fl, ok3 := flu[j.item]
			if ok1 && ok2 && ok3 {
				vals, items = append(vals, (o+f+fl)/3), append(items, j.item)
			}
		}
	case FlexibilityPerKeyword:
		o, f, fl := perItemMeans(a.perItem["originality"]), perItemMeans(a.perItem["feasibility"]), perItemMeans(a.perItem["fluency"])
		keys := make([]string, 0, len(o))
		for item := range o {
			keys = append(keys, item)
		}
		sort.Strings(keys)
		for _, item := range keys {
			fv, ok1 := f[item]
			flv, ok2 := fl[item]
			if ok1 && ok2 {
				vals, items = append(vals, (o[item]+fv+flv)/3), append(items, item)
			}
		}
	}
	return vals, items
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
