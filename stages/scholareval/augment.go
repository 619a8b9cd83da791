package scholareval

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/literature"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// ---- paper_augment -------------------------------------------------------
//
// The paper's "paper augmentation" (§F.2): the papers a contribution
// review compares the idea with are the search's (the seeds) plus up to 8
// recommended from them and up to 10 of their references. Its ablation
// (§F.3, Table 4) forwards the seeds alone, and lowers coverage.
//
// Per idea it expands, once the search has answered, into
//
//	recommend        one OpRecommend request, the first `seeds` seed papers as positives
//	references <id>  one OpReferences request per such seed paper
//	augmented        a compute node reading those (stages.Self): the recommended
//	                 papers not among the seeds, the first `recommendations`; then
//	                 the seeds' references not yet listed, most cited first (ties by
//	                 id), the first `references`
//
// contribution_relevance reads the augmented node (its augment param)
// beside the search. Which references to keep is not stated by the paper;
// most cited first is our choice, and the output records both lists.

const (
	defaultAugmentSeeds = 5
	maxAugmentSeeds     = 50
)

type augmentType struct{}

// ServiceOps: recommendations and references, from one literature source.
func (augmentType) ServiceOps(stages.Params) map[string][]string {
	return map[string][]string{"literature": {literature.OpRecommend, literature.OpReferences}}
}

func (augmentType) Name() string    { return "paper_augment" }
func (augmentType) Version() string { return "1" }
func (augmentType) Params() []stages.Param {
	return []stages.Param{
		{Name: "queries", Kind: stages.Input, Required: true, Accepts: []string{"contribution_dimensions"}, Doc: "the contribution extraction the search ran (its cutoff date bounds the new papers too)"},
		{Name: "search", Kind: stages.Input, Required: true, Accepts: []string{"literature_search"}, Doc: "the paper search whose results are the seeds"},
		{Name: "literature", Kind: stages.ModelRef, Required: true, Service: true, Doc: "the literature source: a model block whose provider has a literature kind (semantic_scholar, corpus, mock)"},
		{Name: "seeds", Kind: stages.Int, Default: defaultAugmentSeeds, Min: 1, Max: maxAugmentSeeds, Doc: "the first this many distinct search results (in query order, then rank) seed the recommendations and give their references"},
		{Name: "recommendations", Kind: stages.Int, Default: 8, Min: 0, Max: 500, Doc: "recommended papers kept (the paper: up to 8); 0 asks for none"},
		{Name: "references", Kind: stages.Int, Default: 10, Min: 0, Max: 1000, Doc: "reference papers kept, most cited first (the paper: up to 10); 0 asks for none"},
		asOfParam,
		{Name: "use_cutoff", Kind: stages.Bool, Default: true, Doc: "exclude papers published after the idea's cutoff date, as the search does"},
	}
}

// AugmentOutput is the augmented node's output: the papers added to an
// idea's search results, each list in the order kept.
type AugmentOutput struct {
	Seeds       []string `json:"seeds"` // the seed ids, in order
	Recommended []Paper  `json:"recommended"`
	Referenced  []Paper  `json:"referenced"`
}

// augmentPapers is a recommend or references child's output: papers with
// what ranking them needs.
type augmentPapers struct {
	Papers []rankedPaper `json:"papers"`
}

type rankedPaper struct {
	Paper
	Citations int `json:"citations"`
}

func (augmentType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	for _, n := range []string{"queries", "search"} {
		if _, err := stages.RequireInput(p, n); err != nil {
			return nil, err
		}
	}
	if _, err := requireModel(p, "literature"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.String("as_of")) == "" {
		return nil, stages.ParamErrorf("as_of", `as_of names the literature snapshot ("2026-12-01"); it must not be empty`)
	}
	return nil, nil
}

func (augmentType) ExpandInputs() []string { return []string{"queries", "search"} }

// MaxPerItem: the recommendation, a references request per seed, the
// augmented node.
func (augmentType) MaxPerItem(inst *stages.Instance) int { return 2 + inst.Params.Int("seeds") }

func (augmentType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	by := split(in)
	if len(by["queries"]) != 1 || by["queries"][0].Output == nil {
		return nil, nil // extraction failed: no search, nothing to augment
	}
	var q queriesOutput
	if err := json.Unmarshal(by["queries"][0].Output, &q); err != nil {
		return nil, fmt.Errorf("decode queries: %w", err)
	}
	res, _, err := results(by["search"])
	if err != nil {
		return nil, err
	}
	p := inst.Params
	var seeds []string
	seen := map[string]bool{}
	for _, qu := range q.Queries {
		r := res[qu.Query]
		if r == nil {
			continue
		}
		for _, pp := range r.Papers {
			if !seen[pp.ID] && len(seeds) < p.Int("seeds") {
				seen[pp.ID] = true
				seeds = append(seeds, pp.ID)
			}
		}
	}
	if len(seeds) == 0 {
		return nil, nil
	}
	lit := p.Model("literature")
	snap := literature.Snapshot{AsOf: p.String("as_of")}
	if p.Bool("use_cutoff") {
		snap.CutoffDate = q.Cutoff
	}
	service := func(op string, body any, output func([]byte) ([]byte, error)) (func([]stages.In) (*stages.Work, error), error) {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		return func([]stages.In) (*stages.Work, error) {
			return &stages.Work{Service: &stages.Service{Model: lit, Request: llm.ServiceRequest{Op: op, Model: lit.Name, Body: b}, Output: output}}, nil
		}, nil
	}
	var nodes []stages.Node
	if n := p.Int("recommendations"); n > 0 {
		// Asked for more than kept: recommendations may return seeds.
		prep, err := service(literature.OpRecommend, literature.RecommendQuery{Snapshot: snap, Positive: seeds, Limit: n + len(seeds)}, recommendedOutput)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("recommend", seeds, n), Prepare: prep})
	}
	if p.Int("references") > 0 {
		for _, id := range seeds {
			prep, err := service(literature.OpReferences, literature.ReferencesQuery{Snapshot: snap, PaperID: id}, referencesOutput)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: "references " + id, Prepare: prep})
		}
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	deps := make([]stages.Dep, len(nodes))
	for k := range nodes {
		deps[k] = stages.Dep{Input: stages.Self, Index: k}
	}
	keepRec, keepRef := p.Int("recommendations"), p.Int("references")
	nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("augmented", seeds, keepRec, keepRef), Deps: deps,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{KeyParams: []string{"recommendations", "references"}, Compute: func() ([]byte, error) {
				out, err := augmented(seeds, keepRec, keepRef, in)
				if err != nil {
					return nil, fmt.Errorf("item %q: %w", item, err)
				}
				return stages.EncodeOutput(out)
			}}, nil
		}})
	return nodes, nil
}

func recommendedOutput(reply []byte) ([]byte, error) {
	var r literature.Papers
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, fmt.Errorf("decode recommendations: %w", err)
	}
	out := augmentPapers{Papers: []rankedPaper{}}
	for _, pp := range r.Papers {
		if pp != nil && pp.PaperID != "" {
			out.Papers = append(out.Papers, rankedPaper{Paper: paperOf(*pp), Citations: pp.CitationCount})
		}
	}
	return stages.EncodeOutput(out)
}

func referencesOutput(reply []byte) ([]byte, error) {
	var r literature.References
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, fmt.Errorf("decode references: %w", err)
	}
	out := augmentPapers{Papers: []rankedPaper{}}
	for _, ref := range r.References {
		if ref.Paper.PaperID != "" { // a reference the source does not know cannot be cited
			out.Papers = append(out.Papers, rankedPaper{Paper: paperOf(ref.Paper), Citations: ref.Paper.CitationCount})
		}
	}
	return stages.EncodeOutput(out)
}

// augmented picks the added papers from the children's outputs: in holds
// the recommend node (when asked), then each seed's references node.
func augmented(seeds []string, keepRec, keepRef int, in []stages.In) (*AugmentOutput, error) {
	out := &AugmentOutput{Seeds: seeds, Recommended: []Paper{}, Referenced: []Paper{}}
	seen := map[string]bool{}
	for _, id := range seeds {
		seen[id] = true
	}
	var refs []rankedPaper
	for _, x := range in {
		var a augmentPapers
		if err := json.Unmarshal(x.Output, &a); err != nil {
			return nil, fmt.Errorf("decode %s: %w", x.Node.Label, err)
		}
		if strings.HasPrefix(x.Node.Label, "recommend") {
			for _, pp := range a.Papers {
				if !seen[pp.ID] && len(out.Recommended) < keepRec {
					seen[pp.ID] = true
					out.Recommended = append(out.Recommended, pp.Paper)
				}
			}
			continue
		}
		refs = append(refs, a.Papers...)
	}
	sort.SliceStable(refs, func(i, j int) bool {
		if refs[i].Citations != refs[j].Citations {
			return refs[i].Citations > refs[j].Citations
		}
		return refs[i].ID < refs[j].ID
	})
	for _, pp := range refs {
		if !seen[pp.ID] && len(out.Referenced) < keepRef {
			seen[pp.ID] = true
			out.Referenced = append(out.Referenced, pp.Paper)
		}
	}
	return out, nil
}

// augmentedPapers reads an item's paper_augment nodes (none when the
// relevance has no augment): the augmented node's papers, recommended
// first. A failed or skipped augmentation adds nothing.
func augmentedPapers(ins []stages.In) ([]Paper, error) {
	for _, x := range ins {
		if !strings.HasPrefix(x.Node.Label, "augmented-") || x.Output == nil {
			continue
		}
		var a AugmentOutput
		if err := json.Unmarshal(x.Output, &a); err != nil {
			return nil, fmt.Errorf("decode %s: %w", x.From.Address, err)
		}
		return append(append([]Paper{}, a.Recommended...), a.Referenced...), nil
	}
	return nil, nil
}
