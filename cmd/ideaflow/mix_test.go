package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// experiments/mix/ideabench_three_ways.hcl judges main.hcl's ideas three
// ways. After main.hcl has run, every generation is cached: the mix plans
// and pays only its judging (issue 25: "plan shows that the mix costs
// only its judging"), and each generation node is cached once, shared.
func TestMixThreeWaysSharesMainsGenerations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs main.hcl and the mix on the mock")
	}
	const mix = "../../experiments/mix/ideabench_three_ways.hcl"
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")

	code, stdout, stderr := cli(t, "validate", mix)
	if code != 0 || !strings.Contains(stdout, "ideabench_three_ways is valid: 58 stage instances, 200 nodes over 4 items.") {
		t.Fatalf("validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := cli(t, "run", "../../experiments/ideabench/main.hcl", "--cache-dir", cacheDir, "--out", filepath.Join(dir, "main")); code != 0 {
		t.Fatalf("main.hcl: exit %d\n%s", code, stderr)
	}

	code, stdout, stderr = cli(t, "plan", mix, "--cache-dir", cacheDir, "--json")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	var plan struct {
		Nodes struct {
			Total, Cached int
			ToRun         int `json:"to_run"`
		}
		Estimate struct {
			LLMCalls int `json:"llm_calls"`
		}
		Stages map[string]struct {
			Total, Cached int
			ToRun         int `json:"to_run"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, stdout)
	}
	gens := 0
	for addr, s := range plan.Stages {
		if strings.HasPrefix(addr, "stage.generate_ideas.mix[") {
			gens++
			// 4 targets, one idea each: main.hcl's sample 0.
			if s.Total != 4 || s.Cached != 4 || s.ToRun != 0 {
				t.Errorf("%s: %d nodes, %d cached, %d to run; want all 4 cached from main.hcl", addr, s.Total, s.Cached, s.ToRun)
			}
		}
	}
	// The judging, laid out before any review has run: 7 generators x (8
	// rankings (2 rotations of 4 targets) + 12 panel judgements (3 judges)
	// + 4 method extractions); the dropped target's make no call, so 7 x
	// (6 + 9 + 3) = 126 calls.
	if gens != 7 || plan.Nodes.Total != 200 || plan.Nodes.Cached != 32 || plan.Estimate.LLMCalls != 126 {
		t.Errorf("plan: %d generation instances, %d nodes, %d cached, %d calls; want 7, 200, 32 (4 filter + 28 generations) and 126", gens, plan.Nodes.Total, plan.Nodes.Cached, plan.Estimate.LLMCalls)
	}

	sumPath := filepath.Join(dir, "mix.json")
	code, _, stderr = cli(t, "run", mix, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "mix"), "--summary-json", sumPath)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	sum := readSummary(t, sumPath)
	var genCalls int
	for addr, s := range sum.Stages {
		if strings.HasPrefix(addr, "stage.generate_ideas.") {
			genCalls += s.LLMCalls
		}
	}
	if genCalls != 0 || sum.Nodes.Failed != 0 || sum.Nodes.Total != 478 || sum.Nodes.Cached != 32 || sum.LLMCalls != 342 || sum.ServiceCalls != 54 {
		t.Errorf("run: %d generation calls, %+v nodes, %d model and %d service calls; want 0, 478 nodes (32 cached, 0 failed), 342 and 54", genCalls, sum.Nodes, sum.LLMCalls, sum.ServiceCalls)
	}

	code, stdout, stderr = cli(t, "export", "stage.cross_agreement.three_ways", mix, "--cache-dir", cacheDir, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	var row struct {
		CommonItems int            `json:"common_items"`
		Units       map[string]int `json:"units"` // nested in jsonl
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &row); err != nil {
		t.Fatalf("export: %v\n%s", err, stdout)
	}
	if row.CommonItems != 3 || row.Units["rankings"] != 21 || row.Units["panels"] != 21 || row.Units["reviews"] != 21 {
		t.Errorf("cross_agreement: units %v, common items %d; want 7 generators x 3 targets (one dropped upstream) under each measure, 3 common targets", row.Units, row.CommonItems)
	}

	// Warm: nothing to run.
	code, _, stderr = cli(t, "run", mix, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "mix"), "--summary-json", sumPath)
	if again := readSummary(t, sumPath); code != 0 || again.LLMCalls != 0 || again.ServiceCalls != 0 || again.Nodes.Ran != 0 {
		t.Errorf("warm run: exit %d, %d calls, %d ran\n%s", code, again.LLMCalls, again.Nodes.Ran, stderr)
	}
}

// experiments/mix/keywords_reviewed.hcl reviews quick.hcl's keyword ideas:
// after quick.hcl, its generations and panel judgements are all cached and
// only the reviews are asked.
func TestMixKeywordsReviewedSharesQuicksIdeasAndPanel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs quick.hcl and the mix on the mock")
	}
	const mix = "../../experiments/mix/keywords_reviewed.hcl"
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")
	if code, _, stderr := cli(t, "run", "../../experiments/liveideabench/quick.hcl", "--cache-dir", cacheDir, "--out", filepath.Join(dir, "quick")); code != 0 {
		t.Fatalf("quick.hcl: exit %d\n%s", code, stderr)
	}
	sumPath := filepath.Join(dir, "mix.json")
	code, _, stderr := cli(t, "run", mix, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "mix"), "--summary-json", sumPath)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	sum := readSummary(t, sumPath)
	for addr, s := range sum.Stages {
		shared := strings.HasPrefix(addr, "stage.generate_from_keyword.") || strings.HasPrefix(addr, "stage.judge_panel.")
		if shared && (s.Cached != s.Total || s.LLMCalls != 0) {
			t.Errorf("%s: %d of %d cached, %d calls; want all of quick.hcl's, no call", addr, s.Cached, s.Total, s.LLMCalls)
		}
	}
	// 3 generators x 20 keywords: 60 ideas and 120 judgements cached; 60
	// method extractions and what they expand into asked.
	if sum.Nodes.Cached != 180 || sum.Nodes.Failed != 0 || sum.Stages["stage.cross_agreement.originality"].Ran != 1 {
		t.Errorf("run: %+v; want 180 cached (60 ideas, 120 judgements), none failed, the agreement computed", sum.Nodes)
	}
}
