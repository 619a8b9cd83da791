package liveideabench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages/liveideabench"
)

const (
	experiments = "../../experiments/liveideabench/"
	shared      = "../../../shared/data/liveideabench/"
)

// paperVars points leaderboard.hcl at the authors' files in the shared
// data folder (tests may read it; the project never ships it).
func paperVars(t testing.TB, extra ...string) []string {
	t.Helper()
	abs := func(p string) string {
		a, err := filepath.Abs(shared + p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(a); err != nil {
			t.Skipf("the LiveIdeaBench data is not available: %v", err)
		}
		return a
	}
	return append([]string{"keywords=" + abs("csvs/kws.csv"), "categories=" + abs("csvs/keyword_classifications.csv"),
		"published=" + abs("results/LiveIdeaBench-202412.csv")}, extra...)
}

func build(t testing.TB, path string, vars []string) *engine.Graph {
	t.Helper()
	exp, diags := config.Load(path, config.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return g
}

// planTotals sums a plan's nodes per stage block.
func planTotals(p *engine.Plan) map[string]int {
	out := map[string]int{}
	for addr, s := range p.Summary.Stages {
		if i := strings.IndexByte(addr, '['); i >= 0 {
			addr = addr[:i]
		}
		out[addr] += s.Total
	}
	return out
}

// leaderboard.hcl validates and plans offline (no key, no cache) with
// the paper run's exact node counts: 20 models x 1,180 keywords x 2
// ideas; 3 judgements each; one fluency pair per keyword and model with
// one judge; 5 score columns per model; the leaderboard, the report and
// the Fig. 5 and Fig. 3 plots.
func TestLeaderboardExperimentPlan(t *testing.T) {
	g := build(t, experiments+"leaderboard.hcl", paperVars(t))
	e := &engine.Engine{Store: cache.NewMemory()}
	p := e.Plan(g)
	want := map[string]int{
		"stage.generate_from_keyword.ideas": 47_200, "stage.judge_panel.scores": 141_600, "stage.fluency.pairs": 23_600,
		"stage.liveideabench_score.originality": 20, "stage.liveideabench_score.feasibility": 20, "stage.liveideabench_score.fluency": 20,
		"stage.liveideabench_score.flexibility": 20, "stage.liveideabench_score.average": 20,
		"stage.leaderboard.december_2024": 1, "report.leaderboard": 1, "stage.plot.figure5": 1, "stage.plot.figure3": 1,
	}
	sameCounts(t, "plan", planTotals(p), want)
	if p.Summary.Nodes.Total != 212_504 || p.Summary.Nodes.ToRun != 212_504 || p.Summary.Estimate.LLMCalls != 212_400 {
		t.Errorf("plan: %+v nodes, %d calls", p.Summary.Nodes, p.Summary.Estimate.LLMCalls)
	}
	// Exactly one instance per model, and every judge_panel instance keeps
	// the generator's family out.
	if n := len(g.Exp.Stages); n != 164 {
		t.Errorf("%d stage instances, want 164", n)
	}
}

// quick.hcl runs in seconds on the mock provider, then runs nothing.
func TestQuickExperiment(t *testing.T) {
	g := build(t, experiments+"quick.hcl", nil)
	e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	out := t.TempDir()
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %+v", sum.Failures)
	}
	// 20 keywords x 3 generators x 2 ideas; 2 judges each; a judged and a
	// Jaccard pair per keyword and generator; 6 columns per generator, a
	// bootstrap of originality per generator, and the Fig. 5 and 3 plots.
	sameCounts(t, "quick", ran(sum), map[string]int{
		"stage.generate_from_keyword.ideas": 120, "stage.judge_panel.scores": 240, "stage.fluency.pairs": 60, "stage.fluency.jaccard": 60,
		"stage.liveideabench_score.originality": 3, "stage.liveideabench_score.feasibility": 3, "stage.liveideabench_score.clarity": 3,
		"stage.liveideabench_score.fluency": 3, "stage.liveideabench_score.flexibility": 3, "stage.liveideabench_score.average": 3,
		"stage.leaderboard.quick": 1, "report.quick": 1, "stage.bootstrap.originality": 3, "stage.plot.figure5": 1, "stage.plot.figure3": 1,
	})
	if sum.LLMCalls != 120+240+60 {
		t.Errorf("%d calls, want 420", sum.LLMCalls)
	}
	// generator_b shares judge_b's family: its ideas are judged by a and c.
	views := outputsOf(t, e, g, `stage.judge_panel.scores["mock-generator-b"]`)
	for _, v := range views {
		var j liveideabench.Judgement
		if err := json.Unmarshal(v.Result.Output, &j); err != nil {
			t.Fatal(err)
		}
		if j.Judge == "mock-judge-b" {
			t.Fatalf("%s judged by its family's judge", v.Address)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "leaderboard.quick.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lb liveideabench.Leaderboard
	if err := json.Unmarshal(b, &lb); err != nil {
		t.Fatal(err)
	}
	if !lb.Synthetic || len(lb.Models) != 3 || len(lb.Domains) != 6 || len(lb.Pareto) == 0 {
		t.Errorf("leaderboard: %s", b)
	}
	for _, m := range lb.Models {
		if m.Ideas != 40 || m.Judgements != 80 || m.Pairs != 20 || m.Rank == 0 {
			t.Errorf("%s: %+v", m.Model, m)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "quick.md")); err != nil {
		t.Error(err)
	}
	_, sum = runQuickAgain(t, e)
	if sum.Nodes.Ran != 0 || sum.LLMCalls != 0 {
		t.Errorf("re-run: %+v, %d calls", sum.Nodes, sum.LLMCalls)
	}
}

func runQuickAgain(t *testing.T, e *engine.Engine) (*engine.Graph, *engine.Summary) {
	g := build(t, experiments+"quick.hcl", nil)
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return g, sum
}
