// Package scholareval implements ScholarEval (Moussa et al., 2025): research
// ideas reviewed for soundness and contribution against retrieved
// literature, a plain-LLM baseline reviewing the same ideas without
// retrieval, and the coverage metric over ScholarIdeas' expert rubrics.
//
// A stage type expands each item once, when its inputs have settled, so a
// pipeline whose fan-out depends on two successive answers (the methods a
// model extracts, then the papers a search returns for each) is a chain of
// stage types, each expanding on what the previous one answered:
//
//	soundness:    soundness_methods -> literature_search (snippets) -> soundness_evidence
//	              -> soundness_synthesis -> soundness_review
//	contribution: contribution_dimensions -> literature_search (search) -> contribution_relevance
//	              [-> paper_augment -> embedding_filter -> contribution_relevance (the added papers)]
//	              -> contribution_compare -> contribution_review
//	baseline:     llm_review -> resolve_references -> reference_validity
//	citations:    citation_check (any reviews): the share of cited ids not retrieved
//	              reference_invalidity (any reviews [, resolve_references]): the paper's Table 2
//	metric:       coverage (any of the three reviews) -> coverage_score
//	preference:   pairwise_preference (two systems' reviews) -> preference_score: the paper's Table 3
//
// Every expanded child carries what it stands for (a method, a query, a
// paper's snippets) in its request and depends on no node, so an answer that
// gains one method re-runs only that method's children. Every review cites
// papers as [paper id]; its output lists the ids it cited that were not
// retrieved for that idea (the citation check).
package scholareval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/literature"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func init() {
	for _, t := range []stages.Type{
		methodsType{}, searchType{}, evidenceType{}, synthesisType{}, soundnessType{},
		dimensionsType{}, augmentType{}, embedFilterType{}, relevanceType{}, compareType{}, contributionType{},
		llmReviewType{}, resolveType{}, validityType{}, citationType{}, invalidityType{},
		coverageType{}, coverageScoreType{}, preferenceType{}, preferenceScoreType{},
	} {
		stages.Register(t)
	}
}

// Query is one literature query and what it was asked for (a method, a
// contribution statement).
type Query struct {
	Query string `json:"query"`
	For   string `json:"for"`
}

// Paper is what the reviews keep of a retrieved paper.
type Paper struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Abstract string `json:"abstract,omitempty"`
	Year     int    `json:"year,omitempty"`
}

func paperOf(p literature.Paper) Paper {
	return Paper{ID: p.PaperID, Title: p.Title, Abstract: p.Abstract, Year: p.Year}
}

// Citations is the citation check of one review: the papers retrieved for
// the idea, the ids the text cites, and the cited ids that were not
// retrieved (a fabricated or misremembered citation).
type Citations struct {
	Retrieved   int      `json:"retrieved"`
	Cited       []string `json:"cited"`
	Unretrieved []string `json:"unretrieved"`
}

// citation is a bracketed paper id: "[a1b2c3]", "[CorpusId:123]". Several
// ids may share brackets, separated by commas or semicolons.
var citation = regexp.MustCompile(`\[([A-Za-z0-9][A-Za-z0-9:._\-]*(?:\s*[,;]\s*[A-Za-z0-9][A-Za-z0-9:._\-]*)*)\]`)

// citedIDs lists the distinct ids cited in texts, sorted.
func citedIDs(texts ...string) []string {
	seen := map[string]bool{}
	for _, t := range texts {
		for _, m := range citation.FindAllStringSubmatch(t, -1) {
			for _, id := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ';' || r == ' ' }) {
				seen[id] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// checkCitations compares the ids cited in texts with the retrieved ones.
func checkCitations(retrieved map[string]bool, texts ...string) Citations {
	c := Citations{Retrieved: len(retrieved), Cited: citedIDs(texts...), Unretrieved: []string{}}
	for _, id := range c.Cited {
		if !retrieved[id] {
			c.Unretrieved = append(c.Unretrieved, id)
		}
	}
	return c
}

// label names an expanded child by what it stands for: the same for the
// same element wherever it sits in an answer. parts must be everything the
// child's Prepare captures from the expansion (its request's content): the
// engine's memo settles a child with no deps from its params, item and label
// alone, so a child whose content changed under an unchanged label would be
// answered with the old request's result.
func label(kind string, parts ...any) string {
	h := sha256.New()
	for _, p := range parts {
		b, err := json.Marshal(p)
		if err != nil {
			panic(fmt.Sprintf("scholareval: label part %T: %v", p, err)) // plain data only
		}
		h.Write(b)
		h.Write([]byte{0})
	}
	return kind + "-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// norm folds a text for duplicate detection: case, punctuation and spacing
// do not make two methods different.
func norm(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r > 127:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
			space = false
		default:
			space = true
		}
	}
	return b.String()
}

// idea is what the stages read of a ScholarIdeas record.
type idea struct {
	ID     string                `json:"id"`
	Domain string                `json:"domain"`
	Idea   string                `json:"idea"`
	Cutoff string                `json:"cutoff"`
	Rubric []datasets.RubricLine `json:"rubric"`
}

// decodeIdea reads the idea of in: a ScholarIdeas record, any record with
// an idea, or a generated idea (stages.ReadIdeas: a LiveIdeaBench idea, an
// IdeaBench generation of one idea). Without an idea text it is a
// *stages.FieldError.
func decodeIdea(in stages.In) (*idea, error) {
	var r idea
	if err := json.Unmarshal(in.Output, &r); err != nil {
		return nil, fmt.Errorf("decode idea record %s: %w", stages.NodeAddress(in), err)
	}
	ideas, err := stages.ReadIdeas(in, "the idea to review")
	switch {
	case err != nil:
		return nil, err
	case ideas.Dropped:
		return nil, fmt.Errorf("%s was dropped upstream: there is no idea to review: %w", stages.NodeAddress(in), errDroppedUpstream)
	case len(ideas.Ideas) != 1:
		return nil, fmt.Errorf("%s gives %d ideas; a review reads one idea an item (generate_ideas with n = 1)", stages.NodeAddress(in), len(ideas.Ideas))
	}
	r.Idea = ideas.Ideas[0]
	if r.ID == "" {
		r.ID = in.Node.Item
	}
	return &r, nil
}

// errDroppedUpstream marks an idea dropped upstream (an IdeaBench target
// with too few references): the soundness chain and llm_review pass the
// drop on, without a call, instead of failing.
var errDroppedUpstream = errors.New("dropped upstream")

// oneIdeaPerItem refuses ideas that give several ideas a node (IdeaBench's
// batch generation): the reviews and the searches they expand into are
// per item, so each item must be one idea.
func oneIdeaPerItem(ideas *stages.Upstream) error {
	switch n := stages.IdeasPerNode(ideas); {
	case n == 0:
		return stages.ParamErrorf("ideas", "ideas (%s) gives a number of ideas a node known only once it runs; a review reads one idea an item", ideas.Address)
	case n > 1:
		return stages.ParamErrorf("ideas", "ideas (%s) gives %d ideas a node; a review reads one idea an item: generate one idea per target (generate_ideas with n = 1) or review a dataset", ideas.Address, n)
	}
	return nil
}

func call(m *stages.Model, prompt string, spec format.Spec, out func(a *format.Answer) ([]byte, error)) *stages.Work {
	msgs := []llm.Message{{Role: "user", Content: stages.UserMessage(prompt, spec)}}
	return &stages.Work{Call: &stages.Call{Model: m, Request: m.Request(msgs, 0, spec), Output: out}}
}

func requireModel(p stages.Params, name string) (*stages.Model, error) {
	m := p.Model(name)
	if m == nil {
		return nil, stages.ParamErrorf(name, "%s is required", name)
	}
	return m, nil
}

// oneNode returns the index of item's single node in up.
func oneNode(param string, up *stages.Upstream, item string) (int, error) {
	ns := up.ItemNodes(item)
	if len(ns) != 1 {
		return 0, stages.ParamErrorf(param, "%s (%s) has %d nodes for item %q; need exactly one", param, up.Address, len(ns), item)
	}
	return ns[0], nil
}

// extractLayout lays out an extraction stage (the methods of an idea, its
// contribution dimensions): one model call per idea, the "prompt" param
// rendered with data(idea text) and answered as a list whose lines parse
// turns into the node's output. The prompt is rendered once at layout on a
// sample idea, so a broken template is reported by validate.
//
// dropped, when not nil, gives the output of an item whose idea was
// dropped upstream (no call is made); without it such an item fails.
func extractLayout(inst *stages.Instance, data func(ideaText string) any, parse func(rec *idea, lines []string) any, dropped func() any) ([]stages.Node, error) {
	p := inst.Params
	ideas, err := stages.RequireInput(p, "ideas")
	if err != nil {
		return nil, err
	}
	m, err := requireModel(p, "model")
	if err != nil {
		return nil, err
	}
	prompt, name := p.String("prompt"), inst.Address+" prompt"
	if _, err := stages.RenderParam("prompt", name, prompt, data("An idea.")); err != nil {
		return nil, err
	}
	if err := oneIdeaPerItem(ideas); err != nil {
		return nil, err
	}
	return perItemNodes("ideas", ideas, false, func(item string) func([]stages.In) (*stages.Work, error) {
		return func(in []stages.In) (*stages.Work, error) {
			rec, err := decodeIdea(in[0])
			if errors.Is(err, errDroppedUpstream) && dropped != nil {
				return &stages.Work{Compute: func() ([]byte, error) { return stages.EncodeOutput(dropped()) }}, nil
			}
			if err != nil {
				return nil, fmt.Errorf("item %q: %w", item, err)
			}
			text, err := stages.RenderParam("prompt", name, prompt, data(rec.Idea))
			if err != nil {
				return nil, err
			}
			return call(m, text, format.Spec{Kind: format.Ideas}, func(a *format.Answer) ([]byte, error) {
				return stages.EncodeOutput(parse(rec, a.Ideas))
			}), nil
		}
	})
}

// perItemNodes lays out one node per item of up (one node each), with
// deps on that node and on the item's dataset record.
func perItemNodes(param string, up *stages.Upstream, withRecord bool, prepare func(item string) func([]stages.In) (*stages.Work, error)) ([]stages.Node, error) {
	var nodes []stages.Node
	for _, item := range up.Items() {
		k, err := oneNode(param, up, item)
		if err != nil {
			return nil, err
		}
		deps := []stages.Dep{{Input: param, Index: k}}
		if withRecord && up.Type != "dataset" {
			src := up.Source
			if src == nil {
				return nil, stages.ParamErrorf(param, "%s (%s) has no source dataset", param, up.Address)
			}
			r, err := oneNode(param, src, item)
			if err != nil {
				return nil, err
			}
			deps = append(deps, stages.Dep{Input: src.Address, Index: r})
		}
		nodes = append(nodes, stages.Node{Item: item, Deps: deps, Prepare: prepare(item)})
	}
	return nodes, nil
}

// decodeIn decodes the outputs of ins into values of T, skipping the
// missing ones (failed or skipped nodes), and reports how many were missing.
func decodeIn[T any](ins []stages.In) ([]T, int, error) {
	var out []T
	missing := 0
	for _, in := range ins {
		if in.Output == nil {
			missing++
			continue
		}
		var v T
		if err := json.Unmarshal(in.Output, &v); err != nil {
			return nil, 0, fmt.Errorf("decode %s output: %w", in.From.Address, err)
		}
		out = append(out, v)
	}
	return out, missing, nil
}

// sections splits a review's text at the headings it asked for
// ("Strengths", "## Weaknesses:", "**Suggestions**") and returns each
// heading's bullet or paragraph lines; a heading absent from the text has
// none. Lenient about form, as stages/format is: models vary in markdown.
func sections(text string, headings ...string) map[string][]string {
	out := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		bare := strings.ToLower(strings.Trim(t, "#*_: \t"))
		matched := false
		for _, h := range headings {
			if bare == h || strings.HasPrefix(bare, h+" ") && len(bare) < len(h)+24 {
				cur, matched = h, true
				break
			}
		}
		if matched || cur == "" || t == "" {
			continue
		}
		t = strings.TrimSpace(strings.TrimLeft(t, "-*•0123456789.) \t"))
		if t != "" {
			out[cur] = append(out[cur], t)
		}
	}
	return out
}

// Review is the output of every review stage (soundness_review,
// contribution_review, llm_review), so coverage reads any of them alike.
type Review struct {
	Kind        string    `json:"kind"` // soundness, contribution or llm
	Text        string    `json:"text"` // the review as a reader sees it (markdown)
	Strengths   []string  `json:"strengths"`
	Weaknesses  []string  `json:"weaknesses"`
	Suggestions []string  `json:"suggestions"`
	Score       *float64  `json:"score,omitempty"` // soundness: the mean method score (0-10)
	Citations   Citations `json:"citations"`
	// References are the titles a plain-LLM review lists (llm_review only).
	References []string `json:"references,omitempty"`
	Missing    int      `json:"missing,omitempty"` // upstream children that failed or were skipped
	// Dropped says the idea was dropped upstream (an IdeaBench target with
	// too few references): no review was asked for, and readers skip it.
	Dropped bool `json:"dropped,omitempty"`
}

// droppedReview is the review of an idea dropped upstream.
func droppedReview(kind string) Review {
	return Review{Kind: kind, Strengths: []string{}, Weaknesses: []string{}, Suggestions: []string{}, Dropped: true}
}

var reviewHeadings = []string{"strengths", "weaknesses", "suggestions"}

func fillSections(r *Review) {
	s := sections(r.Text, append(reviewHeadings, "references")...)
	r.Strengths, r.Weaknesses, r.Suggestions = nonNil(s["strengths"]), nonNil(s["weaknesses"]), nonNil(s["suggestions"])
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Shared param docs and bounds.
var (
	asOfParam = stages.Param{Name: "as_of", Kind: stages.String, Required: true,
		Doc: `the literature snapshot searched ("2026-12-01"): key material, so a new value re-runs every search and an unchanged one answers from the cache`}
)
