package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// Zero is a size, through the CLI: an expansion whose items expand to no
// child is laid out, final and empty; what reads it runs, report.html is
// written, `show` says the instance has 0 nodes, and a warm re-run finds
// everything cached.
func TestZeroExpansionThroughTheCLI(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lists          map[string]string
		children, reqs int
	}{
		// An answer of only "# ..." lines is an empty list (stagetest).
		{"every item", map[string]string{"a": "# none", "b": "# none", "c": "# none", "d": "# none"}, 0, 4},
		{"some items", map[string]string{"a": "alpha\nbeta", "b": "# none", "c": "# none", "d": "kappa"}, 3, 4 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lists := &expandLists{lists: tc.lists}
			srv := llmtest.New(llmtest.WithResponder(lists.respond))
			defer srv.Close()
			t.Setenv("EXPAND_API_KEY", "sk-expand-test")
			dir := t.TempDir()
			exp := filepath.Join(dir, "exp")
			writeExpandExperiment(t, exp, srv.URL)
			cacheDir, out, sumPath := filepath.Join(dir, "cache"), filepath.Join(dir, "out"), filepath.Join(dir, "summary.json")
			total := 4 + tc.children + 4

			code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", out, "--summary-json", sumPath)
			sum := readSummary(t, sumPath)
			if code != 0 || srv.Count() != tc.reqs || sum.LLMCalls != tc.reqs || sum.Nodes.Total != total || sum.Nodes.Ran != total {
				t.Fatalf("cold run: exit %d, %d requests (want %d), %+v\n%s\n%s", code, srv.Count(), tc.reqs, sum.Nodes, stdout, stderr)
			}
			if c := sum.Stages["stage.test_each.search"]; c.Total != tc.children || c.Ran != tc.children {
				t.Fatalf("children: %+v, want %d ran", c, tc.children)
			}
			if c := sum.Stages["stage.test_collect.all"]; c.Total != 4 || c.Ran != 4 {
				t.Fatalf("collect: %+v, want 4 ran", c)
			}
			if strings.Contains(stderr, "not written") {
				t.Fatalf("a file was not written:\n%s", stderr)
			}
			if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
				t.Fatalf("report.html: %v\n%s", err, stderr)
			}

			code, stdout, stderr = cli(t, "show", "stage.test_each.search", exp, "--cache-dir", cacheDir)
			if tc.children == 0 && (code != 0 || stdout != "stage.test_each.search: 0 nodes (laid out and complete: no item gave it a node)\n") {
				t.Fatalf("show the empty expansion: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if tc.children > 0 && (code != 0 || strings.Count(stdout, "stage.test_each.search/") != tc.children) {
				t.Fatalf("show the expansion: exit %d\n%s\n%s", code, stdout, stderr)
			}

			code, stdout, stderr = cli(t, "plan", exp, "--cache-dir", cacheDir)
			if code != 0 || strings.Contains(stdout, "expands after") || strings.Contains(stdout, "laid out after") {
				t.Fatalf("warm plan: exit %d\n%s\n%s", code, stdout, stderr)
			}

			code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--out", out, "--summary-json", sumPath)
			sum = readSummary(t, sumPath)
			if code != 0 || srv.Count() != tc.reqs || sum.Nodes.Total != total || sum.Nodes.Cached != total || strings.Contains(stderr, "not written") {
				t.Fatalf("warm run: exit %d, %d requests, %+v\n%s\n%s", code, srv.Count(), sum.Nodes, stdout, stderr)
			}
			if !strings.Contains(stdout, "report.html is current") {
				t.Fatalf("warm run rewrote or lost report.html:\n%s", stdout)
			}
		})
	}
}

// ScholarEval's quick.hcl, as shipped: the baseline's references resolve to
// no title search on the sample (every item expands to zero), and its page
// is written on every run, cold and warm, without a warning.
func TestScholarEvalQuickWritesItsPage(t *testing.T) {
	dir := t.TempDir()
	cacheDir, out := filepath.Join(dir, "cache"), filepath.Join(dir, "out")
	exp := filepath.Join("..", "..", "experiments", "scholareval", "quick.hcl")
	for _, run := range []string{"cold", "warm"} {
		code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", out)
		if code != 0 || strings.Contains(stderr, "not written") || strings.Contains(stderr, "warning") {
			t.Fatalf("%s run: exit %d\n%s\n%s", run, code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
			t.Fatalf("%s run: report.html: %v\n%s", run, err, stdout)
		}
	}
	code, stdout, stderr := cli(t, "show", "stage.resolve_references.baseline", exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "0 nodes") {
		t.Fatalf("show: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
