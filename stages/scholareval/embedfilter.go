package scholareval

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/similarity"
)

// ---- embedding_filter ----------------------------------------------------
//
// The authors' step between paper augmentation and the second relevance
// pass (ScholarEval/contribution/embedding_filter.py, run with --top_k 100
// by ScholarEval.py at skai-research/ScholarEval@b8391a0): the papers the
// augmentation added are embedded (the abstract, else the title), as is
// the research plan, and the top_k most similar to the plan by cosine are
// kept (a stable sort: ties keep the order added). A paper whose embedding
// failed scores 0, as the authors' zero vector does. The authors embed
// with "Titan Text Embeddings V2" behind an OpenAI-compatible endpoint.
//
// Per idea it expands, once the augmentation has settled, into
//
//	plan          one OpEmbeddings request: the idea's text
//	paper <id>    one OpEmbeddings request per added paper
//	augmented     a compute node reading those (stages.Self): the kept papers,
//	              most similar first, in paper_augment's output shape

type embedFilterType struct{}

// ServiceOps: embeddings.
func (embedFilterType) ServiceOps(stages.Params) map[string][]string {
	return map[string][]string{"model": {llm.OpEmbeddings}}
}

func (embedFilterType) Name() string    { return "embedding_filter" }
func (embedFilterType) Version() string { return "1" }
func (embedFilterType) Params() []stages.Param {
	return []stages.Param{
		{Name: "dimensions", Kind: stages.Input, Required: true, Accepts: []string{"contribution_dimensions"}, Doc: "the contribution extraction: the idea's text is what the papers are compared with"},
		{Name: "augment", Kind: stages.Input, Required: true, Accepts: []string{"paper_augment"}, Doc: "the papers the augmentation added"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Service: true, Doc: `the embedding model (the authors': "Titan Text Embeddings V2")`},
		{Name: "top_k", Kind: stages.Int, Default: 100, Min: 1, Max: 100000, Doc: "keep the this many added papers most similar to the idea (the authors: 100)"},
		{Name: "max_papers", Kind: stages.Int, Default: 20000, Min: 1, Max: 100000, Doc: "at most this many added papers per idea to embed; an idea with more fails, naming the count"},
	}
}

// FilterOutput is the kept papers, in paper_augment's output shape (Added,
// most similar first) with each one's cosine similarity to the idea.
type FilterOutput struct {
	AugmentOutput
	Similarity map[string]float64 `json:"similarity"` // paper id -> cosine with the idea, every added paper
	Dropped    int                `json:"dropped"`    // added papers not kept
}

func (embedFilterType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	for _, n := range []string{"dimensions", "augment"} {
		if _, err := stages.RequireInput(p, n); err != nil {
			return nil, err
		}
	}
	_, err := requireModel(p, "model")
	return nil, err
}

func (embedFilterType) ExpandInputs() []string { return []string{"dimensions", "augment"} }
func (embedFilterType) MaxPerItem(inst *stages.Instance) int {
	return 2 + inst.Params.Int("max_papers")
}

// embedText is what a paper is embedded by: its abstract, else its title.
func embedText(p Paper) string {
	if strings.TrimSpace(p.Abstract) != "" {
		return p.Abstract
	}
	return p.Title
}

func (embedFilterType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	by := split(in)
	dims, err := decodeDimensions(by["dimensions"])
	if dims == nil || err != nil {
		return nil, err
	}
	added, err := augmentedPapers(by["augment"])
	if err != nil || len(added) == 0 {
		return nil, err
	}
	p := inst.Params
	if max := p.Int("max_papers"); len(added) > max {
		return nil, stages.ParamErrorf("max_papers", "item %q has %d added papers, more than max_papers = %d; raise it", item, len(added), max)
	}
	m := p.Model("model")
	embed := func(text string) (func([]stages.In) (*stages.Work, error), error) {
		body, err := json.Marshal(map[string][]string{"input": {text}})
		if err != nil {
			return nil, err
		}
		return func([]stages.In) (*stages.Work, error) {
			return &stages.Work{Service: &stages.Service{Model: m, Request: llm.ServiceRequest{Op: llm.OpEmbeddings, Model: m.Name, Body: body}}}, nil
		}, nil
	}
	plan := strings.TrimSpace(dims.Idea) // the authors strip the plan file
	prep, err := embed(plan)
	if err != nil {
		return nil, err
	}
	nodes := []stages.Node{{Item: item, Slot: 0, Label: label("plan", plan), Prepare: prep}}
	for _, pp := range added {
		prep, err := embed(embedText(pp))
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("paper", pp.ID, embedText(pp)), Prepare: prep})
	}
	deps := make([]stages.Dep, len(nodes))
	for k := range nodes {
		deps[k] = stages.Dep{Input: stages.Self, Index: k}
	}
	k := p.Int("top_k")
	nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("augmented", added, k), Deps: deps, AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{KeyParams: []string{"top_k"}, Compute: func() ([]byte, error) {
				out, err := topSimilar(added, k, in)
				if err != nil {
					return nil, fmt.Errorf("item %q: %w", item, err)
				}
				return stages.EncodeOutput(out)
			}}, nil
		}})
	return nodes, nil
}

// topSimilar keeps the k added papers most similar to the plan: in holds
// the plan's embedding reply, then each paper's, in added's order.
func topSimilar(added []Paper, k int, in []stages.In) (*FilterOutput, error) {
	vector := func(x stages.In) ([]float64, error) {
		if x.Output == nil {
			return nil, nil // a failed request: the authors' zero vector
		}
		var r struct {
			Vectors [][]float64 `json:"vectors"`
		}
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("decode the reply of %s: %w", x.Node.Label, err)
		}
		if len(r.Vectors) != 1 {
			return nil, fmt.Errorf("%s: %d vectors for one text", x.Node.Label, len(r.Vectors))
		}
		return r.Vectors[0], nil
	}
	if len(in) != len(added)+1 {
		return nil, fmt.Errorf("%d embedding replies for %d papers and the plan", len(in), len(added))
	}
	plan, err := vector(in[0])
	if err != nil {
		return nil, err
	}
	if plan == nil {
		return nil, fmt.Errorf("the plan's embedding failed")
	}
	type scored struct {
		p   Paper
		sim float64
	}
	all := make([]scored, len(added))
	out := &FilterOutput{Similarity: map[string]float64{}}
	for i, pp := range added {
		v, err := vector(in[i+1])
		if err != nil {
			return nil, err
		}
		all[i] = scored{pp, similarity.Cosine(plan, v)}
		out.Similarity[pp.ID] = all[i].sim
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].sim > all[b].sim })
	out.Seeds, out.Recommended, out.Referenced, out.Added = []string{}, []Paper{}, []Paper{}, []Paper{}
	for i, s := range all {
		if i == k {
			out.Dropped = len(all) - k
			break
		}
		out.Added = append(out.Added, s.p)
	}
	return out, nil
}
