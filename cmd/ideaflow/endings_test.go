package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportToStdoutDash: --out - writes the table to stdout, as --out
// unset does, and leaves no file named "-".
func TestExportToStdoutDash(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	exp, _ = filepath.Abs(exp)
	cacheDir, _ = filepath.Abs(cacheDir)
	work := t.TempDir()
	t.Chdir(work)
	code, dash, stderr := cli(t, "export", "stage.generate_ideas.main", exp, "--cache-dir", cacheDir, "--out", "-")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	_, plain, _ := cli(t, "export", "stage.generate_ideas.main", exp, "--cache-dir", cacheDir)
	if dash != plain || !strings.HasPrefix(dash, "address,") || strings.Contains(dash, "wrote ") {
		t.Errorf("--out - wrote %d bytes to stdout, --out unset %d:\n%.300s", len(dash), len(plain), dash)
	}
	if _, err := os.Stat(filepath.Join(work, "-")); err == nil {
		t.Error("--out - wrote a file named -")
	}
}

// TestInterruptedRunKeepsCompletePage runs the scenario to completion, then
// raises n and runs with a budget that stops it part-way: report.html stays
// byte for byte the complete page and the partial page is written beside
// it, as the tables' .partial files are; a complete run then replaces the
// page and removes the partial one.
func TestInterruptedRunKeepsCompletePage(t *testing.T) {
	_, exp, cacheDir, sc := newScenario(t)
	sc.JudgePriced = true
	writeExperiment(t, exp, sc)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	results := filepath.Join(exp, "results")
	complete, err := os.ReadFile(filepath.Join(results, htmlPageName))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "-var", "n=5", "--max-cost", "0.002")
	if code != exitBudget {
		t.Fatalf("budget run: exit %d, want %d\n%s\n%s", code, exitBudget, stdout, stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(results, htmlPageName)); !bytes.Equal(now, complete) {
		t.Error("an interrupted run changed the complete report.html")
	}
	partial, err := os.ReadFile(filepath.Join(results, partialPageName))
	if err != nil || !bytes.Contains(partial, []byte(`id="partial-banner"`)) {
		t.Fatalf("no partial page beside the complete one (%v)", err)
	}
	if !strings.Contains(stdout, "wrote "+filepath.Join(results, partialPageName)) {
		t.Errorf("the summary does not name the partial page:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(results, "table1.partial.md")); err != nil {
		t.Errorf("the table's partial file: %v", err)
	}
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "-var", "n=5"); code != 0 {
		t.Fatal(stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(results, htmlPageName)); bytes.Equal(now, complete) || bytes.Contains(now, []byte(`id="partial-banner"`)) {
		t.Error("the complete run did not write a new complete page")
	}
	if _, err := os.Stat(filepath.Join(results, partialPageName)); err == nil {
		t.Error("the complete run left the partial page")
	}
}
