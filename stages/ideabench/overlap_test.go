package ideabench

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

func TestOverlapPromptGolden(t *testing.T) {
	rec := stages.In{Node: stages.NodeInfo{Item: "t1"}, Output: []byte(`{"id":"t1","title":"A title","abstract":"We show X improves Y by 40 percent.","references":[]}`)}
	nodes := layout(t, overlapType{}, "stage.overlap_rating.main", stages.Params{"ideas": stageUp("stage.generate_ideas.main", "generate_ideas", "",
		[]stages.Node{{Item: "t1"}}, datasetUp("t1")), "judge": testJudge})
	if len(nodes) != 1 || nodes[0].Label != "idea 0" {
		t.Fatalf("nodes: %+v", nodes)
	}
	c := call(t, nodes[0], []stages.In{rec, {Node: stages.NodeInfo{Item: "t1"}, Output: []byte(`{"ideas":["X may improve Y."]}`)}})
	golden(t, "overlap_request.txt", requestText(t, c.Request))

	nodes = layout(t, extractType{}, "stage.extract_idea.main", stages.Params{"targets": datasetUp("t1"), "model": testJudge})
	c = call(t, nodes[0], []stages.In{rec})
	golden(t, "extract_request.txt", requestText(t, c.Request))
	out, err := c.Output(&format.Answer{Text: "Hypothesis: X improves Y."})
	if err != nil || string(out) != `{"idea":"Hypothesis: X improves Y.","source":"model"}` {
		t.Errorf("extract output %s, %v", out, err)
	}
}

func TestExtractIdea(t *testing.T) {
	ds := datasetUp("a", "b", "c")
	filter := stageUp("stage.filter_references.low", "filter_references", "", []stages.Node{{Item: "a"}, {Item: "b"}, {Item: "c"}}, ds)
	withIdea := []byte(`{"id":"a","abstract":"Abstract a.","idea":"  Idea a.  "}`)
	noIdea := []byte(`{"id":"b","abstract":"Abstract b."}`)
	in := func(item string, filterOut, rec []byte) []stages.In {
		return []stages.In{{Node: stages.NodeInfo{Item: item}, Output: filterOut}, {Node: stages.NodeInfo{Item: item}, Output: rec}}
	}
	kept := []byte(`{"target":{},"references":[]}`)
	tests := []struct {
		name   string
		params stages.Params
		in     []stages.In
		want   string // compute output; "" for a call
		err    string
	}{
		{"dataset idea", stages.Params{}, in("a", kept, withIdea), `{"idea":"Idea a.","source":"dataset"}`, ""},
		{"dropped", stages.Params{}, in("a", []byte(`{"dropped":true}`), withIdea), `{"dropped":true}`, ""},
		{"no idea, no model", stages.Params{}, in("b", kept, noIdea), "", `missing field "idea" in item "b" (the target's idea; set model to extract it from the abstract)`},
		{"no idea, model", stages.Params{"model": testJudge}, in("b", kept, noIdea), "", ""},
		{"dataset_idea false", stages.Params{"model": testJudge, "dataset_idea": false}, in("a", kept, withIdea), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := layout(t, extractType{}, "stage.extract_idea.main", merge(stages.Params{"targets": filter}, tc.params))
			if len(nodes) != 3 || len(nodes[0].Deps) != 2 || nodes[0].Deps[1].Input != "dataset.targets" {
				t.Fatalf("nodes: %+v", nodes)
			}
			w, err := nodes[0].Prepare(tc.in)
			switch {
			case tc.err != "":
				checkParamError(t, err, "model", tc.err)
			case err != nil:
				t.Fatal(err)
			case tc.want == "":
				if w.Call == nil {
					t.Fatalf("not a call")
				}
			default:
				if w.Compute == nil || w.KeyParams == nil || len(w.KeyParams) != 0 {
					t.Fatalf("not a compute node keyed on no param: %+v", w)
				}
				if out, _ := w.Compute(); string(out) != tc.want {
					t.Errorf("output %s, want %s", out, tc.want)
				}
			}
		})
	}
	_, err := extractType{}.Layout(&stages.Instance{Address: "x", Params: stages.WithDefaults(extractType{}, stages.Params{"targets": filter, "dataset_idea": false})})
	checkParamError(t, err, "model", "dataset_idea = false extracts every idea with model, so model is required")
}

func TestOverlapParamErrors(t *testing.T) {
	ideas := stageUp("stage.generate_ideas.main", "generate_ideas", "", []stages.Node{{Item: "t1"}, {Item: "t1", Slot: 1}}, datasetUp("t1"))
	sim := stageUp("stage.similarity.e", "similarity", "", []stages.Node{{Item: "t2"}}, datasetUp("t1"))
	tests := []struct {
		params      stages.Params
		param, want string
	}{
		{stages.Params{"ideas": ideas}, "judge", "judge is required"},
		{stages.Params{"ideas": ideas, "judge": testJudge, "score": "f2"}, "score", `score = "f2" is not one of "f1", "precision", "recall"`},
		{stages.Params{"ideas": ideas, "judge": testJudge, "similarity": sim}, "similarity", `similarity (stage.similarity.e) has no node for item "t1"; it must score the same ideas`},
	}
	for _, tc := range tests {
		_, err := overlapType{}.Layout(&stages.Instance{Address: "x", Params: stages.WithDefaults(overlapType{}, tc.params)})
		checkParamError(t, err, tc.param, tc.want)
	}
}

// With similarity, the node rates the idea scored highest; ties go to the
// first, and the index is the request's sample.
func TestOverlapMostSimilar(t *testing.T) {
	ds := datasetUp("t1")
	ideas := stageUp("stage.generate_ideas.main", "generate_ideas", "", []stages.Node{{Item: "t1"}}, ds)
	sim := stageUp("stage.similarity.r", "similarity", "", []stages.Node{{Item: "t1"}}, ds)
	nodes := layout(t, overlapType{}, "stage.overlap_rating.main", stages.Params{"ideas": ideas, "judge": testJudge, "similarity": sim})
	if len(nodes) != 1 || len(nodes[0].Deps) != 3 || nodes[0].Label != "most similar" {
		t.Fatalf("nodes: %+v", nodes)
	}
	rec := stages.In{Node: stages.NodeInfo{Item: "t1"}, Output: []byte(`{"abstract":"Abstract."}`)}
	tests := []struct {
		scores string
		score  string
		want   int
	}{
		{`[{"precision":0.1,"recall":0.9,"f1":0.2},{"precision":0.8,"recall":0.1,"f1":0.5},{"precision":0.3,"recall":0.3,"f1":0.5}]`, "f1", 1},
		{`[{"precision":0.1,"recall":0.9,"f1":0.2},{"precision":0.8,"recall":0.1,"f1":0.5},{"precision":0.3,"recall":0.3,"f1":0.5}]`, "recall", 0},
		{`[{"precision":0.1,"recall":0.9,"f1":0.2},{"precision":0.8,"recall":0.1,"f1":0.5},{"precision":0.3,"recall":0.3,"f1":0.5}]`, "precision", 1},
	}
	for _, tc := range tests {
		o := &overlapRater{judge: testJudge, score: tc.score, prompt: DefaultOverlapPrompt}
		in := []stages.In{rec,
			{Dep: stages.Dep{Input: "ideas"}, Node: stages.NodeInfo{Item: "t1"}, Output: []byte(`{"ideas":["i0","i1","i2"]}`)},
			{Dep: stages.Dep{Input: "similarity"}, Node: stages.NodeInfo{Item: "t1"}, Output: []byte(`{"method":"rouge_l","scores":` + tc.scores + `}`)}}
		w, err := o.prepareMostSimilar(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := w.Call.Output(&format.Answer{Rating: 4, Explanation: "e"})
		want := `{"rating":4,"explanation":"e","idea_index":` + string(rune('0'+tc.want)) + `}`
		if err != nil || string(out) != want || w.Call.Request.Sample != tc.want {
			t.Errorf("%s: %s (sample %d), %v; want %s", tc.score, out, w.Call.Request.Sample, err, want)
		}
	}
	if got := mostSimilar([]float64{math.NaN(), 0.2, 0.2}); got != 1 {
		t.Errorf("mostSimilar: %d", got)
	}
	if got := mostSimilar([]float64{math.NaN()}); got != -1 {
		t.Errorf("mostSimilar(NaN): %d", got)
	}
}

func TestOverlapScore(t *testing.T) {
	in := func(item string, out string) stages.In {
		x := stages.In{Node: stages.NodeInfo{Item: item}}
		if out != "" {
			x.Output = []byte(out)
		}
		return x
	}
	r := func(n int) string { return `{"rating":` + string(rune('0'+n)) + `,"explanation":"e","idea_index":0}` }
	got, err := OverlapScore([]stages.In{
		in("a", r(2)), in("b", r(4)), in("c", r(6)), in("d", r(8)),
		in("e", r(1)), in("e", r(3)), // every idea rated: the highest counts
		in("f", `{"dropped":true}`),
		in("g", r(9)), in("g", ""), // one rating missing
	})
	if err != nil {
		t.Fatal(err)
	}
	// values 2,4,6,8,3: mean 4.6; sorted 2,3,4,6,8: median 4, p80 at
	// h = 4 x 0.8 = 3.2 -> 6 + 0.2 x 2 = 6.4.
	want := &stages.Score{Value: 4.6, Count: 5, Missing: 1, Extra: map[string]float64{"dropped": 1, "median": 4, "p80": 6.4},
		PerItem: map[string]float64{"a": 2, "b": 4, "c": 6, "d": 8, "e": 3}}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if math.Abs(got.Extra["p80"]-6.4) > 1e-12 || math.Abs(got.Value-4.6) > 1e-12 {
		t.Errorf("got %s\nwant %s", gj, wj)
	}
	got.Extra["p80"], got.Value = 6.4, 4.6
	if gj, _ = json.Marshal(got); string(gj) != string(wj) {
		t.Errorf("got %s\nwant %s", gj, wj)
	}
	if _, err := OverlapScore([]stages.In{in("a", `{"rating":11}`)}); err == nil || err.Error() != `overlap rating of "a" is 11; want 0..10` {
		t.Errorf("rating 11: %v", err)
	}
}
