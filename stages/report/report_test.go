package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func golden(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal([]byte(got), want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// aggregate is a column instance: one aggregate node.
func aggregate(block, key string) *stages.Upstream {
	addr := block
	if key != "" {
		addr += `["` + key + `"]`
	}
	return &stages.Upstream{Address: addr, Type: "insight_score", Key: key, Nodes: []stages.NodeInfo{{}}}
}

func rowInstance(key string) *stages.Upstream {
	return &stages.Upstream{Address: `stage.generate_ideas.main["` + key + `"]`, Type: "generate_ideas", Key: key,
		Nodes: []stages.NodeInfo{{Item: "p1"}, {Item: "p2"}}}
}

func score(t *testing.T, s stages.Score) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// table1 is a report over two models with three metric stages: novelty for
// both, feasibility only for gpt-4o (whose llama instance is absent), and a
// keyless overall stage that applies to every row. llama's novelty failed.
func table1(t *testing.T, extra stages.Params) (stages.Node, []stages.In) {
	t.Helper()
	cols := []*stages.Upstream{
		aggregate("stage.insight_score.novelty", "gpt-4o"),
		aggregate("stage.insight_score.novelty", "llama-70b"),
		aggregate("stage.insight_score.feasibility", "gpt-4o"),
		aggregate("stage.aggregate.overall", ""),
	}
	params := stages.Params{
		"rows":    []*stages.Upstream{rowInstance("gpt-4o"), rowInstance("llama-70b")},
		"columns": cols,
		"formats": []string{"markdown", "csv", "json", "latex"},
		"title":   "Insight Scores (n = 3)",
	}
	for k, v := range extra {
		params[k] = v
	}
	nodes, err := reportType{}.Layout(&stages.Instance{Address: "report.table1", Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 {
		t.Fatalf("%d nodes, want 1", len(nodes))
	}
	outputs := [][]byte{
		score(t, stages.Score{Value: 2.0 / 3, Count: 4, Extra: map[string]float64{"n": 3, "dropped": 1}}),
		nil,
		score(t, stages.Score{Value: 0.125, Count: 3, Missing: 1}),
		score(t, stages.Score{Value: -0.00001, Count: 1}),
	}
	n := nodes[0]
	var in []stages.In
	for i, d := range n.Deps {
		in = append(in, stages.In{Dep: d, Output: outputs[i]})
	}
	return n, in
}

func render(t *testing.T, n stages.Node, in []stages.In) Output {
	t.Helper()
	w, err := n.Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	if w.Call != nil || w.Compute == nil {
		t.Fatal("a report is a compute node")
	}
	b, err := w.Compute()
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReportLayout(t *testing.T) {
	n, _ := table1(t, nil)
	want := []stages.Dep{{Input: "columns", Index: 0}, {Input: "columns", Index: 1}, {Input: "columns", Index: 2}, {Input: "columns", Index: 3}}
	if n.Item != "" || !n.AllowMissing || !reflect.DeepEqual(n.Deps, want) {
		t.Errorf("node %+v", n)
	}
}

func TestReportGolden(t *testing.T) {
	for _, tc := range []struct {
		name      string
		synthetic bool
	}{{"table1", false}, {"table1_synthetic", true}} {
		t.Run(tc.name, func(t *testing.T) {
			n, in := table1(t, stages.Params{"synthetic": tc.synthetic})
			out := render(t, n, in)
			var names []string
			for f := range out.Files {
				names = append(names, f)
			}
			if want := []string{"table1.csv", "table1.json", "table1.md", "table1.tex"}; !sameSet(names, want) {
				t.Fatalf("files %v, want %v", names, want)
			}
			for _, ext := range []string{".md", ".csv", ".json", ".tex"} {
				golden(t, tc.name+ext, out.Files["table1"+ext])
			}
			md, csv := out.Files["table1.md"], out.Files["table1.csv"]
			if got := strings.HasPrefix(md, "SYNTHETIC"); got != tc.synthetic {
				t.Errorf("markdown starts with SYNTHETIC: %v, want %v", got, tc.synthetic)
			}
			lines := strings.Split(strings.TrimSpace(csv), "\n")
			for _, l := range lines[1:] {
				want := ",false"
				if tc.synthetic {
					want = ",true"
				}
				if !strings.HasSuffix(l, want) {
					t.Errorf("csv row %q does not end with %s", l, want)
				}
			}
		})
	}
}

func TestReportDefaultFormatsAndTitle(t *testing.T) {
	nodes, err := reportType{}.Layout(&stages.Instance{Address: "report.main", Params: stages.WithDefaults(reportType{}, stages.Params{
		"rows":    []*stages.Upstream{{Address: "stage.generate_ideas.only", Type: "generate_ideas"}},
		"columns": []*stages.Upstream{aggregate("stage.insight_score.novelty", "")},
	})})
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, nodes[0], []stages.In{{Dep: nodes[0].Deps[0], Output: []byte(`{"value":0.5,"count":2,"missing":0}`)}})
	want := map[string]string{
		"main.md":  "# main\n\n| | insight_score.novelty |\n|---|---:|\n| stage.generate_ideas.only | 0.500 (2 items) |\n",
		"main.csv": "row,insight_score.novelty,insight_score.novelty_count,insight_score.novelty_missing,insight_score.novelty_dropped,synthetic\nstage.generate_ideas.only,0.500,2,0,0,false\n",
	}
	if !reflect.DeepEqual(out.Files, want) {
		t.Errorf("files %q\nwant %q", out.Files, want)
	}
}

func TestReportLayoutErrors(t *testing.T) {
	col := aggregate("stage.insight_score.novelty", "a")
	rows := []*stages.Upstream{rowInstance("a")}
	perItem := &stages.Upstream{Address: "stage.rank_ideas.x", Nodes: []stages.NodeInfo{{Item: "p1"}, {Item: "p2"}}}
	tests := []struct {
		params stages.Params
		param  string
		want   string
	}{
		{stages.Params{"rows": rows, "columns": []*stages.Upstream{col}, "formats": []string{"markdown", "html"}}, "formats",
			`formats: unknown format "html" (known: "csv", "json", "latex", "markdown")`},
		{stages.Params{"rows": rows, "columns": []*stages.Upstream{col}, "formats": []string{}}, "formats",
			`formats is empty; give at least one of "csv", "json", "latex", "markdown"`},
		{stages.Params{"columns": []*stages.Upstream{col}}, "rows", "rows is empty; give the stage whose instances are the rows"},
		{stages.Params{"rows": rows}, "columns", "columns is empty; give at least one aggregate stage"},
		{stages.Params{"rows": rows, "columns": []*stages.Upstream{perItem}}, "columns",
			"columns: stage.rank_ideas.x has 2 nodes; a column must be an aggregate stage with one node (insight_score, ...)"},
		{stages.Params{"rows": rows, "columns": []*stages.Upstream{col, col}}, "columns", `columns: stage.insight_score.novelty["a"] is listed twice`},
		{stages.Params{"rows": []*stages.Upstream{rowInstance("a"), rowInstance("a")}, "columns": []*stages.Upstream{col}}, "rows",
			`rows: two rows are labelled "a"; list each instance once`},
	}
	for _, tc := range tests {
		_, err := reportType{}.Layout(&stages.Instance{Address: "report.t", Params: stages.WithDefaults(reportType{}, tc.params)})
		var pe *stages.ParamError
		switch {
		case err == nil:
			t.Errorf("no error, want %s error %q", tc.param, tc.want)
		case !errors.As(err, &pe):
			t.Errorf("error %q is a %T, not a *stages.ParamError", err, err)
		case pe.Param != tc.param || err.Error() != tc.want:
			t.Errorf("error on %s: %q\nwant on %s: %q", pe.Param, err, tc.param, tc.want)
		}
	}
}

func TestReportNotScore(t *testing.T) {
	n, in := table1(t, nil)
	in[0].Output = []byte(`[]`)
	w, err := n.Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Compute()
	if err == nil || !strings.HasPrefix(err.Error(), "column insight_score.novelty, row gpt-4o: not a score:") {
		t.Errorf("error %v", err)
	}
}

func TestReportRegistered(t *testing.T) {
	typ, ok := stages.Lookup("report")
	if !ok || typ.Name() != "report" || typ.Version() != "1" {
		t.Fatal("report type not registered")
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return len(a) == len(b)
}
