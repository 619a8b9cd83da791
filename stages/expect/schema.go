package expect

import (
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// Schema: an expect reads one number of its score (at field) and gives its
// verdict.
func (expectType) Schema(p stages.Params) stages.Schema {
	field := p.String("field")
	if field == "" {
		field = "value"
	}
	top, _, _ := strings.Cut(field, ".") // the output field the path starts in
	needs := []stages.Need{{Input: "score", Fields: []string{top}, Why: "the number checked",
		Fix: "Point score at an aggregate score instance, or set field to the dotted path of the number in its output."}}
	if field == "value" {
		needs = append(needs, stages.Need{Input: "score", Fields: []string{"count", "extra"}, Optional: true, Why: "the score's item count and interval"})
	}
	return stages.Schema{
		Gives: []stages.Field{
			{Name: "status", Type: stages.TextField, Doc: `"pass", "drift" or "missing"`},
			{Name: "published", Type: stages.NumberField, Doc: "the published value"},
			{Name: "tolerance", Type: stages.NumberField, Doc: "the tolerance"},
			{Name: "measured", Type: stages.NumberField, Role: stages.RoleScore, Optional: true, Doc: "the value the run computed"},
			{Name: "delta", Type: stages.NumberField, Optional: true, Doc: "measured - published"},
			{Name: "ci_low", Type: stages.NumberField, Optional: true, Doc: "the score's interval, when it gives one"},
			{Name: "ci_high", Type: stages.NumberField, Optional: true, Doc: "the score's interval, when it gives one"},
			{Name: "covers", Type: stages.BoolField, Optional: true, Doc: "the interval holds the published value"},
			{Name: "count", Type: stages.NumberField, Optional: true, Doc: "the items the score is over"},
			{Name: "score", Type: stages.TextField, Doc: "the checked instance"},
			{Name: "field", Type: stages.TextField, Doc: "the path read"},
			{Name: "source", Type: stages.TextField, Optional: true, Doc: "where the published value is from"},
			{Name: "reason", Type: stages.TextField, Optional: true, Doc: "why it is missing"},
		},
		Needs: needs,
	}
}
