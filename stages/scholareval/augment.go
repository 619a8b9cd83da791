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
// review compares the idea with are the search's plus up to 8 recommended
// and up to 10 references-augmented papers. Its ablation (§F.3, Table 4)
// forwards the search's papers alone, and lowers coverage.
//
// The authors' code (ScholarEval/contribution/paper_augmentation.py at
// skai-research/ScholarEval@b8391a0, run after the first relevance pass)
// seeds from every paper that pass rated 3 or more, each its own seed: 8
// recommendations from that paper alone and its first 10 references as
// Semantic Scholar lists them, every one not seen yet added (recommended
// papers published before the cutoff only). That is seed_from =
// "relevance", the default. seed_from = "search" is ideaflow's earlier
// reading of the paper, before the code was read: the first `seeds` search
// results as the positives of one recommendation (8 kept in all) and their
// references, the 10 most cited kept.
//
// Per idea it expands, once its inputs have answered, into
//
//	recommend <id> / references <id>   (relevance) per seed: one OpRecommend
//	                                   request with the seed alone, one OpReferences request
//	recommend / references <id>        (search) one OpRecommend request with every seed, one
//	                                   OpReferences request per seed
//	augmented                          a compute node reading those (stages.Self): the added
//	                                   papers, in the order the authors' code adds them
//
// contribution_relevance reads the augmented node (its augment param), or
// embedding_filter's selection of it, beside or instead of the search.

const (
	defaultAugmentSeeds = 5
	maxAugmentSeeds     = 50
	maxRelevanceSeeds   = 1000
)

// Where paper_augment's seeds come from.
const (
	SeedFromRelevance = "relevance" // the authors' code: every paper the first relevance pass rated >= min_relevance
	SeedFromSearch    = "search"    // ideaflow's earlier choice: the first `seeds` search results
)

// How paper_augment keeps references.
const (
	ReferencesListed    = "listed"     // the authors': the first ones, in the source's order
	ReferencesMostCited = "most_cited" // ideaflow's earlier choice
)

type augmentType struct{}

// ServiceOps: recommendations and references, from one literature source.
func (augmentType) ServiceOps(stages.Params) map[string][]string {
	return map[string][]string{"literature": {literature.OpRecommend, literature.OpReferences}}
}

func (augmentType) Name() string    { return "paper_augment" }
func (augmentType) Version() string { return "2" } // 2: seeds from the relevance pass, references as listed
func (augmentType) Params() []stages.Param {
	return []stages.Param{
		{Name: "queries", Kind: stages.Input, Required: true, Accepts: []string{"contribution_dimensions"}, Doc: "the contribution extraction the search ran (its cutoff date bounds the new papers too)"},
		{Name: "relevance", Kind: stages.Input, Accepts: []string{"contribution_relevance"}, Doc: `the first relevance pass over the search's papers: with seed_from = "relevance", its papers rated at least min_relevance are the seeds, and every paper it scored counts as seen`},
		{Name: "search", Kind: stages.Input, Accepts: []string{"literature_search"}, Doc: `the paper search whose first results are the seeds with seed_from = "search"`},
		{Name: "literature", Kind: stages.ModelRef, Required: true, Service: true, Doc: "the literature source: a model block whose provider has a literature kind (semantic_scholar, corpus, mock)"},
		{Name: "seed_from", Kind: stages.String, Default: SeedFromRelevance, Doc: `"relevance" (the authors' code: every paper the relevance pass rated at least min_relevance, each seeding its own recommendations and references) or "search" (ideaflow's earlier choice: the first seeds search results, one recommendation from all of them)`},
		{Name: "min_relevance", Kind: stages.Int, Default: 3, Min: 0, Max: 5, Doc: `seed_from = "relevance": the least relevance score of a seed (the authors': 3)`},
		{Name: "max_seeds", Kind: stages.Int, Default: 500, Min: 1, Max: maxRelevanceSeeds, Doc: `seed_from = "relevance": at most this many seeds per idea; an idea with more fails, naming the count (the authors set no cap)`},
		{Name: "seeds", Kind: stages.Int, Default: defaultAugmentSeeds, Min: 1, Max: maxAugmentSeeds, Doc: `seed_from = "search": the first this many distinct search results (in query order, then rank) seed the recommendation and give their references`},
		{Name: "recommendations", Kind: stages.Int, Default: 8, Min: 0, Max: 500, Doc: `recommended papers asked for and kept: per seed with seed_from = "relevance" (the authors' rec_limit 8), in all with "search"; 0 asks for none`},
		{Name: "references", Kind: stages.Int, Default: 10, Min: 0, Max: 1000, Doc: `reference papers kept: per seed with seed_from = "relevance" (the authors' max_refs_per_paper 10), in all with "search"; 0 asks for none`},
		{Name: "reference_order", Kind: stages.String, Default: ReferencesListed, Doc: `which references are kept: "listed" (the authors': the first ones as the source lists them, asked for with that limit) or "most_cited" (every reference asked for, the most cited kept; ties by id)`},
		asOfParam,
		{Name: "use_cutoff", Kind: stages.Bool, Default: true, Doc: "exclude papers published after the idea's cutoff date, as the search does (the authors filter recommendations by date, and take references as they come)"},
	}
}

// AugmentOutput is the augmented node's output: the papers added to an
// idea's papers, each list in the order kept.
type AugmentOutput struct {
	Seeds       []string `json:"seeds"` // the seed ids, in order
	Recommended []Paper  `json:"recommended"`
	Referenced  []Paper  `json:"referenced"`
	// Added is every added paper once, in the order added: what the
	// stages downstream read (the authors' code adds, per seed, its
	// recommendations, then its references).
	Added []Paper `json:"added"`
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

// CheckParams checks the choices and that the seeds' input is given.
func (augmentType) CheckParams(inst *stages.Instance) error {
	p := inst.Params
	switch p.String("seed_from") {
	case SeedFromRelevance:
		if !p.Has("relevance") {
			return stages.ParamErrorf("relevance", `seed_from = "relevance" needs relevance, the relevance pass over the search's papers (or set seed_from = "search" and search)`)
		}
	case SeedFromSearch:
		if !p.Has("search") {
			return stages.ParamErrorf("search", `seed_from = "search" needs search, the paper search whose first results seed the augmentation`)
		}
	default:
		return stages.ParamErrorf("seed_from", `seed_from = %q: use %q (the authors' code) or %q`, p.String("seed_from"), SeedFromRelevance, SeedFromSearch)
	}
	if o := p.String("reference_order"); o != ReferencesListed && o != ReferencesMostCited {
		return stages.ParamErrorf("reference_order", `reference_order = %q: use %q (the authors') or %q`, o, ReferencesListed, ReferencesMostCited)
	}
	if strings.TrimSpace(p.String("as_of")) == "" {
		return stages.ParamErrorf("as_of", `as_of names the literature snapshot ("2026-12-01"); it must not be empty`)
	}
	return nil
}

func (augmentType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	if _, err := stages.RequireInput(p, "queries"); err != nil {
		return nil, err
	}
	if _, err := requireModel(p, "literature"); err != nil {
		return nil, err
	}
	return nil, (augmentType{}).CheckParams(inst)
}

func (augmentType) ExpandInputs() []string { return []string{"queries", "search", "relevance"} }

// MaxPerItem: the augmented node and, per seed, a recommendation and a
// references request.
func (augmentType) MaxPerItem(inst *stages.Instance) int {
	if inst.Params.String("seed_from") == SeedFromRelevance {
		return 1 + 2*inst.Params.Int("max_seeds")
	}
	return 2 + inst.Params.Int("seeds")
}

// augmentPlan is what an item's augmentation asks for and keeps.
type augmentPlan struct {
	seeds    []string
	seen     map[string]bool // the papers already there: seeds, and every paper the relevance pass scored
	perSeed  bool
	keepRec  int
	keepRef  int
	listed   bool
	snapshot literature.Snapshot
}

func (augmentType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	by := split(in)
	if len(by["queries"]) != 1 || by["queries"][0].Output == nil {
		return nil, nil // extraction failed: no search, nothing to augment
	}
	var q queriesOutput
	if err := json.Unmarshal(by["queries"][0].Output, &q); err != nil {
		return nil, fmt.Errorf("decode queries: %w", err)
	}
	p := inst.Params
	plan := augmentPlan{seen: map[string]bool{}, keepRec: p.Int("recommendations"), keepRef: p.Int("references"),
		listed: p.String("reference_order") == ReferencesListed, snapshot: literature.Snapshot{AsOf: p.String("as_of")}}
	if p.Bool("use_cutoff") {
		plan.snapshot.CutoffDate = q.Cutoff
	}
	if p.String("seed_from") == SeedFromRelevance {
		plan.perSeed = true
		rels, _, err := decodeIn[RelevanceOutput](by["relevance"])
		if err != nil {
			return nil, err
		}
		for _, r := range rels {
			if plan.seen[r.Paper.ID] {
				continue
			}
			plan.seen[r.Paper.ID] = true
			if r.Score >= p.Int("min_relevance") {
				plan.seeds = append(plan.seeds, r.Paper.ID)
			}
		}
		if max := p.Int("max_seeds"); len(plan.seeds) > max {
			return nil, stages.ParamErrorf("max_seeds", "item %q has %d papers rated at least %d, more than max_seeds = %d; raise it", item, len(plan.seeds), p.Int("min_relevance"), max)
		}
	} else {
		res, _, err := results(by["search"])
		if err != nil {
			return nil, err
		}
		for _, qu := range q.Queries {
			r := res[qu.Query]
			if r == nil {
				continue
			}
			for _, pp := range r.Papers {
				if !plan.seen[pp.ID] && len(plan.seeds) < p.Int("seeds") {
					plan.seen[pp.ID] = true
					plan.seeds = append(plan.seeds, pp.ID)
				}
			}
		}
	}
	if len(plan.seeds) == 0 {
		return nil, nil
	}
	lit := p.Model("literature")
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
	add := func(label, op string, body any, output func([]byte) ([]byte, error)) error {
		prep, err := service(op, body, output)
		if err != nil {
			return err
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label, Prepare: prep})
		return nil
	}
	refLimit := 0 // every reference, to rank them
	if plan.listed {
		refLimit = plan.keepRef
	}
	if plan.perSeed {
		for _, id := range plan.seeds {
			if plan.keepRec > 0 {
				if err := add("recommend "+id, literature.OpRecommend, literature.RecommendQuery{Snapshot: plan.snapshot, Positive: []string{id}, Limit: plan.keepRec}, recommendedOutput); err != nil {
					return nil, err
				}
			}
			if plan.keepRef > 0 {
				if err := add("references "+id, literature.OpReferences, literature.ReferencesQuery{Snapshot: plan.snapshot, PaperID: id, Limit: refLimit}, referencesOutput); err != nil {
					return nil, err
				}
			}
		}
	} else {
		if plan.keepRec > 0 {
			// Asked for more than kept: recommendations may return seeds.
			if err := add(label("recommend", plan.seeds, plan.keepRec), literature.OpRecommend, literature.RecommendQuery{Snapshot: plan.snapshot, Positive: plan.seeds, Limit: plan.keepRec + len(plan.seeds)}, recommendedOutput); err != nil {
				return nil, err
			}
		}
		if plan.keepRef > 0 {
			for _, id := range plan.seeds {
				if err := add("references "+id, literature.OpReferences, literature.ReferencesQuery{Snapshot: plan.snapshot, PaperID: id, Limit: refLimit}, referencesOutput); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	deps := make([]stages.Dep, len(nodes))
	for k := range nodes {
		deps[k] = stages.Dep{Input: stages.Self, Index: k}
	}
	// The label stands for everything the selection reads beside its
	// deps: the seeds, the papers already seen, the choices.
	seen := make([]string, 0, len(plan.seen))
	for id := range plan.seen {
		seen = append(seen, id)
	}
	sort.Strings(seen)
	nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("augmented", plan.seeds, seen, plan.perSeed, plan.keepRec, plan.keepRef, plan.listed), Deps: deps,
		AllowMissing: plan.perSeed, // the authors go on past a failed request
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{KeyParams: []string{"seed_from", "recommendations", "references", "reference_order"}, Compute: func() ([]byte, error) {
				var out *AugmentOutput
				var err error
				if plan.perSeed {
					out, err = augmentedPerSeed(plan, in)
				} else {
					out, err = augmented(plan.seeds, plan.keepRec, plan.keepRef, plan.listed, in)
				}
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

// augmented picks the added papers with seed_from = "search" from the
// children's outputs: in holds the recommend node (when asked), then each
// seed's references node. listed keeps the references in the order the
// seeds list them; else the most cited first.
func augmented(seeds []string, keepRec, keepRef int, listed bool, in []stages.In) (*AugmentOutput, error) {
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
	if !listed {
		sortByCitations(refs)
	}
	for _, pp := range refs {
		if !seen[pp.ID] && len(out.Referenced) < keepRef {
			seen[pp.ID] = true
			out.Referenced = append(out.Referenced, pp.Paper)
		}
	}
	out.Added = append(append([]Paper{}, out.Recommended...), out.Referenced...)
	return out, nil
}

// sortByCitations orders papers most cited first, ties by id.
func sortByCitations(ps []rankedPaper) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Citations != ps[j].Citations {
			return ps[i].Citations > ps[j].Citations
		}
		return ps[i].ID < ps[j].ID
	})
}

// augmentedPerSeed is the authors' selection: in holds, per seed, its
// recommendations (when asked) and its references, in seed order; each
// paper not seen yet is added, in that order. A failed child adds nothing
// (the authors log the failure and go on).
func augmentedPerSeed(plan augmentPlan, in []stages.In) (*AugmentOutput, error) {
	out := &AugmentOutput{Seeds: plan.seeds, Recommended: []Paper{}, Referenced: []Paper{}, Added: []Paper{}}
	seen := map[string]bool{}
	for id := range plan.seen {
		seen[id] = true
	}
	for _, x := range in {
		if x.Output == nil {
			continue
		}
		var a augmentPapers
		if err := json.Unmarshal(x.Output, &a); err != nil {
			return nil, fmt.Errorf("decode %s: %w", x.Node.Label, err)
		}
		rec := strings.HasPrefix(x.Node.Label, "recommend")
		if !rec && !plan.listed {
			// "most_cited" asked for every reference: the most cited first.
			sortByCitations(a.Papers)
		}
		for i, pp := range a.Papers {
			if !rec && i >= plan.keepRef {
				break
			}
			if seen[pp.ID] {
				continue
			}
			seen[pp.ID] = true
			if rec {
				out.Recommended = append(out.Recommended, pp.Paper)
			} else {
				out.Referenced = append(out.Referenced, pp.Paper)
			}
			out.Added = append(out.Added, pp.Paper)
		}
	}
	return out, nil
}

// augmentedPapers reads an item's paper_augment (or embedding_filter)
// nodes (none when the relevance has no augment): the augmented node's
// papers, in the order added. A failed or skipped augmentation adds nothing.
func augmentedPapers(ins []stages.In) ([]Paper, error) {
	for _, x := range ins {
		if !strings.HasPrefix(x.Node.Label, "augmented-") || x.Output == nil {
			continue
		}
		var a AugmentOutput
		if err := json.Unmarshal(x.Output, &a); err != nil {
			return nil, fmt.Errorf("decode %s: %w", x.From.Address, err)
		}
		return a.Added, nil
	}
	return nil, nil
}
