package ideabench

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

const quickstart = "../../experiments/quickstart/"

// The quickstart's prompt file must be the default prompt, byte for byte, so
// that `prompt = file("prompts/generate.tmpl")` and the default share a cache.
func TestQuickstartPromptIsDefault(t *testing.T) {
	b, err := os.ReadFile(quickstart + "prompts/generate.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != DefaultGeneratePrompt {
		t.Errorf("prompts/generate.tmpl differs from DefaultGeneratePrompt")
	}
}

// The quickstart data exercises every filter rule, drops one target, and keeps
// at most 5 references per target, so limit 5 and limit 6 give equal outputs
// (the engine's early-cutoff scenario relies on that).
func TestQuickstartDataFilter(t *testing.T) {
	items, err := datasets.Load("ideabench", quickstart+"data/targets.jsonl", datasets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id      string
		total   int
		kept    int
		dropped bool
	}{
		{"qs-membrane", 7, 4, false},
		{"qs-reef", 6, 5, false},
		{"qs-spindle", 8, 5, false},
		{"qs-codegen", 5, 2, true},
		{"qs-greenroof", 6, 3, false},
	}
	if len(items) != len(want) {
		t.Fatalf("%d targets, want %d", len(items), len(want))
	}
	run := func(params stages.Params, rec []byte) []byte {
		nodes := layout(t, filterType{}, "stage.filter_references.q", merge(stages.Params{"dataset": datasetUp("x")}, params))
		return compute(t, nodes[0], []stages.In{{Dep: nodes[0].Deps[0], Node: stages.NodeInfo{Item: "x"}, Output: rec}})
	}
	for i, w := range want {
		var p datasets.Paper
		if err := json.Unmarshal(items[i].Record, &p); err != nil {
			t.Fatal(err)
		}
		if p.ID != w.id || len(p.References) != w.total {
			t.Errorf("target %d: %s with %d references, want %s with %d", i, p.ID, len(p.References), w.id, w.total)
		}
		out5 := run(stages.Params{"limit": 5}, items[i].Record)
		out6 := run(stages.Params{"limit": 6}, items[i].Record)
		if string(out5) != string(out6) {
			t.Errorf("%s: limit 5 and 6 differ", w.id)
		}
		var f FilterOutput
		if err := json.Unmarshal(out5, &f); err != nil {
			t.Fatal(err)
		}
		if len(f.References) != w.kept || f.Dropped != w.dropped {
			t.Errorf("%s: kept %d dropped %v, want %d %v", w.id, len(f.References), f.Dropped, w.kept, w.dropped)
		}
	}
}
