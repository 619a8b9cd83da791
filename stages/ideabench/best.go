package ideabench

import (
	"github.com/ideaflow/ideaflow/stages"
)

// best_idea is the paper's "of the n generated research ideas, the one with
// the highest semantic similarity": one compute node per target that names
// that idea, its index and its score. overlap_rating reads it (similarity =
// stage.best_idea.x), so the idea a judge rated is a node of its own that
// `ideaflow show` and `export` reach, and other stages (sanity_check, a
// human audit) can read the same pick instead of recomputing it.

type bestType struct{}

func (bestType) Name() string    { return "best_idea" }
func (bestType) Version() string { return "1" }

func (bestType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Accepts: []string{"generate_ideas"}, Doc: "the generated ideas of each target"},
		{Name: "similarity", Kind: stages.Input, Required: true, Accepts: []string{"similarity"}, Doc: "the similarity of the same ideas (not its upper_limit)"},
		{Name: "score", Kind: stages.String, Default: "f1", Doc: `the similarity score that picks the idea: "f1", "precision" or "recall" (embedding's cosine is all three)`},
	}
}

// BestIdeaOutput is a best_idea node's output: the target's most similar
// idea (the first on a tie), its index into the target's ideas (in the order
// of its generate_ideas nodes and their ideas) and its raw similarity score.
type BestIdeaOutput struct {
	Idea      string  `json:"idea,omitempty"`
	IdeaIndex int     `json:"idea_index"`
	Score     float64 `json:"score"`
	Dropped   bool    `json:"dropped,omitempty"`
}

func (bestType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	ideas, err := stages.RequireInput(p, "ideas")
	if err != nil {
		return nil, err
	}
	sim, err := stages.RequireInput(p, "similarity")
	if err != nil {
		return nil, err
	}
	score := p.String("score")
	if err := oneOf("score", score, "f1", "precision", "recall"); err != nil {
		return nil, err
	}
	if ideas.Source != nil && sim.Source != nil && sim.Source.Address != ideas.Source.Address {
		return nil, stages.ParamErrorf("similarity", "similarity (%s) scores targets of %s, but ideas are for %s; it must score the same ideas", sim.Address, sim.Source.Address, ideas.Source.Address)
	}
	prepare := func(in []stages.In) (*stages.Work, error) {
		b, err := pickBest(in[0].Node.Item, in, score)
		if err != nil {
			return nil, err
		}
		return &stages.Work{KeyParams: []string{"score"}, Compute: func() ([]byte, error) { return stages.EncodeOutput(b) }}, nil
	}
	var nodes []stages.Node
	for _, item := range ideas.Items() {
		idx := ideas.ItemNodes(item)
		si, ok := scoresNode(sim, item)
		if !ok {
			return nil, stages.ParamErrorf("similarity", "similarity (%s) has no node for item %q; it must score the same ideas", sim.Address, item)
		}
		deps := make([]stages.Dep, 0, len(idx)+1)
		for _, i := range idx {
			deps = append(deps, stages.Dep{Input: "ideas", Index: i})
		}
		deps = append(deps, stages.Dep{Input: "similarity", Index: si})
		nodes = append(nodes, stages.Node{Item: item, Label: "most similar", Deps: deps, Prepare: prepare})
	}
	return nodes, nil
}
