package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// counts is "ran/cached" per stage address, the shape every step asserts.
type counts map[string]string

func checkStages(t *testing.T, step string, s engine.Summary, want counts) {
	t.Helper()
	got := counts{}
	for addr, c := range s.Stages {
		if c.Failed != 0 || c.Skipped != 0 {
			t.Errorf("%s: %s has %d failed, %d skipped", step, addr, c.Failed, c.Skipped)
		}
		got[addr] = fmt.Sprintf("%d/%d", c.Ran, c.Cached)
	}
	var diffs []string
	for addr := range union(got, want) {
		if got[addr] != want[addr] {
			diffs = append(diffs, fmt.Sprintf("  %s: ran/cached = %s, want %s", addr, got[addr], want[addr]))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: per-stage counts differ:\n%s", step, strings.Join(diffs, "\n"))
	}
}

func union(a, b counts) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

const (
	gen  = `stage.generate_ideas.main["%s"]`
	rank = `stage.rank_ideas.novelty["%s"]`
	ins  = `stage.insight_score.novelty["%s"]`
)

func stage(format, model string) string { return fmt.Sprintf(format, model) }

// TestScenarioReRunsOnlyWhatChanged drives the CLI through the edits of a
// researcher's day against the fake OpenAI-compatible server and asserts
// exactly which nodes ran and how many requests the server saw.
//
// The quickstart data has 5 targets; the default filter leaves one of them
// with fewer than 3 references, so it is dropped: its generation and ranking
// nodes are computed (no request) and excluded from the Insight Score. With n
// samples a generator makes 4*n requests and its ranking 4.
func TestScenarioReRunsOnlyWhatChanged(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	defer srv.Close()
	t.Setenv("SCENARIO_API_KEY", "sk-scenario")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	cacheDir := filepath.Join(dir, "cache")
	sc := scenario{BaseURL: srv.URL, KeyEnv: "SCENARIO_API_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5}

	run := func(step string, wantRequests int, args ...string) engine.Summary {
		t.Helper()
		writeExperiment(t, exp, sc)
		sumPath := filepath.Join(dir, step+".json")
		before := srv.Count()
		code, stdout, stderr := cli(t, append([]string{"run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", step, code, stdout, stderr)
		}
		if got := srv.Count() - before; got != wantRequests {
			t.Errorf("%s: server saw %d requests, want %d", step, got, wantRequests)
		}
		s := readSummary(t, sumPath)
		if s.LLMCalls != wantRequests {
			t.Errorf("%s: summary llm_calls = %d, want %d", step, s.LLMCalls, wantRequests)
		}
		return s
	}

	s := run("initial", 32)
	checkStages(t, "initial", s, counts{
		"stage.filter_references.low": "5/0",
		stage(gen, "gen-a"):           "15/0", stage(gen, "gen-b"): "15/0",
		stage(rank, "gen-a"): "5/0", stage(rank, "gen-b"): "5/0",
		stage(ins, "gen-a"): "1/0", stage(ins, "gen-b"): "1/0",
		"report.table1": "1/0",
	})
	if s.Nodes.Total != 48 || s.Nodes.Ran != 48 || s.Tokens.Input == 0 || s.CostUSD <= 0 {
		t.Errorf("initial totals: %+v tokens %+v cost %v", s.Nodes, s.Tokens, s.CostUSD)
	}

	// (a) The judge's temperature changes: only ranking requests are re-sent;
	// the dropped target's ranking (no request) stays cached.
	sc.JudgeTemperature = 0.2
	s = run("judge-temperature", 8)
	checkStages(t, "judge-temperature", s, counts{
		"stage.filter_references.low": "0/5",
		stage(gen, "gen-a"):           "0/15", stage(gen, "gen-b"): "0/15",
		stage(rank, "gen-a"): "4/1", stage(rank, "gen-b"): "4/1",
		stage(ins, "gen-a"): "1/0", stage(ins, "gen-b"): "1/0",
		"report.table1": "1/0",
	})

	// (b) n goes from 3 to 5: two new samples per target and generator; the
	// first three are reused. Rankings see five ideas now, so they re-run.
	sc.N = 5
	s = run("n-5", 2*(4*2)+2*4)
	checkStages(t, "n-5", s, counts{
		"stage.filter_references.low": "0/5",
		stage(gen, "gen-a"):           "10/15", stage(gen, "gen-b"): "10/15",
		stage(rank, "gen-a"): "5/0", stage(rank, "gen-b"): "5/0",
		stage(ins, "gen-a"): "1/0", stage(ins, "gen-b"): "1/0",
		"report.table1": "1/0",
	})

	// (c) The reference limit changes but no target has more than 5 kept
	// references: the filter re-evaluates (no request) and yields the same
	// sets, so early cutoff keeps everything downstream cached.
	sc.Limit = 6
	s = run("limit-6", 0)
	checkStages(t, "limit-6", s, counts{
		"stage.filter_references.low": "5/0",
		stage(gen, "gen-a"):           "0/25", stage(gen, "gen-b"): "0/25",
		stage(rank, "gen-a"): "0/5", stage(rank, "gen-b"): "0/5",
		stage(ins, "gen-a"): "0/1", stage(ins, "gen-b"): "0/1",
		"report.table1": "0/1",
	})

	// (d) A third generator: only its nodes run, plus the report that gains a row.
	sc.Generators = append(sc.Generators, "gen-c")
	s = run("add-model", 4*5+4)
	checkStages(t, "add-model", s, counts{
		"stage.filter_references.low": "0/5",
		stage(gen, "gen-a"):           "0/25", stage(gen, "gen-b"): "0/25", stage(gen, "gen-c"): "25/0",
		stage(rank, "gen-a"): "0/5", stage(rank, "gen-b"): "0/5", stage(rank, "gen-c"): "5/0",
		stage(ins, "gen-a"): "0/1", stage(ins, "gen-b"): "0/1", stage(ins, "gen-c"): "1/0",
		"report.table1": "1/0",
	})

	// (e) Nothing changed: nothing runs, no request is made.
	s = run("again", 0)
	if s.Nodes.Ran != 0 || s.Nodes.Cached != s.Nodes.Total || s.Nodes.Total != 5+3*25+3*5+3+1 {
		t.Errorf("again: %+v", s.Nodes)
	}
}

// TestEditingATargetsAbstractRerunsOnlyItsRankings: the generator never sees
// the target's own abstract (the ranking's reference idea when the dataset
// gives no "idea"), so editing it re-evaluates that target's filter node
// (same output), keeps every generation cached, and re-asks only that
// target's rankings.
func TestEditingATargetsAbstractRerunsOnlyItsRankings(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	path := filepath.Join(exp, "data", "targets.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	edited := 0
	for i, l := range lines {
		if strings.Contains(l, `"id": "qs-reef"`) {
			// The target's own abstract comes before its references' abstracts.
			lines[i] = strings.Replace(l, `"abstract": "`, `"abstract": "Restated: `, 1)
			edited++
		}
	}
	if edited != 1 {
		t.Fatalf("edited %d lines", edited)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	before := srv.Count()
	sum := filepath.Join(t.TempDir(), "s.json")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sum); code != 0 {
		t.Fatal(stderr)
	}
	if got := srv.Count() - before; got != 2 {
		t.Errorf("%d requests, want 2 (one ranking per generator)", got)
	}
	checkStages(t, "edit-abstract", readSummary(t, sum), counts{
		"stage.filter_references.low": "1/4",
		stage(gen, "gen-a"):           "0/15", stage(gen, "gen-b"): "0/15",
		stage(rank, "gen-a"): "1/4", stage(rank, "gen-b"): "1/4",
		stage(ins, "gen-a"): "1/0", stage(ins, "gen-b"): "1/0",
		"report.table1": "1/0",
	})
}
