package report_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

var updateShipped = flag.Bool("update-shipped", false, "rewrite the shipped-table goldens in testdata/")

// TestShippedTablesInThePapersShape lays out the shipped experiments'
// reports of the papers' tables (IdeaBench Table 1 and Table 2, the
// LiveIdeaBench board, ScholarEval's coverage) exactly as their files
// declare them, fills them with made-up scores that depend only on each
// column instance's address (never on the mock's answers, so a change of
// seed elsewhere leaves them be), and compares Markdown and LaTeX with
// goldens: the papers' labels, row names, column sets and marks.
func TestShippedTablesInThePapersShape(t *testing.T) {
	runs := shippedRuns(t)
	for _, tc := range []struct{ golden, file, report string }{
		{"shipped_table1", "ideabench/main.hcl", "report.table1"},
		{"shipped_table2", "ideabench/ablation_refs.hcl", "report.table2"},
		{"shipped_board", "liveideabench/leaderboard.hcl", "report.leaderboard"},
		{"shipped_coverage", "scholareval/coverage.hcl", "report.coverage"},
		{"shipped_coverage_breakdown", "scholareval/coverage.hcl", "report.coverage_breakdown"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			exp, diags := config.Load("../../experiments/"+tc.file, config.Options{Vars: runs[tc.file]})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			g, diags := engine.Build(exp)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			params := map[string]stages.Params{}
			var inst *engine.Instance
			for _, in := range g.Instances {
				params[in.Address] = in.Params
				if in.Address == tc.report {
					inst = in
				}
			}
			if inst == nil {
				t.Fatalf("%s has no %s", tc.file, tc.report)
			}
			// coverage_score's labelled nodes (overall, domain=ai, ...)
			// appear as a run expands it: give each the labels the report names.
			// In the order the file lists them, as the stage lays them out.
			text, err := os.ReadFile("../../experiments/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range inst.Params.Inputs("columns") {
				if len(u.Nodes) == 0 && u.Type == "coverage_score" {
					seen := map[string]bool{}
					name, _, _ := strings.Cut(strings.TrimPrefix(u.Address, "stage.coverage_score."), "[")
					for _, m := range regexp.MustCompile(`"coverage_score\.`+name+`/([^"]+)"`).FindAllStringSubmatch(string(text), -1) {
						if !seen[m[1]] {
							seen[m[1]] = true
							u.Nodes = append(u.Nodes, stages.NodeInfo{Label: m[1]})
						}
					}
				}
			}
			typ, _ := stages.Lookup("report")
			nodes, err := typ.Layout(&stages.Instance{Address: inst.Address, Params: inst.Params})
			if err != nil {
				t.Fatal(err)
			}
			var in []stages.In
			for _, d := range nodes[0].Deps {
				idx := d.Index
				for _, u := range inst.Params.Inputs(d.Input) {
					if idx < len(u.Nodes) {
						n := u.Nodes[idx]
						in = append(in, stages.In{Dep: d, Node: n, From: u, Output: madeUp(t, u, n, params[u.Address])})
						break
					}
					idx -= len(u.Nodes)
				}
			}
			w, err := nodes[0].Prepare(in)
			if err != nil {
				t.Fatal(err)
			}
			b, err := w.Compute()
			if err != nil {
				t.Fatal(err)
			}
			var out stages.Files
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(tc.report, "report.")
			for _, ext := range []string{".md", ".tex"} {
				got, ok := out.Files[name+ext]
				if !ok {
					t.Fatalf("no %s%s", name, ext)
				}
				path := filepath.Join("testdata", tc.golden+ext)
				if *updateShipped {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -run TestShippedTablesInThePapersShape -update-shipped)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name+ext, path, got, want)
				}
			}
		})
	}
}

// unit is a number in [0, 1) fixed by the text.
func unit(s string) float64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return float64(h.Sum64()%10000) / 10000
}

// madeUp is a score for node n of column instance u, in the shape its
// stage type writes: per-item values over six targets (five for a Low
// row, whose sixth target has no filtered references), the value their
// statistic (the stage's summary), integral ratings for overlap, 1-5
// rubric scores for coverage; a LiveIdeaBench score has no per-item values
// the report can resample but its own interval over keywords, as the
// stage computes it.
func madeUp(t *testing.T, u *stages.Upstream, n stages.NodeInfo, p stages.Params) []byte {
	t.Helper()
	id := u.Address + "#" + n.Label
	s := stages.Score{Extra: map[string]float64{}, PerItem: map[string]float64{}}
	if u.Type == "liveideabench_score" {
		s.Value, s.Count = 4+5*unit(id), 18
		w := 0.1 + 0.3*unit(id+"ci")
		s.Extra = map[string]float64{"ci_low": s.Value - w, "ci_high": s.Value + w, "ci_level": 0.95, "resamples": 1000}
		return mustJSON(t, s)
	}
	items := 6
	if strings.HasSuffix(u.Key, " low") {
		items = 5
	}
	var vals []float64
	for i := 1; i <= items; i++ {
		it := fmt.Sprintf("t%d", i)
		x := unit(id + it)
		var v float64
		switch u.Type {
		case "overlap_score":
			v = float64(5 + int(4*unit(id))) // the same rating for most targets: a whole p80
			if i == 1 {
				v -= 2
			}
		case "coverage_score":
			v = float64(1 + int(5*x))
		case "insight_score":
			v = float64(int(4*x)) / 3
		default:
			v = 0.5 + 0.1*x
		}
		s.PerItem[it] = v
		vals = append(vals, v)
	}
	s.Count = len(vals)
	switch p.String("summary") {
	case "p80":
		s.Value = stats.PercentileStat(80)(vals)
	case "median":
		s.Value = stats.PercentileStat(50)(vals)
	default:
		s.Value = stats.MeanStat(vals)
	}
	return mustJSON(t, s)
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
