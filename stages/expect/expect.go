// Package expect is the expect stage type: a published number (a paper's
// table cell) set beside the one a run computed, with the tolerance within
// which it counts as reproduced. `ideaflow check` prints every expect of an
// experiment, pass or drift, and exits 4 when one drifts.
//
// An expect block is a stage of its own, so what it reads is keyed like any
// other input: changing the published value or the tolerance recomputes the
// verdict and nothing else, and the verdict of a cached run costs no call.
package expect

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

func init() { stages.Register(expectType{}) }

type expectType struct{}

func (expectType) Name() string    { return "expect" }
func (expectType) Version() string { return "1" }

func (expectType) Params() []stages.Param {
	return []stages.Param{
		{Name: "score", Kind: stages.Input, Required: true, Doc: "the instance whose number is checked: an aggregate score (insight_score, similarity_score, overlap_score, aggregate, bootstrap, coverage_score, ...), one node"},
		{Name: "field", Kind: stages.String, Default: "value", Doc: `dotted path of the number in its output ("value": a score's value; "extra.average" for a named extra)`},
		{Name: "published", Kind: stages.Number, Required: true, Doc: "the published value (the paper's table cell)"},
		{Name: "tolerance", Kind: stages.Number, Required: true, Doc: "the largest |measured - published| that counts as reproduced, in the value's units"},
		{Name: "source", Kind: stages.String, Default: "", Doc: `where the published value is from, printed beside the verdict ("IdeaBench Table 1")`},
	}
}

// Verdict is an expect node's output.
type Verdict struct {
	// Status is "pass" (|Measured - Published| <= Tolerance), "drift"
	// (farther) or "missing" (the score's node failed, or its output has
	// no number at Field: nothing was reproduced).
	Status    string   `json:"status"`
	Published float64  `json:"published"`
	Tolerance float64  `json:"tolerance"`
	Measured  *float64 `json:"measured,omitempty"`
	// Delta is Measured - Published.
	Delta *float64 `json:"delta,omitempty"`
	// CILow and CIHigh are the score's interval, when it gives one
	// (extra.ci_low, extra.ci_high); Covers says it holds Published.
	CILow  *float64 `json:"ci_low,omitempty"`
	CIHigh *float64 `json:"ci_high,omitempty"`
	Covers *bool    `json:"covers,omitempty"`
	Count  *int     `json:"count,omitempty"` // the items the score is over, when it says
	Score  string   `json:"score"`           // the checked instance's address
	Field  string   `json:"field"`
	Source string   `json:"source,omitempty"`
	Reason string   `json:"reason,omitempty"` // why it is missing

	noField bool // the score's output has no number at Field
}

func (expectType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	up, err := stages.RequireInput(p, "score")
	if err != nil {
		return nil, err
	}
	if len(up.Nodes) != 1 {
		return nil, stages.ParamErrorf("score", "score (%s) has %d nodes; an expect checks one number: point it at an aggregate score instance (e.g. stage.insight_score.novelty[\"gpt-4o\"]), not a per-item stage", up.Address, len(up.Nodes))
	}
	field, published, tol, source := p.String("field"), p.Number("published"), p.Number("tolerance"), p.String("source")
	if math.IsNaN(published) || math.IsInf(published, 0) {
		return nil, stages.ParamErrorf("published", "published = %v is not a number", published)
	}
	if !(tol >= 0) || math.IsInf(tol, 0) {
		return nil, stages.ParamErrorf("tolerance", "tolerance = %v must be a number 0 or more (0: the exact value)", tol)
	}
	if field == "" {
		return nil, stages.ParamErrorf("field", `field is empty: give the dotted path of the number, e.g. "value"`)
	}
	return []stages.Node{{
		Deps:         []stages.Dep{{Input: "score", Index: 0}},
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				v := judge(in[0], up.Address, field, published, tol, source)
				if v.noField {
					// The score gives no number there: a wiring error
					// (validate refuses what it can see), not a verdict.
					return nil, &stages.FieldError{Address: stages.NodeAddress(in[0]), From: up.Address, Fields: []string{field}, Why: "the number checked"}
				}
				return stages.EncodeOutput(v)
			}}, nil
		},
	}}, nil
}

// judge compares the number at field of in's output with published.
func judge(in stages.In, address, field string, published, tol float64, source string) Verdict {
	v := Verdict{Published: published, Tolerance: tol, Score: address, Field: field, Source: source}
	if in.Output == nil {
		v.Status, v.Reason = "missing", address+" failed or was not run"
		return v
	}
	var doc any
	if err := json.Unmarshal(in.Output, &doc); err != nil {
		v.Status, v.Reason = "missing", fmt.Sprintf("decode %s: %v", address, err)
		return v
	}
	x, ok := number(doc, field)
	if !ok {
		v.Status, v.Reason, v.noField = "missing", fmt.Sprintf("%s has no number at %q", address, field), true
		return v
	}
	d := x - published
	v.Measured, v.Delta = &x, &d
	v.Status = "drift"
	// The tolerance is inclusive; a last-digit rounding of the published
	// value (0.766 for 0.7655) must not flip it, hence the epsilon.
	if math.Abs(d) <= tol+1e-12 {
		v.Status = "pass"
	}
	if field == "value" {
		lo, okLo := number(doc, "extra.ci_low")
		hi, okHi := number(doc, "extra.ci_high")
		if okLo && okHi {
			covers := lo <= published && published <= hi
			v.CILow, v.CIHigh, v.Covers = &lo, &hi, &covers
		}
		if c, ok := number(doc, "count"); ok {
			n := int(c)
			v.Count = &n
		}
	}
	return v
}

// number reads the number at a dotted path of decoded JSON.
func number(doc any, path string) (float64, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false
		}
		if cur, ok = m[part]; !ok {
			return 0, false
		}
	}
	f, ok := cur.(float64)
	return f, ok
}
