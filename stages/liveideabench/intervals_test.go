package liveideabench

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// keywordData is one model's judgements (originality, feasibility) and
// fluency letters per keyword, unequal in number as drops and failures
// leave them.
var keywordData = []struct {
	item    string
	judged  [][2]int
	letters []string
}{
	{"k0", [][2]int{{7, 5}, {8, 6}, {6, 4}, {9, 3}, {5, 5}, {7, 6}}, []string{"B"}},
	{"k1", [][2]int{{4, 8}, {6, 7}}, []string{"A"}},
	{"k2", [][2]int{{3, 9}, {5, 8}, {4, 7}}, []string{"C", "B"}},
	{"k3", [][2]int{{9, 2}}, []string{"D"}},
	{"k4", [][2]int{{6, 6}, {7, 7}, {8, 8}, {5, 9}}, []string{"A"}},
	{"k5", [][2]int{{2, 9}, {3, 8}, {1, 9}, {2, 7}, {3, 6}}, []string{"B"}},
	{"k6", [][2]int{{8, 4}, {9, 5}}, []string{"C"}},
}

func keywordInputs(t *testing.T) []stages.In {
	t.Helper()
	gen := &stages.Model{Name: "m"}
	up := &stages.Upstream{Address: "u", Key: "m", Generator: gen}
	var in []stages.In
	for _, k := range keywordData {
		b, _ := json.Marshal(Idea{Keyword: k.item, Idea: "x"})
		in = append(in, stages.In{Dep: stages.Dep{Input: "ideas"}, Node: stages.NodeInfo{Item: k.item}, From: up, Output: b})
		for _, j := range k.judged {
			b, _ := json.Marshal(Judgement{Judge: "j", Scores: map[string]int{"originality": j[0], "feasibility": j[1]}, Mean: float64(j[0]+j[1]) / 2})
			in = append(in, stages.In{Dep: stages.Dep{Input: "judgements"}, Node: stages.NodeInfo{Item: k.item}, From: up, Output: b})
		}
		for _, l := range k.letters {
			b, _ := json.Marshal(FluencyOutput{Letter: l, Judge: "j"})
			in = append(in, stages.In{Dep: stages.Dep{Input: "fluency"}, Node: stages.NodeInfo{Item: k.item}, From: up, Output: b})
		}
	}
	return in
}

// directValue computes metric from the judgements and pairs of the
// keywords drawn (indices into keywordData, with repeats), written
// independently of intervals.go: expand the draw into the lists the paper
// averages, then take the mean or the percentile.
func directValue(t *testing.T, metric, flexibility string, drawn []int) float64 {
	t.Helper()
	mapping := FluencyMappings["v2"]
	var orig, feas, flu, comps []float64
	for _, i := range drawn {
		k := keywordData[i]
		kflu := 0.0
		for _, l := range k.letters {
			flu = append(flu, mapping[l])
			kflu += mapping[l]
		}
		kflu /= float64(len(k.letters))
		ko, kf := 0.0, 0.0
		for _, j := range k.judged {
			o, f := float64(j[0]), float64(j[1])
			orig, feas = append(orig, o), append(feas, f)
			ko, kf = ko+o, kf+f
			switch flexibility {
			case FlexibilityPaper:
				comps = append(comps, (o+f+kflu)/3)
			case FlexibilityJudgedMean:
				comps = append(comps, (o+f)/2)
			}
		}
		if flexibility == FlexibilityPerKeyword {
			n := float64(len(k.judged))
			comps = append(comps, (ko/n+kf/n+kflu)/3)
		}
	}
	mean := func(vs []float64) float64 {
		v, err := stats.Mean(vs)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	flex := func() float64 {
		v, err := stats.Percentile(comps, 30)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	switch metric {
	case "originality":
		return mean(orig)
	case "feasibility":
		return mean(feas)
	case "fluency":
		return mean(flu)
	case "flexibility":
		return flex()
	case "average":
		return (mean(flu) + mean(feas) + mean(orig) + flex()) / 4
	}
	t.Fatalf("metric %s", metric)
	return 0
}

// The interval over keywords is the percentile bootstrap of the value
// recomputed from the drawn keywords' judgements and pairs: for every
// metric and flexibility composite, the stage's ci_low and ci_high equal
// (to 1e-12) the 2.5th and 97.5th percentiles of directValue over the same
// 1,000 draws of 7 keywords (seed 0), the draws read off stats.Bootstrap
// over the keywords' indices. The mean of per-keyword means, which a
// report's bootstrap of per_item resamples, is another value here (6.029
// against 5.522 for originality), which is why the stage computes it.
func TestKeywordIntervalsDirect(t *testing.T) {
	in := keywordInputs(t)
	idx := make([]float64, len(keywordData))
	for i := range idx {
		idx[i] = float64(i)
	}
	var draws [][]int
	if _, err := stats.Bootstrap(idx, func(d []float64) float64 {
		ints := make([]int, len(d))
		for i, v := range d {
			ints[i] = int(v)
		}
		draws = append(draws, ints)
		return 0
	}, stats.Options{Resamples: 1000}); err != nil {
		t.Fatal(err)
	}
	// The first call is the statistic on the data itself.
	if len(draws) != 1001 || !slices.Equal(draws[0], []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("%d calls, the first %v", len(draws), draws[0])
	}
	draws = draws[1:]
	for _, flexibility := range []string{FlexibilityPaper, FlexibilityPerKeyword, FlexibilityJudgedMean} {
		for _, metric := range []string{"originality", "feasibility", "fluency", "flexibility", "average"} {
			t.Run(flexibility+"/"+metric, func(t *testing.T) {
				g := newAggregator(aggOptions{mapping: FluencyMappings["v2"], percentile: 30, flexibility: flexibility})
				if err := g.addAll(in); err != nil {
					t.Fatal(err)
				}
				ms, err := g.finish()
				if err != nil {
					t.Fatal(err)
				}
				s, err := modelScore(g, g.models["m"], metric)
				if err != nil {
					t.Fatal(err)
				}
				boot := make([]float64, len(draws))
				for b, d := range draws {
					boot[b] = directValue(t, metric, flexibility, d)
				}
				lo, _ := stats.Percentile(boot, 2.5)
				hi, _ := stats.Percentile(boot, 97.5)
				if math.Abs(s.Extra["ci_low"]-lo) > 1e-12 || math.Abs(s.Extra["ci_high"]-hi) > 1e-12 ||
					s.Extra["ci_level"] != 0.95 || s.Extra["resamples"] != 1000 {
					t.Errorf("interval [%v, %v] (level %v, %v resamples), direct [%v, %v]", s.Extra["ci_low"], s.Extra["ci_high"], s.Extra["ci_level"], s.Extra["resamples"], lo, hi)
				}
				if v := directValue(t, metric, flexibility, []int{0, 1, 2, 3, 4, 5, 6}); math.Abs(s.Value-v) > 1e-12 {
					t.Errorf("value %v, direct %v", s.Value, v)
				}
				if !(lo < s.Value && s.Value < hi) {
					t.Errorf("value %v outside [%v, %v]", s.Value, lo, hi)
				}
				// The leaderboard's interval is the score stage's.
				if got := g.keywordSample(g.models["m"]).intervals(ms[0])[metric]; got != (Interval{s.Extra["ci_low"], s.Extra["ci_high"]}) {
					t.Errorf("leaderboard interval %v, the score's [%v, %v]", got, s.Extra["ci_low"], s.Extra["ci_high"])
				}
			})
		}
	}
	g := newAggregator(aggOptions{mapping: FluencyMappings["v2"], percentile: 30})
	if err := g.addAll(in); err != nil {
		t.Fatal(err)
	}
	if _, err := g.finish(); err != nil {
		t.Fatal(err)
	}
	s, err := modelScore(g, g.models["m"], "originality")
	if err != nil {
		t.Fatal(err)
	}
	perItem := 0.0
	for _, v := range s.PerItem {
		perItem += v
	}
	perItem /= float64(len(s.PerItem))
	if got := fmt.Sprintf("%.3f %.3f", s.Value, perItem); got != "5.522 6.029" {
		t.Errorf("originality and the mean of its per-keyword means: %s", got)
	}
}

// The weighted percentile equals stats.Percentile on the expanded
// multiset, at every percentile the param allows, ties and repeats
// included.
func TestKeywordFlexibilityPercentile(t *testing.T) {
	k := &keywordSample{comps: []keywordComp{{1, 0}, {2, 1}, {2, 2}, {3, 0}, {5, 2}, {8, 1}}}
	for _, counts := range [][]int{{1, 1, 1}, {3, 0, 1}, {0, 2, 0}, {0, 0, 3}, {2, 1, 4}} {
		var expanded []float64
		for _, c := range k.comps {
			for range counts[c.item] {
				expanded = append(expanded, c.v)
			}
		}
		for _, p := range []float64{0, 10, 25, 30, 50, 70, 99, 100} {
			k.percentile = p
			want, err := stats.Percentile(expanded, p)
			if err != nil {
				t.Fatal(err)
			}
			if got := k.flexibility(counts); got != want {
				t.Errorf("counts %v p%v: %v, want %v", counts, p, got, want)
			}
		}
	}
}

// One model's intervals of every metric at the December 2024 board's size:
// 1,180 keywords, 2 ideas x 3 judges and one fluency pair each.
func BenchmarkKeywordIntervals(b *testing.B) {
	gen := &stages.Model{Name: "m"}
	up := &stages.Upstream{Address: "u", Key: "m", Generator: gen}
	var in []stages.In
	for k := range 1180 {
		item := fmt.Sprintf("k%d", k)
		for j := range 6 {
			o, f := 1+(k*7+j*3)%10, 1+(k*3+j*5)%10
			out, _ := json.Marshal(Judgement{Judge: "j", Scores: map[string]int{"originality": o, "feasibility": f}, Mean: float64(o+f) / 2})
			in = append(in, stages.In{Dep: stages.Dep{Input: "judgements"}, Node: stages.NodeInfo{Item: item}, From: up, Output: out})
		}
		out, _ := json.Marshal(FluencyOutput{Letter: string(rune('A' + k%4)), Judge: "j"})
		in = append(in, stages.In{Dep: stages.Dep{Input: "fluency"}, Node: stages.NodeInfo{Item: item}, From: up, Output: out})
	}
	g := newAggregator(aggOptions{mapping: FluencyMappings["v1"], percentile: 30})
	if err := g.addAll(in); err != nil {
		b.Fatal(err)
	}
	ms, err := g.finish()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if n := len(g.keywordSample(g.models["m"]).intervals(ms[0])); n != 5 {
			b.Fatalf("%d intervals", n)
		}
	}
}
