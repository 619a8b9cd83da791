package mix

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// The crafted case: 3 generators x 4 targets, one idea each, scored by a
// ranking against the target (the idea's position), a panel of two judges
// and a soundness review (g3's review of i2 has no score). The expected
// tau-b values were computed from Kendall's tau-b definition (ties in
// either variable in the denominator, SciPy's "b" variant) by a separate
// implementation, on the same numbers.
var (
	gens  = []string{"g1", "g2", "g3"}
	items = []string{"i1", "i2", "i3", "i4"}
	pos   = map[[2]string]int{{"g1", "i1"}: 1, {"g1", "i2"}: 1, {"g1", "i3"}: 2, {"g1", "i4"}: 1,
		{"g2", "i1"}: 2, {"g2", "i2"}: 1, {"g2", "i3"}: 2, {"g2", "i4"}: 2,
		{"g3", "i1"}: 2, {"g3", "i2"}: 2, {"g3", "i3"}: 2, {"g3", "i4"}: 1}
	panel = map[[2]string][2]float64{{"g1", "i1"}: {8, 7}, {"g1", "i2"}: {7, 7}, {"g1", "i3"}: {5, 6}, {"g1", "i4"}: {9, 8},
		{"g2", "i1"}: {6, 5}, {"g2", "i2"}: {7, 6}, {"g2", "i3"}: {4, 4}, {"g2", "i4"}: {6, 6},
		{"g3", "i1"}: {5, 5}, {"g3", "i2"}: {4, 5}, {"g3", "i3"}: {6, 5}, {"g3", "i4"}: {7, 5}}
	review = map[[2]string]float64{{"g1", "i1"}: 7.5, {"g1", "i2"}: 6.0, {"g1", "i3"}: 5.0, {"g1", "i4"}: 8.0,
		{"g2", "i1"}: 6.5, {"g2", "i2"}: 7.0, {"g2", "i3"}: 3.0, {"g2", "i4"}: 5.5,
		{"g3", "i1"}: 4.0, {"g3", "i3"}: 6.0, {"g3", "i4"}: 5.0}
)

type crafted struct {
	params stages.Params
	in     []stages.In
}

func build(t *testing.T, measures ...string) crafted {
	t.Helper()
	c := crafted{params: stages.Params{}}
	for _, m := range measures {
		var ups []*stages.Upstream
		for _, g := range gens {
			u := &stages.Upstream{Address: "stage." + m + `["` + g + `"]`, Type: map[string]string{"rankings": "rank_ideas", "panels": "judge_panel", "reviews": "soundness_review"}[m],
				Key: g, Generator: &stages.Model{Name: g, Address: "model." + g}}
			add := func(item string, out any) {
				info := stages.NodeInfo{Item: item}
				u.Nodes = append(u.Nodes, info)
				b, err := json.Marshal(out)
				if err != nil {
					t.Fatal(err)
				}
				c.in = append(c.in, stages.In{Node: info, From: u, Output: b})
			}
			for _, it := range items {
				k := [2]string{g, it}
				switch m {
				case "rankings":
					order := []string{"A", "B"}
					if pos[k] == 2 {
						order = []string{"B", "A"}
					}
					add(it, map[string]any{"order": order, "labels": map[string]string{"A": "idea 0", "B": "target"}, "n": 1})
				case "panels":
					for j, v := range panel[k] {
						add(it, map[string]any{"judge": []string{"ja", "jb"}[j], "mean": v})
					}
				case "reviews":
					if v, ok := review[k]; ok {
						add(it, map[string]any{"kind": "soundness", "score": v})
					} else {
						add(it, map[string]any{"kind": "soundness"})
					}
				}
			}
			ups = append(ups, u)
		}
		c.params[m] = ups
	}
	return c
}

func runCross(t *testing.T, c crafted, extra stages.Params) (*CrossOutput, error) {
	t.Helper()
	params := stages.Params{}
	for k, v := range c.params {
		params[k] = v
	}
	for k, v := range extra {
		params[k] = v
	}
	typ := crossType{}
	nodes, err := typ.Layout(&stages.Instance{Address: "stage.cross_agreement.x", Params: stages.WithDefaults(typ, params)})
	if err != nil {
		return nil, err
	}
	if len(nodes) != 1 || !nodes[0].AllowMissing || len(nodes[0].Deps) != len(c.in) {
		t.Fatalf("%d nodes, %d deps for %d inputs; want one aggregate over all", len(nodes), len(nodes[0].Deps), len(c.in))
	}
	w, err := nodes[0].Prepare(c.in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.Compute()
	if err != nil {
		return nil, err
	}
	var out CrossOutput
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out, nil
}

func TestCrossAgreement(t *testing.T) {
	out, err := runCross(t, build(t, "rankings", "panels", "reviews"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.Measures, ",") != "rankings,panels,reviews" || strings.Join(out.Generators, ",") != "g1,g2,g3" {
		t.Fatalf("measures %v, generators %v", out.Measures, out.Generators)
	}
	if out.Units["rankings"] != 12 || out.Units["panels"] != 12 || out.Units["reviews"] != 11 || out.CommonItems != 3 {
		t.Errorf("units %v, common items %d; want 12, 12, 11 and 3 (i2 lacks g3's review score)", out.Units, out.CommonItems)
	}
	want := []struct {
		a, b  string
		idea  float64
		ideaN int
		model float64
	}{
		{"rankings", "panels", 0.7298759442598561, 12, 1.0},
		{"rankings", "reviews", 0.5015698625755192, 11, 0.8164965809277261},
		{"panels", "reviews", 0.7116700695043588, 11, 0.8164965809277261},
	}
	if len(out.PerIdea) != 3 || len(out.PerModel) != 3 {
		t.Fatalf("pairs: %d per idea, %d per model; want 3 each", len(out.PerIdea), len(out.PerModel))
	}
	for i, w := range want {
		pi, pm := out.PerIdea[i], out.PerModel[i]
		if pi.A != w.a || pi.B != w.b || pi.Shared != w.ideaN || pi.TauB == nil || math.Abs(*pi.TauB-w.idea) > 1e-12 {
			t.Errorf("per idea %s vs %s: got %+v (tau %v); want %d shared, tau-b %v", w.a, w.b, pi, deref(pi.TauB), w.ideaN, w.idea)
		}
		if pm.Shared != 3 || pm.TauB == nil || math.Abs(*pm.TauB-w.model) > 1e-12 {
			t.Errorf("per model %s vs %s: got %+v (tau %v); want 3 generators, tau-b %v", w.a, w.b, pm, deref(pm.TauB), w.model)
		}
		if pi.CILow == nil || !(*pi.CILow <= *pi.TauB && *pi.TauB <= *pi.CIHigh) {
			t.Errorf("per idea %s vs %s: interval [%v, %v] does not hold the estimate %v", w.a, w.b, deref(pi.CILow), deref(pi.CIHigh), *pi.TauB)
		}
	}
	if m := out.Means["rankings"]["g1"]; math.Abs(m-(-4.0/3)) > 1e-12 {
		t.Errorf("g1's ranking mean over the common items: %v; want -4/3 (positions 1, 2, 1)", m)
	}
	// The same seed gives the same intervals, and the seed is recorded
	// (with 4 targets, other seeds often give the same percentile points).
	again, _ := runCross(t, build(t, "rankings", "panels", "reviews"), nil)
	other, _ := runCross(t, build(t, "rankings", "panels", "reviews"), stages.Params{"seed": 7})
	if *again.PerIdea[0].CILow != *out.PerIdea[0].CILow || *again.PerIdea[0].CIHigh != *out.PerIdea[0].CIHigh || out.Seed != 0 || other.Seed != 7 || out.Resamples != stats.DefaultResamples {
		t.Errorf("intervals: seed 0 [%v, %v], again [%v, %v]; seeds %d, %d; resamples %d", *out.PerIdea[0].CILow, *out.PerIdea[0].CIHigh,
			*again.PerIdea[0].CILow, *again.PerIdea[0].CIHigh, out.Seed, other.Seed, out.Resamples)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestCrossAgreementRefuses(t *testing.T) {
	one := build(t, "panels")
	if _, err := runCross(t, one, nil); err == nil || !strings.Contains(err.Error(), "at least two of rankings, panels and reviews") {
		t.Errorf("one measure: %v", err)
	}
	two := build(t, "rankings", "panels")
	ups := two.params["panels"].([]*stages.Upstream)
	two.params["panels"] = append(ups, ups[0])
	if _, err := runCross(t, two, nil); err == nil || !strings.Contains(err.Error(), "both of generator g1") {
		t.Errorf("two panels of one generator: %v", err)
	}
}

// A failed node, a dropped idea and a review without a score leave their
// unit out of that measure only.
func TestCrossAgreementMissing(t *testing.T) {
	c := build(t, "rankings", "panels")
	c.in[0].Output = nil // g1's ranking of i1 failed
	b, _ := json.Marshal(map[string]any{"judge": "ja", "mean": 9, "dropped": true})
	for i := range c.in {
		if c.in[i].From.Key == "g2" && c.in[i].From.Type == "judge_panel" && c.in[i].Node.Item == "i2" {
			c.in[i].Output = b
		}
	}
	out, err := runCross(t, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Units["rankings"] != 11 || out.Units["panels"] != 11 || out.PerIdea[0].Shared != 10 || out.CommonItems != 2 {
		t.Errorf("units %v, shared %d, common %d; want 11, 11, 10 and 2", out.Units, out.PerIdea[0].Shared, out.CommonItems)
	}
}

// panel_score reads one dimension of each judgement instead of its mean.
func TestCrossAgreementPanelDimension(t *testing.T) {
	c := build(t, "rankings", "panels")
	// Every judgement scores originality at 10 minus its mean: the panel's
	// order flips, and so does the sign of tau-b.
	for i := range c.in {
		if c.in[i].From.Type != "judge_panel" {
			continue
		}
		var j map[string]any
		if err := json.Unmarshal(c.in[i].Output, &j); err != nil {
			t.Fatal(err)
		}
		j["scores"] = map[string]float64{"originality": 10 - j["mean"].(float64), "clarity": 5}
		c.in[i].Output, _ = json.Marshal(j)
	}
	mean, err := runCross(t, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := runCross(t, c, stages.Params{"panel_score": "originality"})
	if err != nil {
		t.Fatal(err)
	}
	if mean.PerIdea[0].TauB == nil || orig.PerIdea[0].TauB == nil || math.Abs(*mean.PerIdea[0].TauB+*orig.PerIdea[0].TauB) > 1e-12 {
		t.Errorf("tau-b with the mean %v, with originality %v; want opposite signs", deref(mean.PerIdea[0].TauB), deref(orig.PerIdea[0].TauB))
	}
	if _, err := runCross(t, c, stages.Params{"panel_score": "novelty"}); err == nil || !strings.Contains(err.Error(), `has no "novelty" score (it scores clarity, originality)`) {
		t.Errorf("unknown dimension: %v", err)
	}
}
