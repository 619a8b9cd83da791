package ideabench

import "github.com/ideaflow/ideaflow/stages"

// What IdeaBench's stage types give and read (stages.Schema). Kept apart
// from the stage files so each declaration reads at a glance beside the
// others: field names here are the JSON members of the outputs declared in
// those files.

// targetTextFields are what a target's text is read from: its idea if set,
// else its abstract (targetText).
var targetTextFields = []string{"idea", "abstract"}

const extractFix = `Add an extract_idea stage over the targets (stage "extract_idea" "targets" { targets = dataset.NAME, model = model.NAME }: the dataset's idea where it has one, else the paper's extraction prompt on the abstract) and read the idea from it with target = stage.extract_idea.targets.`

func (filterType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			{Name: "target", Type: stages.ObjectField, Doc: "the target as generation may see it: id and keywords"},
			{Name: "references", Type: stages.ObjectsField, Doc: "the kept references: id, title, abstract"},
			{Name: "dropped", Type: stages.BoolField, Role: stages.RoleDropped, Doc: "the target has too few references left (or may predate a cutoff)"},
			{Name: "reason", Type: stages.TextField, Doc: "why it was dropped (\"\" when kept)"},
		},
		// A record without references is dropped, not failed: the dataset
		// check refuses a dataset of which no target has one.
		Needs: []stages.Need{{Input: "dataset", Fields: []string{"id", "keywords", "references", "year"}, Optional: true,
			Why: "the target's references to filter, its keywords and year (published_after)"}},
	}
}

func (generateType) Schema(p stages.Params) stages.Schema {
	perNode := 1
	if p.String("mode") == "batch" {
		perNode = p.Int("n")
	}
	s := stages.Schema{
		Gives: stages.With(stages.DroppedFields[:1],
			stages.Field{Name: stages.FieldIdeas, Type: stages.TextsField, Role: stages.RoleIdea, PerNode: perNode, Doc: "the generated ideas: one per node, or n in batch mode"}),
		Needs: []stages.Need{{Input: "references", Fields: []string{"references"}, Why: "the references the prompt numbers"}},
	}
	if p.Input("target") != nil {
		s.Needs = append(s.Needs, stages.Need{Input: "target", Fields: targetTextFields, Why: "the target idea a baseline reads"})
	}
	return s
}

func (extractType) Schema(p stages.Params) stages.Schema {
	need := stages.Need{Input: "targets", Source: true, Why: "the target's idea, or the abstract to extract it from"}
	title := stages.Need{Input: "targets", Source: true, Fields: []string{"title"}, Optional: true, Why: "the title, in the extraction prompt"}
	switch {
	case p.Model("model") == nil:
		need.Fields = []string{"idea"}
		need.Why = "the target's idea (without a model nothing is extracted)"
		need.Fix = "Set model to extract the idea of targets without one from their abstract."
	case !p.Bool("dataset_idea"):
		need.Fields = []string{"abstract"}
		need.Why = "the abstract the idea is extracted from"
	default:
		need.Fields = targetTextFields
	}
	return stages.Schema{
		Gives: stages.With(stages.DroppedFields[:1],
			stages.Field{Name: "idea", Type: stages.TextField, Role: stages.RoleIdea, Doc: "the target's research idea"},
			stages.Field{Name: "source", Type: stages.TextField, Doc: `"dataset" or "model": where the idea came from`}),
		Needs: []stages.Need{need, title},
	}
}

func (rankType) Schema(p stages.Params) stages.Schema {
	target := stages.Need{Input: "ideas", Source: true, Fields: targetTextFields, Why: "the target idea ranked among the generated ones",
		Fix: "Set target to a stage that gives each target's idea (extract_idea)."}
	if p.Input("target") != nil {
		target = stages.Need{Input: "target", Fields: targetTextFields, Why: "the target idea ranked among the generated ones"}
	}
	return stages.Schema{
		Gives: stages.With(stages.DroppedFields[:1],
			stages.Field{Name: "order", Type: stages.TextsField, Role: stages.RoleRanking, Doc: "the letters, best first"},
			stages.Field{Name: "labels", Type: stages.ObjectField, Doc: `letter -> "target" or "idea I"`},
			stages.Field{Name: "target_letter", Type: stages.TextField, Doc: "the target's letter"},
			stages.Field{Name: "target_rank", Type: stages.NumberField, Role: stages.RoleScore, Doc: "the target's rank, 1..n+1"},
			stages.Field{Name: "n", Type: stages.NumberField, Doc: "generated ideas ranked"},
			stages.Field{Name: "authors_parse", Type: stages.ObjectField, Optional: true, Doc: "what the authors' parser reads of the first answer: order, target_letter, target_rank, n, error, parser (absent on an output cached before it existed)"}),
		Needs: []stages.Need{{Input: "ideas", Fields: []string{stages.FieldIdeas}, Why: "the ideas to rank"}, target},
	}
}

func (insightType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.ScoreFields,
		Needs: []stages.Need{
			{Input: "ranks", Fields: []string{"target_rank"}, Why: "the target's rank"},
			{Input: "ranks", Fields: []string{"n"}, Why: "the ideas ranked with it"},
			{Input: "ranks", Fields: []string{"authors_parse"}, Optional: true, Why: `the authors' reading of the ranking, for parse = "authors" or "authors_minus_strict"`},
		}}
}

// similarityGives are a similarity instance's outputs: a rouge_l or
// embedding scores node (method, scores), a bertscore token matching
// (reference_tokens, matches), an embedding service reply (vectors).
var similarityGives = stages.With(stages.DroppedFields[:1],
	stages.Field{Name: "method", Type: stages.TextField, Only: "the scores node", Doc: "embedding"},
	stages.Field{Name: "scores", Type: stages.ObjectsField, Role: stages.RoleScore, Only: "the scores node", Doc: "the cosine of each idea, as precision, recall and F1"},
	stages.Field{Name: "vectors", Type: stages.ObjectsField, Only: "the service replies", Doc: "a text's sentence vectors"},
)

func (similarityType) Schema(p stages.Params) stages.Schema {
	gives := similarityGives
	switch p.String("method") {
	case "rouge_l":
		gives = stages.With(stages.DroppedFields[:1],
			stages.Field{Name: "method", Type: stages.TextField, Doc: "rouge_l"},
			stages.Field{Name: "scores", Type: stages.ObjectsField, Role: stages.RoleScore, Doc: "precision, recall and F1 of each idea"})
	case "bertscore":
		gives = stages.With(stages.DroppedFields[:1],
			stages.Field{Name: "reference_tokens", Type: stages.TextsField, Doc: "the reference's tokens"},
			stages.Field{Name: "matches", Type: stages.ObjectsField, Doc: "each idea's tokens and token matching"})
	}
	var needs []stages.Need
	against := p.String("against")
	if against == "" {
		against = "abstract"
	}
	needs = append(needs, stages.Need{Input: "ideas", Source: true, Fields: []string{against}, Why: "the target text the ideas are compared with"})
	if p.Bool("upper_limit") {
		if p.Input("target") != nil {
			needs = append(needs, stages.Need{Input: "target", Fields: []string{"idea"}, Why: "the target's idea, compared with its abstract (upper_limit)"})
		} else {
			needs = append(needs, stages.Need{Input: "ideas", Source: true, Fields: []string{"idea"}, Why: "the target's idea, compared with its abstract (upper_limit)", Fix: extractFix})
		}
	} else {
		needs = append(needs, stages.Need{Input: "ideas", Fields: []string{stages.FieldIdeas}, Why: "the ideas compared"})
	}
	return stages.Schema{Gives: gives, Needs: needs}
}

// similarityNeed is what reads a similarity's scores, and similarityReads
// what it reads beside when present (the method, bertscore's reference
// tokens for idf).
var (
	similarityNeed  = []string{"scores", "matches"}
	similarityReads = stages.Need{Input: "similarity", Fields: []string{"method", "reference_tokens"}, Optional: true, Why: "the method, and bertscore's reference tokens"}
)

func (similarityScoreType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.ScoreFields,
		Needs: []stages.Need{{Input: "similarity", Fields: similarityNeed, Why: "each idea's similarity"}, similarityReads}}
}

func (bestType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: stages.With(stages.DroppedFields[:1],
			stages.Field{Name: "idea", Type: stages.TextField, Role: stages.RoleIdea, Doc: "the target's most similar idea"},
			stages.Field{Name: "idea_index", Type: stages.NumberField, Doc: "its index among the target's ideas"},
			stages.Field{Name: "score", Type: stages.NumberField, Role: stages.RoleScore, Doc: "its similarity"}),
		Needs: []stages.Need{
			{Input: "ideas", Fields: []string{stages.FieldIdeas}, Why: "the ideas to pick from"},
			{Input: "similarity", Fields: similarityNeed, Why: "each idea's similarity"},
			similarityReads,
		},
	}
}

func (overlapType) Schema(p stages.Params) stages.Schema {
	needs := []stages.Need{
		{Input: "ideas", Fields: []string{stages.FieldIdeas}, Why: "the ideas rated"},
		{Input: "ideas", Source: true, Fields: []string{"abstract"}, Why: "the target abstract the idea is compared with"},
	}
	if p.Input("similarity") != nil {
		needs = append(needs, stages.Need{Input: "similarity", Fields: append([]string{"idea"}, similarityNeed...), Why: "the most similar idea"},
			stages.Need{Input: "similarity", Fields: []string{"idea_index", "method", "reference_tokens"}, Optional: true, Why: "the best idea's index, or the method of the similarity"})
	}
	return stages.Schema{
		Gives: stages.With(stages.DroppedFields[:1],
			stages.Field{Name: "rating", Type: stages.NumberField, Role: stages.RoleScore, Doc: "the judge's overlap rating"},
			stages.Field{Name: "explanation", Type: stages.TextField, Role: stages.RoleRationale, Doc: "the judge's explanation"},
			stages.Field{Name: "idea_index", Type: stages.NumberField, Doc: "the rated idea's index among the target's ideas"},
			stages.Field{Name: "authors_parse", Type: stages.ObjectField, Optional: true, Doc: "what the authors' parser reads of the first answer: rating (null: none), explanation, parser (absent on an output cached before it existed)"}),
		Needs: needs,
	}
}

func (overlapScoreType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.ScoreFields,
		Needs: []stages.Need{
			{Input: "ratings", Fields: []string{"rating"}, Why: "the overlap ratings"},
			{Input: "ratings", Fields: []string{"authors_parse"}, Optional: true, Why: `the authors' reading of each rating, for parse = "authors" or "authors_minus_strict"`},
		}}
}

func (positionType) Schema(p stages.Params) stages.Schema {
	needs := []stages.Need{
		{Input: "rotate", Fields: []string{"order"}, Why: "the rotated rankings"},
		{Input: "rotate", Fields: []string{"target_letter", "target_rank", "n"}, Optional: true, Why: "where the target was shown and ranked"},
	}
	for _, in := range []string{"target_first", "shuffle"} {
		if p.Input(in) != nil {
			needs = append(needs, stages.Need{Input: in, Fields: []string{"target_rank"}, Why: "the target's rank, for the Insight Score"},
				stages.Need{Input: in, Fields: []string{"n"}, Optional: true, Why: "the ideas ranked with it"})
		}
	}
	return stages.Schema{Gives: stages.ScoreFields, Needs: needs}
}

func (sanityType) Schema(p stages.Params) stages.Schema {
	var needs []stages.Need
	for _, in := range []string{"shuffled_words", "copy_reference", "target_oracle"} {
		if p.Input(in) != nil {
			needs = append(needs, stages.Need{Input: in, Fields: []string{"value"}, Why: "the metric's score"},
				stages.Need{Input: in, Fields: []string{"count"}, Why: "how many targets the metric scored"},
				stages.Need{Input: in, Fields: stages.ScoreReads, Optional: true, Why: "the rest of the score"})
		}
	}
	return stages.Schema{Gives: stages.ScoreFields, Needs: needs}
}
