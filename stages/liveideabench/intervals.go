package liveideabench

import (
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/ideaflow/ideaflow/stages/stats"
)

// Intervals over keywords. A model's value is a statistic of its
// judgements (a mean, flexibility's percentile of composites) or of its
// fluency pairs, and a keyword brings several of them (two ideas, three
// judges each, one pair): the keyword is what the benchmark samples, so
// the interval resamples keywords. Each resample draws the model's n
// keywords with replacement (stats.Bootstrap over the keywords' indices),
// every drawn keyword bringing all its judgements and pairs as often as it
// was drawn, and recomputes the value from them exactly as the value was
// computed: a mean over the judgements (pairs) drawn, the percentile of
// the composites drawn, the average of the four recomputed. (A mean of
// per-keyword means, what a report's bootstrap of per_item would give, is
// another number wherever keywords bring unequal counts, so the report
// cannot do this; the per_item values stay per-keyword means.) The
// interval is the percentile method's, 1,000 resamples, seed 0, 95%: the
// report's own bootstrap settings, so a board reads like every other
// table. A keyword's composites keep their fluency (the keyword's mean
// pair score): resampling keywords moves it with them.

// Interval is a 95% bootstrap interval over a model's keywords.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// The keyword bootstrap's settings (the report's: see stages/report items.go).
const (
	keywordResamples = stats.DefaultResamples
	keywordLevel     = stats.DefaultLevel
)

// keywordSample is one model's judgements and pairs grouped by keyword,
// reduced to what a resample's values need: per metric and keyword the sum
// and count of its values, and the composites sorted with their keyword.
type keywordSample struct {
	items      []string
	metric     map[string]int // metric -> row of sum, cnt
	sum, cnt   [][]float64    // [metric][keyword]
	comps      []keywordComp  // ascending by value
	percentile float64
	counts     []int // the resample's draws per keyword (reused)
}

type keywordComp struct {
	v    float64
	item int
}

// keywordSample groups a's values by keyword.
func (g *aggregator) keywordSample(a *modelAcc) *keywordSample {
	compVals, compItems := g.itemComposites(a)
	seen := map[string]bool{}
	for m, byItem := range a.perItem {
		if m == "mean" {
			continue // per-judgement means: flexibility's composites carry them
		}
		for it := range byItem {
			seen[it] = true
		}
	}
	for _, it := range compItems {
		seen[it] = true
	}
	k := &keywordSample{metric: map[string]int{}, percentile: g.percentile}
	for it := range seen {
		k.items = append(k.items, it)
	}
	sort.Strings(k.items)
	index := make(map[string]int, len(k.items))
	for i, it := range k.items {
		index[it] = i
	}
	metrics := make([]string, 0, len(a.perItem))
	for m := range a.perItem {
		if m != "mean" {
			metrics = append(metrics, m)
		}
	}
	sort.Strings(metrics)
	for _, m := range metrics {
		sum, cnt := make([]float64, len(k.items)), make([]float64, len(k.items))
		for it, vs := range a.perItem[m] {
			i := index[it]
			for _, v := range vs {
				sum[i] += v
			}
			cnt[i] += float64(len(vs))
		}
		k.metric[m] = len(k.sum)
		k.sum, k.cnt = append(k.sum, sum), append(k.cnt, cnt)
	}
	for i, v := range compVals {
		k.comps = append(k.comps, keywordComp{v: v, item: index[compItems[i]]})
	}
	sort.SliceStable(k.comps, func(i, j int) bool { return k.comps[i].v < k.comps[j].v })
	k.counts = make([]int, len(k.items))
	return k
}

// value is metric on the keywords drawn counts[i] times each; NaN where
// the draw has none of its values.
func (k *keywordSample) value(metric string, counts []int) float64 {
	switch metric {
	case "flexibility":
		return k.flexibility(counts)
	case "average":
		sum := 0.0
		for _, m := range []string{"fluency", "feasibility", "originality", "flexibility"} {
			v := k.value(m, counts)
			if math.IsNaN(v) {
				return v
			}
			sum += v
		}
		return sum / 4
	}
	r, ok := k.metric[metric]
	if !ok {
		return math.NaN()
	}
	num, den := 0.0, 0.0
	for i, c := range counts {
		if c > 0 {
			num += float64(c) * k.sum[r][i]
			den += float64(c) * k.cnt[r][i]
		}
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// flexibility is the percentile of the drawn composites, each repeated as
// often as its keyword was drawn: stats.Percentile's linear interpolation
// on that multiset, read off the sorted composites without building it.
func (k *keywordSample) flexibility(counts []int) float64 {
	n := 0
	for _, c := range k.comps {
		n += counts[c.item]
	}
	if n == 0 {
		return math.NaN()
	}
	if k.percentile == 0 {
		for _, c := range k.comps {
			if counts[c.item] > 0 {
				return c.v
			}
		}
	}
	rank := k.percentile / 100 * float64(n-1)
	at := int(rank)
	f := rank - float64(at)
	// x[at] and x[at+1] of the multiset.
	var lo, hi float64
	pos, found := 0, false
	for _, c := range k.comps {
		w := counts[c.item]
		if w == 0 {
			continue
		}
		if !found && at < pos+w {
			lo, found = c.v, true
			if at+1 < pos+w {
				hi = c.v
				break
			}
		} else if found {
			hi = c.v
			break
		}
		pos += w
	}
	if at+1 >= n || f == 0 || hi == lo {
		return lo
	}
	return lo + f*(hi-lo)
}

// interval is metric's bootstrap interval over the keywords; false when it
// is undefined (fewer than two keywords, or a resample without the
// metric's values).
func (k *keywordSample) interval(metric string) (Interval, bool) {
	if len(k.items) < 2 {
		return Interval{}, false
	}
	idx := make([]float64, len(k.items))
	for i := range idx {
		idx[i] = float64(i)
	}
	stat := func(drawn []float64) float64 {
		clear(k.counts)
		for _, v := range drawn {
			k.counts[int(v)]++
		}
		return k.value(metric, k.counts)
	}
	ci, err := stats.Bootstrap(idx, stat, stats.Options{Resamples: keywordResamples, Level: keywordLevel})
	if err != nil {
		return Interval{}, false
	}
	return Interval{Low: ci.Lower, High: ci.Upper}, true
}

// intervals are the intervals of every metric of s the sample has.
func (k *keywordSample) intervals(s *ModelStats) map[string]Interval {
	out := map[string]Interval{}
	for _, m := range slices.Sorted(maps.Keys(s.Scores)) {
		if ci, ok := k.interval(m); ok {
			out[m] = ci
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
