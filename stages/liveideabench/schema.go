package liveideabench

import (
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// What LiveIdeaBench's stage types give and read (stages.Schema); the
// outputs are Idea, Judgement and FluencyOutput in the stage files.

func (generateType) Schema(p stages.Params) stages.Schema {
	field := p.String("keyword_field")
	if field == "" {
		field = "keyword"
	}
	return stages.Schema{
		Gives: []stages.Field{
			{Name: "keyword", Type: stages.TextField, Role: stages.RoleKeyword, Doc: "the keyword the idea was asked for"},
			{Name: "domain", Type: stages.TextField, Optional: true, Doc: "the keyword's domain, when the dataset has one"},
			{Name: stages.FieldIdea, Type: stages.TextField, Role: stages.RoleIdea, Doc: "the idea judged"},
			{Name: "answer", Type: stages.TextField, Doc: "the model's whole final answer"},
			{Name: "words", Type: stages.NumberField, Doc: "the idea's words"},
			{Name: "refused", Type: stages.BoolField, Optional: true, Doc: "the first answer was a refusal, re-asked"},
			{Name: "refusal_answer", Type: stages.TextField, Optional: true, Doc: "that first answer"},
			{Name: "dropped", Type: stages.BoolField, Role: stages.RoleDropped, Optional: true, Doc: "too long, too short or refused twice"},
			{Name: "reason", Type: stages.TextField, Optional: true, Doc: "too_long, too_short or refused"},
		},
		Needs: []stages.Need{
			{Input: "keywords", Fields: []string{field}, Why: "the keyword asked for",
				Fix: "Set keyword_field to the record field that holds the keyword."},
			{Input: "keywords", Fields: recordReads(p), Optional: true, Why: "the keyword's domain (and what the templates read of the record)"},
		},
	}
}

func (judgeType) Schema(stages.Params) stages.Schema {
	return stages.Schema{
		Gives: []stages.Field{
			{Name: "judge", Type: stages.TextField, Role: stages.RoleJudge, Doc: "the judge model"},
			{Name: "scores", Type: stages.NumbersField, Role: stages.RoleScores, Doc: "dimension -> score, 1-10"},
			{Name: "mean", Type: stages.NumberField, Role: stages.RoleScore, Doc: "the mean of the scores"},
			{Name: "reasoning", Type: stages.TextField, Role: stages.RoleRationale, Optional: true, Doc: "the judge's reasoning"},
			{Name: "authors_parse", Type: stages.ObjectField, Optional: true, Doc: "what the authors' parser of the protocol reads of the same answer: scores, mean, valid, reason, parser"},
			{Name: "dropped", Type: stages.BoolField, Role: stages.RoleDropped, Optional: true, Doc: "the idea was dropped upstream"},
		},
		Needs: []stages.Need{
			{Input: "ideas", Fields: stages.IdeaFields, Why: "the text to judge"},
			{Input: "ideas", Fields: []string{"keyword", "domain"}, Optional: true, Why: "the keyword and domain, prompt data"},
		},
	}
}

func (fluencyType) Schema(p stages.Params) stages.Schema {
	gives := []stages.Field{
		{Name: "letter", Type: stages.TextField, Role: stages.RoleScore, Doc: "the judge's A-D"},
		{Name: "judge", Type: stages.TextField, Role: stages.RoleJudge, Doc: "the judge model"},
		{Name: "authors_parse", Type: stages.ObjectField, Optional: true, Doc: "the letter hash.py reads of the same answer: letter, valid, reason, parser"},
	}
	if m := p.String("method"); m != "" && m != "judge" {
		gives = []stages.Field{
			{Name: "method", Type: stages.TextField, Doc: "jaccard or tfidf"},
			{Name: "similarity", Type: stages.NumberField, Doc: "the pair's similarity, 0-1"},
			{Name: "score", Type: stages.NumberField, Role: stages.RoleScore, Doc: "(1 - similarity) x 10"},
		}
	}
	return stages.Schema{
		Gives: append(gives, stages.Field{Name: "dropped", Type: stages.BoolField, Role: stages.RoleDropped, Optional: true, Doc: "an idea of the pair was dropped"}),
		Needs: []stages.Need{
			{Input: "ideas", Fields: []string{stages.FieldIdea}, Why: "the ideas paired"},
			{Input: "ideas", Fields: []string{"keyword"}, Optional: true, Why: "the keyword, prompt data"},
		},
	}
}

// panelNeeds are what the aggregates read of judgements and fluency pairs
// under the reading p's parse counts (aggregate.go checks the same); of the
// ideas they count drops and refusals, which need no field.
func panelNeeds(p stages.Params) []stages.Need {
	needs := []stages.Need{
		{Input: "ideas", Fields: []string{"domain", "refused", "reason"}, Optional: true, Why: "each idea's domain, refusals and drop reasons, counted"},
	}
	if p.String("parse") == ParseAuthors {
		return append(needs,
			stages.Need{Input: "judgements", Fields: []string{"scores", "authors_parse"}, Why: "a judgement's scores, or the authors' reading of them, which is counted"},
			stages.Need{Input: "fluency", Fields: []string{"letter", "score", "authors_parse"}, Why: "a fluency pair's letter or score, or the authors' reading of the letter, which is counted"})
	}
	return append(needs,
		stages.Need{Input: "judgements", Fields: []string{"scores"}, Why: "a judgement's scores"},
		stages.Need{Input: "judgements", Fields: []string{"mean"}, Why: "a judgement's mean score (flexibility)"},
		stages.Need{Input: "fluency", Fields: []string{"letter", "score"}, Why: "a fluency pair's letter or score"})
}

func (scoreType) Schema(p stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.ScoreFields, Needs: panelNeeds(p)}
}

func (leaderboardType) Schema(p stages.Params) stages.Schema {
	return stages.Schema{Gives: stages.FilesFields,
		Needs: append(panelNeeds(p),
			stages.Need{Input: "published", Fields: []string{"model"}, Why: "a published leaderboard row's model"},
			stages.Need{Input: "published", Fields: []string{"rank", "model_short", "fluency", "feasibility", "originality", "flexibility", "average", "open_source"}, Optional: true, Why: "its published scores"})}
}

// recordReads are the record fields generate_from_keyword reads when
// present: domain_field, and the whole record (stages.AllFields) when a
// template reads .Item.
func recordReads(p stages.Params) []string {
	out := []string{p.String("domain_field")}
	for _, t := range []string{"prompt", "system", "reask"} {
		if strings.Contains(p.String(t), ".Item") {
			return []string{stages.AllFields}
		}
	}
	if out[0] == "" {
		out[0] = "domain"
	}
	return out
}
