package ideabench

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// filterOut is a filter_references output for item id with k references.
func filterOut(t testing.TB, id string, k int, dropped bool) []byte {
	f := FilterOutput{
		Target:     Target{ID: id, Keywords: []string{"zebrafish", "fin regeneration"}},
		References: []Ref{},
		Dropped:    dropped,
	}
	for i := 0; i < k; i++ {
		f.References = append(f.References, Ref{ID: fmt.Sprintf("r%d", i), Title: fmt.Sprintf("Reference title %d", i), Abstract: fmt.Sprintf("Abstract text of reference %d.", i)})
	}
	return mustJSON(t, f)
}

func generateNodes(t testing.TB, params stages.Params, items ...string) []stages.Node {
	t.Helper()
	ds := datasetUp(items...)
	filt := layout(t, filterType{}, "stage.filter_references.low", stages.Params{"dataset": ds})
	p := stages.Params{"references": stageUp("stage.filter_references.low", "filter_references", "", filt, ds), "model": testModel}
	for k, v := range params {
		p[k] = v
	}
	return layout(t, generateType{}, `stage.generate_ideas.main["gen-model"]`, p)
}

func TestGenerateLayout(t *testing.T) {
	tests := []struct {
		name   string
		params stages.Params
		slots  []int
		labels []string
	}{
		{"independent default n", stages.Params{}, []int{0, 1, 2}, []string{"sample 0", "sample 1", "sample 2"}},
		{"independent n=5", stages.Params{"n": 5}, []int{0, 1, 2, 3, 4}, []string{"sample 0", "sample 1", "sample 2", "sample 3", "sample 4"}},
		{"batch", stages.Params{"mode": "batch", "n": 4}, []int{0}, []string{""}},
	}
	items := []string{"p1", "p2", "p3"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := generateNodes(t, tc.params, items...)
			per := len(tc.slots)
			if len(nodes) != len(items)*per {
				t.Fatalf("%d nodes, want %d", len(nodes), len(items)*per)
			}
			for i, n := range nodes {
				item := i / per
				if n.Item != items[item] || n.Slot != tc.slots[i%per] || n.Label != tc.labels[i%per] || n.AllowMissing {
					t.Errorf("node %d: item %q slot %d label %q", i, n.Item, n.Slot, n.Label)
				}
				if !reflect.DeepEqual(n.Deps, []stages.Dep{{Input: "references", Index: item}}) {
					t.Errorf("node %d deps %v", i, n.Deps)
				}
			}
		})
	}
}

func TestGenerateParamErrors(t *testing.T) {
	ds := datasetUp("p1")
	up := &stages.Upstream{Address: "stage.filter_references.low", Type: "filter_references", Nodes: ds.Nodes, Source: ds}
	tests := []struct {
		params stages.Params
		param  string
		want   string
	}{
		{stages.Params{"references": up, "model": testModel, "mode": "parallel"}, "mode", `mode = "parallel" is not one of "independent", "batch"`},
		{stages.Params{"references": up, "model": testModel, "n": 0}, "n", "n = 0 must be at least 1"},
		{stages.Params{"references": up}, "model", "model is required"},
		{stages.Params{"model": testModel}, "references", "references is required"},
		{stages.Params{"references": up, "model": testModel, "prompt": "{{.References"}, "prompt",
			`parse template stage.generate_ideas.x prompt: template: stage.generate_ideas.x prompt:1: unclosed action`},
		// The target is not template data: a prompt cannot leak it.
		{stages.Params{"references": up, "model": testModel, "prompt": "{{.Target.Abstract}}"}, "prompt",
			`render template stage.generate_ideas.x prompt: template: stage.generate_ideas.x prompt:1:9: executing "stage.generate_ideas.x prompt" at <.Target.Abstract>: .Target is not a field here; available: .References .N .Sample .Keywords .Domain`},
		{stages.Params{"references": up, "model": testModel, "system": "{{.Abstract}}"}, "system",
			`render template stage.generate_ideas.x system: template: stage.generate_ideas.x system:1:2: executing "stage.generate_ideas.x system" at <.Abstract>: .Abstract is not a field here; available: .References .N .Sample .Keywords .Domain`},
	}
	for _, tc := range tests {
		_, err := generateType{}.Layout(&stages.Instance{Address: "stage.generate_ideas.x", Params: stages.WithDefaults(generateType{}, tc.params)})
		checkParamError(t, err, tc.param, tc.want)
	}
}

func genIn(t testing.TB, n stages.Node, out []byte) []stages.In {
	return []stages.In{{Dep: n.Deps[0], Node: stages.NodeInfo{Item: n.Item}, Output: out}}
}

func TestGeneratePrepareGolden(t *testing.T) {
	indep := generateNodes(t, stages.Params{}, "p1")
	batch := generateNodes(t, stages.Params{"mode": "batch", "domain": "developmental biology"}, "p1")
	tests := []struct {
		golden string
		node   stages.Node
		n      int
	}{
		{"generate_independent_sample1.txt", indep[1], 1},
		{"generate_batch_n3.txt", batch[0], 3},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			c := call(t, tc.node, genIn(t, tc.node, filterOut(t, "p1", 3, false)))
			if c.Model != testModel {
				t.Error("call is not on the stage's model")
			}
			if !reflect.DeepEqual(c.Request.Format, format.Spec{Kind: format.Ideas, N: tc.n}) {
				t.Errorf("format %+v", c.Request.Format)
			}
			golden(t, tc.golden, requestText(t, c.Request))
		})
	}
}

// Raising n must leave the first samples' requests (so their cache keys) alone.
func TestGenerateIndependentRequestIgnoresN(t *testing.T) {
	in3 := generateNodes(t, stages.Params{"n": 3}, "p1")
	in5 := generateNodes(t, stages.Params{"n": 5}, "p1")
	out := filterOut(t, "p1", 2, false)
	for s := 0; s < 3; s++ {
		a := mustJSON(t, call(t, in3[s], genIn(t, in3[s], out)).Request)
		b := mustJSON(t, call(t, in5[s], genIn(t, in5[s], out)).Request)
		if string(a) != string(b) {
			t.Errorf("sample %d request changed with n:\n%s\n%s", s, a, b)
		}
	}
	r0 := call(t, in5[0], genIn(t, in5[0], out)).Request
	r4 := call(t, in5[4], genIn(t, in5[4], out)).Request
	if r0.Sample != 0 || r4.Sample != 4 || !reflect.DeepEqual(r0.Messages, r4.Messages) {
		t.Errorf("samples differ other than by index: %d/%d", r0.Sample, r4.Sample)
	}
	b3 := call(t, generateNodes(t, stages.Params{"mode": "batch", "n": 3}, "p1")[0], genIn(t, in3[0], out)).Request
	b5 := call(t, generateNodes(t, stages.Params{"mode": "batch", "n": 5}, "p1")[0], genIn(t, in3[0], out)).Request
	if reflect.DeepEqual(b3.Messages, b5.Messages) || b3.Format.N != 3 || b5.Format.N != 5 {
		t.Error("batch requests must ask for n ideas")
	}
}

func TestGenerateCustomTemplate(t *testing.T) {
	nodes := generateNodes(t, stages.Params{
		"system": "",
		"prompt": "Topic: {{.Keywords | join \", \"}}. Sample {{.Sample}} of a {{.Domain}} study.\n{{range .References}}[{{.Number}}] {{.Title}} ({{.ID}})\n{{end}}\n",
		"n":      2,
	}, "p1")
	c := call(t, nodes[1], genIn(t, nodes[1], filterOut(t, "p1", 2, false)))
	if len(c.Request.Messages) != 1 || c.Request.Messages[0].Role != "user" {
		t.Fatalf("an empty system template must send no system message: %+v", c.Request.Messages)
	}
	want := "Topic: zebrafish, fin regeneration. Sample 1 of a biomedical study.\n[1] Reference title 0 (r0)\n[2] Reference title 1 (r1)"
	if got := c.Request.Messages[0].Content; !strings.HasPrefix(got, want+"\n\n") {
		t.Errorf("user message\n got %q\nwant prefix %q", got, want+"\n\n")
	}
	if ins := format.Instructions(format.Spec{Kind: format.Ideas, N: 1}); !strings.HasSuffix(c.Request.Messages[0].Content, strings.TrimSpace(ins)) {
		t.Error("the answer-format instructions are not appended")
	}
}

func TestGenerateDroppedTarget(t *testing.T) {
	for _, params := range []stages.Params{{}, {"mode": "batch"}} {
		nodes := generateNodes(t, params, "p1")
		in := genIn(t, nodes[0], filterOut(t, "p1", 1, true))
		out := compute(t, nodes[0], in)
		if string(out) != `{"ideas":[],"dropped":true}` {
			t.Errorf("dropped output %s", out)
		}
		// Keyed on the generator only: raising n or changing the prompt keeps it cached.
		if w, _ := nodes[0].Prepare(in); !reflect.DeepEqual(w.KeyParams, []string{"model"}) {
			t.Errorf("dropped node keyed on %v", w.KeyParams)
		}
	}
}

// TestGenerateOutput runs answers through what the engine does with them:
// format.Parse against the request's spec, then Call.Output on what parsed.
// Everything ideasOutput used to refuse (too few ideas, an empty one) is now
// a parse error, which gets a repair re-ask; Output never fails on a parsed
// answer.
func TestGenerateOutput(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		answer   string
		want     string // node output
		parseErr string // exact parse error
	}{
		{"one idea", 1, "  An idea.\n", `{"ideas":["An idea."]}`, ""},
		{"three ideas", 3, "1. a\n2. b\n3. c", `{"ideas":["a","b","c"]}`, ""},
		{"ideas are trimmed", 2, "1.   a  \n2.\tb\t", `{"ideas":["a","b"]}`, ""},
		{"numbered surplus keeps the first n", 1, "1. a\n2. b", `{"ideas":["a"]}`, ""},
		{"too few", 3, "1. a\n2. b", "", "found 2 ideas, expected 3 ideas"},
		{"too few in JSON", 3, `["a", "b"]`, "", "found 2 ideas, expected 3 ideas"},
		{"unnumbered surplus", 2, "- a\n- b\n- c", "", "found 3 unnumbered ideas, expected 2 ideas"},
		{"empty idea", 2, "1. a\n2.", "", "idea 2 is empty"},
		{"blank idea", 2, "1. a\n2.    ", "", "idea 2 is empty"},
		{"markdown-only idea", 2, "1. a\n2. ** **", "", "idea 2 is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := generateNodes(t, stages.Params{"mode": "batch", "n": tc.n}, "p1")
			c := call(t, nodes[0], genIn(t, nodes[0], filterOut(t, "p1", 2, false)))
			if spec := c.Request.Format; spec.Kind != format.Ideas || spec.N != tc.n {
				t.Fatalf("request format %+v, want ideas with n = %d", spec, tc.n)
			}
			a, err := format.Parse(c.Request.Format, tc.answer)
			if tc.parseErr != "" {
				if err == nil || err.Error() != tc.parseErr {
					t.Errorf("parse: %#v, %v; want error %q", a, err, tc.parseErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			out, err := c.Output(a)
			if err != nil || string(out) != tc.want {
				t.Errorf("output %s, %v; want %s", out, err, tc.want)
			}
		})
	}
}

// TestGeneratorParams: generate_ideas' model produces the ideas downstream
// stages judge; rank_ideas' judge only ranks them, so it must not count as a
// generator (a judge stage keeps itself independent of the generator).
func TestGeneratorParams(t *testing.T) {
	tests := []struct {
		typ  stages.Type
		want []string
	}{
		{generateType{}, []string{"model"}},
		{rankType{}, nil},
		{filterType{}, nil},
		{insightType{}, nil},
	}
	for _, tc := range tests {
		var got []string
		for _, p := range tc.typ.Params() {
			if p.Generator {
				got = append(got, p.Name)
				if p.Kind != stages.ModelRef {
					t.Errorf("%s.%s is a generator of kind %s, want %s", tc.typ.Name(), p.Name, p.Kind, stages.ModelRef)
				}
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s generator params %v, want %v", tc.typ.Name(), got, tc.want)
		}
	}
}

// Templates are test-rendered with data of the real shape: a prompt that
// indexes the keywords is valid.
func TestGenerateTemplateIndexingKeywordsIsValid(t *testing.T) {
	ds := datasetUp("p1")
	up := &stages.Upstream{Address: "stage.filter_references.low", Type: "filter_references", Nodes: ds.Nodes, Source: ds}
	params := stages.Params{"references": up, "model": testModel, "prompt": "Ideas about {{index .Keywords 0}} from {{(index .References 1).Title}}."}
	if _, err := (generateType{}).Layout(&stages.Instance{Address: "stage.generate_ideas.x", Params: stages.WithDefaults(generateType{}, params)}); err != nil {
		t.Fatalf("a template indexing .Keywords was refused: %v", err)
	}
}
