package ideabench

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/llm"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func indentJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// requestText renders a request for a golden file: each message as plain
// text (readable in review), then the other fields as JSON.
func requestText(t testing.TB, req llm.Request) []byte {
	var b bytes.Buffer
	for _, m := range req.Messages {
		fmt.Fprintf(&b, "=== %s\n%s\n", m.Role, m.Content)
	}
	req.Messages = nil
	fmt.Fprintf(&b, "=== request\n%s", indentJSON(t, req))
	return b.Bytes()
}

func f64(v float64) *float64 { return &v }

var testModel = &stages.Model{Address: "model.gen", Provider: "mock", Name: "gen-model", Temperature: f64(0.7), MaxTokens: 512}
var testJudge = &stages.Model{Address: "model.judge", Provider: "mock", Name: "judge-model", Temperature: f64(0)}
var novelty = &stages.Quality{Address: "quality.novelty", Name: "novelty",
	Definition: "developing new methodologies, techniques, or instruments that allow researchers to explore questions in ways that were not possible before"}

// datasetUp is a dataset upstream over items.
func datasetUp(items ...string) *stages.Upstream {
	u := &stages.Upstream{Address: "dataset.targets", Type: "dataset"}
	for _, it := range items {
		u.Nodes = append(u.Nodes, stages.NodeInfo{Item: it})
	}
	u.Source = u
	return u
}

// stageUp is the upstream an engine would build from laid-out nodes.
func stageUp(address, typ, key string, nodes []stages.Node, source *stages.Upstream) *stages.Upstream {
	u := &stages.Upstream{Address: address, Type: typ, Key: key, Source: source}
	for _, n := range nodes {
		u.Nodes = append(u.Nodes, stages.NodeInfo{Item: n.Item, Slot: n.Slot})
	}
	return u
}

// layout lays out an instance of typ. params may be sparse: unset params get
// their declared defaults, as the engine gives them.
func layout(t testing.TB, typ stages.Type, address string, params stages.Params) []stages.Node {
	t.Helper()
	nodes, err := typ.Layout(&stages.Instance{Address: address, Params: stages.WithDefaults(typ, params)})
	if err != nil {
		t.Fatalf("layout %s: %v", address, err)
	}
	return nodes
}

// compute runs a node that must be pure.
func compute(t testing.TB, n stages.Node, in []stages.In) []byte {
	t.Helper()
	w, err := n.Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	if w.Call != nil || w.Compute == nil {
		t.Fatalf("node %s/%s is not a compute node", n.Item, n.Label)
	}
	out, err := w.Compute()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// call prepares a node that must be a model call.
func call(t testing.TB, n stages.Node, in []stages.In) *stages.Call {
	t.Helper()
	w, err := n.Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	if w.Call == nil || w.Compute != nil {
		t.Fatalf("node %s/%s is not a model call", n.Item, n.Label)
	}
	return w.Call
}

func paper(id string, refs ...datasets.Reference) datasets.Paper {
	return datasets.Paper{ID: id, Title: "Title of " + id, Abstract: "Abstract of " + id + ".", Idea: "Idea of " + id + ".", References: refs}
}

func goodRef(id string) datasets.Reference {
	return datasets.Reference{ID: id, Title: "Ref " + id, Abstract: "Abstract of reference " + id + ".", Citations: 10,
		Types: []string{"JournalArticle"}, Intents: []string{"background"}}
}

// merge returns a copy of a with b's entries added.
func merge(a, b stages.Params) stages.Params {
	out := stages.Params{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// checkParamError asserts err is a *stages.ParamError about param with
// exactly the message want, as the engine will see it.
func checkParamError(t testing.TB, err error, param, want string) {
	t.Helper()
	var pe *stages.ParamError
	switch {
	case err == nil:
		t.Errorf("no error, want %s error %q", param, want)
	case !errors.As(err, &pe):
		t.Errorf("error %q is a %T, not a *stages.ParamError (want param %s)", err, err, param)
	case pe.Param != param || err.Error() != want:
		t.Errorf("error on %s: %q\nwant on %s: %q", pe.Param, err, param, want)
	}
}
