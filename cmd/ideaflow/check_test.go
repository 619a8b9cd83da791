package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check reads every expect block's verdict from the cache: pass, drift,
// missing, the tolerance's edge, and the exit codes; an expect added
// after the run is judged without a call.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "quickstart")
	if err := os.CopyFS(exp, os.DirFS("../../experiments/quickstart")); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(dir, "cache")
	if code, _, stderr := cli(t, "check", exp, "--cache-dir", cacheDir); code != exitBadInput || !strings.Contains(stderr, "has no expect block") {
		t.Fatalf("no expect: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	// The mock's seeded Insight Scores on the quickstart: generator a 1/12,
	// generator b 1/2.
	add := func(blocks string) {
		t.Helper()
		src, err := os.ReadFile(filepath.Join(exp, "main.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(exp, "main.hcl"), append(src, blocks...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	add(`
expect "a_pass" {
  score     = stage.insight_score.novelty["mock-generator-a"]
  published = 0.08
  tolerance = 0.01
  source    = "the test"
}
expect "b_edge" {
  score     = stage.insight_score.novelty["mock-generator-b"]
  published = 0.45
  tolerance = 0.05
}
`)
	code, stdout, stderr := cli(t, "check", exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "2 expect(s): 2 pass, 0 drift, 0 missing.") ||
		!strings.Contains(stdout, "expect.a_pass  pass     measured 0.083 over 4, published 0.080 ± 0.010 (delta +0.003)  (the test)  SYNTHETIC") {
		t.Fatalf("all pass (the edge included): exit %d\n%s\n%s", code, stdout, stderr)
	}
	add(`
expect "b_drift" {
  score     = stage.insight_score.novelty["mock-generator-b"]
  published = 0.766
  tolerance = 0.05
}
expect "b_missing" {
  score     = stage.insight_score.novelty["mock-generator-b"]
  field     = "extra.no_such_value"
  published = 1
  tolerance = 0
}
`)
	sumPath := filepath.Join(dir, "sum.json")
	code, stdout, stderr = cli(t, "check", exp, "--cache-dir", cacheDir, "--json")
	if code != exitDrift || !strings.Contains(stderr, "2 of 4 published value(s) not reproduced") {
		t.Fatalf("drift and missing: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var got []checked
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, c := range got {
		status[c.Address] = c.Status
		if c.Measured != nil && !c.Synthetic {
			t.Errorf("%s: not marked synthetic, though it rests on the mock", c.Address)
		}
	}
	want := map[string]string{"expect.a_pass": "pass", "expect.b_edge": "pass", "expect.b_drift": "drift", "expect.b_missing": "missing"}
	for a, s := range want {
		if status[a] != s {
			t.Errorf("%s: %q; want %q (all: %v)", a, status[a], s, status)
		}
	}
	// The new expects are computed from the cached scores by the run that
	// follows: no model call. The one reading a field the score lacks fails
	// (a wiring mistake, not a verdict), and check still says missing.
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath); code != exitFailedNodes {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if sum := readSummary(t, sumPath); sum.LLMCalls != 0 || sum.Stages["expect.b_drift"].Ran != 1 || sum.Stages["expect.b_missing"].Failed != 1 {
		t.Errorf("run after adding expects: %d calls, expect.b_drift %+v, b_missing %+v; want 0 calls, the one computed, the other failed", sum.LLMCalls, sum.Stages["expect.b_drift"], sum.Stages["expect.b_missing"])
	}
	code, stdout, _ = cli(t, "check", exp, "--cache-dir", cacheDir)
	if code != exitDrift || !strings.Contains(stdout, "4 expect(s): 2 pass, 1 drift, 1 missing.") ||
		!strings.Contains(stdout, `expect.b_missing  missing  failed: prepare: missing field "extra.no_such_value" in stage.insight_score.novelty["mock-generator-b"] (the number checked)`) {
		t.Errorf("check after the run: exit %d\n%s", code, stdout)
	}

	// An expect whose score has never run is missing, not a pass.
	fresh := filepath.Join(dir, "fresh")
	openTestCache(t, fresh).Close()
	if code, stdout, _ := cli(t, "check", exp, "--cache-dir", fresh); code != exitDrift || !strings.Contains(stdout, "4 expect(s): 0 pass, 0 drift, 4 missing.") {
		t.Errorf("on an empty cache: exit %d\n%s", code, stdout)
	}
}

// The order form: Kendall's tau-b between the instances' values and a
// published board read with csvdecode, pass and drift, the board's rows
// this run lacks named, and the verdicts computed without a call.
func TestCheckOrder(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "quickstart")
	if err := os.CopyFS(exp, os.DirFS("../../experiments/quickstart")); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(dir, "cache")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	// The mock's Insight Scores: generator a 1/12, b 1/2. The board puts b
	// first, as the run does, and has a third model this run lacks.
	board := "Rank,Model,Average\n1,mock-generator-b,7.5\n2,mock-generator-c,7.1\n3,mock-generator-a,6.9\n"
	if err := os.WriteFile(filepath.Join(exp, "board.csv"), []byte(board), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(exp, "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, `
locals {
  board = { for r in csvdecode(file("board.csv")) : r.Model => tonumber(r.Average) }
}
expect "board_order" {
  scores           = stage.insight_score.novelty
  published_values = local.board
  min_tau_b        = 1
  source           = "the test's board"
}
expect "reversed" {
  scores           = stage.insight_score.novelty
  published_values = { mock-generator-a = 2, mock-generator-b = 1 }
  min_tau_b        = 0.5
}
`...)
	if err := os.WriteFile(filepath.Join(exp, "main.hcl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "check", exp, "--cache-dir", cacheDir)
	if code != exitDrift || !strings.Contains(stdout, "2 expect(s): 1 pass, 1 drift, 0 missing.") ||
		!strings.Contains(stdout, "expect.board_order  pass     tau-b 1.000 over 2 rows, at least 1.000 for the published order; published, not in this run: 1  (the test's board)  SYNTHETIC") ||
		!strings.Contains(stdout, "expect.reversed     drift    tau-b -1.000 over 2 rows, at least 0.500 for the published order  SYNTHETIC") {
		t.Fatalf("check: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sumPath := filepath.Join(dir, "sum.json")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if sum := readSummary(t, sumPath); sum.LLMCalls != 0 || sum.Stages["expect.board_order"].Ran != 1 || sum.Stages["expect.reversed"].Ran != 1 {
		t.Errorf("run after adding the expects: %d calls, %+v, %+v; want 0 calls and each expect computed", sum.LLMCalls, sum.Stages["expect.board_order"], sum.Stages["expect.reversed"])
	}
	_, stdout, _ = cli(t, "check", exp, "--cache-dir", cacheDir, "--json")
	var got []checked
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	o := got[0].Order
	if got[0].Address != "expect.board_order" || o == nil || len(o.Rows) != 2 || o.Rows[0].Key != "mock-generator-b" || o.Rows[0].Published != 7.5 ||
		*o.Rows[1].Measured != 1.0/12 || strings.Join(o.Unrun, ",") != "mock-generator-c" || got[0].Published != nil {
		t.Errorf("board_order verdict %+v, order %+v", got[0], o)
	}
	// Editing the board recomputes the verdict from the cached scores.
	if err := os.WriteFile(filepath.Join(exp, "board.csv"), []byte("Rank,Model,Average\n1,mock-generator-a,7.5\n2,mock-generator-b,7.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := cli(t, "check", exp, "--cache-dir", cacheDir); code != exitDrift || !strings.Contains(stdout, "expect.board_order  drift    tau-b -1.000 over 2 rows") {
		t.Errorf("after editing the board: exit %d\n%s", code, stdout)
	}
}
