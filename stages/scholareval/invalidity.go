package scholareval

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/ideaflow/ideaflow/stages"
)

// ---- reference_invalidity ------------------------------------------------
//
// The paper's Table 2 (Reference Inv., %): the share of a system's
// references that point at no paper, a lower bound. The authors measure it
// on the links in each review (evaluation/reference_invalidity.py at
// skai-research/ScholarEval@b8391a0: each URL fetched, 404, 410, 5xx, a bot
// wall without a resolvable DOI, a network error or a "not found" page
// counted invalid; the paper's §E.2 names only 404, 410 and 5xx). ideaflow's
// reviews cite papers by id and the baseline lists titles, so here a
// reference is invalid when it names no paper of the literature source: a
// retrieval review's cited id that was not retrieved for the idea (its
// citation check), a plain-LLM review's listed title that resolve_references
// matched to no paper. Value is the authors' "overall invalid reference
// rate": 100 x invalid / references over every review; extra
// "mean_per_review" is their "average invalid reference rate (across
// folders)", over the reviews with at least one reference.

type invalidityType struct{}

func (invalidityType) Name() string    { return "reference_invalidity" }
func (invalidityType) Version() string { return "1" }
func (invalidityType) Params() []stages.Param {
	return []stages.Param{
		{Name: "reviews", Kind: stages.Inputs, Required: true, Accepts: []string{"soundness_review", "contribution_review", "llm_review"},
			Doc: "the reviews of one system; an idea's reviews are one report, as the coverage judge reads them"},
		{Name: "resolved", Kind: stages.Inputs, Accepts: []string{"resolve_references"}, Doc: "the listed references of the plain-LLM reviews among them, resolved by title (required when reviews holds an llm_review; [] for retrieval reviews)"},
	}
}

func (invalidityType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	ups := p.Inputs("reviews")
	if len(ups) == 0 {
		return nil, stages.ParamErrorf("reviews", "reviews is required: the review stages of one system")
	}
	var deps []stages.Dep
	llmReviews := false
	for _, up := range ups {
		llmReviews = llmReviews || up.Type == "llm_review"
		for range up.Nodes {
			deps = append(deps, stages.Dep{Input: "reviews", Index: len(deps)})
		}
	}
	nr := len(deps)
	resolved := p.Inputs("resolved")
	for _, res := range resolved {
		for range res.Nodes {
			deps = append(deps, stages.Dep{Input: "resolved", Index: len(deps) - nr})
		}
	}
	if len(resolved) == 0 && llmReviews {
		return nil, stages.ParamErrorf("resolved", "reviews holds plain-LLM reviews, whose references are titles: give resolved, the resolve_references of those reviews")
	}
	return []stages.Node{{Label: "invalid references", Deps: deps, AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{KeyParams: []string{}, Compute: func() ([]byte, error) { return invalidityScore(in[:nr], in[nr:]) }}, nil
		}}}, nil
}

func invalidityScore(reviews, resolved []stages.In) ([]byte, error) {
	refs, bad := map[string]map[string]bool{}, map[string]map[string]bool{}
	note := func(item, ref string, invalid bool) {
		if refs[item] == nil {
			refs[item], bad[item] = map[string]bool{}, map[string]bool{}
		}
		refs[item][ref] = true
		if invalid {
			bad[item][ref] = true
		}
	}
	s := stages.Score{PerItem: map[string]float64{}, Extra: map[string]float64{}}
	for _, x := range reviews {
		if x.Output == nil {
			s.Missing++
			continue
		}
		var r Review
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("decode review from %s: %w", x.From.Address, err)
		}
		if r.Dropped {
			continue // the idea was dropped upstream: no review, nothing cited
		}
		if r.Kind == "llm" {
			continue // its references are titles, resolved below
		}
		unretrieved := map[string]bool{}
		for _, id := range r.Citations.Unretrieved {
			unretrieved[id] = true
		}
		for _, id := range r.Citations.Cited {
			note(x.Node.Item, "id "+id, unretrieved[id])
		}
	}
	for _, x := range resolved {
		if x.Output == nil {
			s.Missing++
			continue
		}
		var r ResolveOutput
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("decode resolved reference: %w", err)
		}
		note(x.Node.Item, "title "+r.Title, r.Paper == nil)
	}
	items := make([]string, 0, len(refs))
	for it := range refs {
		items = append(items, it)
	}
	sort.Strings(items)
	all, invalid, sum := 0, 0, 0.0
	for _, it := range items {
		rate := 100 * float64(len(bad[it])) / float64(len(refs[it]))
		s.PerItem[it] = rate
		sum += rate
		all += len(refs[it])
		invalid += len(bad[it])
	}
	s.Count = all
	if all > 0 {
		s.Value = 100 * float64(invalid) / float64(all)
		s.Extra["mean_per_review"] = sum / float64(len(items))
	}
	s.Extra["references"], s.Extra["invalid"], s.Extra["reviews_with_references"] = float64(all), float64(invalid), float64(len(items))
	return stages.EncodeOutput(s)
}
