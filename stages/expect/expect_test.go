package expect

import (
	"encoding/json"
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
