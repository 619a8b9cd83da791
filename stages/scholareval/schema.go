package scholareval

import "github.com/ideaflow/ideaflow/stages"

// What ScholarEval's stage types give and read (stages.Schema); the outputs
// are the *Output types and Review in the stage files.

func schemaField(name string, t stages.FieldType, doc string) stages.Field {
	return stages.Field{Name: name, Type: t, Doc: doc}
}

func optField(name string, t stages.FieldType, doc string) stages.Field {
	return stages.Field{Name: name, Type: t, Optional: true, Doc: doc}
}

func onlyField(name string, t stages.FieldType, only, doc string) stages.Field {
	return stages.Field{Name: name, Type: t, Only: only, Doc: doc}
}

// ideaNeed is what the first stages of each review read of an idea, and
// ideaRecord what they read of it when present.
var (
	ideaNeed   = stages.Need{Input: "ideas", Fields: stages.IdeaFields, Why: "the idea to review"}
	ideaRecord = stages.Need{Input: "ideas", Fields: []string{"id", "domain", "cutoff", "rubric"}, Optional: true, Why: "its id, discipline, literature cutoff and rubric"}
)

// reviewGives are Review's fields, shared by the three reviews, followed by
// those of one kind of review.
func reviewGives(more ...stages.Field) []stages.Field {
	return stages.With([]stages.Field{
		schemaField("kind", stages.TextField, "soundness, contribution or llm"),
		{Name: "text", Type: stages.TextField, Role: stages.RoleRationale, Doc: "the review as a reader sees it (markdown)"},
		schemaField("strengths", stages.TextsField, "its strengths section"),
		schemaField("weaknesses", stages.TextsField, "its weaknesses section"),
		schemaField("suggestions", stages.TextsField, "its suggestions section"),
		schemaField("citations", stages.ObjectField, "the citation check: retrieved, cited, unretrieved"),
		optField("missing", stages.NumberField, "upstream children that failed or were skipped"),
		{Name: "dropped", Type: stages.BoolField, Role: stages.RoleDropped, Optional: true, Doc: "the idea was dropped upstream: no review was asked for"},
	}, more...)
}

func (methodsType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			{Name: stages.FieldIdea, Type: stages.TextField, Role: stages.RoleIdea, Doc: "the idea reviewed"},
			optField("cutoff", stages.TextField, "its literature cutoff"),
			schemaField("methods", stages.ObjectsField, "the methods extracted, with their queries"),
			schemaField("queries", stages.ObjectsField, "every method's queries, for literature_search"),
			schemaField("dropped", stages.NumberField, "methods dropped as duplicates or past max_methods"),
			optField("dropped_upstream", stages.BoolField, "the idea was dropped upstream: no methods, no call"),
		},
		Needs: []stages.Need{ideaNeed, ideaRecord},
	}
}

func (dimensionsType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			{Name: stages.FieldIdea, Type: stages.TextField, Role: stages.RoleIdea, Doc: "the idea reviewed"},
			optField("cutoff", stages.TextField, "its literature cutoff"),
			schemaField("dimensions", stages.TextsField, "the contribution dimensions"),
			schemaField("statements", stages.ObjectsField, "the contribution statements with their queries"),
			schemaField("queries", stages.ObjectsField, "every statement's queries, for literature_search"),
			schemaField("dropped", stages.NumberField, "statements dropped as duplicates or past max_statements"),
		},
		Needs: []stages.Need{ideaNeed, ideaRecord},
	}
}

func (searchType) Schema(p stages.Params) stages.Schema {
	gives := []stages.Field{
		schemaField("query", stages.TextField, "the query searched"),
		schemaField("papers", stages.ObjectsField, "the papers found (op snippets: the snippets' papers), in rank order"),
		optField("retrieved", stages.TextField, "when the source answered"),
	}
	if p.String("op") == "snippets" {
		gives = append(gives, schemaField("snippets", stages.ObjectsField, "the snippets found"))
	}
	return stages.Schema{
		Gives: gives,
		Needs: []stages.Need{{Input: "queries", Fields: []string{"queries"}, Why: "the queries to search"}, stages.Whole("queries")},
	}
}

func (evidenceType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			schemaField("method", stages.TextField, "the method"),
			schemaField("paper", stages.ObjectField, "the paper read"),
			{Name: "evidence", Type: stages.ObjectField, Role: stages.RoleRationale, Doc: "what the paper says of the method"},
		},
		Needs: []stages.Need{
			{Input: "methods", Fields: []string{"methods"}, Why: "the methods"},
			{Input: "search", Fields: []string{"snippets", "papers"}, Why: "the papers found for them"},
			stages.Whole("methods"), stages.Whole("search"),
		},
	}
}

func (synthesisType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			schemaField("method", stages.TextField, "the method reviewed"),
			{Name: "synthesis", Type: stages.TextField, Role: stages.RoleRationale, Doc: "the per-method review"},
			schemaField("support", stages.TextsField, "what supports it"),
			schemaField("contradictions", stages.TextsField, "what contradicts it"),
			schemaField("actions", stages.TextsField, "suggested actions"),
			{Name: "score", Type: stages.NumberField, Role: stages.RoleScore, Doc: "0-10"},
			schemaField("citations", stages.ObjectField, "the citation check"),
			schemaField("papers", stages.ObjectsField, "the papers it read"),
		},
		Needs: []stages.Need{
			{Input: "methods", Fields: []string{"methods"}, Why: "the methods"},
			{Input: "evidence", Fields: []string{"evidence"}, Why: "the evidence per paper"},
			stages.Whole("methods"), stages.Whole("evidence"),
		},
	}
}

func (soundnessType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: reviewGives(stages.Field{Name: "score", Type: stages.NumberField, Role: stages.RoleScore, Optional: true, Doc: "the mean method score (0-10); none without a scored method"}),
		Needs: []stages.Need{
			{Input: "synthesis", Fields: []string{"synthesis"}, Why: "the per-method reviews"},
			{Input: "methods", Fields: []string{stages.FieldIdea}, Why: "the idea reviewed"},
			{Input: "synthesis", Source: true, Fields: []string{"id", "domain", "cutoff", "rubric"}, Optional: true, Why: "the rest of its record"},
			stages.Whole("synthesis"),
		}}
}

// augmentGives are paper_augment's selection, which embedding_filter
// gives in the same shape (what contribution_relevance reads of either).
func augmentGives(more ...stages.Field) []stages.Field {
	return stages.With([]stages.Field{
		onlyField("seeds", stages.TextsField, "the selection", "the seed papers' ids"),
		onlyField("recommended", stages.ObjectsField, "the selection", "papers recommended from the seeds"),
		onlyField("referenced", stages.ObjectsField, "the selection", "the seeds' references kept"),
		onlyField("added", stages.ObjectsField, "the selection", "every added paper once, in the order added (embedding_filter: the kept ones, most similar first)"),
	}, more...)
}

// augmentedNeed is what a reader of an augmentation (paper_augment's or
// embedding_filter's selection) reads of it.
func augmentedNeed(input string) stages.Need {
	return stages.Need{Input: input, Fields: []string{"added"}, Why: "the papers the augmentation added"}
}

func (augmentType) Schema(stages.Params) stages.Schema {
	// Each seed_from reads one input; a need of an input left unset is
	// not checked, so both are declared.
	return stages.Schema{
		Gives: augmentGives(onlyField("papers", stages.ObjectsField, "the service replies", "a recommendation or references reply")),
		Needs: []stages.Need{
			{Input: "queries", Fields: []string{"queries"}, Why: "the contribution queries"},
			{Input: "relevance", Fields: []string{"score"}, Why: `the first relevance pass's scores: with seed_from = "relevance", its papers rated at least min_relevance are the seeds`},
			{Input: "relevance", Fields: []string{"paper"}, Why: "the papers the first relevance pass scored, every one seen"},
			{Input: "search", Fields: []string{"papers"}, Why: `the papers found: with seed_from = "search", the seeds`},
			stages.Whole("queries"), stages.Whole("search"),
		},
	}
}

func (embedFilterType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: augmentGives(
			onlyField("similarity", stages.NumbersField, "the selection", "paper id -> cosine with the idea, every added paper"),
			onlyField("dropped", stages.NumberField, "the selection", "added papers not kept (past top_k)"),
			onlyField("vectors", stages.ObjectsField, "the service replies", "the idea's or a paper's embedding"),
		),
		Needs: []stages.Need{
			{Input: "dimensions", Fields: []string{stages.FieldIdea}, Why: "the idea's text, which the papers are compared with"},
			augmentedNeed("augment"),
		},
	}
}

func (relevanceType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			schemaField("paper", stages.ObjectField, "the paper rated"),
			{Name: "score", Type: stages.NumberField, Role: stages.RoleScore, Doc: "relevance, 0-5"},
			{Name: "explanation", Type: stages.TextField, Role: stages.RoleRationale, Optional: true, Doc: "the judge's explanation"},
		},
		Needs: []stages.Need{
			{Input: "dimensions", Fields: []string{"statements"}, Why: "the contribution statements"},
			{Input: "search", Fields: []string{"papers"}, Why: "the papers found"},
			augmentedNeed("augment"),
			stages.Whole("dimensions"), stages.Whole("search"), stages.Whole("augment"),
		},
	}
}

func (compareType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			schemaField("paper", stages.ObjectField, "the paper compared"),
			{Name: "scores", Type: stages.NumbersField, Role: stages.RoleScores, Doc: "dimension -> 1 (the idea is more novel), 0, -1"},
		},
		Needs: []stages.Need{
			{Input: "dimensions", Fields: []string{"dimensions"}, Why: "the contribution dimensions"},
			{Input: "relevance", Fields: []string{"score"}, Why: "each paper's relevance"},
			{Input: "augmented_relevance", Fields: []string{"score"}, Why: "each added paper's relevance, the second pass"},
			stages.Whole("dimensions"), stages.Whole("relevance"), stages.Whole("augmented_relevance"),
		},
	}
}

func (contributionType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: reviewGives(),
		Needs: []stages.Need{
			{Input: "dimensions", Fields: []string{"dimensions"}, Why: "the contribution dimensions"},
			{Input: "compare", Fields: []string{"scores"}, Why: "the pairwise comparisons"},
			stages.Whole("dimensions"), stages.Whole("compare"),
		}}
}

func (llmReviewType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: reviewGives(optField("references", stages.TextsField, "the titles it lists (none: absent)")), Needs: []stages.Need{ideaNeed, ideaRecord}}
}

func (resolveType) Schema(stages.Params) stages.Schema {
	// A review without references expands to no child (zero is a size),
	// so it reads no field a review must have.
	return stages.Schema{Gives: []stages.Field{
		schemaField("title", stages.TextField, "the reference's title as the review lists it"),
		optField("paper", stages.ObjectField, "the paper it resolved to (null: none)"),
		optField("retrieved", stages.TextField, "when the source answered"),
	}}
}

func (validityType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.ScoreFields,
		Needs: []stages.Need{{Input: "resolved", Fields: []string{"title"}, Why: "the references resolved"}, stages.Whole("resolved")}}
}

func (citationType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.ScoreFields,
		Needs: []stages.Need{{Input: "reviews", Fields: []string{"citations"}, Why: "each review's citation check"}, stages.Whole("reviews")}}
}

func (coverageType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			schemaField("idea", stages.TextField, "the idea's id"),
			schemaField("domain", stages.TextField, "its discipline"),
			schemaField("index", stages.NumberField, "the rubric line's position"),
			schemaField("statement", stages.TextField, "the rubric line"),
			schemaField("type", stages.TextField, "strength or weakness"),
			schemaField("axis", stages.TextField, "soundness or contribution"),
			schemaField("severity", stages.TextField, "major or minor"),
			{Name: "score", Type: stages.NumberField, Role: stages.RoleScore, Doc: "how well the reviews express it, 1-5"},
			{Name: "feedback", Type: stages.TextField, Role: stages.RoleRationale, Doc: "the judge's feedback"},
			optField("authors_parse", stages.ObjectField, "what prometheus-eval's parser reads of the same answer: score (null: none), feedback, parser (prometheus = true only)"),
		},
		Needs: []stages.Need{
			{Input: "ideas", Fields: stages.IdeaFields, Why: "the idea whose rubric is judged"},
			{Input: "ideas", Fields: []string{"id", "domain", "rubric"}, Optional: true, Why: "its discipline and rubric lines"},
			{Input: "reviews", Fields: []string{"text"}, Why: "the reviews judged"},
			stages.Whole("reviews"),
		},
	}
}

func (coverageScoreType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.ScoreFields,
		Needs: []stages.Need{
			{Input: "coverage", Fields: []string{"score"}, Why: "each rubric line's score"},
			{Input: "coverage", Source: true, Fields: stages.IdeaFields, Why: "the idea whose rubric lines are counted"},
			{Input: "coverage", Source: true, Fields: []string{"id", "domain", "rubric"}, Optional: true, Why: "its rubric lines, counted"},
			stages.Whole("coverage"),
		}}
}

func (invalidityType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.ScoreFields,
		Needs: []stages.Need{
			{Input: "reviews", Fields: []string{"citations"}, Why: "each retrieval review's cited ids and those not retrieved"},
			{Input: "reviews", Fields: []string{"kind"}, Optional: true, Why: "whether it is a plain-LLM review, whose references are resolved titles"},
			{Input: "resolved", Fields: []string{"title"}, Why: "the listed references resolved"},
			{Input: "resolved", Fields: []string{"paper"}, Optional: true, Why: "the paper each resolved to, none for an invalid one"},
		}}
}

func (preferenceType) Schema(stages.Params) stages.Schema {
	// ideas is read for its items only: the judgment reads the reviews.
	review := func(input string) []stages.Need {
		return []stages.Need{
			{Input: input, Fields: []string{"text"}, Why: "the reviews shown to the judge"},
			{Input: input, Fields: []string{"kind"}, Optional: true, Why: "each review's heading"},
		}
	}
	return stages.Schema{
		Gives: []stages.Field{
			schemaField("idea", stages.TextField, "the idea's id"),
			schemaField("swapped", stages.BoolField, "b was shown as Report A"),
			schemaField("winners", stages.ObjectField, `criterion -> "a", "b" or "tie" ("" where the strict parse reads no winner)`),
			schemaField("rationales", stages.ObjectField, "criterion -> the judge's rationale"),
			optField("authors_parse", stages.ObjectField, "what the authors' parser reads of the same answer: winners (unclear included), parser (json_winners only)"),
		},
		Needs: append(review("a"), review("b")...),
	}
}

func (preferenceScoreType) Schema(stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.ScoreFields,
		Needs: []stages.Need{
			{Input: "preferences", Fields: []string{"winners"}, Why: "each pair's winners"},
			{Input: "preferences", Fields: []string{"authors_parse"}, Optional: true, Why: "the authors' reading of each pair"},
		}}
}
