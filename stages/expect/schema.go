package expect

import (
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// Schema: an expect reads one number of its score (at field), or of each
// of its scores, and gives its verdict.
func (expectType) Schema(p stages.Params) stages.Schema {
	field := p.String("field")
	if field == "" {
		field = "value"
	}
	top, _, _ := strings.Cut(field, ".") // the output field the path starts in
	input, why := "score", "the number checked"
	if len(p.Inputs("scores")) > 0 {
		input, why = "scores", "the number ranked"
	}
	needs := []stages.Need{{Input: input, Fields: []string{top}, Why: why,
		Fix: "Point " + input + " at an aggregate score stage, or set field to the dotted path of the number in its output."}}
	if field == "value" && input == "score" {
		needs = append(needs, stages.Need{Input: "score", Fields: []string{"count", "extra"}, Optional: true, Why: "the score's item count and interval"})
	}
	return stages.Schema{
		Gives: []stages.Field{
			{Name: "status", Type: stages.TextField, Doc: `"pass", "drift" or "missing"`},
			{Name: "published", Type: stages.NumberField, Optional: true, Doc: "the published value (the value form)"},
			{Name: "tolerance", Type: stages.NumberField, Optional: true, Doc: "the tolerance (the value form)"},
			{Name: "measured", Type: stages.NumberField, Role: stages.RoleScore, Optional: true, Doc: "the value the run computed; in the order form Kendall's tau-b with the published order"},
			{Name: "delta", Type: stages.NumberField, Optional: true, Doc: "measured - published"},
			{Name: "ci_low", Type: stages.NumberField, Optional: true, Doc: "the score's interval, when it gives one"},
			{Name: "ci_high", Type: stages.NumberField, Optional: true, Doc: "the score's interval, when it gives one"},
			{Name: "covers", Type: stages.BoolField, Optional: true, Doc: "the interval holds the published value"},
			{Name: "count", Type: stages.NumberField, Optional: true, Doc: "the items the score is over"},
			{Name: "order", Type: stages.ObjectField, Optional: true, Doc: "the order form's rows (key, measured, published), its min_tau_b and the keys on one side only"},
			{Name: "score", Type: stages.TextField, Doc: "the checked instance (or stage)"},
			{Name: "node", Type: stages.TextField, Optional: true, Doc: "the node read of each instance (its label or item)"},
			{Name: "field", Type: stages.TextField, Doc: "the path read"},
			{Name: "source", Type: stages.TextField, Optional: true, Doc: "where the published value is from"},
			{Name: "reason", Type: stages.TextField, Optional: true, Doc: "why it is missing"},
		},
		Needs: needs,
	}
}
