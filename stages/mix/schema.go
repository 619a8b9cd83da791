package mix

import "github.com/ideaflow/ideaflow/stages"

// Schema: what cross_agreement gives, and what it reads of each evaluator
// (stages.Schema): a ranking's order and labels, a judgement's mean, a
// review's score, as nodeValue decodes them.
// panelField is the judgement field panel_score reads.
func panelField(p stages.Params) string {
	if d := p.String("panel_score"); d != "" {
		return "scores"
	}
	return "mean"
}

func (crossType) Schema(p stages.Params) stages.Schema {
	var needs []stages.Need
	reads := map[string]stages.Need{
		"rankings": {Input: "rankings", Fields: []string{"order", "labels", "n"}, Why: "where the idea stands against the target"},
		"panels":   {Input: "panels", Fields: []string{panelField(p)}, Why: "each judge's score of the idea"},
		"reviews":  {Input: "reviews", Fields: []string{"score"}, Optional: true, Why: "the review's score (the mean method score)"},
	}
	for _, k := range kinds {
		if len(p.Inputs(k.param)) > 0 {
			needs = append(needs, reads[k.param], stages.Need{Input: k.param, Fields: []string{"dropped"}, Optional: true, Why: "an idea dropped upstream"})
		}
	}
	return stages.Schema{
		Gives: []stages.Field{
			{Name: "measures", Type: stages.TextsField, Doc: "the measures compared: rankings, panels, reviews"},
			{Name: "generators", Type: stages.TextsField, Doc: "the generators whose ideas were evaluated"},
			{Name: "units", Type: stages.NumbersField, Doc: "measure -> ideas it scored"},
			{Name: "per_idea", Type: stages.ObjectsField, Role: stages.RoleScore, Doc: "each pair of measures: tau-b over the ideas both scored, with its interval"},
			{Name: "per_model", Type: stages.ObjectsField, Doc: "each pair of measures: tau-b between the generators' means over the common items, with its interval"},
			{Name: "common_items", Type: stages.NumberField, Doc: "items every measure scored for every generator"},
			{Name: "means", Type: stages.ObjectField, Doc: "measure -> generator -> mean over the common items"},
			{Name: "level", Type: stages.NumberField, Doc: "confidence level of the intervals"},
			{Name: "resamples", Type: stages.NumberField, Doc: "bootstrap resamples"},
			{Name: "seed", Type: stages.NumberField, Doc: "resampling seed"},
			{Name: "notes", Type: stages.TextsField, Optional: true, Doc: "undefined statistics, and why"},
		},
		Needs: needs,
	}
}
