package report

import "github.com/ideaflow/ideaflow/stages"

// What report and plot give and read (stages.Schema): both write files
// (stages.Files) from scores.

func (reportType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.With(stages.FilesFields,
		stages.Field{Name: "table", Type: stages.ObjectField, Doc: "the table as the JSON format lays it out, whatever the formats: what report.html shows"}),
		// Rows are read for their instance keys and generators only.
		Needs: []stages.Need{{Input: "columns", Fields: []string{"value"}, Why: "a column's score",
			Fix: "Give columns aggregate stages (insight_score, similarity_score, aggregate, ...): one score per instance."},
			{Input: "columns", Fields: stages.ScoreReads, Optional: true, Why: "its counts and interval"},
			{Input: "notes_from", Fields: []string{"value"}, Why: "the value a note states",
				Fix: "Give notes_from aggregate stages (similarity_score, insight_score, ...): one score per instance."},
			{Input: "notes_from", Fields: stages.ScoreReads, Optional: true, Why: "its counts and interval"}}}
}

func (plotType) Schema(p stages.Params) stages.Schema {
	why := "the score plotted"
	needs := make([]stages.Need, 0, 8)
	for _, in := range []string{"data", "y", "size", "color"} {
		needs = append(needs, stages.Need{Input: in, Fields: []string{"value"}, Why: why,
			Fix: "Plot aggregate stages (insight_score, similarity_score, liveideabench_score, ...)."},
			stages.Need{Input: in, Fields: stages.ScoreReads, Optional: true, Why: "its interval and extra values"})
	}
	return stages.Schema{Gives: stages.FilesFields, Needs: needs}
}
