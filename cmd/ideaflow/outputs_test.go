package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mockExperiment is the quickstart pipeline on the mock with one generator,
// its report named report: two such files in one folder differ only in it.
func mockExperiment(report, title string) string {
	return `
provider "mock" {
  kind = "mock"
  seed = 7
}

model "gen" {
  provider   = provider.mock
  name       = "mock-gen"
  max_tokens = 100
}

model "judge" {
  provider   = provider.mock
  name       = "mock-judge"
  max_tokens = 100
}

dataset "targets" {
  format = "ideabench"
  path   = "data/targets.jsonl"
}

quality "novelty" {
  definition = "new methods"
}

stage "filter_references" "low" {
  dataset = dataset.targets
  limit   = 5
}

stage "generate_ideas" "main" {
  model      = model.gen
  references = stage.filter_references.low
  n          = 2
}

stage "rank_ideas" "novelty" {
  ideas   = stage.generate_ideas.main
  judge   = model.judge
  quality = quality.novelty
}

stage "insight_score" "novelty" {
  ranks = stage.rank_ideas.novelty
}

report "` + report + `" {
  title   = "` + title + `"
  rows    = stage.generate_ideas.main
  columns = [stage.insight_score.novelty]
  formats = ["markdown"]
}
`
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTwoExperimentFilesKeepTheirPages runs two experiment files of one
// folder (as experiments/ideabench/ holds main.hcl and ablation_refs.hcl)
// and checks that each wrote its own results/<stem>/, that the second run
// left the first's page and tables alone, and that a folder experiment
// still writes results/ itself.
func TestTwoExperimentFilesKeepTheirPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bench")
	writeFile(t, filepath.Join(dir, "data/targets.jsonl"), "")
	copyFile(t, "../../experiments/quickstart/data/targets.jsonl", filepath.Join(dir, "data/targets.jsonl"))
	writeFile(t, filepath.Join(dir, "table1.hcl"), mockExperiment("table1", "Table one"))
	writeFile(t, filepath.Join(dir, "ablation.hcl"), mockExperiment("table2", "Table two"))
	cacheDir := filepath.Join(t.TempDir(), "cache")
	for _, f := range []string{"table1.hcl", "ablation.hcl"} {
		if code, stdout, stderr := cli(t, "run", filepath.Join(dir, f), "--cache-dir", cacheDir); code != 0 {
			t.Fatalf("run %s: exit %d\n%s\n%s", f, code, stdout, stderr)
		}
	}
	for _, c := range []struct{ stem, table, title string }{{"table1", "table1.md", "Table one"}, {"ablation", "table2.md", "Table two"}} {
		page, err := os.ReadFile(filepath.Join(dir, "results", c.stem, "report.html"))
		if err != nil {
			t.Fatalf("%s's page: %v", c.stem, err)
		}
		if !strings.Contains(string(page), c.title) {
			t.Errorf("results/%s/report.html does not show %q", c.stem, c.title)
		}
		if _, err := os.Stat(filepath.Join(dir, "results", c.stem, c.table)); err != nil {
			t.Errorf("%s's table: %v", c.stem, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "results", "report.html")); err == nil {
		t.Errorf("a one-file experiment wrote results/report.html, where a folder experiment's page goes")
	}
	// `report` re-renders into the same folder as run.
	if code, stdout, stderr := cli(t, "report", filepath.Join(dir, "table1.hcl"), "--cache-dir", cacheDir); code != 0 ||
		!strings.Contains(stdout, filepath.Join(dir, "results", "table1", "table1.md")) {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}

	folder := filepath.Join(t.TempDir(), "exp")
	writeFile(t, filepath.Join(folder, "data/targets.jsonl"), "")
	copyFile(t, "../../experiments/quickstart/data/targets.jsonl", filepath.Join(folder, "data/targets.jsonl"))
	writeFile(t, filepath.Join(folder, "main.hcl"), mockExperiment("table1", "Folder table"))
	if code, stdout, stderr := cli(t, "run", folder, "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("run folder: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"report.html", "table1.md"} {
		if _, err := os.Stat(filepath.Join(folder, "results", f)); err != nil {
			t.Errorf("folder experiment: %v", err)
		}
	}
}
