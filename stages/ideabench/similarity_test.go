package ideabench

import (
	"encoding/json"
	"math"
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

// Service nodes: the reference, then one per ideas node; bodies exactly
// {"input": [text, ...]}, so equal texts are equal requests.
func TestSimilarityServiceRequests(t *testing.T) {
	up := ideasUp(2, "a")
	nodes := layout(t, similarityType{}, "stage.similarity.b", stages.Params{"ideas": up, "method": "bertscore", "model": testEmbedder})
	if len(nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(nodes))
	}
	service := func(n stages.Node, out []byte) *stages.Service {
		w, err := n.Prepare([]stages.In{{Node: stages.NodeInfo{Item: "a"}, Output: out}})
		if err != nil {
			t.Fatal(err)
		}
		if w.Service == nil {
			t.Fatalf("node %s is not a service node", n.Label)
		}
		return w.Service
	}
	ref := service(nodes[0], simRecord)
	if ref.Request.Op != llm.OpTokenEmbeddings || ref.Request.Model != "emb-model" || string(ref.Request.Body) != `{"input":["The cat sat on the mat."]}` {
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
}

// similarity_score on hand-made bertscore replies. Target a: reference
// tokens (1,0), (0,1); idea 0 = the reference (F1 1), idea 1 one token (1,0)
// (P = 1, R = (1+0)/2 = 0.5, F1 = 2/3). Target b: reference (1,0), idea (0,1):
// every score 0. Target c dropped, target d missing.
func TestSimilarityScoreBERTScore(t *testing.T) {
	tok := func(toks []string, vecs ...[]float64) []byte {
		return mustJSON(t, map[string]any{"inputs": []map[string]any{{"tokens": toks, "vectors": vecs}}})
	}
	in := []stages.In{
		{Node: stages.NodeInfo{Item: "a"}, Output: tok([]string{"x", "y"}, []float64{1, 0}, []float64{0, 1})},
		{Node: stages.NodeInfo{Item: "a", Slot: 1}, Output: tok([]string{"x", "y"}, []float64{1, 0}, []float64{0, 1})},
		{Node: stages.NodeInfo{Item: "a", Slot: 2}, Output: tok([]string{"x"}, []float64{1, 0})},
		{Node: stages.NodeInfo{Item: "b"}, Output: tok([]string{"x"}, []float64{1, 0})},
		{Node: stages.NodeInfo{Item: "b", Slot: 1}, Output: tok([]string{"z"}, []float64{0, 1})},
		{Node: stages.NodeInfo{Item: "c"}, Output: tok([]string{"x"}, []float64{1, 0})},
		{Node: stages.NodeInfo{Item: "c", Slot: 1}, Output: droppedSimilarity},
		{Node: stages.NodeInfo{Item: "d"}, Output: tok([]string{"x"}, []float64{1, 0})},
		{Node: stages.NodeInfo{Item: "d", Slot: 1}, Output: nil},
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
		nodes := layout(t, similarityScoreType{}, "stage.similarity_score.s", merge(stages.Params{"similarity": &stages.Upstream{Nodes: make([]stages.NodeInfo, len(in))}}, tc.params))
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
	// on them is refused.
	emb := []stages.In{
		{Node: stages.NodeInfo{Item: "a"}, Output: []byte(`{"vectors":[[1,0]]}`)},
		{Node: stages.NodeInfo{Item: "a", Slot: 1}, Output: []byte(`{"vectors":[[3,4],[1,1]]}`)},
	}
	nodes := layout(t, similarityScoreType{}, "stage.similarity_score.e", stages.Params{"similarity": &stages.Upstream{Nodes: make([]stages.NodeInfo, 2)}})
	var s stages.Score
	if err := json.Unmarshal(compute(t, nodes[0], emb), &s); err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.PerItem["a"]-1/math.Sqrt2) > 1e-12 || s.Extra["n"] != 2 { // max(0.6, 1/√2)
		t.Errorf("embedding: %+v", s)
	}
	nodes = layout(t, similarityScoreType{}, "stage.similarity_score.e", stages.Params{"similarity": &stages.Upstream{Nodes: make([]stages.NodeInfo, 2)}, "idf": true})
	w, _ := nodes[0].Prepare(emb)
	if _, err := w.Compute(); err == nil {
		t.Error("idf on sentence embeddings: no error")
	}
}
