package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

// plotCase lists a plot's inputs by role, each with its score (nil: the
// instance failed).
type plotInputCase struct {
	role  string
	block string
	key   string
	score *stages.Score
}

func ci(v, lo, hi float64, n int) *stages.Score {
	return &stages.Score{Value: v, Count: n, Extra: map[string]float64{"ci_low": lo, "ci_high": hi}}
}

func val(v float64, n int) *stages.Score { return &stages.Score{Value: v, Count: n} }

// runPlot lays a plot out, feeds it the scores, and returns its files. The
// inputs whose instance addresses are in synthetic rest on the mock.
func runPlot(t *testing.T, params stages.Params, inputs []plotInputCase, synthetic ...string) (*stages.Files, *Figure) {
	t.Helper()
	byRole := map[string][]*stages.Upstream{}
	for _, c := range inputs {
		byRole[c.role] = append(byRole[c.role], aggregate(c.block, c.key))
	}
	for role, ups := range byRole {
		params[role] = ups
	}
	inst := &stages.Instance{Address: "stage.plot.fig", Params: stages.WithDefaults(plotType{}, params)}
	nodes, err := plotType{}.Layout(inst)
	if err != nil {
		t.Fatalf("layout: %v", err)
	}
	if len(nodes) != 1 || !nodes[0].WritesFiles || len(nodes[0].Deps) != len(inputs) {
		t.Fatalf("layout: %d nodes, want 1 writing files with %d deps", len(nodes), len(inputs))
	}
	// The engine resolves deps in order; give each its upstream and output.
	ups := map[string][]*stages.Upstream{}
	for role, u := range byRole {
		ups[role] = u
	}
	var in []stages.In
	next := map[string]int{}
	for _, d := range nodes[0].Deps {
		u := ups[d.Input][next[d.Input]]
		next[d.Input]++
		var out []byte
		for _, c := range inputs {
			if c.role == d.Input && aggregate(c.block, c.key).Address == u.Address && c.score != nil {
				out = score(t, *c.score)
			}
		}
		x := stages.In{Dep: d, From: u, Output: out}
		for _, a := range synthetic {
			if a == u.Address && out != nil {
				x.Provenance = mockProvenance
			}
		}
		in = append(in, x)
	}
	w, err := nodes[0].Prepare(in)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	raw, err := w.Compute()
	if err != nil {
		t.Fatalf("compute: %v", err)
	}
	var files stages.Files
	if err := json.Unmarshal(raw, &files); err != nil {
		t.Fatal(err)
	}
	var fig Figure
	if err := json.Unmarshal([]byte(files.Files["fig.json"]), &fig); err != nil {
		t.Fatalf("fig.json: %v", err)
	}
	return &files, &fig
}

// fig4 is IdeaBench's Fig. 4: Insight Score vs number of references,
// filtered and unfiltered as two stages, CIs on the filtered arm.
func fig4Inputs() []plotInputCase {
	return []plotInputCase{
		{"data", "stage.insight_score.filtered", "1", ci(0.42, 0.35, 0.50, 40)},
		{"data", "stage.insight_score.filtered", "10", ci(0.61, 0.55, 0.66, 40)},
		{"data", "stage.insight_score.filtered", "3", ci(0.55, 0.48, 0.60, 40)},
		{"data", "stage.insight_score.all", "1", val(0.40, 40)},
		{"data", "stage.insight_score.all", "3", val(0.47, 40)},
		{"data", "stage.insight_score.all", "10", nil}, // failed
	}
}

func TestPlotFigures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params stages.Params
		inputs []plotInputCase
	}{
		{"line_fig4", stages.Params{"kind": "line", "title": "Insight Score vs references", "x_label": "references", "y_label": "Insight Score"}, fig4Inputs()},
		{"bar", stages.Params{"kind": "bar", "x": "key[0]", "series": "key[1]"}, []plotInputCase{
			{"data", "stage.insight_score.novelty", "gpt-4o/low", ci(0.6, 0.5, 0.7, 10)},
			{"data", "stage.insight_score.novelty", "gpt-4o/high", val(0.7, 10)},
			{"data", "stage.insight_score.novelty", "llama/low", val(0.4, 10)},
			{"data", "stage.insight_score.novelty", "llama/high", ci(0.5, 0.45, 0.58, 10)},
		}},
		{"heatmap_fig3", stages.Params{"kind": "heatmap", "x": "key[1]", "series": "key[0]", "title": "Insight Score by model and domain"}, []plotInputCase{
			{"data", "stage.insight_score.novelty", "gpt-4o/biology", val(0.61, 10)},
			{"data", "stage.insight_score.novelty", "gpt-4o/physics", val(0.52, 10)},
			{"data", "stage.insight_score.novelty", "llama/biology", ci(0.33, 0.3, 0.36, 10)},
			{"data", "stage.insight_score.novelty", "llama/physics", &stages.Score{Missing: 10}}, // nothing scored
		}},
		{"scatter_fig5", stages.Params{"kind": "scatter", "x_label": "originality", "y_label": "feasibility"}, []plotInputCase{
			{"data", "stage.liveideabench_score.originality", "a", ci(7.1, 6.8, 7.4, 100)},
			{"data", "stage.liveideabench_score.originality", "b", val(6.0, 100)},
			{"data", "stage.liveideabench_score.originality", "c", val(8.0, 100)},
			{"data", "stage.liveideabench_score.originality", "d", val(5.0, 100)},
			{"y", "stage.liveideabench_score.feasibility", "a", val(6.5, 100)},
			{"y", "stage.liveideabench_score.feasibility", "b", ci(7.0, 6.6, 7.3, 100)},
			{"y", "stage.liveideabench_score.feasibility", "c", val(5.0, 100)},
			{"y", "stage.liveideabench_score.feasibility", "d", val(4.0, 100)}, // dominated by a, b, c
			{"size", "stage.liveideabench_score.fluency", "a", val(3, 100)},
			{"size", "stage.liveideabench_score.fluency", "b", val(9, 100)},
			{"size", "stage.liveideabench_score.fluency", "c", val(6, 100)},
			{"size", "stage.liveideabench_score.fluency", "d", val(1, 100)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, _ := runPlot(t, tc.params, tc.inputs)
			golden(t, "plot_"+tc.name+".json", files.Files["fig.json"])
			svg := files.Files["fig.svg"]
			checkSVG(t, svg)
			// Deterministic: the same scores draw the same bytes.
			again, _ := runPlot(t, tc.params, tc.inputs)
			if again.Files["fig.svg"] != svg || !bytes.Equal(again.Binary["fig.png"], files.Binary["fig.png"]) {
				t.Error("two renders of the same figure differ")
			}
			img, err := png.Decode(bytes.NewReader(files.Binary["fig.png"]))
			if err != nil {
				t.Fatalf("png: %v", err)
			}
			// 16 cm x 10 cm at 144 dpi.
			if b := img.Bounds(); b.Dx() != 907 || b.Dy() != 567 {
				t.Errorf("png is %dx%d, want 907x567", b.Dx(), b.Dy())
			}
		})
	}
}

// checkSVG parses an SVG and checks that it embeds its fonts.
func checkSVG(t *testing.T, svg string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	elems := map[string]int{}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("svg is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			elems[se.Name.Local]++
		}
	}
	if elems["svg"] != 1 || elems["text"] == 0 || elems["path"] == 0 {
		t.Errorf("svg elements %v: want one svg, texts and paths", elems)
	}
	if !strings.Contains(svg, "@font-face") || !strings.Contains(svg, "base64,") {
		t.Error("svg does not embed its fonts (@font-face with a base64 font)")
	}
}

// TestPlotFig4Structure asserts the exact series, points and error bars of
// IdeaBench Fig. 4, and that the legend is drawn.
func TestPlotFig4Structure(t *testing.T) {
	files, fig := runPlot(t, stages.Params{"kind": "line"}, fig4Inputs())
	if len(fig.Series) != 2 || fig.Series[0].Name != "insight_score.filtered" || fig.Series[1].Name != "insight_score.all" {
		t.Fatalf("series %+v", fig.Series)
	}
	var xs []float64
	bars := 0
	for _, p := range fig.Series[0].Points {
		xs = append(xs, p.X)
		if p.Lo != nil {
			bars++
		}
	}
	if len(xs) != 3 || xs[0] != 1 || xs[1] != 3 || xs[2] != 10 || bars != 3 {
		t.Errorf("filtered: x %v (want numeric 1, 3, 10), %d error bars (want 3)", xs, bars)
	}
	if len(fig.Series[1].Points) != 2 || len(fig.XNames) != 0 {
		t.Errorf("all: %d points (want 2: 10 failed), x names %v (want none: x is numeric)", len(fig.Series[1].Points), fig.XNames)
	}
	if len(fig.Omitted) != 1 || !strings.Contains(fig.Omitted[0], `stage.insight_score.all["10"]: not computed`) {
		t.Errorf("omitted %v", fig.Omitted)
	}
	for _, name := range []string{"insight_score.filtered", "insight_score.all"} {
		if !strings.Contains(files.Files["fig.svg"], ">"+name+"<") {
			t.Errorf("svg has no legend entry %q", name)
		}
	}
}

func TestPlotPareto(t *testing.T) {
	pts := []Point{{X: 7.1, Y: 6.5}, {X: 6, Y: 7}, {X: 8, Y: 5}, {X: 5, Y: 4}, {X: 8, Y: 5}}
	got := paretoFront(pts)
	// d (5, 4) is dominated; the two equal points (8, 5) dominate neither other.
	want := []int{1, 0, 2, 4}
	if len(got) != len(want) {
		t.Fatalf("front %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("front %v, want %v", got, want)
		}
	}
}

func TestPlotParamErrors(t *testing.T) {
	one := []*stages.Upstream{aggregate("stage.insight_score.novelty", "gpt-4o")}
	for _, tc := range []struct {
		name   string
		params stages.Params
		param  string
		msg    string
	}{
		{"kind", stages.Params{"kind": "pie", "data": one}, "kind", `kind = "pie": use one of "line", "bar", "scatter", "heatmap"`},
		{"x", stages.Params{"data": one, "x": "key[a]"}, "x", `x = "key[a]": use "key", "key[N]"`},
		{"part", stages.Params{"data": one, "x": "key[1]"}, "x", `key "gpt-4o" has 1 part(s) split on "/", no part 1`},
		{"scatter_y", stages.Params{"kind": "scatter", "data": one}, "y", "a scatter needs y"},
		{"line_y", stages.Params{"data": one, "y": one}, "y", `y is for kind = "scatter" only`},
		{"format", stages.Params{"data": one, "formats": []string{"pdf"}}, "formats", `unknown format "pdf"`},
		{"no_data", stages.Params{"data": []*stages.Upstream{}}, "data", "data is empty"},
		{"items", stages.Params{"data": []*stages.Upstream{rowInstance("gpt-4o")}}, "data", "has 2 nodes"},
		{"scatter_match", stages.Params{"kind": "scatter", "data": one, "y": []*stages.Upstream{aggregate("stage.s.y", "other")}}, "y", `no instance has key "gpt-4o"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := &stages.Instance{Address: "stage.plot.fig", Params: stages.WithDefaults(plotType{}, tc.params)}
			_, err := plotType{}.Layout(inst)
			var pe *stages.ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v (param %v), want a ParamError on %s containing %q", err, pe, tc.param, tc.msg)
			}
		})
	}
}

func TestPlotDuplicatePoint(t *testing.T) {
	inputs := []plotInputCase{
		{"data", "stage.insight_score.novelty", "gpt-4o/low", val(0.6, 10)},
		{"data", "stage.insight_score.novelty", "llama/low", val(0.4, 10)},
	}
	byRole := []*stages.Upstream{aggregate(inputs[0].block, inputs[0].key), aggregate(inputs[1].block, inputs[1].key)}
	// x = key[1] with one series: both instances land at x = "low".
	inst := &stages.Instance{Address: "stage.plot.fig", Params: stages.WithDefaults(plotType{}, stages.Params{"data": byRole, "x": "key[1]", "series": ""})}
	nodes, err := plotType{}.Layout(inst)
	if err != nil {
		t.Fatal(err)
	}
	in := []stages.In{{Dep: nodes[0].Deps[0], From: byRole[0], Output: score(t, *inputs[0].score)}, {Dep: nodes[0].Deps[1], From: byRole[1], Output: score(t, *inputs[1].score)}}
	w, err := nodes[0].Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Compute(); err == nil || !strings.Contains(err.Error(), `two points at x = "low"`) {
		t.Errorf("error %v, want two points at x = \"low\"", err)
	}
}

// TestPlotHeatmapFromExtras: value = "domain=*" draws a cell per extra
// value so named, x the domain, a row per model; a model without such
// values is omitted with the reason.
func TestPlotHeatmapFromExtras(t *testing.T) {
	dom := func(v map[string]float64) *stages.Score { return &stages.Score{Value: 6, Count: 10, Extra: v} }
	_, fig := runPlot(t, stages.Params{"kind": "heatmap", "value": "domain=*", "series": "key"}, []plotInputCase{
		{"data", "stage.liveideabench_score.originality", "model-a", dom(map[string]float64{"domain=Physics": 6.5, "domain=Biology": 5.25, "ideas": 40})},
		{"data", "stage.liveideabench_score.originality", "model-b", dom(map[string]float64{"domain=Physics": 7, "domain=Biology": 4})},
		{"data", "stage.liveideabench_score.originality", "model-c", dom(map[string]float64{"ideas": 40})},
	})
	if strings.Join(fig.XNames, ",") != "Biology,Physics" || len(fig.Series) != 2 {
		t.Fatalf("x %v, %d series; want Biology,Physics and 2 rows", fig.XNames, len(fig.Series))
	}
	got := map[string]float64{}
	for _, s := range fig.Series {
		for _, p := range s.Points {
			got[s.Name+"/"+p.Label] = p.Y
		}
	}
	want := map[string]float64{"model-a/Biology": 5.25, "model-a/Physics": 6.5, "model-b/Biology": 4, "model-b/Physics": 7}
	if len(got) != len(want) {
		t.Fatalf("cells %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("cell %s = %v, want %v", k, got[k], v)
		}
	}
	if len(fig.Omitted) != 1 || !strings.Contains(fig.Omitted[0], `model-c"]: the score has no extra value named domain=*`) {
		t.Errorf("omitted %v", fig.Omitted)
	}
}

// TestPlotMarksSyntheticPoints: a point is synthetic when the score it
// shows rests on the mock, as its input's provenance says; the figure counts
// them and its title says how many.
func TestPlotMarksSyntheticPoints(t *testing.T) {
	inputs := []plotInputCase{
		{"data", "stage.insight_score.novelty", "gpt-4o/low", val(0.6, 10)},
		{"data", "stage.insight_score.novelty", "gpt-4o/high", val(0.7, 10)},
		{"data", "stage.insight_score.novelty", "llama/low", val(0.4, 10)},
		{"data", "stage.insight_score.novelty", "llama/high", val(0.5, 10)},
	}
	params := func() stages.Params { return stages.Params{"kind": "bar", "x": "key[0]", "series": "key[1]"} }
	_, fig := runPlot(t, params(), inputs, `stage.insight_score.novelty["llama/high"]`)
	var marked []string
	for _, ser := range fig.Series {
		for _, p := range ser.Points {
			if p.Synthetic {
				marked = append(marked, ser.Name+"/"+p.Label)
			}
		}
	}
	if strings.Join(marked, ",") != "high/llama" || fig.Points != 4 || fig.SyntheticPoints != 1 || !fig.Synthetic ||
		fig.SyntheticNote() != "1 of 4 points SYNTHETIC: mock provider" {
		t.Errorf("marked %v, figure %d of %d synthetic, note %q", marked, fig.SyntheticPoints, fig.Points, fig.SyntheticNote())
	}
	all := []string{}
	for _, c := range inputs {
		all = append(all, aggregate(c.block, c.key).Address)
	}
	if _, fig := runPlot(t, params(), inputs, all...); fig.SyntheticNote() != "SYNTHETIC: mock provider" {
		t.Errorf("every point synthetic: note %q", fig.SyntheticNote())
	}
	if _, fig := runPlot(t, params(), inputs); fig.Synthetic || fig.SyntheticNote() != "" {
		t.Errorf("no point synthetic: %+v", fig)
	}
}
