package aggregate

import "github.com/ideaflow/ideaflow/stages"

// What the statistics stage types give and read (stages.Schema). Each reads
// either a score (an aggregate upstream: its per-item values) or, from a
// per-item upstream, the number at value_field (or the type's default, see
// DefaultFields): one of the two, whichever the upstream gives.

// scoreNeed is what reads the scores of param: a score's "value", or the
// top of value_field (or the defaults of the listed types).
func scoreNeed(p stages.Params, param, why string) stages.Need {
	fields := []string{"value"}
	if vf := p.String("value_field"); vf != "" {
		fields = append(fields, vf)
	} else {
		ups := p.Inputs(param)
		if u := p.Input(param); u != nil {
			ups = append(ups, u)
		}
		for _, u := range ups {
			if f, ok := DefaultFields[u.Type]; ok {
				fields = append(fields, f)
			}
		}
	}
	return stages.Need{Input: param, Fields: fields, Why: why,
		Fix: "Give a score stage (insight_score, aggregate, ...), or set value_field to the dotted path of the number in each node's output."}
}

// scoreReads is what a reader of param reads beside, when present: a
// score's per-item values and counts.
func scoreReads(param string) stages.Need {
	return stages.Need{Input: param, Fields: stages.ScoreReads, Optional: true, Why: "a score's per-item values and counts"}
}

func (aggregateType) Schema(p stages.Params) stages.Schema {
	return stages.Schema{
		Gives: stages.With(stages.ScoreFields, stages.Field{Name: "statistic", Type: stages.TextField, Doc: `"mean", "median", "p30"`}),
		Needs: []stages.Need{scoreNeed(p, "scores", "the per-item values"), scoreReads("scores")},
	}
}

func (bootstrapType) Schema(p stages.Params) stages.Schema {
	return stages.Schema{
		Gives: stages.With(stages.ScoreFields,
			stages.Field{Name: "statistic", Type: stages.TextField, Doc: "the statistic resampled"},
			stages.Field{Name: "method", Type: stages.TextField, Doc: "percentile or bca"},
			stages.Field{Name: "seed", Type: stages.NumberField, Doc: "the resampling seed"}),
		Needs: []stages.Need{scoreNeed(p, "scores", "the per-item values"), scoreReads("scores")},
	}
}

func (compareType) Schema(p stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			{Name: "models", Type: stages.TextsField, Doc: "the compared instances"},
			{Name: "counts", Type: stages.ObjectsField, Doc: "items scored, missing and dropped per model"},
			{Name: "pairs", Type: stages.ObjectsField, Role: stages.RoleScore, Doc: "each pair's mean difference and interval"},
			{Name: "leaderboard", Type: stages.ObjectsField, Role: stages.RoleRanking, Doc: "models ranked, with rank intervals"},
			{Name: "leaderboard_items", Type: stages.NumberField, Doc: "the items every model scored"},
			{Name: "level", Type: stages.NumberField, Doc: "the interval level"},
			{Name: "method", Type: stages.TextField, Doc: "percentile or bca"},
			{Name: "resamples", Type: stages.NumberField, Doc: "bootstrap resamples"},
			{Name: "seed", Type: stages.NumberField, Doc: "the resampling seed"},
		},
		Needs: []stages.Need{scoreNeed(p, "scores", "each model's per-item values"), scoreReads("scores")},
	}
}

func (agreementType) Schema(p stages.Params) stages.Schema {
	needs := []stages.Need{scoreNeed(p, "judgements", "each judgement's value"), scoreReads("judgements"),
		{Input: "judgements", Fields: []string{"order", "labels"}, Optional: true, Why: "rank_ideas' orders, for the tau-b between permutations"}}
	if cf := p.String("coder_field"); cf != "" {
		needs = append(needs, stages.Need{Input: "judgements", Fields: []string{cf}, Why: "the coder coder_field names"})
	}
	return stages.Schema{
		Gives: stages.With(stages.ScoreFields,
			stages.Field{Name: "metric", Type: stages.TextField, Doc: "Krippendorff's alpha metric"},
			stages.Field{Name: "kappa_weights", Type: stages.TextField, Doc: "Cohen's kappa weights"},
			stages.Field{Name: "coders", Type: stages.TextsField, Doc: "the coders"},
			stages.Field{Name: "pairs", Type: stages.ObjectsField, Doc: "each coder pair's kappa and tau-b"},
			stages.Field{Name: "notes", Type: stages.TextsField, Optional: true, Doc: "statistics undefined for the data, and why"}),
		Needs: needs,
	}
}
