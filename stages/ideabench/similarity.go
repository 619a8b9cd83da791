package ideabench

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/similarity"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// The paper's semantic similarity is two steps in ideaflow, because a node
// reads only nodes of its instance's inputs, never its own instance's, and a
// report column is an instance with one node:
//
//	similarity        per target: what to compare. rouge_l: one compute node
//	                  with P/R/F1 of every idea; bertscore, embedding: one
//	                  service node per text (the reference at slot 0, then
//	                  one per generate_ideas node), cached by content.
//	similarity_score  one aggregate node: how to score. Picks the score
//	                  (f1, precision, recall), applies idf weights and
//	                  baseline rescaling, takes the best of the n ideas per
//	                  target and summarises: mean, median, p80.
//
// Splitting "what" from "how" keeps every service call free of scoring
// choices: changing idf, baseline or score re-runs one compute node and no
// embedding, and idf, which needs document frequencies over all targets'
// references, is computed once instead of once per target.

type similarityType struct{}

func (similarityType) Name() string    { return "similarity" }
func (similarityType) Version() string { return "1" }

func (similarityType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Accepts: []string{"generate_ideas"}, Doc: "the generated ideas of each target (and, through their dataset, the target)"},
		{Name: "method", Kind: stages.String, Default: "rouge_l", Doc: `"rouge_l" (offline, lexical), "bertscore" (token embeddings: a tei or mock model) or "embedding" (cosine of sentence embeddings: an embeddings, openai or mock model)`},
		{Name: "model", Kind: stages.ModelRef, Service: true, Doc: "the embedding model; required by bertscore and embedding, unused by rouge_l"},
		{Name: "against", Kind: stages.String, Default: "abstract", Doc: `the target text ideas are compared with: "abstract" (the paper) or "idea" (the target's summarised idea)`},
		{Name: "upper_limit", Kind: stages.Bool, Default: false, Doc: "compare the target abstract with the target idea instead of the generated ideas: the paper's practical upper limit (0.718 BERTScore F1)"},
	}
}

// SimilarityOutput is a rouge_l node's output: the P/R/F1 of each generated
// idea of the target, in the order of its generate_ideas nodes and their
// ideas (with upper_limit, one entry: the target idea).
type SimilarityOutput struct {
	Method  string           `json:"method"`
	Scores  []similarity.PRF `json:"scores,omitempty"`
	Dropped bool             `json:"dropped,omitempty"`
}

var droppedSimilarity = []byte(`{"dropped":true}`)

// Slots of a bertscore or embedding item: the reference text first, then the
// candidates (the target idea with upper_limit, else one node per
// generate_ideas node of the item, in node order).
const referenceSlot = 0

type similarityLayout struct {
	method     string
	op         string // service op; "" for rouge_l
	model      *stages.Model
	against    string
	upperLimit bool
}

func newSimilarityLayout(p stages.Params) (*similarityLayout, error) {
	s := &similarityLayout{method: p.String("method"), model: p.Model("model"), against: p.String("against"), upperLimit: p.Bool("upper_limit")}
	if err := oneOf("method", s.method, "rouge_l", "bertscore", "embedding"); err != nil {
		return nil, err
	}
	if err := oneOf("against", s.against, "abstract", "idea"); err != nil {
		return nil, err
	}
	switch s.method {
	case "bertscore":
		s.op = llm.OpTokenEmbeddings
	case "embedding":
		s.op = llm.OpEmbeddings
	}
	if s.op != "" && s.model == nil {
		return nil, stages.ParamErrorf("model", "method = %q needs model, the embedding model", s.method)
	}
	if s.upperLimit && s.against == "idea" {
		return nil, stages.ParamErrorf("upper_limit", `upper_limit compares the target abstract with the target idea, so against must be "abstract" (got "idea")`)
	}
	return s, nil
}

// referenceField is the target record field the candidates are compared with.
func (s *similarityLayout) referenceField() string {
	if s.upperLimit {
		return "abstract"
	}
	return s.against
}

func (similarityType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	s, err := newSimilarityLayout(inst.Params)
	if err != nil {
		return nil, err
	}
	ideas, err := stages.RequireInput(inst.Params, "ideas")
	if err != nil {
		return nil, err
	}
	target := ideas.Source
	if target == nil {
		return nil, stages.ParamErrorf("ideas", "ideas (%s) has no source dataset to take the targets from", ideas.Address)
	}
	items := ideas.Items()
	var nodes []stages.Node
	for _, item := range items {
		tn := target.ItemNodes(item)
		if len(tn) != 1 {
			return nil, stages.ParamErrorf("ideas", "the target dataset (%s) has %d records for item %q; need exactly one", target.Address, len(tn), item)
		}
		rec := stages.Dep{Input: target.Address, Index: tn[0]}
		idx := ideas.ItemNodes(item)
		if s.op == "" {
			deps := []stages.Dep{rec}
			if !s.upperLimit {
				for _, i := range idx {
					deps = append(deps, stages.Dep{Input: "ideas", Index: i})
				}
			}
			nodes = append(nodes, stages.Node{Item: item, Deps: deps, Prepare: s.prepareRouge})
			continue
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: referenceSlot, Label: s.referenceField(), Deps: []stages.Dep{rec},
			Prepare: s.prepareRecordText(s.referenceField())})
		if s.upperLimit {
			nodes = append(nodes, stages.Node{Item: item, Slot: 1, Label: "idea", Deps: []stages.Dep{rec}, Prepare: s.prepareRecordText("idea")})
			continue
		}
		for k, i := range idx {
			nodes = append(nodes, stages.Node{Item: item, Slot: 1 + k, Label: fmt.Sprintf("ideas %d", k),
				Deps: []stages.Dep{{Input: "ideas", Index: i}}, Prepare: s.prepareIdeas})
		}
	}
	return nodes, nil
}

// embed is the service call embedding texts. The body is the operation's
// documented request, {"input": [text, ...]}, and nothing else, so equal
// texts give equal requests and the engine sends them once.
func (s *similarityLayout) embed(texts []string) (*stages.Work, error) {
	body, err := json.Marshal(map[string][]string{"input": texts})
	if err != nil {
		return nil, err
	}
	return &stages.Work{Service: &stages.Service{Model: s.model, Request: llm.ServiceRequest{Op: s.op, Model: s.model.Name, Body: body}}}, nil
}

// prepareRecordText embeds one field of the target record. It depends on the
// record alone, never on the ideas, so every generator's instance asks the
// same request and the reference is embedded once for all of them.
func (s *similarityLayout) prepareRecordText(field string) func([]stages.In) (*stages.Work, error) {
	return func(in []stages.In) (*stages.Work, error) {
		text, err := recordField(in[0].Output, field)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", in[0].Node.Item, err)
		}
		return s.embed([]string{text})
	}
}

// prepareIdeas embeds the ideas of one generate_ideas node: one text in
// independent mode, n in batch mode. A dropped target embeds nothing.
func (s *similarityLayout) prepareIdeas(in []stages.In) (*stages.Work, error) {
	ideas, isDropped, err := decodeIdeas(in[0].Output)
	if err != nil {
		return nil, fmt.Errorf("decode ideas of %q: %w", in[0].Node.Item, err)
	}
	if isDropped {
		return dropped(droppedSimilarity, "ideas"), nil
	}
	if len(ideas) == 0 {
		return nil, fmt.Errorf("item %q: a generate_ideas node has no ideas", in[0].Node.Item)
	}
	return s.embed(ideas)
}

// prepareRouge scores every idea of an item against the reference text. in
// holds the target record, then the item's generate_ideas nodes.
func (s *similarityLayout) prepareRouge(in []stages.In) (*stages.Work, error) {
	item := in[0].Node.Item
	ref, err := recordField(in[0].Output, s.referenceField())
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", item, err)
	}
	var cands []string
	if s.upperLimit {
		idea, err := recordField(in[0].Output, "idea")
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", item, err)
		}
		cands = []string{idea}
	}
	for _, x := range in[1:] {
		ideas, isDropped, err := decodeIdeas(x.Output)
		if err != nil {
			return nil, fmt.Errorf("decode ideas of %q: %w", item, err)
		}
		if isDropped {
			return dropped(droppedSimilarity, "ideas"), nil
		}
		cands = append(cands, ideas...)
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("item %q has no generated ideas to compare", item)
	}
	return &stages.Work{KeyParams: []string{"method", "against", "upper_limit"}, Compute: func() ([]byte, error) {
		refToks := similarity.Tokens(ref)
		out := SimilarityOutput{Method: "rouge_l", Scores: make([]similarity.PRF, len(cands))}
		for i, c := range cands {
			out.Scores[i] = similarity.RougeLTokens(similarity.Tokens(c), refToks)
		}
		return stages.EncodeOutput(out)
	}}, nil
}

// recordField reads a non-empty string field ("abstract" or "idea") of a
// target record.
func recordField(d []byte, field string) (string, error) {
	var text string
	err := walkObject(d, func(key, value []byte) (bool, error) {
		if string(key) != field {
			return false, nil
		}
		var err error
		text, err = stringValue(value)
		return true, err
	})
	if err != nil {
		return "", fmt.Errorf("decode: %w", err)
	}
	if text = strings.TrimSpace(text); text == "" {
		return "", fmt.Errorf("the record has no %q to compare with", field)
	}
	return text, nil
}

type similarityScoreType struct{}

func (similarityScoreType) Name() string    { return "similarity_score" }
func (similarityScoreType) Version() string { return "2" } // 2: Extra "mean"; summary

func (similarityScoreType) Params() []stages.Param {
	return []stages.Param{
		{Name: "similarity", Kind: stages.Input, Required: true, Accepts: []string{"similarity"}, Doc: "the similarity stage to score"},
		{Name: "score", Kind: stages.String, Default: "f1", Doc: `"f1" (the paper), "precision" (from the idea's side) or "recall" (from the target's side); embedding's cosine is all three`},
		{Name: "idf", Kind: stages.Bool, Default: false, Doc: "bertscore only: weigh tokens by idf(w) = log((M+1)/(df(w)+1)) over the M scored targets' reference texts, as bert-score does"},
		{Name: "baseline", Kind: stages.Number, Default: 0.0, Doc: "rescale each score s to (s - baseline)/(1 - baseline), bert-score's rescale_with_baseline; 0: raw scores"},
		summaryParam,
	}
}

func (similarityScoreType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	up, err := stages.RequireInput(p, "similarity")
	if err != nil {
		return nil, err
	}
	sc := &scorer{score: p.String("score"), idf: p.Bool("idf"), baseline: p.Number("baseline")}
	if err := oneOf("score", sc.score, "f1", "precision", "recall"); err != nil {
		return nil, err
	}
	summary, err := summaryOf(p)
	if err != nil {
		return nil, err
	}
	if sc.baseline >= 1 || math.IsNaN(sc.baseline) {
		return nil, stages.ParamErrorf("baseline", "baseline = %v must be below 1: scores are rescaled by 1/(1 - baseline)", sc.baseline)
	}
	deps := stages.AllDeps("similarity", up)
	return []stages.Node{{Deps: deps, AllowMissing: true, Prepare: func(in []stages.In) (*stages.Work, error) {
		return &stages.Work{Compute: func() ([]byte, error) {
			s, err := sc.Score(in)
			if err != nil {
				return nil, err
			}
			return stages.EncodeOutput(summarise(s, summary))
		}}, nil
	}}}, nil
}

type scorer struct {
	score    string
	idf      bool
	baseline float64
}

// simNode is what similarity_score reads of one similarity node: a rouge_l
// output, an OpEmbeddings reply ({"vectors"}), an OpTokenEmbeddings reply
// ({"inputs"}), or a dropped target.
type simNode struct {
	Method  string           `json:"method"`
	Scores  []similarity.PRF `json:"scores"`
	Dropped bool             `json:"dropped"`
	Vectors [][]float64      `json:"vectors"`
	Inputs  []tokenText      `json:"inputs"`
}

type tokenText struct {
	Tokens  []string    `json:"tokens"`
	Vectors [][]float64 `json:"vectors"`
}

// simItem is one target's nodes, decoded.
type simItem struct {
	id      string
	nodes   []*simNode
	missing bool
	dropped bool
}

// Score summarises a similarity instance's nodes:
//
//	best(t) = max over the n ideas of target t of score(idea, reference(t))
//	Value   = mean over scored targets of best(t)
//
// with Extra "median" and "p80" (the 80th percentile the paper's Table 1
// reports, by linear interpolation as numpy.percentile), "dropped" (targets
// dropped for too few references, excluded) and "n" (ideas per target,
// when every target has the same number). A target any node of which failed
// or was skipped counts in Missing. Each score is rescaled with baseline
// before the maximum (rescaling keeps the order, so the same idea wins).
func (sc *scorer) Score(in []stages.In) (*stages.Score, error) {
	var order []*simItem
	byID := map[string]*simItem{}
	for _, x := range in {
		it := byID[x.Node.Item]
		if it == nil {
			it = &simItem{id: x.Node.Item}
			byID[it.id] = it
			order = append(order, it)
		}
		if x.Output == nil {
			it.missing = true
			continue
		}
		var n simNode
		if err := json.Unmarshal(x.Output, &n); err != nil {
			return nil, fmt.Errorf("decode similarity of %q: %w", it.id, err)
		}
		it.dropped = it.dropped || n.Dropped
		it.nodes = append(it.nodes, &n)
	}
	var scored []*simItem
	dropped := 0
	for _, it := range order {
		switch {
		case it.dropped:
			dropped++
		case !it.missing:
			scored = append(scored, it)
		}
	}
	var idf *similarity.IDF
	if sc.idf {
		var refs [][]string
		for _, it := range scored {
			if len(it.nodes[0].Inputs) != 1 {
				return nil, fmt.Errorf("idf weights need bertscore token embeddings; target %q has none (set idf = false for rouge_l and embedding)", it.id)
			}
			refs = append(refs, it.nodes[0].Inputs[0].Tokens)
		}
		idf = similarity.NewIDF(refs)
	}
	s := &stages.Score{Extra: map[string]float64{"dropped": float64(dropped)}, PerItem: map[string]float64{}}
	s.Missing = len(order) - len(scored) - dropped
	var bests []float64
	n := -1
	for _, it := range scored {
		scores, err := sc.itemScores(it, idf)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", it.id, err)
		}
		if len(scores) == 0 {
			return nil, fmt.Errorf("target %q has no ideas to score", it.id)
		}
		best := math.Inf(-1)
		for _, v := range scores {
			best = max(best, similarity.Rescale(v, sc.baseline))
		}
		s.PerItem[it.id] = best
		bests = append(bests, best)
		switch {
		case n == -1:
			n = len(scores)
		case n != len(scores):
			n = 0 // targets differ: no single n to report
		}
	}
	s.Count = len(bests)
	if s.Count > 0 {
		var err error
		if s.Value, err = stats.Mean(bests); err != nil {
			return nil, err
		}
		for name, p := range map[string]float64{"median": 50, "p80": 80} {
			if s.Extra[name], err = stats.Percentile(bests, p); err != nil {
				return nil, err
			}
		}
		if n > 0 {
			s.Extra["n"] = float64(n)
		}
	}
	return s, nil
}

// itemScores returns the raw score of each candidate of a target, in order.
func (sc *scorer) itemScores(it *simItem, idf *similarity.IDF) ([]float64, error) {
	first := it.nodes[0]
	pick := func(r similarity.PRF) float64 {
		switch sc.score {
		case "precision":
			return r.Precision
		case "recall":
			return r.Recall
		}
		return r.F1
	}
	var out []float64
	switch {
	case first.Method == "rouge_l":
		for _, r := range first.Scores {
			out = append(out, pick(r))
		}
	case first.Vectors != nil:
		if len(first.Vectors) != 1 {
			return nil, fmt.Errorf("the reference has %d sentence vectors, want 1", len(first.Vectors))
		}
		for _, c := range it.nodes[1:] {
			for _, v := range c.Vectors {
				out = append(out, similarity.Cosine(v, first.Vectors[0]))
			}
		}
	case first.Inputs != nil:
		if len(first.Inputs) != 1 {
			return nil, fmt.Errorf("the reference has %d token embeddings, want 1", len(first.Inputs))
		}
		ref := first.Inputs[0]
		var refW []float64
		if idf != nil {
			refW = idf.Weights(ref.Tokens)
		}
		for _, c := range it.nodes[1:] {
			for _, cand := range c.Inputs {
				var candW []float64
				if idf != nil {
					candW = idf.Weights(cand.Tokens)
				}
				out = append(out, pick(similarity.BERTScore(cand.Vectors, ref.Vectors, candW, refW)))
			}
		}
	default:
		return nil, fmt.Errorf("the similarity output is neither rouge_l scores nor embeddings")
	}
	return out, nil
}
