package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// paperReport is a second report over the scenario, with every table option
// a paper needs that the scenario's keys allow.
const paperReport = `
report "paper" {
  title   = "Insight Score (novelty)"
  rows    = stage.generate_ideas.main
  columns = [stage.insight_score.novelty]
  labels  = { "insight_score.novelty" = "Novelty", "gen-a" = "Generator A" }
  better  = { "insight_score.novelty" = "higher" }
  formats = ["markdown", "csv", "json", "latex"]
}
`

// files returns every file of dir by name.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// TestReportCommandRendersFromTheCacheAlone: `ideaflow report` writes the
// files `run` wrote, byte for byte (provenance aside from its time), without
// a request to the server or an API key; when the cache lacks what a report
// needs it names it, writes nothing and exits 2.
func TestReportCommandRendersFromTheCacheAlone(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	defer srv.Close()
	t.Setenv("REPORT_API_KEY", "sk-report-test")
	dir := t.TempDir()
	exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "REPORT_API_KEY", Generators: []string{"gen-a", "gen-b"}, N: 2, Limit: 5})
	if err := os.WriteFile(filepath.Join(exp, "paper.hcl"), []byte(paperReport), 0o644); err != nil {
		t.Fatal(err)
	}
	ranOut, renderOut := filepath.Join(dir, "ran"), filepath.Join(dir, "rendered")
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", ranOut); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	calls := srv.Count()
	if calls != 2*4*2+2*4 {
		t.Fatalf("the run made %d requests", calls)
	}

	t.Setenv("REPORT_API_KEY", "") // rendering needs no key
	code, stdout, stderr := cli(t, "report", exp, "--cache-dir", cacheDir, "--out", renderOut)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if srv.Count() != calls {
		t.Fatalf("report made %d requests", srv.Count()-calls)
	}
	if strings.Contains(stdout, "computed from cached inputs") {
		t.Errorf("everything was cached, yet:\n%s", stdout)
	}
	ran, rendered := files(t, ranOut), files(t, renderOut)
	var names []string
	for n := range ran {
		names = append(names, n)
	}
	sort.Strings(names)
	want := []string{"paper.csv", "paper.json", "paper.md", "paper.provenance.json", "paper.tex",
		"report.html", "table1.csv", "table1.md", "table1.provenance.json"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("the run wrote %v, want %v", names, want)
	}
	for _, n := range names {
		if strings.Count(stdout, "wrote "+filepath.Join(renderOut, n)+"\n") != 1 {
			t.Errorf("report does not say it wrote %s:\n%s", n, stdout)
		}
		if n == "report.html" {
			// The page's run summary differs (nothing ran); its tables
			// come from the files compared here.
			if !strings.Contains(rendered[n], "<html") {
				t.Errorf("report wrote no page: %.200s", rendered[n])
			}
			continue
		}
		if !strings.HasSuffix(n, ".provenance.json") {
			if rendered[n] != ran[n] {
				t.Errorf("%s differs from the run's:\n%s\n--- run\n%s", n, rendered[n], ran[n])
			}
			continue
		}
		var a, b engine.Provenance
		if err := json.Unmarshal([]byte(rendered[n]), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(ran[n]), &b); err != nil {
			t.Fatal(err)
		}
		a.Written = b.Written
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: %+v, the run's %+v", n, a, b)
		}
	}
	if md := ran["paper.md"]; !strings.Contains(md, "| Generator A | ") || !strings.Contains(md, "| | Novelty ↑ |") {
		t.Errorf("paper.md lacks its labels:\n%s", md)
	}

	// n = 3 needs a third sample per kept target and generator.
	missing := filepath.Join(dir, "missing")
	code, stdout, stderr = cli(t, "report", exp, "--cache-dir", cacheDir, "--out", missing, "-var", "n=3")
	if code != exitBadInput {
		t.Fatalf("report with calls missing: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, r := range []string{"paper", "table1"} {
		if want := "not rendered: report." + r + ` needs 8 model node(s) not in the cache, e.g. stage.generate_ideas.main["gen-`; !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stderr, "2 report(s) not rendered: the cache ("+cacheDir+") lacks results they need; run the experiment") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if srv.Count() != calls {
		t.Fatalf("report made %d requests", srv.Count()-calls)
	}
	if got := files(t, missing); len(got) != 0 {
		t.Errorf("wrote %v", got)
	}

	// A label edited after the run: the report is computed from the cached
	// scores, and said so.
	edited := strings.Replace(paperReport, `"Generator A"`, `"Model A"`, 1)
	if err := os.WriteFile(filepath.Join(exp, "paper.hcl"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = cli(t, "report", exp, "--cache-dir", cacheDir, "--out", renderOut)
	if code != 0 || !strings.Contains(stdout, "computed from cached inputs (not in the cache; not saved): report.paper (1)\n") {
		t.Fatalf("report after an edit: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if md := files(t, renderOut)["paper.md"]; !strings.Contains(md, "| Model A | ") {
		t.Errorf("paper.md:\n%s", md)
	}
	if srv.Count() != calls {
		t.Fatalf("report made %d requests", srv.Count()-calls)
	}
}

// gridHCL is IdeaBench's Table 2 on the quickstart: a setproduct grid of
// number of references x filtered / unfiltered, laid out with the number of
// references in rows and the mode in columns.
const gridHCL = `
locals {
  arms = { for p in setproduct([1, 3, 10], ["filtered", "all"]) : "${p[1]}-${p[0]}" => { limit = p[0], mode = p[1] } }
}

stage "filter_references" "arms" {
  for_each       = local.arms
  dataset        = dataset.targets
  mode           = each.value.mode
  limit          = each.value.limit
  min_references = 1
}

stage "generate_ideas" "arms" {
  model      = model.generator_a
  references = stage.filter_references.arms
  n          = 2
}

stage "rank_ideas" "arms" {
  ideas   = stage.generate_ideas.arms
  judge   = model.judge
  quality = quality.novelty
}

stage "insight_score" "arms" { ranks = stage.rank_ideas.arms }

report "table2" {
  rows          = stage.generate_ideas.arms
  columns       = [stage.insight_score.arms]
  row_dims      = ["mode", "refs"]
  key_separator = "-"
  pivot         = "mode"
  row_order     = ["filtered"]
  labels        = { "insight_score.arms" = "Novelty", refs = "References", filtered = "Filtered", all = "Unfiltered" }
  formats       = ["markdown", "csv", "latex"]
}
`

// TestReportPivotFromHCL: a pivot written in HCL over setproduct keys lays
// the grid out as the paper does: numbers of references ascending in rows
// (10 after 3, not as text), filtered before unfiltered in columns, the
// stage's label spanning both in LaTeX; CSV keeps the raw keys' parts.
func TestReportPivotFromHCL(t *testing.T) {
	exp := copyQuickstart(t)
	if err := os.WriteFile(filepath.Join(exp, "grid.hcl"), []byte(gridHCL), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := files(t, out)
	md := strings.Split(got["table2.md"], "\n")
	var rows []string
	for _, l := range md {
		if strings.HasPrefix(l, "| ") {
			cells := strings.Split(l, " | ")
			rows = append(rows, strings.TrimPrefix(cells[0], "| "))
		}
	}
	if want := []string{"References", "1", "3", "10"}; !reflect.DeepEqual(rows, want) {
		t.Errorf("markdown rows %q, want %q:\n%s", rows, want, got["table2.md"])
	}
	if !strings.Contains(got["table2.md"], "| References | Novelty (Filtered) | Novelty (Unfiltered) |\n|---|---:|---:|\n") {
		t.Errorf("markdown header:\n%s", got["table2.md"])
	}
	for _, want := range []string{" & \\multicolumn{2}{c}{Novelty} \\\\\n\\cmidrule(lr){2-3}\nReferences & Filtered & Unfiltered \\\\\n\\midrule\n", "\\toprule\n", "\\bottomrule\n"} {
		if !strings.Contains(got["table2.tex"], want) {
			t.Errorf("latex lacks %q:\n%s", want, got["table2.tex"])
		}
	}
	csv := strings.Split(got["table2.csv"], "\n")
	if !strings.HasPrefix(csv[0], "refs,insight_score.arms[filtered],insight_score.arms[filtered]_ci_low,insight_score.arms[filtered]_ci_high,insight_score.arms[filtered]_count,") ||
		!strings.HasPrefix(csv[1], "1,") || !strings.HasPrefix(csv[3], "10,") {
		t.Errorf("csv:\n%s", got["table2.csv"])
	}
}
