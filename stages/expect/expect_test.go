package expect

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

func in(t *testing.T, out any) stages.In {
	t.Helper()
	if out == nil {
		return stages.In{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return stages.In{Output: b}
}

func TestJudge(t *testing.T) {
	score := map[string]any{"value": 0.62, "count": 461, "missing": 0, "extra": map[string]any{"ci_low": 0.58, "ci_high": 0.66, "average": 7.25}}
	for _, tc := range []struct {
		name           string
		out            any
		field          string
		published, tol float64
		status         string
		covers         string // "", "true", "false"
		reasonContains string
	}{
		{"pass", score, "value", 0.624, 0.05, "pass", "true", ""},
		{"drift", score, "value", 0.766, 0.05, "drift", "false", ""},
		{"edge: |delta| = tolerance passes", score, "value", 0.57, 0.05, "pass", "false", ""},
		{"just past the edge", score, "value", 0.5699, 0.05, "drift", "false", ""},
		{"zero tolerance, exact", score, "value", 0.62, 0, "pass", "true", ""},
		{"a named extra", score, "extra.average", 7, 0.5, "pass", "", ""},
		{"no number there", score, "extra.flexibility", 7, 0.5, "missing", "", `has no number at "extra.flexibility"`},
		{"not a number", map[string]any{"value": "high"}, "value", 1, 1, "missing", "", `has no number at "value"`},
		{"the score failed", nil, "value", 0.6, 0.05, "missing", "", "failed or was not run"},
		{"over no item", map[string]any{"value": 0, "count": 0}, "value", 0, 0, "missing", "", "is over 0 items: nothing was measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judge(in(t, tc.out), `stage.insight_score.novelty["gpt-4o"]`, tc.field, tc.published, tc.tol, "IdeaBench Table 1")
			if v.Status != tc.status || !strings.Contains(v.Reason, tc.reasonContains) {
				t.Fatalf("status %q reason %q; want %q with %q", v.Status, v.Reason, tc.status, tc.reasonContains)
			}
			if got := map[bool]string{true: "true", false: "false"}; tc.covers == "" && v.Covers != nil || tc.covers != "" && (v.Covers == nil || got[*v.Covers] != tc.covers) {
				t.Errorf("covers %v; want %q", v.Covers, tc.covers)
			}
			if v.Measured != nil && (*v.Delta != *v.Measured-tc.published) {
				t.Errorf("delta %v for measured %v and published %v", *v.Delta, *v.Measured, tc.published)
			}
			if tc.field == "value" && v.Measured != nil && (v.Count == nil || *v.Count != 461) {
				t.Errorf("count %v; want 461", v.Count)
			}
		})
	}
}

func TestLayoutRefuses(t *testing.T) {
	perItem := &stages.Upstream{Address: "stage.rank_ideas.novelty", Type: "rank_ideas", Nodes: []stages.NodeInfo{{Item: "a"}, {Item: "b"}}}
	_, err := expectType{}.Layout(&stages.Instance{Params: stages.WithDefaults(expectType{}, stages.Params{"score": perItem, "published": 0.5, "tolerance": 0.1})})
	if err == nil || !strings.Contains(err.Error(), "has 2 nodes; an expect checks one number") {
		t.Errorf("per-item score: %v", err)
	}
}

// The order form: tau-b of the measured against the published values over
// the rows both have, pass at min_tau_b or more; a row without a value, or
// an undefined tau-b, is missing, never a pass.
func TestJudgeOrder(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	rows := func(measured ...*float64) []OrderRow {
		out := make([]OrderRow, len(measured))
		for i, m := range measured {
			out[i] = OrderRow{Key: string(rune('a' + i)), Measured: m, Published: float64(10 - i)}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		rows   []OrderRow
		min    float64
		status string
		tau    float64 // when measured
		reason string
	}{
		{"the same order", rows(f(4), f(3), f(2), f(1)), 1, "pass", 1, ""},
		{"reversed", rows(f(1), f(2), f(3), f(4)), 0.8, "drift", -1, ""},
		// One adjacent swap of four: (5 - 1)/6 = 2/3.
		{"edge: tau-b = min_tau_b passes", rows(f(4), f(2), f(3), f(1)), 2.0 / 3, "pass", 2.0 / 3, ""},
		{"just past the edge", rows(f(4), f(2), f(3), f(1)), 0.67, "drift", 2.0 / 3, ""},
		// Ties in the run: tau-b, not tau-a (C=4, D=0, T_x=2 of 6 pairs).
		{"ties", rows(f(2), f(2), f(1), f(1)), 0.8, "pass", 4 / math.Sqrt(6*4), ""},
		{"a row failed", rows(f(4), nil, f(2), f(1)), 0.5, "missing", 0, "1 of 4 rows have no value (failed or not run): b"},
		{"constant run", rows(f(3), f(3), f(3)), 0.5, "missing", 0, "tau-b is undefined over the 3 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeOrder(&Order{MinTauB: tc.min, Rows: tc.rows}, "stage.liveideabench_score.average", "", "value", "the board")
			if v.Status != tc.status || !strings.Contains(v.Reason, tc.reason) {
				t.Fatalf("status %q reason %q; want %q with %q", v.Status, v.Reason, tc.status, tc.reason)
			}
			if tc.status == "missing" {
				if v.Measured != nil {
					t.Errorf("missing with a measured tau %v", *v.Measured)
				}
				return
			}
			if v.Measured == nil || math.Abs(*v.Measured-tc.tau) > 1e-12 {
				t.Errorf("tau %v; want %v", v.Measured, tc.tau)
			}
			if v.Published != nil || v.Tolerance != nil {
				t.Errorf("the order form carries the value form's published %v / tolerance %v", v.Published, v.Tolerance)
			}
		})
	}
}

// Layout: each form's params, and what an order reads.
func TestLayoutForms(t *testing.T) {
	inst := func(key string, labels ...string) *stages.Upstream {
		u := &stages.Upstream{Address: `stage.coverage_score.review["` + key + `"]`, Type: "coverage_score", Key: key}
		for i, l := range labels {
			u.Nodes = append(u.Nodes, stages.NodeInfo{Slot: i, Label: l})
		}
		return u
	}
	se, base, other := inst("scholareval", "overall", "domain=ai"), inst("baseline", "overall", "domain=ai"), inst("other", "overall", "domain=ai")
	order := stages.Params{"scores": []*stages.Upstream{se, base, other}, "node": "domain=ai", "published_values": map[string]float64{"scholareval": 2, "baseline": 1, "deep_research": 1.5}, "min_tau_b": 1.0}
	layout := func(p stages.Params) ([]stages.Node, error) {
		return expectType{}.Layout(&stages.Instance{Params: stages.WithDefaults(expectType{}, p)})
	}
	nodes, err := layout(order)
	if err != nil {
		t.Fatal(err)
	}
	// One node reading the domain=ai node (index 1 of 2) of the two
	// published instances; the third is listed, not read.
	if len(nodes) != 1 || len(nodes[0].Deps) != 2 || nodes[0].Deps[0] != (stages.Dep{Input: "scores", Index: 1}) || nodes[0].Deps[1] != (stages.Dep{Input: "scores", Index: 3}) {
		t.Fatalf("nodes %+v", nodes)
	}
	w, err := nodes[0].Prepare([]stages.In{in(t, map[string]any{"value": 3.1}), in(t, map[string]any{"value": 2.4})})
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.Compute()
	if err != nil {
		t.Fatal(err)
	}
	var v Verdict
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if v.Status != "pass" || *v.Measured != 1 || v.Score != "stage.coverage_score.review" || v.Node != "domain=ai" ||
		strings.Join(v.Order.Unpublished, ",") != "other" || strings.Join(v.Order.Unrun, ",") != "deep_research" ||
		v.Order.Rows[0].Key != "scholareval" || *v.Order.Rows[0].Measured != 3.1 || v.Order.Rows[1].Published != 1 {
		t.Errorf("verdict %s", out)
	}
	// A score without the field is a wiring error, not a verdict.
	w, _ = nodes[0].Prepare([]stages.In{in(t, map[string]any{"value": 3.1}), in(t, map[string]any{"mean": 2.4})})
	if _, err := w.Compute(); err == nil || !strings.Contains(err.Error(), "value") {
		t.Errorf("no field: %v", err)
	}

	with := func(p stages.Params, kv ...any) stages.Params {
		out := stages.Params{}
		for k, v := range p {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(out, kv[i].(string))
			} else {
				out[kv[i].(string)] = kv[i+1]
			}
		}
		return out
	}
	// A node the data has none of (the offline sample has no ecology idea):
	// laid out with nothing to read, a missing verdict and a warning.
	eco := with(order, "node", "domain=eco")
	if nodes, err := layout(eco); err != nil || len(nodes[0].Deps) != 0 {
		t.Errorf("absent node: %v %+v", err, nodes)
	} else if w, _ := nodes[0].Prepare(nil); w != nil {
		out, _ := w.Compute()
		var v Verdict
		if err := json.Unmarshal(out, &v); err != nil || v.Status != "missing" || v.Measured != nil ||
			v.Reason != `stage.coverage_score.review (scholareval, baseline) has no node "domain=eco" (its nodes: "overall", "domain=ai"): the data this run covers has none, or node is misspelt` {
			t.Errorf("absent node's verdict %s", out)
		}
	}
	warns := expectType{}.LayoutWarnings(&stages.Instance{Params: stages.WithDefaults(expectType{}, eco)})
	if len(warns) != 1 || warns[0].Param != "node" || !strings.HasPrefix(warns[0].Error(), "stage.coverage_score.review (scholareval, baseline, other) has no node") || !strings.HasSuffix(warns[0].Error(), "; the verdict will be missing") {
		t.Errorf("warnings %v", warns)
	}
	value := stages.Params{"score": se, "node": "overall", "published": 3.0, "tolerance": 0.1}
	if nodes, err := layout(value); err != nil || nodes[0].Deps[0].Index != 0 {
		t.Errorf("value form with item: %v %+v", err, nodes)
	}
	for _, tc := range []struct {
		name string
		p    stages.Params
		want string
	}{
		{"both forms", with(order, "score", se), "not both"},
		{"neither", stages.Params{"published": 1.0, "tolerance": 0.1}, "score is required"},
		{"value form with min_tau_b", with(value, "min_tau_b", 0.5), "min_tau_b belongs to the order form"},
		{"value form without tolerance", with(value, "tolerance", nil), "tolerance is required with score"},
		{"order form with published", with(order, "published", 1.0), "published belongs to the value form"},
		{"order form without min_tau_b", with(order, "min_tau_b", nil), "min_tau_b is required with scores"},
		{"min_tau_b out of range", with(order, "min_tau_b", 1.5), "between -1 and 1"},
		{"one shared key", with(order, "published_values", map[string]float64{"scholareval": 1, "gpt-4o": 2}), `shares 1 key(s) with the instances of scores, and an order needs 2: its keys are the instances' keys (scores has scholareval, baseline, other; published_values has gpt-4o, scholareval)`},
		{"several nodes, no node named", with(order, "node", ""), `has 2 nodes; an expect checks one number of each instance: point it at an aggregate score, or set node to one of them ("overall", "domain=ai")`},
		{"an instance without a key", with(order, "scores", []*stages.Upstream{{Address: "stage.aggregate.all", Nodes: []stages.NodeInfo{{Item: "overall"}}}}), "an instance without a key"},
		{"two instances with one key", with(order, "scores", []*stages.Upstream{se, inst("scholareval", "overall", "domain=ai")}), `two instances keyed "scholareval"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := layout(tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want %q", err, tc.want)
			}
		})
	}
}
