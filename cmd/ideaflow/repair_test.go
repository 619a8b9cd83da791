package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A damaged cache heals: with 90% of the value log cut off, opening the
// cache drops every record it cannot read (and the memos naming them), so
// a run whose nodes need them (a new judge reads every idea) recomputes
// each as a miss (a model node is asked again, once) and says what it
// dropped; the run after it makes no call. It used to fail with "cache
// value corrupt" on every run.
func TestDamagedRecordsAreRecomputed(t *testing.T) {
	srv, exp, cacheDir, sc := newScenario(t)
	sumPath := filepath.Join(t.TempDir(), "s.json")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	calls := srv.Count()
	vlog := filepath.Join(cacheDir, "000001.vlog")
	st, err := os.Stat(vlog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(vlog, st.Size()/10); err != nil {
		t.Fatal(err)
	}
	sc.JudgeTemperature = 0.4
	writeExperiment(t, exp, sc)
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath)
	if code != 0 {
		t.Fatalf("run on a damaged cache: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sum := readSummary(t, sumPath)
	// The 8 rankings of the new judge, plus one call per lost idea (the
	// records lost here are filter records: deterministic, recomputed
	// without a call, and the same outputs keep the ideas cached).
	reasked := srv.Count() - calls - 8
	if reasked < 0 || sum.LLMCalls != reasked+8 || sum.Nodes.Failed != 0 {
		t.Fatalf("re-asked %d ideas (summary: %d calls)\n%s\n%s", reasked, sum.LLMCalls, stdout, stderr)
	}
	if !strings.Contains(stdout, "cache damaged: value log 000001.vlog") || !strings.Contains(stdout, "unreadable record(s) dropped") {
		t.Errorf("the run does not say what it found and dropped:\n%s", stdout)
	}
	// Healed: nothing is asked again, and verify is clean.
	before := srv.Count()
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath); code != 0 || srv.Count() != before {
		t.Fatalf("after the repair: exit %d, %d calls\n%s\n%s", code, srv.Count()-before, stdout, stderr)
	}
	if sum := readSummary(t, sumPath); sum.Repaired != 0 || sum.Nodes.Ran != 0 {
		t.Fatalf("after the repair: %+v, repaired %d", sum.Nodes, sum.Repaired)
	}
}
