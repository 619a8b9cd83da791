package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
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
func table1(t *testing.T, synthetic ...int) (stages.Node, []stages.In) {
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
	params = stages.WithDefaults(reportType{}, params)
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
	in := inputs(t, params, nodes[0], outputs)
	for _, i := range synthetic {
		in[i].Provenance = mockProvenance
	}
	return nodes[0], in
}

// mockProvenance and realProvenance are what the engine hands a report of
// inputs that rest on the mock's answers, or on an endpoint's.
var (
	mockProvenance = &stages.Provenance{Synthetic: true, Answerers: []llm.Answerer{{Class: llm.ClassMock, Identity: "seed 7", Synthetic: true}}}
	realProvenance = &stages.Provenance{Answerers: []llm.Answerer{{Class: llm.ClassEndpoint, Identity: "https://api.openai.com/v1"}}}
)

// inputs resolves n's deps the way the engine does: an Inputs param's
// Dep.Index counts across the listed upstreams' nodes in list order, and
// In.From is the upstream the node falls in. outputs[i] is dep i's output.
func inputs(t *testing.T, params stages.Params, n stages.Node, outputs [][]byte) []stages.In {
	t.Helper()
	if len(outputs) != len(n.Deps) {
		t.Fatalf("%d outputs for %d deps", len(outputs), len(n.Deps))
	}
	in := make([]stages.In, len(n.Deps))
	for i, d := range n.Deps {
		idx := d.Index
		for _, u := range params.Inputs(d.Input) {
			if idx < len(u.Nodes) {
				in[i] = stages.In{Dep: d, Node: u.Nodes[idx], From: u, Output: outputs[i]}
				break
			}
			idx -= len(u.Nodes)
		}
		if in[i].From == nil {
			t.Fatalf("dep %+v points at no node of %s", d, d.Input)
		}
	}
	return in
}

func render(t *testing.T, n stages.Node, in []stages.In) stages.Files {
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
	var out stages.Files
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReportLayout(t *testing.T) {
	n, _ := table1(t)
	want := []stages.Dep{{Input: "columns", Index: 0}, {Input: "columns", Index: 1}, {Input: "columns", Index: 2}, {Input: "columns", Index: 3}}
	if n.Item != "" || !n.AllowMissing || !n.WritesFiles || !reflect.DeepEqual(n.Deps, want) {
		t.Errorf("node %+v", n)
	}
}

// TestReportMatchesInputsByFrom gives the report its inputs in reverse: the
// cells are found by In.From, so the files are the same.
func TestReportMatchesInputsByFrom(t *testing.T) {
	n, in := table1(t)
	want := render(t, n, in)
	rev := make([]stages.In, len(in))
	for i := range in {
		rev[len(in)-1-i] = in[i]
	}
	if got := render(t, n, rev); !reflect.DeepEqual(got, want) {
		t.Errorf("inputs in reverse give\n%q\nwant\n%q", got.Files, want.Files)
	}
}

// TestReportInputErrors: inputs that do not match the layout are the engine's
// fault and fail Prepare with a message saying so.
func TestReportInputErrors(t *testing.T) {
	stranger := aggregate("stage.insight_score.other", "")
	tests := []struct {
		name string
		edit func([]stages.In) []stages.In
		want string
	}{
		{"no From", func(in []stages.In) []stages.In { in[1].From = nil; return in },
			"input 1 (columns node 1) does not say which column instance it comes from (In.From is nil)"},
		{"From twice", func(in []stages.In) []stages.In { in[1].From = in[0].From; return in },
			`input 1: two inputs come from stage.insight_score.novelty["gpt-4o"]; each column instance has one (per label)`},
		{"From not a column", func(in []stages.In) []stages.In { in[2].From = stranger; return in },
			`no input comes from column instance stage.insight_score.feasibility["gpt-4o"]`},
		{"an input short", func(in []stages.In) []stages.In { return in[:3] },
			"report got 3 inputs, want 4 (one per column instance)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, in := table1(t)
			if _, err := n.Prepare(tc.edit(in)); err == nil || err.Error() != tc.want {
				t.Errorf("Prepare error %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestReportGolden renders table1 with real inputs, with synthetic inputs
// only (the SYNTHETIC banner, no cell marked), and mixed: exactly the cell
// fed by the mock is marked, in every format, and the top says 1 of 4.
func TestReportGolden(t *testing.T) {
	for _, tc := range []struct {
		name      string
		synthetic []int // inputs that rest on the mock
		banner    string
		csvRows   []string // how each CSV row ends: synthetic per row
	}{
		{"table1", nil, "# ", []string{",false", ",false"}},
		{"table1_synthetic", []int{0, 1, 2, 3}, SyntheticBanner, []string{",true", ",true"}},
		{"table1_mixed", []int{0}, "PARTLY SYNTHETIC: 1 of 4 cells (marked †) come from the mock provider", []string{",false,true", ",false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, in := table1(t, tc.synthetic...)
			for i := range in {
				if in[i].Provenance == nil && in[i].Output != nil {
					in[i].Provenance = realProvenance
				}
			}
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
			if !strings.HasPrefix(md, tc.banner) {
				t.Errorf("markdown does not start with %q:\n%s", tc.banner, md)
			}
			if got, want := strings.Count(md, MixedMark), map[bool]int{true: 2, false: 0}[len(tc.synthetic) == 1]; got != want {
				t.Errorf("markdown has %d marks, want %d (the note and the one cell)", got, want)
			}
			lines := strings.Split(strings.TrimSpace(csv), "\n")
			for r, l := range lines[1:] {
				if !strings.HasSuffix(l, tc.csvRows[r]) {
					t.Errorf("csv row %q does not end with %s", l, tc.csvRows[r])
				}
			}
			pt, ok := TableFromMarkdown("table1", md)
			if !ok {
				t.Fatal("the page cannot read the table")
			}
			var marked []string
			for r, row := range pt.Rows {
				for c, cell := range row {
					if cell.Synthetic {
						marked = append(marked, fmt.Sprintf("%d/%d=%s", r, c, cell.Value))
					}
				}
			}
			if want := map[bool]string{true: "0/1=0.667", false: ""}[len(tc.synthetic) == 1]; strings.Join(marked, " ") != want {
				t.Errorf("page marks %v, want %q", marked, want)
			}
			if (pt.Synthetic != "") != (len(tc.synthetic) > 0) || pt.Mixed != (len(tc.synthetic) == 1) {
				t.Errorf("page table banner %q, mixed %v", pt.Synthetic, pt.Mixed)
			}
		})
	}
}

func TestReportDefaultFormatsAndTitle(t *testing.T) {
	params := stages.WithDefaults(reportType{}, stages.Params{
		"rows":    []*stages.Upstream{{Address: "stage.generate_ideas.only", Type: "generate_ideas"}},
		"columns": []*stages.Upstream{aggregate("stage.insight_score.novelty", "")},
	})
	nodes, err := reportType{}.Layout(&stages.Instance{Address: "report.main", Params: params})
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, nodes[0], inputs(t, params, nodes[0], [][]byte{[]byte(`{"value":0.5,"count":2,"missing":0}`)}))
	want := map[string]string{
		"main.md": "# main\n\n| | insight_score.novelty |\n|---|---:|\n| stage.generate_ideas.only | 0.500 |\n\n" +
			"- insight_score.novelty: each value is over 2 items.\n",
		"main.csv": "row,insight_score.novelty,insight_score.novelty_count,insight_score.novelty_missing,insight_score.novelty_dropped,insight_score.novelty_synthetic,synthetic\nstage.generate_ideas.only,0.5,2,0,0,false,false\n",
	}
	if !reflect.DeepEqual(out.Files, want) {
		t.Errorf("files %q\nwant %q", out.Files, want)
	}
}

func TestReportLayoutErrors(t *testing.T) {
	col := aggregate("stage.insight_score.novelty", "a")
	rows := []*stages.Upstream{rowInstance("a")}
	perItem := &stages.Upstream{Address: "stage.rank_ideas.x", Nodes: []stages.NodeInfo{{Item: "p1"}, {Item: "p2"}}}
	grid := []*stages.Upstream{rowInstance("gpt4o/high"), rowInstance("gpt4o/low")}
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
			"columns: stage.rank_ideas.x has 2 nodes; a column must be an aggregate stage with one node (insight_score, ...), or with several labelled ones (coverage_score)"},
		{stages.Params{"rows": rows, "columns": []*stages.Upstream{col, col}}, "columns", `columns: stage.insight_score.novelty["a"] is listed twice`},
		{stages.Params{"rows": []*stages.Upstream{rowInstance("a"), rowInstance("a")}, "columns": []*stages.Upstream{col}}, "rows",
			`rows: two rows are labelled "a"; list each instance once`},
		{stages.Params{"rows": grid, "columns": []*stages.Upstream{col}, "row_dims": []string{"model", "scenario", "n"}}, "row_dims",
			`row_dims: row key "gpt4o/high" splits on "/" into 2 part(s), but row_dims names 3 ("model", "scenario", "n"); make the for_each keys like "model/scenario/n" or set key_separator`},
		{stages.Params{"rows": grid, "columns": []*stages.Upstream{col}, "row_dims": []string{"model", "model"}}, "row_dims",
			`row_dims: "model" is named twice; each part of the row keys needs its own name`},
		{stages.Params{"rows": grid, "columns": []*stages.Upstream{col}, "row_dims": []string{"model", " "}}, "row_dims",
			`row_dims: a dimension has an empty name; name every part of the row keys`},
		{stages.Params{"rows": grid, "columns": []*stages.Upstream{col}, "row_dims": []string{"model", "scenario"}, "key_separator": ""}, "key_separator",
			`key_separator is empty; give the text row keys are split on into row_dims (e.g. "/")`},
		{stages.Params{"rows": []*stages.Upstream{{Address: "stage.generate_ideas.only"}}, "columns": []*stages.Upstream{col}, "row_dims": []string{"model"}}, "row_dims",
			`row_dims: stage.generate_ideas.only has no instance key to split; row_dims needs rows from a stage with for_each (or one that fans out)`},
		{stages.Params{"rows": grid, "columns": []*stages.Upstream{col}, "row_dims": []string{"model", "scenario"}, "pivot": "arm"}, "pivot",
			`pivot "arm" is not a row dimension; name one of row_dims ("model", "scenario")`},
		{stages.Params{"rows": rows, "columns": []*stages.Upstream{col}, "pivot": "arm"}, "pivot",
			`pivot "arm" is not a row dimension; name one of row_dims ("")`},
		{stages.Params{"rows": rows, "columns": []*stages.Upstream{col}, "better": map[string]string{"insight_score.novelty": "highest"}}, "better",
			`better: "insight_score.novelty" = "highest"; use "higher" or "lower"`},
		{stages.Params{"rows": rows, "columns": []*stages.Upstream{col}, "number_format": map[string]string{"insight_score.novelty": "%d"}}, "number_format",
			`number_format: "insight_score.novelty" = "%d"; give a printf format with exactly one of the verbs %f, %e, %g (e.g. "%.2f"; %% for a literal percent sign)`},
		{stages.Params{"rows": rows, "columns": []*stages.Upstream{col}, "number_format": map[string]string{"insight_score.novelty": "%.1f (%s)"}}, "number_format",
			`number_format: "insight_score.novelty" = "%.1f (%s)"; give a printf format with exactly one of the verbs %f, %e, %g (e.g. "%.2f"; %% for a literal percent sign)`},
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
	n, in := table1(t)
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
	if !ok || typ.Name() != "report" || typ.Version() != "5" {
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

var (
	gpt4o = &stages.Model{Address: "model.gpt4o", Name: "gpt-4o-2024-08-06"}
	llama = &stages.Model{Address: "model.llama", Name: "llama-3.1-70b"}
)

// keyedRow is a row instance whose key names its arm; gen generated it.
func keyedRow(key string, gen *stages.Model) *stages.Upstream {
	u := rowInstance(key)
	u.Generator = gen
	return u
}

// withCI is a score with a bootstrap interval, as the bootstrap stage writes it.
func withCI(v, lo, hi float64, count int) stages.Score {
	return stages.Score{Value: v, Count: count, Extra: map[string]float64{"ci_low": lo, "ci_high": hi, "ci_level": 0.95}}
}

// layoutCase lays out a report over params (defaults filled) and resolves
// its inputs: outputs maps each column instance address to its output (a
// missing address is a failed input).
func layoutCase(t *testing.T, name string, params stages.Params, outputs map[string][]byte) (stages.Node, []stages.In) {
	t.Helper()
	params = stages.WithDefaults(reportType{}, params)
	nodes, err := reportType{}.Layout(&stages.Instance{Address: "report." + name, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	offset := 0
	for _, c := range params.Inputs("columns") {
		outs = append(outs, outputs[c.Address])
		offset++
	}
	return nodes[0], inputs(t, params, nodes[0], outs)
}

// gridCase is a model x scenario grid: for_each keys "gpt4o/high" and so
// on, two dimensions named, scenario ordered low before high by row_order,
// models shown by their names, a bootstrap column with CIs and bold best,
// and a feasibility column where lower is better (for the test's sake),
// printed with its own format, missing one cell.
func gridCase(t *testing.T) (stages.Node, []stages.In) {
	t.Helper()
	keys := []struct {
		key string
		gen *stages.Model
	}{{"gpt4o/high", gpt4o}, {"gpt4o/low", gpt4o}, {"llama/high", llama}, {"llama/low", llama}}
	var rows, cols []*stages.Upstream
	outputs := map[string][]byte{}
	nov := map[string]stages.Score{
		"gpt4o/high": withCI(0.614, 0.58, 0.65, 20), "gpt4o/low": withCI(0.55, 0.5, 0.6, 20),
		"llama/high": withCI(0.6144, 0.57, 0.66, 20), "llama/low": withCI(0.401, 0.35, 0.45, 19),
	}
	feas := map[string]stages.Score{
		"gpt4o/high": {Value: 6.25, Count: 20}, "gpt4o/low": {Value: 7.5, Count: 18, Missing: 2},
		"llama/high": {Value: 5.125, Count: 20},
	}
	for _, k := range keys {
		rows = append(rows, keyedRow(k.key, k.gen))
		n := aggregate("stage.bootstrap.novelty", k.key)
		cols = append(cols, n)
		outputs[n.Address] = score(t, nov[k.key])
		f := aggregate("stage.overlap_score.feasibility", k.key)
		cols = append(cols, f)
		if s, ok := feas[k.key]; ok {
			outputs[f.Address] = score(t, s)
		}
	}
	params := stages.Params{
		"rows": rows, "columns": cols,
		"formats":   []string{"markdown", "csv", "json", "latex"},
		"title":     "Novelty & feasibility by model and scenario",
		"row_dims":  []string{"model", "scenario"},
		"row_order": []string{"low", "high"},
		"labels": map[string]string{"bootstrap.novelty": "Novelty", "overlap_score.feasibility": "Feasibility (0-10)",
			"model": "Model", "scenario": "Scenario", "llama": "Llama 3.1 70B"},
		"better":        map[string]string{"bootstrap.novelty": "higher", "overlap_score.feasibility": "lower"},
		"number_format": map[string]string{"overlap_score.feasibility": "%.1f"},
	}
	return layoutCase(t, "grid", params, outputs)
}

// pivotCase is IdeaBench's Table 2 laid out: the number of references in
// rows (numbers ascending, not as text), filtered / unfiltered in columns
// (filtered first by row_order), for two column stages.
func pivotCase(t *testing.T) (stages.Node, []stages.In) {
	t.Helper()
	var rows, cols []*stages.Upstream
	outputs := map[string][]byte{}
	v := 0.5
	for _, mode := range []string{"all", "filtered"} {
		for _, refs := range []string{"1", "10", "3"} {
			key := mode + "-" + refs
			rows = append(rows, keyedRow(key, gpt4o))
			n := aggregate("stage.insight_score.novelty", key)
			f := aggregate("stage.insight_score.feasibility", key)
			cols = append(cols, n, f)
			v += 0.0625
			outputs[n.Address] = score(t, withCI(v, v-0.05, v+0.05, 4))
			outputs[f.Address] = score(t, stages.Score{Value: 1 - v, Count: 4, Extra: map[string]float64{"dropped": 1}})
		}
	}
	params := stages.Params{
		"rows": rows, "columns": cols,
		"formats":       []string{"markdown", "csv", "json", "latex"},
		"title":         "Insight Score by number of references",
		"row_dims":      []string{"mode", "refs"},
		"key_separator": "-",
		"pivot":         "mode",
		"row_order":     []string{"filtered"},
		"labels": map[string]string{"insight_score.novelty": "Novelty", "insight_score.feasibility": "Feasibility",
			"refs": "References", "filtered": "Filtered", "all": "Unfiltered"},
		"better": map[string]string{"insight_score.novelty": "higher", "insight_score.feasibility": "higher"},
	}
	return layoutCase(t, "pivot", params, outputs)
}

// TestReportTableGolden: each format of a model x scenario grid and of a
// pivot, with labels, declared order, bold best, CIs and count footnotes.
func TestReportTableGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		mk   func(*testing.T) (stages.Node, []stages.In)
	}{{"grid", gridCase}, {"pivot", pivotCase}} {
		t.Run(tc.name, func(t *testing.T) {
			n, in := tc.mk(t)
			out := render(t, n, in)
			if len(out.Files) != 4 {
				t.Fatalf("files %v, want 4", out.Files)
			}
			for _, ext := range []string{".md", ".csv", ".json", ".tex"} {
				golden(t, tc.name+ext, out.Files[tc.name+ext])
			}
		})
	}
}

// TestReportWarnings: options that name nothing in the table are warnings
// at their param (labels may be shared by several reports), and a column
// that matches no row says so.
func TestReportWarnings(t *testing.T) {
	params := stages.WithDefaults(reportType{}, stages.Params{
		"rows":          []*stages.Upstream{keyedRow("gpt4o", gpt4o)},
		"columns":       []*stages.Upstream{aggregate("stage.insight_score.novelty", "gpt4o"), aggregate("stage.insight_score.other", "x")},
		"labels":        map[string]string{"insight_score.novelty": "Novelty", "gpt-4o-2024-08-06": "GPT-4o", "insight_score.novelt": "typo"},
		"better":        map[string]string{"novelty": "higher"},
		"number_format": map[string]string{"novelty": "%.1f"},
		"row_order":     []string{"gpt4o", "llama"},
	})
	var got []string
	for _, w := range (reportType{}).LayoutWarnings(&stages.Instance{Address: "report.t", Params: params}) {
		got = append(got, w.Param+": "+w.Error())
	}
	want := []string{
		`better: better: "novelty" is not a column stage of this report (columns: "insight_score.novelty", "insight_score.other"); it is ignored`,
		`number_format: number_format: "novelty" is not a column stage of this report (columns: "insight_score.novelty", "insight_score.other"); it is ignored`,
		`row_order: row_order: "llama" is no value of the row dimensions (row keys: gpt4o); it is ignored`,
		`labels: labels: "insight_score.novelt" names no column stage ("insight_score.novelty", "insight_score.other"), row dimension or dimension value of this report; it is ignored`,
		`columns: column insight_score.other matches no row: its instance keys (x) are none of the rows' (gpt4o), so every cell would be n/a; make the column stage fan out over the rows' stage`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReportRowLabelsAndOrder: without row_dims the whole key is the row;
// a key naming the row's generator (by block name or name) shows the
// model's name, a label wins over both; numbers sort as numbers; row_order
// goes first.
func TestReportRowLabelsAndOrder(t *testing.T) {
	tests := []struct {
		name   string
		rows   []*stages.Upstream
		params stages.Params
		want   [][]string // labels of each row
	}{
		{"model names", []*stages.Upstream{keyedRow("gpt4o", gpt4o), keyedRow("llama-3.1-70b", llama), keyedRow("other", gpt4o)}, nil,
			[][]string{{"gpt-4o-2024-08-06"}, {"llama-3.1-70b"}, {"other"}}},
		{"labels win", []*stages.Upstream{keyedRow("gpt4o", gpt4o), keyedRow("llama", llama)},
			stages.Params{"labels": map[string]string{"gpt-4o-2024-08-06": "GPT-4o", "llama": "Llama"}},
			[][]string{{"GPT-4o"}, {"Llama"}}},
		{"numbers ascending", []*stages.Upstream{keyedRow("10", nil), keyedRow("3", nil), keyedRow("1.5", nil)}, nil,
			[][]string{{"1.5"}, {"3"}, {"10"}}},
		{"row_order first, then as given", []*stages.Upstream{keyedRow("a", nil), keyedRow("b", nil), keyedRow("c", nil)},
			stages.Params{"row_order": []string{"c"}}, [][]string{{"c"}, {"a"}, {"b"}}},
		{"first dimension first", []*stages.Upstream{keyedRow("x/2", nil), keyedRow("y/1", nil), keyedRow("x/1", nil)},
			stages.Params{"row_dims": []string{"a", "b"}, "row_order": []string{"y"}}, [][]string{{"y", "1"}, {"x", "1"}, {"x", "2"}}},
		{"a dimension not named model keeps its value", []*stages.Upstream{keyedRow("gpt4o/high", gpt4o)},
			stages.Params{"row_dims": []string{"m", "s"}}, [][]string{{"gpt4o", "high"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := stages.Params{"rows": tc.rows, "columns": []*stages.Upstream{aggregate("stage.insight_score.novelty", "")}}
			for k, v := range tc.params {
				p[k] = v
			}
			tab, _, err := layoutTable(&stages.Instance{Address: "report.t", Params: stages.WithDefaults(reportType{}, p)})
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			for _, r := range tab.rows {
				got = append(got, r.labels)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rows %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFormatNumber: digits, a printf format, never "-0".
func TestFormatNumber(t *testing.T) {
	tests := []struct {
		printf string
		digits int
		v      float64
		want   string
	}{
		{"", 3, 2.0 / 3, "0.667"}, {"", 3, -0.00001, "0.000"}, {"", 0, 41.6, "42"}, {"", 2, -0.5, "-0.50"},
		{"%.1f%%", 0, 61.44, "61.4%"}, {"%.1e", 0, -0.00001, "-1.0e-05"}, {"%.1f", 0, -0.01, "0.0"},
	}
	for _, tc := range tests {
		if got := formatNumber(&metric{printf: tc.printf}, tc.v, tc.digits); got != tc.want {
			t.Errorf("formatNumber(%q, %d, %g) = %q, want %q", tc.printf, tc.digits, tc.v, got, tc.want)
		}
	}
}

// TestReportPivotShapes: a pivot of the only dimension gives one row with a
// column per value (models side by side); a combination no row instance has
// is n/a with a note saying so.
func TestReportPivotShapes(t *testing.T) {
	tests := []struct {
		name   string
		keys   []string
		dims   []string
		want   string
		header string
	}{
		{"only dimension", []string{"a", "b"}, []string{"model"},
			"| insight_score.novelty (a) | insight_score.novelty (b) |\n|---:|---:|\n| 0.500 | 0.500 |\n", "model"},
		{"a combination missing", []string{"a/x", "a/y", "b/x"}, []string{"m", "s"},
			"| m | insight_score.novelty (x) | insight_score.novelty (y) |\n|---|---:|---:|\n| a | 0.500 | 0.500 |\n| b | 0.500 | n/a[^1] |\n", "s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rows, cols []*stages.Upstream
			outputs := map[string][]byte{}
			for _, k := range tc.keys {
				rows = append(rows, keyedRow(k, nil))
				c := aggregate("stage.insight_score.novelty", k)
				cols = append(cols, c)
				outputs[c.Address] = score(t, stages.Score{Value: 0.5, Count: 2})
			}
			n, in := layoutCase(t, "p", stages.Params{"rows": rows, "columns": cols, "row_dims": tc.dims, "pivot": tc.header}, outputs)
			md := render(t, n, in).Files["p.md"]
			if !strings.Contains(md, "# p\n\n"+tc.want+"\n") {
				t.Errorf("markdown:\n%s\nwant the table\n%s", md, tc.want)
			}
			if tc.name == "a combination missing" && !strings.Contains(md, "[^1]: insight_score.novelty (y), b: no row instance has these values.\n") {
				t.Errorf("markdown lacks the note:\n%s", md)
			}
		})
	}
}

// TestReportLabelledScoreNodes: a column instance with several labelled
// aggregate nodes (coverage_score: overall, by domain, ...) gives a column
// per label, each cell reading its own node; an unlabelled pair is refused.
func TestReportLabelledScoreNodes(t *testing.T) {
	groups := func(key string) *stages.Upstream {
		return &stages.Upstream{Address: `stage.coverage_score.review["` + key + `"]`, Type: "coverage_score", Key: key,
			Nodes: []stages.NodeInfo{{Slot: 0, Label: "overall"}, {Slot: 1, Label: "domain=ai"}}}
	}
	cols := []*stages.Upstream{groups("scholareval"), groups("baseline")}
	params := stages.WithDefaults(reportType{}, stages.Params{
		"rows": cols, "columns": cols, "formats": []string{"csv"},
		"labels": map[string]string{"coverage_score.review/overall": "Overall", "coverage_score.review/domain=ai": "AI"},
	})
	nodes, err := reportType{}.Layout(&stages.Instance{Address: "report.coverage", Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes[0].Deps) != 4 {
		t.Fatalf("%d deps, want one per node (4)", len(nodes[0].Deps))
	}
	outs := [][]byte{
		score(t, stages.Score{Value: 3.5, Count: 10}), score(t, stages.Score{Value: 3.25, Count: 4}),
		score(t, stages.Score{Value: 2.5, Count: 10}), score(t, stages.Score{Value: 2, Count: 4}),
	}
	files := render(t, nodes[0], inputs(t, params, nodes[0], outs))
	want := "row,coverage_score.review/overall,coverage_score.review/overall_count,coverage_score.review/overall_missing,coverage_score.review/overall_dropped,coverage_score.review/overall_synthetic," +
		"coverage_score.review/domain=ai,coverage_score.review/domain=ai_count,coverage_score.review/domain=ai_missing,coverage_score.review/domain=ai_dropped,coverage_score.review/domain=ai_synthetic,synthetic\n" +
		"scholareval,3.5,10,0,0,false,3.25,4,0,0,false,false\n" +
		"baseline,2.5,10,0,0,false,2,4,0,0,false,false\n"
	if got := files.Files["coverage.csv"]; got != want {
		t.Errorf("coverage.csv:\n%s\nwant:\n%s", got, want)
	}

	// Options for a label this data does not give (a discipline the ideas
	// do not cover) are no mistake; a misspelt stage still warns.
	shared := stages.WithDefaults(reportType{}, stages.Params{
		"rows": cols, "columns": cols, "formats": []string{"csv"},
		"labels": map[string]string{"coverage_score.review/domain=neuro": "Neuro", "coverage_score.reveiw/domain=ai": "AI"},
		"better": map[string]string{"coverage_score.review/domain=neuro": "higher"},
	})
	var warned []string
	for _, w := range (reportType{}).LayoutWarnings(&stages.Instance{Address: "report.coverage", Params: shared}) {
		warned = append(warned, w.Error())
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], `labels: "coverage_score.reveiw/domain=ai" names no column stage`) {
		t.Errorf("warnings %q; want the misspelt stage's only", warned)
	}

	unlabelled := &stages.Upstream{Address: "stage.x.y", Type: "x", Nodes: []stages.NodeInfo{{Slot: 0}, {Slot: 1}}}
	_, err = reportType{}.Layout(&stages.Instance{Address: "report.bad", Params: stages.WithDefaults(reportType{},
		stages.Params{"rows": []*stages.Upstream{rowInstance("a")}, "columns": []*stages.Upstream{unlabelled}})})
	if err == nil || !strings.Contains(err.Error(), "or with several labelled ones") {
		t.Errorf("unlabelled nodes: %v", err)
	}
}
