package scholareval

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/literature"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// ---- llm_review --------------------------------------------------------

type llmReviewType struct{}

func (llmReviewType) Name() string    { return "llm_review" }
func (llmReviewType) Version() string { return "1" }
func (llmReviewType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Doc: "the ideas to review, one per item: a dataset of format scholarideas (or any records with id, idea and cutoff), or a stage that gives one idea an item (IdeaBench's generate_ideas with n = 1, generate_from_keyword with ideas_per_keyword = 1)"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Doc: "the reviewer, asked without retrieval (the paper's plain-LLM baseline)"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultLLMReviewPrompt, Doc: "the review prompt (data: .Idea); its References section is what resolve_references checks"},
	}
}

type ideaData struct{ Idea string }

func (llmReviewType) Layout(inst *stages.Instance) ([]stages.Node, error) {
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
	if _, err := stages.RenderParam("prompt", name, prompt, ideaData{"i"}); err != nil {
		return nil, err
	}
	if err := oneIdeaPerItem(ideas); err != nil {
		return nil, err
	}
	return perItemNodes("ideas", ideas, false, func(item string) func([]stages.In) (*stages.Work, error) {
		return func(in []stages.In) (*stages.Work, error) {
			rec, err := decodeIdea(in[0])
			if errors.Is(err, errDroppedUpstream) {
				return &stages.Work{Compute: func() ([]byte, error) { return stages.EncodeOutput(droppedReview("llm")) }}, nil
			}
			if err != nil {
				return nil, fmt.Errorf("item %q: %w", item, err)
			}
			text, err := stages.RenderParam("prompt", name, prompt, ideaData{rec.Idea})
			if err != nil {
				return nil, err
			}
			return call(m, text, format.Spec{Kind: format.Text}, func(a *format.Answer) ([]byte, error) {
				return stages.EncodeOutput(llmReview(a.Text))
			}), nil
		}
	})
}

// quotedTitle is a title in quotes inside a reference line with its
// authors and venue.
var quotedTitle = regexp.MustCompile(`["“]([^"”]{8,})["”]`)

// referenceTitle makes a reference line a title to match: a quoted title
// when the line has one (author lists and venues around it), else the line.
func referenceTitle(line string) string {
	if m := quotedTitle.FindStringSubmatch(line); m != nil {
		return strings.TrimSpace(strings.TrimRight(m[1], ".,"))
	}
	line = strings.TrimSpace(strings.TrimLeft(line, "[]0123456789.)-*• \t"))
	return strings.Trim(line, "*_ ")
}

func llmReview(text string) Review {
	r := Review{Kind: "llm", Text: strings.TrimSpace(text)}
	fillSections(&r)
	r.References = []string{}
	seen := map[string]bool{}
	for _, l := range sections(text, "references")["references"] {
		if t := referenceTitle(l); t != "" && !seen[norm(t)] {
			seen[norm(t)] = true
			r.References = append(r.References, t)
		}
	}
	// Nothing is retrieved: every bracketed id it cites is unretrieved.
	r.Citations = checkCitations(map[string]bool{}, text)
	return r
}

// ---- resolve_references ------------------------------------------------

type resolveType struct{}

// ServiceOps: each reference is resolved by a title match.
func (resolveType) ServiceOps(stages.Params) map[string][]string {
	return map[string][]string{"literature": {literature.OpMatch}}
}

func (resolveType) Name() string    { return "resolve_references" }
func (resolveType) Version() string { return "1" }
func (resolveType) Params() []stages.Param {
	return []stages.Param{
		{Name: "reviews", Kind: stages.Input, Required: true, Accepts: []string{"llm_review"}, Doc: "the plain-LLM reviews whose references to resolve"},
		{Name: "literature", Kind: stages.ModelRef, Required: true, Service: true, Doc: "the literature source whose title match resolves each reference"},
		asOfParam,
		{Name: "max_references", Kind: stages.Int, Default: 100, Min: 1, Max: 10000, Doc: "resolve at most this many references per review, in listed order; the rest are counted as unchecked"},
	}
}

// ResolveOutput is one reference title and the paper it matched (nil: none).
type ResolveOutput struct {
	Title     string `json:"title"`
	Paper     *Paper `json:"paper"`
	Retrieved string `json:"retrieved,omitempty"` // when the source answered (recorded, not key material)
}

func (resolveType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	if _, err := stages.RequireInput(p, "reviews"); err != nil {
		return nil, err
	}
	if _, err := requireModel(p, "literature"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.String("as_of")) == "" {
		return nil, stages.ParamErrorf("as_of", `as_of names the literature snapshot ("2026-12-01"); it must not be empty`)
	}
	return nil, nil
}

func (resolveType) ExpandInputs() []string               { return []string{"reviews"} }
func (resolveType) MaxPerItem(inst *stages.Instance) int { return inst.Params.Int("max_references") }

func (resolveType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	if len(in) != 1 || in[0].Output == nil {
		return nil, nil
	}
	var r Review
	if err := json.Unmarshal(in[0].Output, &r); err != nil {
		return nil, fmt.Errorf("decode review: %w", err)
	}
	if r.Dropped {
		return nil, nil // no review, no references to resolve
	}
	p := inst.Params
	lit := p.Model("literature")
	var nodes []stages.Node
	for _, title := range r.References {
		if len(nodes) == p.Int("max_references") {
			break
		}
		title := title
		// No cutoff: a reference published after the idea is still a real
		// paper; invalid means it resolves to nothing at all.
		b, err := json.Marshal(literature.MatchQuery{Snapshot: literature.Snapshot{AsOf: p.String("as_of")}, Title: title})
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("ref", string(b)),
			Prepare: func([]stages.In) (*stages.Work, error) {
				return &stages.Work{Service: &stages.Service{Model: lit,
					Request: llm.ServiceRequest{Op: literature.OpMatch, Model: lit.Name, Body: b},
					Output: func(reply []byte) ([]byte, error) {
						var m literature.Match
						if err := json.Unmarshal(reply, &m); err != nil {
							return nil, fmt.Errorf("decode match: %w", err)
						}
						out := ResolveOutput{Title: title, Retrieved: m.Retrieved}
						if m.Paper != nil && m.Paper.PaperID != "" {
							pp := paperOf(*m.Paper)
							pp.Abstract = ""
							out.Paper = &pp
						}
						return stages.EncodeOutput(out)
					}}}, nil
			}})
	}
	return nodes, nil
}

// ---- reference_validity ------------------------------------------------

type validityType struct{}

func (validityType) Name() string    { return "reference_validity" }
func (validityType) Version() string { return "1" }
func (validityType) Params() []stages.Param {
	return []stages.Param{
		{Name: "resolved", Kind: stages.Input, Required: true, Accepts: []string{"resolve_references"}, Doc: "the resolved references"},
	}
}

// Layout lays out one aggregate: the share of references that resolve to
// no paper, over all references (value) and per idea (per_item). It is a
// lower bound on invalid references, as in the paper: a title that matches
// some paper may still be cited for what that paper does not say.
func (validityType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	up, err := stages.RequireInput(inst.Params, "resolved")
	if err != nil {
		return nil, err
	}
	return []stages.Node{{Label: "invalid references", Deps: stages.AllDeps("resolved", up), AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{KeyParams: []string{}, Compute: func() ([]byte, error) { return validityScore(in) }}, nil
		}}}, nil
}

func validityScore(in []stages.In) ([]byte, error) {
	total, invalid := map[string]int{}, map[string]int{}
	s := stages.Score{PerItem: map[string]float64{}, Extra: map[string]float64{}}
	var items []string
	for _, x := range in {
		item := x.Node.Item
		if x.Output == nil {
			s.Missing++
			continue
		}
		var r ResolveOutput
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("decode resolved reference: %w", err)
		}
		if total[item] == 0 {
			items = append(items, item)
		}
		total[item]++
		if r.Paper == nil {
			invalid[item]++
		}
	}
	sort.Strings(items)
	all, bad := 0, 0
	for _, it := range items {
		s.PerItem[it] = float64(invalid[it]) / float64(total[it])
		all += total[it]
		bad += invalid[it]
	}
	s.Count = all
	if all > 0 {
		s.Value = float64(bad) / float64(all)
	}
	s.Extra["references"] = float64(all)
	s.Extra["unresolved"] = float64(bad)
	return stages.EncodeOutput(s)
}

// ---- citation_check ----------------------------------------------------

type citationType struct{}

func (citationType) Name() string    { return "citation_check" }
func (citationType) Version() string { return "1" }
func (citationType) Params() []stages.Param {
	return []stages.Param{
		{Name: "reviews", Kind: stages.Inputs, Required: true, Accepts: []string{"soundness_review", "contribution_review", "llm_review"}, Doc: "the reviews whose citation checks to count"},
	}
}

// Layout lays out one aggregate: the share of cited ids that were not
// retrieved for their idea (value), with the counts in extra and each
// idea's unretrieved count in per_item. A plain-LLM review retrieves
// nothing, so every bracketed id it cites counts.
func (citationType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	ups := inst.Params.Inputs("reviews")
	if len(ups) == 0 {
		return nil, stages.ParamErrorf("reviews", "reviews is required")
	}
	var deps []stages.Dep
	for _, up := range ups {
		for range up.Nodes {
			deps = append(deps, stages.Dep{Input: "reviews", Index: len(deps)})
		}
	}
	return []stages.Node{{Label: "unretrieved citations", Deps: deps, AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{KeyParams: []string{}, Compute: func() ([]byte, error) { return citationScore(in) }}, nil
		}}}, nil
}

func citationScore(in []stages.In) ([]byte, error) {
	s := stages.Score{PerItem: map[string]float64{}, Extra: map[string]float64{}}
	cited, bad := 0, 0
	for _, x := range in {
		if x.Output == nil {
			s.Missing++
			continue
		}
		var r Review
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("decode review from %s: %w", x.From.Address, err)
		}
		if r.Dropped {
			s.Extra["dropped"]++ // the idea was dropped upstream: nothing was cited
			continue
		}
		s.Count++
		cited += len(r.Citations.Cited)
		bad += len(r.Citations.Unretrieved)
		s.PerItem[x.Node.Item] += float64(len(r.Citations.Unretrieved))
	}
	if cited > 0 {
		s.Value = float64(bad) / float64(cited)
	}
	s.Extra["cited"], s.Extra["unretrieved"] = float64(cited), float64(bad)
	return stages.EncodeOutput(s)
}
