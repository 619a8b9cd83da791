package report

import (
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// A cell's value is some statistic of its score's per-item values (the
// mean of an Insight Score's targets, the 80th percentile of their best
// similarities). To score every row on the items all rows share, or to put
// a bootstrap interval on a value its stage gave none, the report must
// apply that statistic to other items, so it first finds it: the first of
// these that reproduces the value from the per-item values. A value none
// reproduces (a mean over judgements where the per-item values are per
// keyword) is left as its stage gave it, and the notes say so.
var statistics = []struct {
	name string
	p    float64 // percentile; -1: the mean
}{{"mean", -1}, {"median", 50}, {"p80", 80}, {"p30", 30}, {"p20", 20}, {"p70", 70}, {"p90", 90}, {"p10", 10}, {"p25", 25}, {"p75", 75}}

// statistic is a statistic of per-item values, by name.
type statistic struct {
	name string
	fn   func([]float64) float64
}

// inferStatistic returns the statistic s.Value is of s.PerItem, nil when
// the score has no per-item value for each item it counts or none of
// statistics reproduces its value (to 1e-9, relative).
func inferStatistic(s *stages.Score) *statistic {
	if len(s.PerItem) == 0 || len(s.PerItem) != s.Count {
		return nil
	}
	vals := itemValues(s.PerItem, nil)
	for _, c := range statistics {
		fn := stats.MeanStat
		if c.p >= 0 {
			fn = stats.PercentileStat(c.p)
		}
		if v := fn(vals); math.Abs(v-s.Value) <= 1e-9*math.Max(1, math.Abs(s.Value)) {
			return &statistic{name: c.name, fn: fn}
		}
	}
	return nil
}

// itemValues lists the values of items (all of perItem when items is nil)
// in item order, so a resample draws the same items whatever the map's order.
func itemValues(perItem map[string]float64, items []string) []float64 {
	if items == nil {
		items = slices.Sorted(maps.Keys(perItem))
	}
	out := make([]float64, len(items))
	for i, it := range items {
		out[i] = perItem[it]
	}
	return out
}

// restrict returns s over items alone (each in s.PerItem): its statistic
// recomputed, its counts those items, no interval (the stage's was over
// other items).
func restrict(s *stages.Score, st *statistic, items []string) *stages.Score {
	out := &stages.Score{Count: len(items), PerItem: map[string]float64{}, Extra: map[string]float64{}}
	for k, v := range s.Extra {
		switch k {
		case "ci_low", "ci_high", "resamples", "dropped":
		default:
			out.Extra[k] = v
		}
	}
	for _, it := range items {
		out.PerItem[it] = s.PerItem[it]
	}
	out.Value = st.fn(itemValues(s.PerItem, items))
	return out
}

// intervalResamples and intervalLevel are the report's own bootstrap:
// stats' defaults, percentile method, seed 0, so a table's intervals are
// the same on every run.
var (
	intervalResamples = stats.DefaultResamples
	intervalLevel     = stats.DefaultLevel
)

// addInterval puts a percentile bootstrap interval over s's items on s,
// at level (the default when 0); false when the statistic is undefined on
// them (fewer than two items, say).
func addInterval(s *stages.Score, st *statistic, level float64) bool {
	if level == 0 {
		level = intervalLevel
	}
	if s.Count < 2 {
		return false
	}
	ci, err := stats.Bootstrap(itemValues(s.PerItem, nil), st.fn, stats.Options{Resamples: intervalResamples, Level: level})
	if err != nil {
		return false
	}
	if s.Extra == nil {
		s.Extra = map[string]float64{}
	}
	s.Extra["ci_low"], s.Extra["ci_high"], s.Extra["ci_level"] = ci.Lower, ci.Upper, ci.Level
	s.Extra["resamples"] = float64(intervalResamples)
	return true
}

// integral reports whether every value prints as an integer.
func integral(vs []float64) bool {
	for _, v := range vs {
		if v != math.Trunc(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return len(vs) > 0
}

// plural is "4 items", "1 item" (noun is the plural: "targets").
func plural(n int, noun string) string {
	if n == 1 {
		noun = singular(noun)
	}
	return strconv.Itoa(n) + " " + noun
}

func singular(noun string) string {
	if len(noun) > 1 && noun[len(noun)-1] == 's' {
		return noun[:len(noun)-1]
	}
	return noun
}

// constant reports whether every per-item value is the same (then every
// statistic is that value, and a whole mean is no chance).
func constant(perItem map[string]float64) bool {
	first, v0 := true, 0.0
	for _, v := range perItem {
		if first {
			first, v0 = false, v
		} else if v != v0 {
			return false
		}
	}
	return true
}
