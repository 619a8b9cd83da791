package ideabench

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// The paper's idea overlap is two stages, like similarity, because a report
// column is an instance with one node and a node never reads its own
// instance's nodes:
//
//	overlap_rating  per target: a judge rates 0-10 the overlap between the
//	                target abstract and a generated idea. With similarity
//	                set, one node per target rates the most similar idea
//	                (the paper); unset, one node per generate_ideas node
//	                rates each idea.
//	overlap_score   one aggregate node: mean, median and p80 of the
//	                per-target ratings.

// Overlap ratings are on a scale from 0 (the paper's text) or 1 (the
// authors' prompt) to 10; a strict parse outside 0-10 is an error.
const (
	overlapMin = 0
	overlapMax = 10
)

type overlapType struct{}

func (overlapType) Name() string { return "overlap_rating" }

// Version stays 1: an ideaflow-style request at 0-10 is the request it
// was, and keeps its cached rating. Outputs gained authors_parse; one
// cached before it has none, and overlap_score with parse = "authors"
// counts it missing.
func (overlapType) Version() string { return "1" }

func (overlapType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Accepts: []string{"generate_ideas"}, Doc: "the generated ideas of each target (and, through their dataset, the target abstract)"},
		{Name: "judge", Kind: stages.ModelRef, Required: true, Doc: "the model that rates the overlap"},
		{Name: "similarity", Kind: stages.Input, Accepts: []string{"similarity", "best_idea"}, Doc: "the similarity of the same ideas, or best_idea over it: only each target's most similar idea is rated (the paper); unset: every idea is rated"},
		{Name: "score", Kind: stages.String, Default: "f1", Doc: `the similarity score that picks the most similar idea: "f1", "precision" or "recall" (embedding's cosine is all three)`},
		{Name: "prompt", Kind: stages.Template, Default: DefaultOverlapPrompt, Doc: "rating prompt template (data: .Idea .Abstract .Min)"},
		{Name: "prompt_style", Kind: stages.String, Default: "ideaflow", Doc: `"ideaflow" (the prompt, then the answer-format instructions) or "authors" (the prompt alone, as evaluate_hypotheses.py sends it); either way the answer is parsed strictly, and authors_parse holds what the authors' parser reads`},
		{Name: "scale", Kind: stages.String, Default: "0-10", Doc: `the rating scale, in the prompt (.Min) and the strict parse: "0-10" (the paper's text) or "1-10" (the authors' prompt)`},
	}
}

// OverlapData is the template data of the overlap_rating prompt.
type OverlapData struct {
	Idea, Abstract string
	Min            int // the low end of the scale: 0 or 1
}

// OverlapOutput is an overlap_rating node's output. IdeaIndex indexes the
// target's ideas in the order of its generate_ideas nodes and their ideas.
type OverlapOutput struct {
	Rating      int    `json:"rating"`
	Explanation string `json:"explanation"`
	IdeaIndex   int    `json:"idea_index"`
	// AuthorsParse is what the authors' parser reads from the same answer
	// (their first, before any re-ask): not the strict parse above.
	AuthorsParse *AuthorsRating `json:"authors_parse,omitempty"`
}

// AuthorsRating is the authors' reading of an overlap answer
// (format.IdeaBenchRating): the first whole number of the text after
// "Rating:", else of the explanation, unchecked against the scale; null
// when there is none (their analysis then leaves the target out).
type AuthorsRating struct {
	Rating      *int   `json:"rating"`
	Explanation string `json:"explanation"`
	Parser      string `json:"parser"`
}

// authorsRating reads a's first answer as the authors' code does; nil when
// the answer's text is not known (stored before answers kept it).
func authorsRating(a *format.Answer) *AuthorsRating {
	text, known := a.Unrepaired()
	if !known {
		return nil
	}
	r := &AuthorsRating{Parser: format.IdeaBenchRatingParser}
	if v, expl, ok := format.IdeaBenchRating(text); ok {
		r.Rating, r.Explanation = &v, expl
	} else {
		r.Explanation = expl
	}
	return r
}

var droppedOverlap = []byte(`{"dropped":true}`)

type overlapRater struct {
	judge      *stages.Model
	score      string
	prompt     string
	promptName string
	authors    bool // prompt_style = "authors": no format instructions
	spec       format.Spec
	min        int
}

func (overlapType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	o := &overlapRater{judge: p.Model("judge"), score: p.String("score"), prompt: p.String("prompt"), promptName: inst.Address + " prompt",
		authors: p.String("prompt_style") == "authors"}
	ideas, err := stages.RequireInput(p, "ideas")
	if err != nil {
		return nil, err
	}
	if o.judge == nil {
		return nil, stages.ParamErrorf("judge", "judge is required")
	}
	if err := oneOf("score", o.score, "f1", "precision", "recall"); err != nil {
		return nil, err
	}
	if err := oneOf("prompt_style", p.String("prompt_style"), "ideaflow", "authors"); err != nil {
		return nil, err
	}
	switch scale := p.String("scale"); scale {
	case "0-10":
	case "1-10":
		o.min = 1
	default:
		return nil, oneOf("scale", scale, "0-10", "1-10")
	}
	o.spec = format.Spec{Kind: format.Rating, Min: o.min, Max: overlapMax}
	if _, err := stages.RenderParam("prompt", o.promptName, o.prompt, &OverlapData{Idea: "An idea.", Abstract: "An abstract.", Min: o.min}); err != nil {
		return nil, err
	}
	target := ideas.Source
	if target == nil {
		return nil, stages.ParamErrorf("ideas", "ideas (%s) has no source dataset to take the target abstracts from", ideas.Address)
	}
	sim := p.Input("similarity")
	if sim != nil && sim.Source != nil && sim.Source.Address != target.Address {
		return nil, stages.ParamErrorf("similarity", "similarity (%s) scores targets of %s, but ideas are for %s; it must score the same ideas", sim.Address, sim.Source.Address, target.Address)
	}
	var nodes []stages.Node
	for _, item := range ideas.Items() {
		tn := target.ItemNodes(item)
		if len(tn) != 1 {
			return nil, stages.ParamErrorf("ideas", "the target dataset (%s) has %d records for item %q; need exactly one", target.Address, len(tn), item)
		}
		rec := stages.Dep{Input: target.Address, Index: tn[0]}
		idx := ideas.ItemNodes(item)
		if sim == nil {
			for k, i := range idx {
				nodes = append(nodes, stages.Node{Item: item, Slot: k, Label: fmt.Sprintf("idea %d", k),
					Deps: []stages.Dep{rec, {Input: "ideas", Index: i}}, Prepare: o.prepareEach(k)})
			}
			continue
		}
		sn := sim.ItemNodes(item)
		if sim.Type == "best_idea" {
			if len(sn) != 1 {
				return nil, stages.ParamErrorf("similarity", "best_idea (%s) has %d nodes for item %q; need exactly one", sim.Address, len(sn), item)
			}
			nodes = append(nodes, stages.Node{Item: item, Label: "most similar", Deps: []stages.Dep{rec, {Input: "similarity", Index: sn[0]}}, Prepare: o.prepareBest})
			continue
		}
		si, ok := scoresNode(sim, item)
		if !ok {
			return nil, stages.ParamErrorf("similarity", "similarity (%s) has no node for item %q; it must score the same ideas", sim.Address, item)
		}
		deps := make([]stages.Dep, 0, 2+len(idx))
		deps = append(deps, rec)
		for _, i := range idx {
			deps = append(deps, stages.Dep{Input: "ideas", Index: i})
		}
		deps = append(deps, stages.Dep{Input: "similarity", Index: si})
		nodes = append(nodes, stages.Node{Item: item, Label: "most similar", Deps: deps, Prepare: o.prepareMostSimilar})
	}
	return nodes, nil
}

// prepareEach rates the idea of the item's k-th generate_ideas node. in
// holds the target record and that node.
func (o *overlapRater) prepareEach(k int) func([]stages.In) (*stages.Work, error) {
	return func(in []stages.In) (*stages.Work, error) {
		item := in[0].Node.Item
		ideas, isDropped, err := decodeIdeas(in[1].Output)
		if err != nil {
			return nil, fmt.Errorf("decode ideas of %q: %w", item, err)
		}
		if isDropped {
			return dropped(droppedOverlap, "ideas"), nil
		}
		if len(ideas) != 1 {
			return nil, stages.ParamErrorf("similarity", "a generate_ideas node of %q holds %d ideas (batch mode); without similarity, overlap_rating rates the one idea of each node: set similarity to rate the most similar", item, len(ideas))
		}
		return o.rate(in[0], ideas[0], k)
	}
}

// prepareMostSimilar rates the item's idea that similarity scores highest.
// in holds the target record, the item's generate_ideas nodes, then its
// similarity nodes.
func (o *overlapRater) prepareMostSimilar(in []stages.In) (*stages.Work, error) {
	b, err := pickBest(in[0].Node.Item, in[1:], o.score)
	if err != nil {
		return nil, err
	}
	if b.Dropped {
		return dropped(droppedOverlap, "ideas"), nil
	}
	return o.rate(in[0], b.Idea, b.IdeaIndex)
}

// prepareBest rates the idea a best_idea node picked. in holds the target
// record and that node.
func (o *overlapRater) prepareBest(in []stages.In) (*stages.Work, error) {
	var b BestIdeaOutput
	if err := json.Unmarshal(in[1].Output, &b); err != nil {
		return nil, fmt.Errorf("decode best idea of %q: %w", in[0].Node.Item, err)
	}
	if b.Dropped {
		return dropped(droppedOverlap, "ideas"), nil
	}
	return o.rate(in[0], b.Idea, b.IdeaIndex)
}

// pickBest returns the item's most similar idea. in holds the item's
// generate_ideas nodes (Input "ideas"), then its similarity (Input
// "similarity": the item's last similarity node).
func pickBest(item string, in []stages.In, score string) (*BestIdeaOutput, error) {
	var ideas []string
	var sim *SimilarityOutput
	for _, x := range in {
		switch x.Input {
		case "ideas":
			got, isDropped, err := decodeIdeas(x.Output)
			if err != nil {
				return nil, fmt.Errorf("decode ideas of %q: %w", item, err)
			}
			if isDropped {
				return &BestIdeaOutput{Dropped: true}, nil
			}
			ideas = append(ideas, got...)
		case "similarity":
			var err error
			if sim, err = decodeSimilarity(x.Output); err != nil {
				return nil, fmt.Errorf("decode similarity of %q: %w", item, err)
			}
			if sim.Dropped {
				return &BestIdeaOutput{Dropped: true}, nil
			}
		}
	}
	if sim == nil {
		return nil, fmt.Errorf("item %q has no similarity to pick an idea by", item)
	}
	scores, err := (&scorer{score: score}).itemScores(sim, nil)
	if err != nil {
		return nil, fmt.Errorf("similarity of %q: %w", item, err)
	}
	if len(scores) != len(ideas) {
		return nil, stages.ParamErrorf("similarity", "similarity scores %d ideas of %q, but ideas gives %d; it must score the same ideas (and not the upper limit)", len(scores), item, len(ideas))
	}
	best := mostSimilar(scores)
	if best < 0 {
		return nil, fmt.Errorf("item %q has no similarity score to pick an idea by", item)
	}
	return &BestIdeaOutput{Idea: ideas[best], IdeaIndex: best, Score: scores[best]}, nil
}

// mostSimilar returns the index of the highest score, the first on a tie;
// NaN scores never win. It returns -1 when no score is a number.
func mostSimilar(scores []float64) int {
	best, at := math.Inf(-1), -1
	for i, v := range scores {
		if v > best || (at < 0 && v == best) {
			best, at = v, i
		}
	}
	return at
}

// rate asks the judge about idea, the index-th of the target in rec.
func (o *overlapRater) rate(rec stages.In, idea string, index int) (*stages.Work, error) {
	r, err := decodeRecord(rec.Output)
	if err != nil {
		return nil, fmt.Errorf("decode target %q: %w", rec.Node.Item, err)
	}
	if r.abstract == "" {
		return nil, stages.MissingField(rec, "the target abstract to compare the idea with", "abstract")
	}
	prompt, err := stages.RenderParam("prompt", o.promptName, o.prompt, &OverlapData{Idea: idea, Abstract: r.abstract, Min: o.min})
	if err != nil {
		return nil, err
	}
	content := stages.UserMessage(prompt, o.spec)
	if o.authors {
		content = strings.TrimSpace(prompt)
	}
	msgs := []llm.Message{{Role: "user", Content: content}}
	return &stages.Work{Call: &stages.Call{
		Model: o.judge,
		// The idea index is the sample index. The output records the index,
		// so it must be key material: otherwise two equal ideas of a target
		// (a generator at temperature 0) share one cached rating and the
		// second reads the first's idea_index.
		Request: o.judge.Request(msgs, index, o.spec),
		Output: func(a *format.Answer) ([]byte, error) {
			return stages.EncodeOutput(OverlapOutput{Rating: a.Rating, Explanation: a.Explanation, IdeaIndex: index, AuthorsParse: authorsRating(a)})
		},
	}}, nil
}

type overlapScoreType struct{}

func (overlapScoreType) Name() string    { return "overlap_score" }
func (overlapScoreType) Version() string { return "2" } // 2: Extra "mean"; summary

// parseParam chooses which reading of the judges' answers a score stage
// summarises; declared once for insight_score and overlap_score.
var parseParam = stages.Param{Name: "parse", Kind: stages.String, Default: "strict",
	Doc: `which reading of the answers: "strict" (ideaflow's parse, re-asked when unusable), "authors" (authors_parse: what the authors' parser read from the first answer, targets it reads nothing from left out, as their analysis leaves them) or "authors_minus_strict" (the difference of the two values, each over its own targets; both are in the score's extra values)`}

func parseOf(p stages.Params) (string, error) {
	s := p.String("parse")
	return s, oneOf("parse", s, "strict", "authors", "authors_minus_strict")
}

func (overlapScoreType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ratings", Kind: stages.Input, Required: true, Accepts: []string{"overlap_rating"}, Doc: "the overlap ratings to summarise"},
		summaryParam,
		parseParam,
	}
}

func (overlapScoreType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	ratings, err := stages.RequireInput(inst.Params, "ratings")
	if err != nil {
		return nil, err
	}
	summary, err := summaryOf(inst.Params)
	if err != nil {
		return nil, err
	}
	parse, err := parseOf(inst.Params)
	if err != nil {
		return nil, err
	}
	deps := stages.AllDeps("ratings", ratings)
	return []stages.Node{{Deps: deps, AllowMissing: true, Prepare: func(in []stages.In) (*stages.Work, error) {
		return &stages.Work{Compute: func() ([]byte, error) {
			s, err := overlapScoreParsed(in, summary, parse)
			if err != nil {
				return nil, err
			}
			return stages.EncodeOutput(s)
		}}, nil
	}}}, nil
}

// overlapScoreParsed is the overlap_score node: the summary of the chosen
// reading, with the other reading's value beside it in Extra ("strict",
// "authors", each the chosen summary).
func overlapScoreParsed(in []stages.In, summary, parse string) (*stages.Score, error) {
	strict, err := OverlapScore(in)
	if err != nil {
		return nil, err
	}
	strict = summarise(strict, summary)
	if parse == "strict" {
		return strict, nil
	}
	authors, err := AuthorsOverlapScore(in)
	if err != nil {
		return nil, err
	}
	authors = summarise(authors, summary)
	authors.Extra["strict"] = strict.Value
	authors.Extra["authors"] = authors.Value
	if parse == "authors_minus_strict" {
		authors.Value -= strict.Value
	}
	return authors, nil
}

// OverlapScore summarises overlap_rating outputs. A target's rating is its
// one rating (the most similar idea's) or, when every idea was rated, the
// highest. Then
//
//	Value = mean over rated targets of their rating
//
// with Extra "median" and "p80" (the 80th percentile the paper's tables
// report, by linear interpolation) and "dropped" (targets dropped for too
// few references, excluded). A target any rating of which failed or was
// skipped counts in Missing.
func OverlapScore(in []stages.In) (*stages.Score, error) {
	return overlapSummary(in, func(item string, r *OverlapOutput) (float64, bool, error) {
		if r.Rating < overlapMin || r.Rating > overlapMax {
			return 0, false, fmt.Errorf("overlap rating of %q is %d; want %d..%d", item, r.Rating, overlapMin, overlapMax)
		}
		return float64(r.Rating), true, nil
	})
}

// AuthorsOverlapScore is OverlapScore over the authors' readings
// (authors_parse): a target whose answer their parser read no number from
// is left out, as their analysis leaves it, and counted in Extra
// "unread"; a number outside the scale counts as read. A rating cached
// before authors_parse existed counts the target in Missing.
func AuthorsOverlapScore(in []stages.In) (*stages.Score, error) {
	unread := map[string]bool{}
	s, err := overlapSummary(in, func(item string, r *OverlapOutput) (float64, bool, error) {
		switch {
		case r.AuthorsParse == nil:
			return 0, false, errNoAuthorsParse
		case r.AuthorsParse.Rating == nil:
			unread[item] = true
			return 0, false, nil
		}
		return float64(*r.AuthorsParse.Rating), true, nil
	})
	if err != nil {
		return nil, err
	}
	s.Extra["unread"] = float64(len(unread))
	return s, nil
}

// errNoAuthorsParse marks an output cached before authors_parse existed.
var errNoAuthorsParse = fmt.Errorf("no authors_parse")

// overlapSummary summarises per-target ratings read by value: ok false
// leaves the rating out (a target with none left is not scored), and
// errNoAuthorsParse counts the target missing.
func overlapSummary(in []stages.In, value func(item string, r *OverlapOutput) (float64, bool, error)) (*stages.Score, error) {
	type acc struct {
		best           float64
		rated          bool
		missing, dropd bool
	}
	var order []string
	byItem := map[string]*acc{}
	for _, x := range in {
		item := x.Node.Item
		a := byItem[item]
		if a == nil {
			a = &acc{}
			byItem[item] = a
			order = append(order, item)
		}
		if x.Output == nil {
			a.missing = true
			continue
		}
		var r struct {
			OverlapOutput
			Dropped bool `json:"dropped"`
		}
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("decode overlap rating of %q: %w", item, err)
		}
		if r.Dropped {
			a.dropd = true
			continue
		}
		v, ok, err := value(item, &r.OverlapOutput)
		switch {
		case err == errNoAuthorsParse:
			a.missing = true
			continue
		case err != nil:
			return nil, err
		case !ok:
			continue
		}
		if !a.rated || v > a.best {
			a.best = v
		}
		a.rated = true
	}
	s := &stages.Score{PerItem: map[string]float64{}}
	dropped := 0
	var values []float64
	for _, item := range order {
		switch a := byItem[item]; {
		case a.dropd:
			dropped++
		case a.missing:
			s.Missing++
		case a.rated:
			s.PerItem[item] = a.best
			values = append(values, a.best)
		}
	}
	s.Count = len(values)
	s.Extra = map[string]float64{"dropped": float64(dropped)}
	if s.Count == 0 {
		return s, nil
	}
	var err error
	if s.Value, err = stats.Mean(values); err != nil {
		return nil, err
	}
	for name, p := range map[string]float64{"median": 50, "p80": 80} {
		if s.Extra[name], err = stats.Percentile(values, p); err != nil {
			return nil, err
		}
	}
	return s, nil
}
