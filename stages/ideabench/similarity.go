package ideabench

import (
	"encoding/json"
	"fmt"

	"math"
	"strings"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/similarity"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// The paper's semantic similarity is two stages in ideaflow, because a report
// column is an instance with one node:
//
//	similarity        per target: what the ideas score, in the item's last
//	                  node (scoresNode). rouge_l: one compute node, P/R/F1
//	                  of every idea. bertscore: one service node, the
//	                  token_matching of the ideas with the reference: each
//	                  token's best cosine on either side, which the client
//	                  computes from the token embeddings. embedding: one
//	                  service node per text (the reference at slot 0, then
//	                  one per generate_ideas node), cached by content and
//	                  shared across instances, then a "scores" node reading
//	                  them (stages.Self) with the cosine of every idea.
//	similarity_score  one aggregate node over the items' last nodes: how to
//	                  score. Picks the score (f1, precision, recall), applies
//	                  idf weights and baseline rescaling, takes the best of
//	                  the n ideas per target and summarises: mean, median, p80.
//
// Splitting "what" from "how" keeps every service call free of scoring
// choices: changing idf, baseline or score re-runs one compute node and no
// embedding. idf, which needs document frequencies over all targets'
// references, is computed once instead of once per target, from the
// reference tokens in the matchings.
//
// Why bertscore caches matchings, not token vectors: a vector is hundreds of
// numbers per token, a matching two. At Table 1's full size (2,374 targets x
// 14 rows) the vectors were tens of GB of cache, and the aggregate that held
// them all was stopped past 15 GB of memory; with matchings the whole run's
// cache is 520 MiB and it peaks at 2.3 GiB. The price: a reference is
// embedded again for every row, where vectors were shared.

type similarityType struct{}

func (similarityType) Name() string    { return "similarity" }
func (similarityType) Version() string { return "2" } // 2: bertscore's token_matching node, embedding's scores node

func (similarityType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Accepts: []string{"generate_ideas"}, Doc: "the generated ideas of each target (and, through their dataset, the target)"},
		{Name: "method", Kind: stages.String, Default: "rouge_l", Doc: `"rouge_l" (offline, lexical), "bertscore" (token embeddings: a tei or mock model) or "embedding" (cosine of sentence embeddings: an embeddings, openai or mock model)`},
		{Name: "model", Kind: stages.ModelRef, Service: true, Doc: "the embedding model; required by bertscore and embedding, unused by rouge_l"},
		{Name: "against", Kind: stages.String, Default: "abstract", Doc: `the target text ideas are compared with: "abstract" (the paper) or "idea" (the target's summarised idea)`},
		{Name: "upper_limit", Kind: stages.Bool, Default: false, Doc: "compare the target abstract with the target idea instead of the generated ideas: the paper's practical upper limit (0.718 BERTScore F1)"},
		{Name: "layer", Kind: stages.Int, Default: -1, Min: -1, Max: maxLayer, Doc: "bertscore: the model's hidden layer whose token embeddings are matched (0: the embedding output); -1: bert_score's default layer for the model (its table: 40 for microsoft/deberta-xlarge-mnli, the IdeaBench authors' model; 17 for roberta-large), served by a transformers provider (tools/token_embeddings_server.py)"},
		{Name: "final_layer", Kind: stages.Bool, Default: false, Doc: "bertscore: the model's final layer instead of layer, what text-embeddings-inference serves (the choice with a tei model)"},
		{Name: "special_tokens", Kind: stages.String, Default: "bert_score", Doc: `bertscore: "bert_score" ([CLS] and [SEP], <s> and </s>, stay in the matching as tokens to match and weigh 0, as bert_score handles them) or "drop" (removed before matching)`},
		{Name: "target", Kind: stages.Input, Accepts: []string{"extract_idea"}, Doc: `where the target's idea comes from (upper_limit, against = "idea"): an extract_idea stage over the same targets; default: the dataset record's idea`},
	}
}

// maxLayer bounds layer: far past any model's depth, so only a typo meets it.
const maxLayer = 1000

// ServiceOps: bertscore asks its model for token matchings (of a chosen
// layer, or with final_layer of the last, which tei serves), embedding for
// sentence embeddings; rouge_l asks nothing.
func (similarityType) ServiceOps(p stages.Params) map[string][]string {
	switch p.String("method") {
	case "bertscore":
		if p.Bool("final_layer") {
			return map[string][]string{"model": {llm.OpTokenMatching}}
		}
		return map[string][]string{"model": {llm.OpLayerTokenMatching}}
	case "embedding":
		return map[string][]string{"model": {llm.OpEmbeddings}}
	}
	return nil
}

// SimilarityOutput is what an item's last similarity node says (see
// decodeSimilarity): the P/R/F1 of each generated idea of the target, in
// the order of its generate_ideas nodes and their ideas (with upper_limit,
// one entry: the target idea). Embedding's cosine is all three of P, R and
// F1.
type SimilarityOutput struct {
	Method string           `json:"method"`
	Scores []similarity.PRF `json:"scores,omitempty"`
	// RefTokens and Matches (bertscore only) are the token_matching reply,
	// which is the node's stored output (without Method and Scores): the
	// reference's tokens, and per idea its tokens and its matching, what
	// idf weighting needs without the vectors.
	RefTokens []string     `json:"reference_tokens,omitempty"`
	Matches   []TokenMatch `json:"matches,omitempty"`
	// RefSpecial flags the reference's special tokens when they were kept
	// (special_tokens = "bert_score"); each match's Special its own.
	RefSpecial []bool `json:"reference_special,omitempty"`
	Dropped    bool   `json:"dropped,omitempty"`
}

// DecodeSimilarity reads a similarity node's output: ok is false for the
// service replies of an embedding item (the scores node follows them), and
// true for the node that holds the item's SimilarityOutput.
func DecodeSimilarity(label string, b []byte) (o *SimilarityOutput, ok bool, err error) {
	if label != "" && label != scoresLabel {
		return nil, false, nil // an embedding item's reference or ideas vectors
	}
	o, err = decodeSimilarity(b)
	return o, err == nil, err
}

// decodeSimilarity reads an item's last similarity node: a rouge_l or
// embedding scores output, a dropped target, or a bertscore token_matching
// reply (the only one without a method), whose Scores it fills from the
// matchings, unweighted.
func decodeSimilarity(b []byte) (*SimilarityOutput, error) {
	var o SimilarityOutput
	if err := fastjson.Unmarshal(b, &o); err != nil {
		return nil, err
	}
	if o.Method == "" && !o.Dropped {
		o.Method = "bertscore"
		o.Scores = make([]similarity.PRF, len(o.Matches))
		for i, m := range o.Matches {
			o.Scores[i] = m.ScoreSpecial(nil, nil, m.Special, o.RefSpecial)
		}
	}
	return &o, nil
}

// TokenMatch is one idea's tokens and its matching with the reference.
type TokenMatch struct {
	Tokens []string `json:"tokens"`
	similarity.Matching
	Special []bool `json:"special,omitempty"`
}

var droppedSimilarity = []byte(`{"dropped":true}`)

// Slots of an embedding item: the reference text first, then the
// candidates (the target idea with upper_limit, else one node per
// generate_ideas node of the item, in node order), then the scores node.
const referenceSlot = 0

// scoresLabel labels the node of an embedding item that reads its service
// replies.
const scoresLabel = "scores"

type similarityLayout struct {
	method     string
	op         string // service op; "" for rouge_l
	model      *stages.Model
	against    string
	upperLimit bool
	layer      *int // bertscore's layer (nil: the final layer)
	keep       bool // bertscore keeps special tokens, as bert_score does
	target     bool // the target param is set: the target's idea is read from it, not the record
}

func newSimilarityLayout(p stages.Params) (*similarityLayout, error) {
	s := &similarityLayout{method: p.String("method"), model: p.Model("model"), against: p.String("against"), upperLimit: p.Bool("upper_limit"), target: p.Input("target") != nil}
	if err := oneOf("method", s.method, "rouge_l", "bertscore", "embedding"); err != nil {
		return nil, err
	}
	if err := oneOf("against", s.against, "abstract", "idea"); err != nil {
		return nil, err
	}
	special := p.String("special_tokens")
	if err := oneOf("special_tokens", special, "bert_score", "drop"); err != nil {
		return nil, err
	}
	layer, final := p.Int("layer"), p.Bool("final_layer")
	switch s.method {
	case "bertscore":
		s.op = llm.OpTokenMatching
		s.keep = special == "bert_score"
	case "embedding":
		s.op = llm.OpEmbeddings
	}
	if s.op != "" && s.model == nil {
		return nil, stages.ParamErrorf("model", "method = %q needs model, the embedding model", s.method)
	}
	switch {
	case s.method != "bertscore" && (layer != -1 || final):
		name := "layer"
		if final {
			name = "final_layer"
		}
		return nil, stages.ParamErrorf(name, "%s applies to method = \"bertscore\" only (method = %q)", name, s.method)
	case s.method != "bertscore":
	case final && layer != -1:
		return nil, stages.ParamErrorf("final_layer", "final_layer matches the model's last layer, so layer must be left unset (got layer = %d)", layer)
	case final:
	case layer == -1:
		l, ok := similarity.BERTScoreLayer(s.model.Name)
		if !ok {
			return nil, stages.ParamErrorf("layer", "model %q has no default layer in bert_score's table, so set layer = N, the hidden layer to match (0: the embedding output; the model's number of layers: its last), or final_layer = true for the last layer (what a tei provider serves)", s.model.Name)
		}
		s.layer, s.op = &l, llm.OpLayerTokenMatching
	default:
		s.layer, s.op = &layer, llm.OpLayerTokenMatching
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

// similarityKeyParams are the params a similarity compute node's output
// depends on beyond its inputs.
var similarityKeyParams = []string{"method", "against", "upper_limit"}

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
	ideaSource := inst.Params.Input("target")
	var nodes []stages.Node
	for _, item := range items {
		tn := target.ItemNodes(item)
		if len(tn) != 1 {
			return nil, stages.ParamErrorf("ideas", "the target dataset (%s) has %d records for item %q; need exactly one", target.Address, len(tn), item)
		}
		rec := stages.Dep{Input: target.Address, Index: tn[0]}
		// idea is the dep holding the target's idea: the target stage's
		// node when target is set, else the record.
		idea := rec
		if ideaSource != nil {
			in := ideaSource.ItemNodes(item)
			if len(in) != 1 {
				return nil, stages.ParamErrorf("target", "target (%s) has %d nodes for item %q; need exactly one", ideaSource.Address, len(in), item)
			}
			idea = stages.Dep{Input: "target", Index: in[0]}
		}
		idx := ideas.ItemNodes(item)
		if s.op != llm.OpEmbeddings {
			// rouge_l and bertscore: one node reading the record (and the
			// target stage's node) and the ideas.
			deps := []stages.Dep{rec}
			if s.target {
				deps = append(deps, idea)
			}
			if !s.upperLimit {
				for _, i := range idx {
					deps = append(deps, stages.Dep{Input: "ideas", Index: i})
				}
			}
			prepare := s.prepareRouge
			if s.method == "bertscore" {
				prepare = s.prepareMatching
			}
			nodes = append(nodes, stages.Node{Item: item, Deps: deps, Prepare: prepare})
			continue
		}
		first := len(nodes)
		refDep := rec
		if s.referenceField() == "idea" {
			refDep = idea
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: referenceSlot, Label: s.referenceField(), Deps: []stages.Dep{refDep},
			Prepare: s.prepareRecordText(s.referenceField())})
		if s.upperLimit {
			nodes = append(nodes, stages.Node{Item: item, Slot: 1, Label: "idea", Deps: []stages.Dep{idea}, Prepare: s.prepareRecordText("idea")})
		} else {
			for k, i := range idx {
				nodes = append(nodes, stages.Node{Item: item, Slot: 1 + k, Label: fmt.Sprintf("ideas %d", k),
					Deps: []stages.Dep{{Input: "ideas", Index: i}}, Prepare: s.prepareIdeas})
			}
		}
		deps := make([]stages.Dep, 0, len(nodes)-first)
		for i := first; i < len(nodes); i++ {
			deps = append(deps, stages.Dep{Input: stages.Self, Index: i})
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes) - first, Label: scoresLabel, Deps: deps, Prepare: s.prepareScores})
	}
	return nodes, nil
}

// scoresNode is the index (into sim's Nodes) of item's last similarity node,
// the one that holds its SimilarityOutput; ok is false when sim has none for
// item.
func scoresNode(sim *stages.Upstream, item string) (int, bool) {
	idx := sim.ItemNodes(item)
	if len(idx) == 0 {
		return 0, false
	}
	return idx[len(idx)-1], true
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
		if d, err := isDropped(in[0].Output); err == nil && d {
			return dropped(droppedSimilarity, "ideas"), nil // extract_idea left the target out
		}
		text, err := recordField(in[0], field)
		if err != nil {
			return nil, err
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

// prepareScores reads an item's service replies (the reference, then the
// candidates) and keeps what scoring needs of them. The replies are decoded
// only when it computes, so a plan that can key it from the inputs' digests
// never decodes a vector.
func (s *similarityLayout) prepareScores(in []stages.In) (*stages.Work, error) {
	item := in[0].Node.Item
	for _, x := range in {
		if string(x.Output) == string(droppedSimilarity) {
			return dropped(droppedSimilarity, similarityKeyParams...), nil
		}
	}
	return &stages.Work{KeyParams: similarityKeyParams, Compute: func() ([]byte, error) {
		out, err := s.scores(in)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", item, err)
		}
		return stages.EncodeOutput(out)
	}}, nil
}

// vectorsReply is an OpEmbeddings reply.
type vectorsReply struct {
	Vectors [][]float64 `json:"vectors"`
}

// scores is an embedding item's cosines: in holds the reference's reply,
// then the candidates'.
func (s *similarityLayout) scores(in []stages.In) (*SimilarityOutput, error) {
	replies := make([]vectorsReply, len(in))
	for k, x := range in {
		if err := fastjson.Unmarshal(x.Output, &replies[k]); err != nil {
			return nil, fmt.Errorf("decode the reply of %s: %w", x.Node.Label, err)
		}
	}
	ref := replies[0]
	if len(ref.Vectors) != 1 {
		return nil, fmt.Errorf("the reference has %d sentence vectors, want 1", len(ref.Vectors))
	}
	out := &SimilarityOutput{Method: s.method}
	for k, c := range replies[1:] {
		for i, v := range c.Vectors {
			cos, err := similarity.CosineOf(v, ref.Vectors[0])
			if err != nil {
				return nil, fmt.Errorf("idea %d of %s against the reference: %w", i, in[k+1].Node.Label, err)
			}
			out.Scores = append(out.Scores, similarity.PRF{Precision: cos, Recall: cos, F1: cos})
		}
	}
	return out, nil
}

// texts reads what a rouge_l or bertscore node compares: the reference text
// and the candidates. in holds the target record, then the target stage's
// node (when target is set), then (without upper_limit) the item's
// generate_ideas nodes. dropped reports a target the filter dropped.
func (s *similarityLayout) texts(in []stages.In) (ref string, cands []string, dropped bool, err error) {
	item := in[0].Node.Item
	rec, idea, rest := in[0], in[0], in[1:]
	if s.target {
		idea, rest = in[1], in[2:]
		if d, err := isDropped(idea.Output); err == nil && d {
			return "", nil, true, nil // extract_idea left the target out
		}
	}
	for _, x := range rest {
		// A target the filter dropped is dropped before its record is read:
		// what it lacks does not matter.
		if d, err := isDropped(x.Output); err == nil && d {
			return "", nil, true, nil
		}
	}
	from := rec
	if s.referenceField() == "idea" {
		from = idea
	}
	if ref, err = recordField(from, s.referenceField()); err != nil {
		return "", nil, false, err
	}
	if s.upperLimit {
		text, err := recordField(idea, "idea")
		if err != nil {
			return "", nil, false, err
		}
		cands = []string{text}
	}
	for _, x := range rest {
		ideas, isDropped, err := decodeIdeas(x.Output)
		if err != nil {
			return "", nil, false, fmt.Errorf("decode ideas of %q: %w", item, err)
		}
		if isDropped {
			return "", nil, true, nil
		}
		cands = append(cands, ideas...)
	}
	if len(cands) == 0 {
		return "", nil, false, fmt.Errorf("item %q has no generated ideas to compare", item)
	}
	return ref, cands, false, nil
}

// prepareRouge scores every idea of an item against the reference text.
func (s *similarityLayout) prepareRouge(in []stages.In) (*stages.Work, error) {
	ref, cands, isDropped, err := s.texts(in)
	switch {
	case err != nil:
		return nil, err
	case isDropped:
		return dropped(droppedSimilarity, "ideas"), nil
	}
	return &stages.Work{KeyParams: similarityKeyParams, Compute: func() ([]byte, error) {
		refToks := similarity.Tokens(ref)
		out := SimilarityOutput{Method: "rouge_l", Scores: make([]similarity.PRF, len(cands))}
		for i, c := range cands {
			out.Scores[i] = similarity.RougeLTokens(similarity.Tokens(c), refToks)
		}
		return stages.EncodeOutput(out)
	}}, nil
}

// prepareMatching asks for the token_matching of an item's ideas with the
// reference text. The body is the operation's documented request and
// nothing else, so equal texts are equal requests, sent once.
func (s *similarityLayout) prepareMatching(in []stages.In) (*stages.Work, error) {
	ref, cands, isDropped, err := s.texts(in)
	switch {
	case err != nil:
		return nil, err
	case isDropped:
		return dropped(droppedSimilarity, "ideas"), nil
	}
	// special_tokens is sent only when kept, so a final-layer matching that
	// drops them is the request it always was, and stays cached.
	req := struct {
		Reference     string   `json:"reference"`
		Candidates    []string `json:"candidates"`
		Layer         *int     `json:"layer,omitempty"`
		SpecialTokens string   `json:"special_tokens,omitempty"`
	}{Reference: ref, Candidates: cands, Layer: s.layer}
	if s.keep {
		req.SpecialTokens = llm.SpecialTokensKeep
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return &stages.Work{Service: &stages.Service{Model: s.model, Request: llm.ServiceRequest{Op: s.op, Model: s.model.Name, Body: body}}}, nil
}

// recordField reads a non-empty string field ("abstract" or "idea") of a
// target record (or of extract_idea's output); a record without it is a
// *stages.FieldError.
func recordField(in stages.In, field string) (string, error) {
	var text string
	err := walkObject(in.Output, func(key, value []byte) (bool, error) {
		if string(key) != field {
			return false, nil
		}
		var err error
		text, err = stringValue(value)
		return true, err
	})
	if err != nil {
		return "", fmt.Errorf("decode %s: %w", stages.NodeAddress(in), err)
	}
	if text = strings.TrimSpace(text); text == "" {
		return "", stages.MissingField(in, "the target text to compare with", field)
	}
	return text, nil
}

type similarityScoreType struct{}

func (similarityScoreType) Name() string    { return "similarity_score" }
func (similarityScoreType) Version() string { return "3" } // 2: Extra "mean"; summary. 3: reads the scores nodes

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
	var deps []stages.Dep
	for _, item := range up.Items() {
		i, _ := scoresNode(up, item)
		deps = append(deps, stages.Dep{Input: "similarity", Index: i})
	}
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

// simItem is one target's similarity, decoded; nil out: its node failed
// or was skipped.
type simItem struct {
	id  string
	out *SimilarityOutput
}

// Score summarises a similarity instance's items, one SimilarityOutput each:
//
//	best(t) = max over the n ideas of target t of score(idea, reference(t))
//	Value   = mean over scored targets of best(t)
//
// with Extra "median" and "p80" (the 80th percentile the paper's Table 1
// reports, by linear interpolation as numpy.percentile), "dropped" (targets
// dropped for too few references, excluded) and "n" (ideas per target,
// when every target has the same number). A target whose similarity failed
// or was skipped counts in Missing. Each score is rescaled with baseline
// before the maximum (rescaling keeps the order, so the same idea wins).
func (sc *scorer) Score(in []stages.In) (*stages.Score, error) {
	var scored []*simItem
	dropped, missing := 0, 0
	for _, x := range in {
		if x.Output == nil {
			missing++
			continue
		}
		o, err := decodeSimilarity(x.Output)
		if err != nil {
			return nil, fmt.Errorf("decode similarity of %q: %w", x.Node.Item, err)
		}
		if o.Dropped {
			dropped++
			continue
		}
		scored = append(scored, &simItem{id: x.Node.Item, out: o})
	}
	var idf *similarity.IDF
	if sc.idf {
		var refs [][]string
		for _, it := range scored {
			if it.out.RefTokens == nil {
				return nil, fmt.Errorf("idf weights need bertscore token embeddings; target %q has none (set idf = false for rouge_l and embedding)", it.id)
			}
			refs = append(refs, it.out.RefTokens)
		}
		idf = similarity.NewIDF(refs)
	}
	s := &stages.Score{Extra: map[string]float64{"dropped": float64(dropped)}, PerItem: map[string]float64{}, Missing: missing}
	var bests []float64
	n := -1
	for _, it := range scored {
		scores, err := sc.itemScores(it.out, idf)
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

// itemScores returns the raw score of each candidate of a target, in
// order; with idf, bertscore's matchings are weighed by it.
func (sc *scorer) itemScores(o *SimilarityOutput, idf *similarity.IDF) ([]float64, error) {
	pick := func(r similarity.PRF) float64 {
		switch sc.score {
		case "precision":
			return r.Precision
		case "recall":
			return r.Recall
		}
		return r.F1
	}
	if idf == nil {
		out := make([]float64, len(o.Scores))
		for i, r := range o.Scores {
			out[i] = pick(r)
		}
		return out, nil
	}
	if len(o.Matches) != len(o.Scores) {
		return nil, fmt.Errorf("the similarity holds %d matchings for %d scores", len(o.Matches), len(o.Scores))
	}
	refW := idf.Weights(o.RefTokens)
	out := make([]float64, len(o.Matches))
	for i, m := range o.Matches {
		if len(m.Tokens) != len(m.CandBest) || len(o.RefTokens) != len(m.RefBest) {
			return nil, fmt.Errorf("idea %d: %d tokens for %d matches, reference %d tokens for %d", i, len(m.Tokens), len(m.CandBest), len(o.RefTokens), len(m.RefBest))
		}
		out[i] = pick(m.ScoreSpecial(idf.Weights(m.Tokens), refW, m.Special, o.RefSpecial))
	}
	return out, nil
}
