package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportShowsBootstrapCI: a bootstrap over the quickstart's Insight
// Scores reaches the report as "value [low, high]" in Markdown and LaTeX,
// as separate columns in CSV, with the level said once below the table. The
// values are the mock provider's, fixed by its seed and the bootstrap's.
func TestReportShowsBootstrapCI(t *testing.T) {
	exp := copyQuickstart(t)
	f, err := os.OpenFile(filepath.Join(exp, "main.hcl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`
stage "bootstrap" "novelty" {
  scores = stage.insight_score.novelty
}

report "ci" {
  rows     = stage.generate_ideas.main
  row_dims = ["model"]
  columns  = [stage.bootstrap.novelty]
  labels   = { model = "Model", "bootstrap.novelty" = "Novelty" }
  better   = { "bootstrap.novelty" = "higher" }
  formats  = ["markdown", "csv", "latex"]
}
`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := t.TempDir()
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	md := read("ci.md")
	for _, want := range []string{
		"| Model | Novelty ↑ |",
		"| mock-generator-a | 0.083 [0.00, 0.25] |",
		"| mock-generator-b | **0.500** [0.17, 0.83] |",
		"In brackets: 95% confidence intervals [low, high]",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("ci.md lacks %q:\n%s", want, md)
		}
	}
	if tex := read("ci.tex"); !strings.Contains(tex, `mock-generator-b & \textbf{0.500} [0.17, 0.83] \\`) {
		t.Errorf("ci.tex lacks the bold row with its interval:\n%s", tex)
	}
	csv := read("ci.csv")
	if !strings.Contains(csv, "bootstrap.novelty_ci_low") || !strings.Contains(csv, "bootstrap.novelty_ci_high") {
		t.Errorf("ci.csv has no separate interval columns:\n%s", csv)
	}
}
