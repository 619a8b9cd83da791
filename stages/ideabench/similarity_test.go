package ideabench

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/similarity"
)

var testEmbedder = &stages.Model{Address: "model.emb", Provider: "mock", Name: "emb-model"}

// ideasUp is a generate_ideas upstream with n nodes per item over datasetUp(items).
func ideasUp(n int, items ...string) *stages.Upstream {
	src := datasetUp(items...)
	u := &stages.Upstream{Address: "stage.generate_ideas.g", Type: "generate_ideas", Source: src}
	for _, it := range items {
		for s := range n {
			u.Nodes = append(u.Nodes, stages.NodeInfo{Item: it, Slot: s})
		}
	}
	return u
}

func TestSimilarityParamErrors(t *testing.T) {
	up := ideasUp(1, "a")
	for _, tc := range []struct {
		params      stages.Params
		param, want string
	}{
		{stages.Params{"method": "bleu"}, "method", `method = "bleu" is not one of "rouge_l", "bertscore", "embedding"`},
		{stages.Params{"method": "bertscore"}, "model", `method = "bertscore" needs model, the embedding model`},
		{stages.Params{"against": "title"}, "against", `against = "title" is not one of "abstract", "idea"`},
		{stages.Params{"against": "idea", "upper_limit": true}, "upper_limit", `upper_limit compares the target abstract with the target idea, so against must be "abstract" (got "idea")`},
	} {
		_, err := similarityType{}.Layout(&stages.Instance{Params: stages.WithDefaults(similarityType{}, merge(stages.Params{"ideas": up}, tc.params))})
		checkParamError(t, err, tc.param, tc.want)
	}
	for _, tc := range []struct {
		params      stages.Params
		param, want string
	}{
		{stages.Params{"score": "f2"}, "score", `score = "f2" is not one of "f1", "precision", "recall"`},
		{stages.Params{"baseline": 1.0}, "baseline", `baseline = 1 must be below 1: scores are rescaled by 1/(1 - baseline)`},
	} {
		sim := &stages.Upstream{Address: "stage.similarity.s", Type: "similarity"}
		_, err := similarityScoreType{}.Layout(&stages.Instance{Params: stages.WithDefaults(similarityScoreType{}, merge(stages.Params{"similarity": sim}, tc.params))})
		checkParamError(t, err, tc.param, tc.want)
	}
}

var simRecord = []byte(`{"id":"a","abstract":"The cat sat on the mat.","idea":"A cat on a mat."}`)

// rouge_l needs no model: one compute node per target, reading the record
// and every ideas node, scoring every idea.
func TestSimilarityRougeL(t *testing.T) {
	up := ideasUp(2, "a")
	nodes := layout(t, similarityType{}, "stage.similarity.r", stages.Params{"ideas": up})
	if len(nodes) != 1 || len(nodes[0].Deps) != 3 {
		t.Fatalf("%d nodes, deps %v; want one node reading the record and 2 ideas nodes", len(nodes), nodes[0].Deps)
	}
	in := []stages.In{
		{Node: stages.NodeInfo{Item: "a"}, Output: simRecord},
		{Node: stages.NodeInfo{Item: "a"}, Output: []byte(`{"ideas":["the cat is on the mat"]}`)},
		{Node: stages.NodeInfo{Item: "a", Slot: 1}, Output: []byte(`{"ideas":["dogs"]}`)},
	}
	var got SimilarityOutput
	if err := json.Unmarshal(compute(t, nodes[0], in), &got); err != nil {
		t.Fatal(err)
	}
	want := SimilarityOutput{Method: "rouge_l", Scores: []similarity.PRF{{Precision: 5.0 / 6, Recall: 5.0 / 6, F1: 5.0 / 6}, {}}}
	if string(mustJSON(t, got)) != string(mustJSON(t, want)) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// A dropped target.
	in[2].Output = droppedIdeas
	if out := compute(t, nodes[0], in); string(out) != `{"dropped":true}` {
		t.Errorf("dropped target: %s", out)
	}
}

// embedding: service nodes for the reference, then one per ideas node,
// bodies exactly {"input": [text, ...]}, so equal texts are equal requests;
// then the scores node, reading them (stages.Self). bertscore: one
// token_matching node per target, reading the record and the ideas.
func TestSimilarityServiceRequests(t *testing.T) {
	up := ideasUp(2, "a")
	service := func(n stages.Node, in ...[]byte) *stages.Service {
		t.Helper()
		var ins []stages.In
		for _, out := range in {
			ins = append(ins, stages.In{Node: stages.NodeInfo{Item: "a"}, Output: out})
		}
		w, err := n.Prepare(ins)
		if err != nil {
			t.Fatal(err)
		}
		if w.Service == nil {
			t.Fatalf("node %s is not a service node", n.Label)
		}
		return w.Service
	}
	nodes := layout(t, similarityType{}, "stage.similarity.e", stages.Params{"ideas": up, "method": "embedding", "model": testEmbedder})
	if len(nodes) != 4 {
		t.Fatalf("%d nodes, want 4 (reference, 2 ideas nodes, scores)", len(nodes))
	}
	scores := nodes[3]
	if scores.Label != "scores" || scores.Slot != 3 || string(mustJSON(t, scores.Deps)) != `[{"Input":"self","Index":0},{"Input":"self","Index":1},{"Input":"self","Index":2}]` {
		t.Errorf("scores node %+v", scores)
	}
	ref := service(nodes[0], simRecord)
	if ref.Request.Op != llm.OpEmbeddings || ref.Request.Model != "emb-model" || string(ref.Request.Body) != `{"input":["The cat sat on the mat."]}` {
		t.Errorf("reference request %+v (%s)", ref.Request, ref.Request.Body)
	}
	idea := []byte(`{"ideas":["same idea"]}`)
	s1, s2 := service(nodes[1], idea), service(nodes[2], idea)
	if string(s1.Request.Body) != `{"input":["same idea"]}` || string(mustJSON(t, s1.Request)) != string(mustJSON(t, s2.Request)) {
		t.Errorf("idea requests %s and %s", mustJSON(t, s1.Request), mustJSON(t, s2.Request))
	}
	w, err := nodes[1].Prepare([]stages.In{{Node: stages.NodeInfo{Item: "a"}, Output: droppedIdeas}})
	if err != nil || w.Compute == nil {
		t.Fatalf("a dropped target's ideas node is not a compute node (%v)", err)
	}

	// bertscore: one matching request per target. The final layer that
	// drops special tokens is the request it always was; bert_score's
	// handling keeps them; a named model gets bert_score's layer.
	deberta := &stages.Model{Address: "model.bert", Provider: "mock", Name: "microsoft/deberta-xlarge-mnli"}
	for _, tc := range []struct {
		params stages.Params
		op     string
		model  string
		body   string
	}{
		{stages.Params{"final_layer": true, "special_tokens": "drop"}, llm.OpTokenMatching, "emb-model",
			`{"reference":"The cat sat on the mat.","candidates":["one","two"]}`},
		{stages.Params{"final_layer": true}, llm.OpTokenMatching, "emb-model",
			`{"reference":"The cat sat on the mat.","candidates":["one","two"],"special_tokens":"keep"}`},
		{stages.Params{"layer": 3}, llm.OpLayerTokenMatching, "emb-model",
			`{"reference":"The cat sat on the mat.","candidates":["one","two"],"layer":3,"special_tokens":"keep"}`},
		{stages.Params{"model": deberta}, llm.OpLayerTokenMatching, "microsoft/deberta-xlarge-mnli",
			`{"reference":"The cat sat on the mat.","candidates":["one","two"],"layer":40,"special_tokens":"keep"}`},
		{stages.Params{"model": deberta, "layer": 0, "special_tokens": "drop"}, llm.OpLayerTokenMatching, "microsoft/deberta-xlarge-mnli",
			`{"reference":"The cat sat on the mat.","candidates":["one","two"],"layer":0}`},
	} {
		nodes = layout(t, similarityType{}, "stage.similarity.b", merge(stages.Params{"ideas": up, "method": "bertscore", "model": testEmbedder}, tc.params))
		if len(nodes) != 1 || len(nodes[0].Deps) != 3 {
			t.Fatalf("bertscore: %d nodes, deps %+v; want one reading the record and 2 ideas nodes", len(nodes), nodes[0].Deps)
		}
		m := service(nodes[0], simRecord, []byte(`{"ideas":["one"]}`), []byte(`{"ideas":["two"]}`))
		if m.Request.Op != tc.op || m.Request.Model != tc.model || string(m.Request.Body) != tc.body {
			t.Errorf("%v: matching request %+v (%s)", tc.params, m.Request, m.Request.Body)
		}
	}
	if w, err := nodes[0].Prepare([]stages.In{{Node: stages.NodeInfo{Item: "a"}, Output: simRecord}, {Output: idea}, {Output: droppedIdeas}}); err != nil || w.Compute == nil {
		t.Fatalf("a dropped target's matching node is not a compute node (%v)", err)
	}
}

// scoresOf lays out an embedding similarity over one target with
// len(replies)-1 ideas nodes and computes its scores node on replies (the
// reference's, then each ideas node's): what the engine hands it.
func scoresOf(t *testing.T, replies ...[]byte) []byte {
	t.Helper()
	nodes := layout(t, similarityType{}, "stage.similarity.s", stages.Params{"ideas": ideasUp(len(replies)-1, "x"), "method": "embedding", "model": testEmbedder})
	last := nodes[len(nodes)-1]
	if len(nodes) != len(replies)+1 || last.Label != "scores" || len(last.Deps) != len(replies) {
		t.Fatalf("%d nodes, the last %+v; want %d and a scores node reading them", len(nodes), last, len(replies))
	}
	in := make([]stages.In, len(replies))
	for k, r := range replies {
		if last.Deps[k] != (stages.Dep{Input: stages.Self, Index: k}) {
			t.Fatalf("scores dep %d is %+v", k, last.Deps[k])
		}
		in[k] = stages.In{Dep: last.Deps[k], Node: stages.NodeInfo{Item: "x", Slot: k, Label: nodes[k].Label}, Output: r}
	}
	return compute(t, last, in)
}

// tokText is a text's tokens and their vectors.
type tokText struct {
	toks []string
	vecs [][]float64
}

func tt(toks []string, vecs ...[]float64) tokText { return tokText{toks, vecs} }

// matchingReply is the token_matching reply a server gives for ref and cands.
func matchingReply(t *testing.T, ref tokText, cands ...tokText) []byte {
	o := SimilarityOutput{RefTokens: ref.toks}
	for _, c := range cands {
		o.Matches = append(o.Matches, TokenMatch{Tokens: c.toks, Matching: similarity.Match(c.vecs, ref.vecs)})
	}
	return mustJSON(t, o)
}

// The embedding scores node: one cosine per idea, all three scores; a
// dropped target's ideas node makes it dropped. A bertscore node's reply
// decodes to its unweighted scores: target a of the test below.
func TestSimilarityScoresNode(t *testing.T) {
	out := scoresOf(t, []byte(`{"vectors":[[1,0]]}`), []byte(`{"vectors":[[3,4],[1,1]]}`))
	if want := `{"method":"embedding","scores":[{"precision":0.6,"recall":0.6,"f1":0.6},` +
		`{"precision":0.7071067811865475,"recall":0.7071067811865475,"f1":0.7071067811865475}]}`; string(out) != want {
		t.Errorf("embedding scores node:\n got %s\nwant %s", out, want)
	}
	if out := scoresOf(t, []byte(`{"vectors":[[1,0]]}`), droppedSimilarity); string(out) != `{"dropped":true}` {
		t.Errorf("dropped: %s", out)
	}
	reply := matchingReply(t, tt([]string{"x", "y"}, []float64{1, 0}, []float64{0, 1}),
		tt([]string{"x", "y"}, []float64{1, 0}, []float64{0, 1}), tt([]string{"x"}, []float64{1, 0}))
	if want := `{"method":"","reference_tokens":["x","y"],"matches":[{"tokens":["x","y"],"cand_best":[1,1],"ref_best":[1,1]},{"tokens":["x"],"cand_best":[1],"ref_best":[1,0]}]}`; string(reply) != want {
		t.Errorf("matching reply:\n got %s\nwant %s", reply, want)
	}
	o, err := decodeSimilarity(reply)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"method":"bertscore","scores":[{"precision":1,"recall":1,"f1":1},{"precision":1,"recall":0.5,"f1":0.6666666666666666}],` +
		`"reference_tokens":["x","y"],"matches":[{"tokens":["x","y"],"cand_best":[1,1],"ref_best":[1,1]},{"tokens":["x"],"cand_best":[1],"ref_best":[1,0]}]}`; string(mustJSON(t, o)) != want {
		t.Errorf("decoded:\n got %s\nwant %s", mustJSON(t, o), want)
	}
}

// similarity_score on hand-made bertscore replies. Target a: reference
// tokens (1,0), (0,1); idea 0 = the reference (F1 1), idea 1 one token (1,0)
// (P = 1, R = (1+0)/2 = 0.5, F1 = 2/3). Target b: reference (1,0), idea (0,1):
// every score 0. Target c dropped, target d missing.
func TestSimilarityScoreBERTScore(t *testing.T) {
	in := []stages.In{
		{Node: stages.NodeInfo{Item: "a"}, Output: matchingReply(t, tt([]string{"x", "y"}, []float64{1, 0}, []float64{0, 1}),
			tt([]string{"x", "y"}, []float64{1, 0}, []float64{0, 1}), tt([]string{"x"}, []float64{1, 0}))},
		{Node: stages.NodeInfo{Item: "b"}, Output: matchingReply(t, tt([]string{"x"}, []float64{1, 0}), tt([]string{"z"}, []float64{0, 1}))},
		{Node: stages.NodeInfo{Item: "c"}, Output: droppedSimilarity},
		{Node: stages.NodeInfo{Item: "d"}, Output: nil},
	}
	// idf over the references of a and b (M = 2): df(x) = 2, df(y) = 1,
	// so idf(x) = log(3/3) = 0, idf(y) = log(3/2), idf(z) = log(3) (unseen).
	// a, idea 1: P = 0/0 -> 0, R = (0·1 + log(3/2)·0)/log(3/2) = 0: F1 0,
	// so idea 0 (1) is best. b: P = 0 (z matches nothing), R = 0/0 -> 0.
	for _, tc := range []struct {
		name   string
		params stages.Params
		a, b   float64
	}{
		{"f1", nil, 1, 0},
		{"recall", stages.Params{"score": "recall"}, 1, 0},
		{"idf", stages.Params{"idf": true}, 1, 0},
		// (1 - 0.5)/0.5 = 1 and (0 - 0.5)/0.5 = -1.
		{"baseline", stages.Params{"baseline": 0.5}, 1, -1},
	} {
		nodes := layout(t, similarityScoreType{}, "stage.similarity_score.s", merge(stages.Params{"similarity": simUp(1, "a", "b", "c", "d")}, tc.params))
		if len(nodes) != 1 || len(nodes[0].Deps) != 4 {
			t.Fatalf("%d nodes, deps %+v; want one reading the 4 targets' nodes", len(nodes), nodes[0].Deps)
		}
		var s stages.Score
		if err := json.Unmarshal(compute(t, nodes[0], in), &s); err != nil {
			t.Fatal(err)
		}
		mean := (tc.a + tc.b) / 2
		p80 := tc.b + 0.8*(tc.a-tc.b) // two values: h = 0.8
		if s.Count != 2 || s.Missing != 1 || s.Extra["dropped"] != 1 || s.PerItem["a"] != tc.a || s.PerItem["b"] != tc.b ||
			math.Abs(s.Value-mean) > 1e-12 || math.Abs(s.Extra["median"]-mean) > 1e-12 || math.Abs(s.Extra["p80"]-p80) > 1e-12 {
			t.Errorf("%s: %+v", tc.name, s)
		}
	}
	// Sentence embeddings: cosines 0.6 and 1/√2, the best is 1/√2; idf
	// on them is refused. similarity_score reads only the scores node.
	emb := []stages.In{{Node: stages.NodeInfo{Item: "a", Label: "scores"},
		Output: scoresOf(t, []byte(`{"vectors":[[1,0]]}`), []byte(`{"vectors":[[3,4],[1,1]]}`))}}
	nodes := layout(t, similarityScoreType{}, "stage.similarity_score.e", stages.Params{"similarity": simUp(3, "a")})
	if len(nodes[0].Deps) != 1 || nodes[0].Deps[0].Index != 2 {
		t.Fatalf("deps %+v; want the scores node (index 2) alone", nodes[0].Deps)
	}
	var s stages.Score
	if err := json.Unmarshal(compute(t, nodes[0], emb), &s); err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.PerItem["a"]-1/math.Sqrt2) > 1e-12 || s.Extra["n"] != 2 { // max(0.6, 1/√2)
		t.Errorf("embedding: %+v", s)
	}
	nodes = layout(t, similarityScoreType{}, "stage.similarity_score.e", stages.Params{"similarity": simUp(3, "a"), "idf": true})
	w, _ := nodes[0].Prepare(emb)
	if _, err := w.Compute(); err == nil || !strings.Contains(err.Error(), "idf weights need bertscore token embeddings") {
		t.Errorf("idf on sentence embeddings: %v", err)
	}
}

// simUp is a similarity upstream with k nodes per item (1: rouge_l or
// bertscore; 3: embedding's reference, one ideas node and the scores node).
func simUp(k int, items ...string) *stages.Upstream {
	u := &stages.Upstream{Address: "stage.similarity.s", Type: "similarity"}
	for _, it := range items {
		for slot := range k {
			u.Nodes = append(u.Nodes, stages.NodeInfo{Item: it, Slot: slot})
		}
	}
	return u
}

// idf weighting applied to the stored matchings equals BERTScore on the
// vectors themselves, bit for bit: random 8-dimensional token vectors, three
// targets with two ideas each, tokens drawn from a small vocabulary so that
// document frequencies differ.
func TestSimilarityIDFFromMatchingsEqualsVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"a", "b", "c", "d", "e"}
	text := func(n int) ([]string, [][]float64) {
		toks, vecs := make([]string, n), make([][]float64, n)
		for i := range n {
			toks[i] = vocab[rng.IntN(len(vocab))]
			vecs[i] = make([]float64, 8)
			for d := range vecs[i] {
				vecs[i][d] = rng.NormFloat64()
			}
		}
		return toks, vecs
	}
	type target struct {
		refT  []string
		refV  [][]float64
		candT [][]string
		candV [][][]float64
	}
	var targets []target
	var in []stages.In
	var refs [][]string
	for _, item := range []string{"t0", "t1", "t2"} {
		var tg target
		tg.refT, tg.refV = text(5 + len(targets))
		var cands []tokText
		for range 2 {
			ct, cv := text(3 + len(targets))
			tg.candT, tg.candV = append(tg.candT, ct), append(tg.candV, cv)
			cands = append(cands, tt(ct, cv...))
		}
		targets = append(targets, tg)
		refs = append(refs, tg.refT)
		in = append(in, stages.In{Node: stages.NodeInfo{Item: item}, Output: matchingReply(t, tt(tg.refT, tg.refV...), cands...)})
	}
	idf := similarity.NewIDF(refs)
	nodes := layout(t, similarityScoreType{}, "stage.similarity_score.s", stages.Params{"similarity": simUp(1, "t0", "t1", "t2"), "idf": true})
	var s stages.Score
	if err := json.Unmarshal(compute(t, nodes[0], in), &s); err != nil {
		t.Fatal(err)
	}
	for k, tg := range targets {
		best := math.Inf(-1)
		for c := range tg.candT {
			best = max(best, similarity.BERTScore(tg.candV[c], tg.refV, idf.Weights(tg.candT[c]), idf.Weights(tg.refT)).F1)
		}
		if got := s.PerItem[in[k].Node.Item]; got != best {
			t.Errorf("%s: idf F1 from matchings %v, from vectors %v", in[k].Node.Item, got, best)
		}
	}
}

// What Build checks the embedding model's provider kind against: a chosen
// layer (tei cannot serve it), or the final layer.
func TestSimilarityServiceOps(t *testing.T) {
	for _, tc := range []struct {
		params stages.Params
		want   string
	}{
		{stages.Params{"method": "bertscore"}, `{"model":["layer_token_matching"]}`},
		{stages.Params{"method": "bertscore", "final_layer": true}, `{"model":["token_matching"]}`},
		{stages.Params{"method": "embedding"}, `{"model":["embeddings"]}`},
		{stages.Params{"method": "rouge_l"}, `null`},
	} {
		if got := string(mustJSON(t, similarityType{}.ServiceOps(tc.params))); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.params, got, tc.want)
		}
	}
}

// The layer params' refusals, at the param to fix.
func TestSimilarityLayerErrors(t *testing.T) {
	up := ideasUp(1, "a")
	for _, tc := range []struct {
		params stages.Params
		param  string
		want   string
	}{
		{stages.Params{"method": "bertscore", "model": testEmbedder}, "layer",
			`model "emb-model" has no default layer in bert_score's table, so set layer = N, the hidden layer to match (0: the embedding output; the model's number of layers: its last), or final_layer = true for the last layer (what a tei provider serves)`},
		{stages.Params{"method": "bertscore", "model": testEmbedder, "final_layer": true, "layer": 4}, "final_layer",
			"final_layer matches the model's last layer, so layer must be left unset (got layer = 4)"},
		{stages.Params{"method": "rouge_l", "layer": 4}, "layer", `layer applies to method = "bertscore" only (method = "rouge_l")`},
		{stages.Params{"method": "embedding", "model": testEmbedder, "final_layer": true}, "final_layer", `final_layer applies to method = "bertscore" only (method = "embedding")`},
		{stages.Params{"method": "bertscore", "model": testEmbedder, "final_layer": true, "special_tokens": "cls"}, "special_tokens", `special_tokens = "cls" is not one of "bert_score", "drop"`},
	} {
		_, err := similarityType{}.Layout(&stages.Instance{Address: "stage.similarity.s", Params: stages.WithDefaults(similarityType{}, merge(stages.Params{"ideas": up}, tc.params))})
		checkParamError(t, err, tc.param, tc.want)
	}
}

// Scores from a matching that kept the special tokens weigh them 0 but
// match against them, as bert_score does; with idf as without.
func TestSimilaritySpecialTokenScores(t *testing.T) {
	cls, sep := []float64{1, 0, 0}, []float64{0, 0, 1}
	ref := tt([]string{"[CLS]", "tau", "glia", "[SEP]"}, cls, []float64{0, 1, 0}, []float64{0.6, 0.8, 0}, sep)
	cand := tt([]string{"[CLS]", "tau", "[SEP]"}, []float64{0.9, 0.1, 0}, []float64{0.95, 0.05, 0.1}, sep)
	m := similarity.Match(cand.vecs, ref.vecs)
	o := SimilarityOutput{RefTokens: ref.toks, RefSpecial: []bool{true, false, false, true},
		Matches: []TokenMatch{{Tokens: cand.toks, Matching: m, Special: []bool{true, false, true}}}}
	in := []stages.In{{Node: stages.NodeInfo{Item: "t0"}, Output: mustJSON(t, o)}}
	want := m.ScoreSpecial(nil, nil, []bool{true, false, true}, []bool{true, false, false, true})
	if plain := m.Score(nil, nil); plain.F1 == want.F1 {
		t.Fatalf("the crafted vectors do not tell the handlings apart: %+v", plain)
	}
	for _, idf := range []bool{false, true} {
		nodes := layout(t, similarityScoreType{}, "stage.similarity_score.s", stages.Params{"similarity": simUp(1, "t0"), "idf": idf})
		var s stages.Score
		if err := json.Unmarshal(compute(t, nodes[0], in), &s); err != nil {
			t.Fatal(err)
		}
		w := want.F1
		if idf {
			f := similarity.NewIDF([][]string{ref.toks})
			w = m.ScoreSpecial(f.Weights(cand.toks), f.Weights(ref.toks), []bool{true, false, true}, []bool{true, false, false, true}).F1
		}
		if s.PerItem["t0"] != w {
			t.Errorf("idf %v: F1 %v, want %v", idf, s.PerItem["t0"], w)
		}
	}
}

// TestSimilarityScoresRefuseMismatchedVectors: an idea's vector and the
// reference's from replies of different lengths (cached apart, from a
// server that changed models) fail the scores node; no cosine over the
// shorter one.
func TestSimilarityScoresRefuseMismatchedVectors(t *testing.T) {
	nodes := layout(t, similarityType{}, "stage.similarity.s", stages.Params{"ideas": ideasUp(1, "x"), "method": "embedding", "model": testEmbedder})
	last := nodes[len(nodes)-1]
	in := []stages.In{
		{Dep: last.Deps[0], Node: stages.NodeInfo{Item: "x", Label: nodes[0].Label}, Output: []byte(`{"vectors":[[1,0]]}`)},
		{Dep: last.Deps[1], Node: stages.NodeInfo{Item: "x", Slot: 1, Label: nodes[1].Label}, Output: []byte(`{"vectors":[[3,4,0]]}`)},
	}
	w, err := last.Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Compute()
	if err == nil || !strings.Contains(err.Error(), "vectors of 3 and 2 dimensions cannot be compared") {
		t.Fatalf("mismatched vectors: %v", err)
	}
}
