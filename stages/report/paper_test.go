package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// perItemScore is a score of stat over per-item values, as the ideabench
// aggregates write them: Value the statistic, PerItem each target's value.
func perItemScore(t *testing.T, stat func([]float64) float64, items map[string]float64) []byte {
	t.Helper()
	vals := itemValues(items, nil) // in item order: a float sum depends on it
	return score(t, stages.Score{Value: stat(vals), Count: len(items), PerItem: items, Extra: map[string]float64{}})
}

// paperTable1 is IdeaBench Table 1 in the paper's shape: three models by
// Low / High resources; the Low rows are over 4 targets (t5 has no
// filtered references), the High rows over 5; semantic similarity (p80),
// idea overlap (p80 of 1-10 ratings: integral), novelty (mean), with the
// upper limit stated in a note (notes_from), not a column.
func paperTable1(t *testing.T, extra stages.Params) (stages.Node, []stages.In) {
	t.Helper()
	models := []string{"gpt35", "gpt4o_mini", "gpt4o"}
	var rows, cols []*stages.Upstream
	outputs := map[string][]byte{}
	p80 := stats.PercentileStat(80)
	for i, m := range models {
		for si, sc := range []string{"low", "high"} {
			key := m + " " + sc
			rows = append(rows, rowInstance(key))
			n := 4
			if sc == "high" {
				n = 5
			}
			sim, ov, nov := map[string]float64{}, map[string]float64{}, map[string]float64{}
			for j := 1; j <= n; j++ {
				it := fmt.Sprintf("t%d", j)
				sim[it] = 0.55 + 0.01*float64(i+j) + 0.004*float64(si)
				ov[it] = float64(6 + i + si) // the same rating for every target: an integral p80
				nov[it] = float64((i*3+j+si)%4) / 3
			}
			for _, c := range []struct {
				stage string
				stat  func([]float64) float64
				items map[string]float64
			}{{"stage.similarity_score.semantic_similarity", p80, sim}, {"stage.overlap_score.idea_overlap", p80, ov}, {"stage.insight_score.novelty", stats.MeanStat, nov}} {
				u := aggregate(c.stage, key)
				cols = append(cols, u)
				outputs[u.Address] = perItemScore(t, c.stat, c.items)
			}
		}
	}
	upper := aggregate("stage.similarity_score.upper_limit", "")
	outputs[upper.Address] = perItemScore(t, stats.MeanStat, map[string]float64{"t1": 0.71, "t2": 0.72, "t3": 0.73, "t4": 0.70, "t5": 0.74})
	params := stages.Params{
		"rows": rows, "columns": cols, "notes_from": []*stages.Upstream{upper},
		"formats":       []string{"markdown", "csv", "json", "latex"},
		"title":         "Table 1: Main benchmark results",
		"row_dims":      []string{"model", "scenario"},
		"key_separator": " ",
		"row_order":     []string{"low", "high"},
		"item_name":     "targets",
		"labels": map[string]string{
			"model": "Model", "scenario": "Resource", "low": "Low", "high": "High",
			"gpt35": "GPT-3.5 Turbo", "gpt4o_mini": "GPT-4o Mini", "gpt4o": "GPT-4o",
			"similarity_score.semantic_similarity": "Semantic Similarity", "overlap_score.idea_overlap": "Idea Overlap",
			"insight_score.novelty": "Novelty Insight Score", "similarity_score.upper_limit": "Upper limit (mean BERTScore of each abstract against its own idea)",
		},
		"better": map[string]string{"similarity_score.semantic_similarity": "higher", "overlap_score.idea_overlap": "higher", "insight_score.novelty": "higher"},
	}
	for k, v := range extra {
		params[k] = v
	}
	params = stages.WithDefaults(reportType{}, params)
	nodes, err := reportType{}.Layout(&stages.Instance{Address: "report.table1", Params: params})
	if err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	for _, d := range nodes[0].Deps {
		idx := d.Index
		for _, u := range params.Inputs(d.Input) {
			if idx < len(u.Nodes) {
				outs = append(outs, outputs[u.Address])
				break
			}
			idx -= len(u.Nodes)
		}
	}
	return nodes[0], inputs(t, params, nodes[0], outs)
}

// TestPaperTable1: the shapes a paper takes. common_items scores every
// row on the 4 targets all rows have, said once; counts = "column" gives
// an N per row and no count footnotes; intervals are bootstrapped by
// default over the targets; overlap prints as integers; the upper limit
// is a note; headers carry the better direction's arrow.
func TestPaperTable1(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra stages.Params
		want  []string // in the Markdown
		not   []string
	}{
		{"table1_common", stages.Params{"common_items": true, "excluded_because": "without filtered references", "intervals": true},
			[]string{"- Each value is over the 4 targets every row has; 1 without filtered references excluded.",
				"| Semantic Similarity ↑ |", "In brackets: 95% bootstrap intervals [low, high] over the targets (1000 resamples",
				"- Upper limit (mean BERTScore of each abstract against its own idea): 0.720 [", ", over 5 targets."},
			[]string{"[^1]", "each value is over"}},
		{"table1_ncolumn", stages.Params{"counts": "column", "intervals": false},
			[]string{"| Model | Resource | N | Semantic Similarity ↑ |", "| GPT-3.5 Turbo | Low | 4 |", "| | High | 5 |", "- N: the targets each row's values are over."},
			[]string{"[^1]", "[0.", "bootstrap"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, in := paperTable1(t, tc.extra)
			out := render(t, n, in)
			for _, ext := range []string{".md", ".tex", ".json"} {
				golden(t, tc.name+ext, out.Files["table1"+ext])
			}
			md := out.Files["table1.md"]
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("markdown lacks %q:\n%s", w, md)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(md, w) {
					t.Errorf("markdown has %q:\n%s", w, md)
				}
			}
			// Overlap is integral in every row: printed without decimals.
			for _, l := range strings.Split(md, "\n") {
				if strings.HasPrefix(l, "| GPT") || strings.HasPrefix(l, "| |") {
					cells := strings.Split(l, " | ")
					ov := strings.Fields(strings.Trim(cells[len(cells)-2], "*<u>/"))[0]
					if strings.Contains(ov, ".") {
						t.Errorf("overlap %q printed with decimals in %q", ov, l)
					}
				}
			}
		})
	}
}

func TestInferStatistic(t *testing.T) {
	items := map[string]float64{"a": 1, "b": 2, "c": 3, "d": 10}
	for _, tc := range []struct {
		value float64
		count int
		want  string
	}{{4, 4, "mean"}, {2.5, 4, "median"}, {stats.PercentileStat(80)([]float64{1, 2, 3, 10}), 4, "p80"}, {4.1, 4, ""}, {4, 5, ""}} {
		st := inferStatistic(&stages.Score{Value: tc.value, Count: tc.count, PerItem: items})
		got := ""
		if st != nil {
			got = st.name
		}
		if got != tc.want {
			t.Errorf("value %v over %d: %q, want %q", tc.value, tc.count, got, tc.want)
		}
	}
}
