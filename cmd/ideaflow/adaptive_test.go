package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// experiments/liveideabench/adaptive.hcl plans and runs on the mock: five
// rounds of 4 keywords, each sending its own 72 calls (4 keywords x 3
// generators x (2 ideas + 4 judgements)); on the mock the generators are
// alike, so the rule runs to the last keyword. A second run sends none.
func TestAdaptiveExperimentRuns(t *testing.T) {
	exp := "../../experiments/liveideabench/adaptive.hcl"
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir); code != 0 || !strings.Contains(stdout, "360 model calls") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"round 1: 4 of 20 items (4 scored), 72 calls;",
		"round 5: 20 of 20 items (20 scored), 72 calls;",
		"stop_when: stopped by exhausted after 5 round(s), 20 of 20 items, 360 calls in this run (betting intervals at 95% over the board)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("run: no %q in\n%s", want, stdout)
		}
	}
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "after 5 round(s), 20 of 20 items, 0 calls in this run") || strings.Count(stdout, "items (") != 5 || strings.Contains(stdout, "72 calls") {
		t.Errorf("second run: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
