package aggregate_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/aggregate"
	_ "github.com/ideaflow/ideaflow/stages/all"
)

// The quickstart pipeline (five targets, one dropped by the filter; two
// generators; n = 3 ideas) ranked by two judges under three permutations,
// then every stage of this package on top.
const pipelineHCL = `
variable "resamples" { default = 1000 }
provider "mock" {
  kind = "mock"
  seed = 7
}
model "gen_a" {
  provider    = provider.mock
  name        = "mock-generator-a"
  family      = "a"
  temperature = 0.8
}
model "gen_b" {
  provider    = provider.mock
  name        = "mock-generator-b"
  family      = "b"
  temperature = 0.8
}
model "judge" {
  provider = provider.mock
  name     = "mock-judge"
  family   = "j"
}
model "judge2" {
  provider = provider.mock
  name     = "mock-judge-2"
  family   = "j2"
}
dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}
quality "novelty" {
  definition = "new methods"
}
stage "filter_references" "low" {
  dataset        = dataset.targets
  min_citations  = 5
  require_intent = "background"
  limit          = 5
}
stage "generate_ideas" "main" {
  for_each   = { for m in [model.gen_a, model.gen_b] : m.name => m }
  model      = each.value
  references = stage.filter_references.low
  n          = 3
}
stage "rank_ideas" "novelty" {
  ideas        = stage.generate_ideas.main
  judge        = model.judge
  quality      = quality.novelty
  permutations = 3
}
stage "rank_ideas" "novelty2" {
  ideas        = stage.generate_ideas.main
  judge        = model.judge2
  quality      = quality.novelty
  permutations = 3
}
stage "insight_score" "novelty" { ranks = stage.rank_ideas.novelty }
stage "bootstrap" "novelty" {
  scores    = stage.insight_score.novelty
  resamples = var.resamples
  seed      = 1
}
stage "bootstrap" "flex" {
  scores    = stage.insight_score.novelty
  statistic = "percentile"
  p         = 30
}
stage "bootstrap" "rank" {
  scores = stage.rank_ideas.novelty
}
stage "aggregate" "median" {
  scores    = stage.insight_score.novelty
  statistic = "median"
}
stage "compare" "novelty" {
  scores = [stage.insight_score.novelty]
  seed   = 3
}
stage "agreement" "perms" {
  judgements = [stage.rank_ideas.novelty["mock-generator-a"]]
}
stage "agreement" "judges" {
  judgements = [stage.rank_ideas.novelty["mock-generator-a"], stage.rank_ideas.novelty2["mock-generator-a"]]
}
report "table" {
  rows    = stage.generate_ideas.main
  columns = [stage.bootstrap.novelty, stage.bootstrap.flex]
  formats = ["markdown"]
}
`

func setup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile("../../experiments/quickstart/data/targets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"exp.hcl": []byte(pipelineHCL), "targets.jsonl": data} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func build(t *testing.T, dir string, vars ...string) *engine.Graph {
	t.Helper()
	exp, diags := config.Load(dir, config.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return g
}

// output decodes the single node of the instance at address into v.
func output(t *testing.T, e *engine.Engine, g *engine.Graph, address string, v any) {
	t.Helper()
	views, err := e.Inspect(e.Plan(g), address, engine.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 1 || views[0].Result == nil {
		t.Fatalf("%s: %d nodes, want one with a result", address, len(views))
	}
	if err := json.Unmarshal(views[0].Result.Output, v); err != nil {
		t.Fatalf("%s: %v", address, err)
	}
}

const (
	genA = "mock-generator-a"
	genB = "mock-generator-b"
)

func addr(block, key string) string { return config.InstanceAddress(block, key) }

func TestStagesThroughTheEngine(t *testing.T) {
	dir := setup(t)
	g := build(t, dir)
	e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %+v", sum.Failures)
	}
	// One bootstrap (and aggregate) per insight_score instance, one compare
	// and one agreement node in all; rank_ideas has 5 targets x 3
	// permutations per generator.
	want := map[string]int{
		addr("stage.rank_ideas.novelty", genA): 15, addr("stage.rank_ideas.novelty", genB): 15,
		addr("stage.bootstrap.novelty", genA): 1, addr("stage.bootstrap.novelty", genB): 1,
		addr("stage.bootstrap.flex", genA): 1, addr("stage.bootstrap.rank", genB): 1,
		addr("stage.aggregate.median", genA): 1,
		"stage.compare.novelty":              1, "stage.agreement.perms": 1, "stage.agreement.judges": 1,
	}
	for a, n := range want {
		if got := sum.Stages[a].Total; got != n {
			t.Errorf("%s: %d nodes, want %d", a, got, n)
		}
	}

	insight := map[string]stages.Score{}
	for _, k := range []string{genA, genB} {
		var s stages.Score
		output(t, e, g, addr("stage.insight_score.novelty", k), &s)
		insight[k] = s

		var b aggregate.BootstrapOutput
		output(t, e, g, addr("stage.bootstrap.novelty", k), &b)
		if b.Value != s.Value || b.Count != 4 || b.Count != s.Count || b.Extra["dropped"] != 1 || len(b.PerItem) != 4 {
			t.Errorf("%s bootstrap %+v of insight %+v", k, b, s)
		}
		if !(b.Extra["ci_low"] <= b.Value && b.Value <= b.Extra["ci_high"]) || b.Extra["ci_level"] != 0.95 || b.Extra["resamples"] != 1000 || b.Method != "percentile" || b.Statistic != "mean" || b.Seed != 1 {
			t.Errorf("%s bootstrap %+v", k, b)
		}

		var m aggregate.AggregateOutput
		output(t, e, g, addr("stage.aggregate.median", k), &m)
		vals := make([]float64, 0, 4)
		for _, v := range s.PerItem {
			vals = append(vals, v)
		}
		if med := median(vals); m.Value != med || m.Statistic != "median" || m.Count != 4 {
			t.Errorf("%s median %+v, want %v", k, m, med)
		}

		// The per-item rank_ideas read: the mean target_rank over the three
		// permutations, which the insight score is (rank - 1)/n of.
		var r aggregate.BootstrapOutput
		output(t, e, g, addr("stage.bootstrap.rank", k), &r)
		for item, v := range s.PerItem {
			if math.Abs((r.PerItem[item]-1)/3-v) > 1e-12 {
				t.Errorf("%s %s: mean target rank %v, insight %v", k, item, r.PerItem[item], v)
			}
		}
	}

	var c aggregate.CompareOutput
	output(t, e, g, "stage.compare.novelty", &c)
	if len(c.Models) != 2 || c.Models[0] != genA || c.Models[1] != genB || len(c.Pairs) != 1 || c.Resamples != 1000 || c.Level != 0.95 {
		t.Fatalf("compare: %+v", c)
	}
	if c.LeaderboardItems != 4 || len(c.Leaderboard) != 2 || c.Leaderboard[0].Rank != 1 || c.Leaderboard[0].Mean != insight[genA].Value {
		t.Errorf("leaderboard: %+v", c)
	}
	p := c.Pairs[0]
	if p.A != genA || p.B != genB || p.Shared != 4 || p.OnlyA != 0 || p.OnlyB != 0 || p.Result == nil {
		t.Fatalf("pair: %+v", p)
	}
	if d := insight[genA].Value - insight[genB].Value; math.Abs(p.Result.Diff-d) > 1e-12 || p.Result.CILow > p.Result.Diff || p.Result.CIHigh < p.Result.Diff {
		t.Errorf("pair %+v, want diff %v", p.Result, d)
	}

	var ag aggregate.AgreementOutput
	output(t, e, g, "stage.agreement.perms", &ag)
	// Coders are the three permutations; the dropped target is no unit.
	if len(ag.Coders) != 3 || ag.Extra["units"] != 4 || ag.Extra["dropped"] != 3 || len(ag.Pairs) != 3 || ag.Metric != "ordinal" {
		t.Errorf("agreement over permutations: %+v", ag)
	}
	if _, ok := ag.Extra["order_tau_b"]; !ok {
		t.Errorf("no order_tau_b: %+v", ag)
	}
	var jg aggregate.AgreementOutput
	output(t, e, g, "stage.agreement.judges", &jg)
	// Units are (target, permutation): 4 kept targets x 3.
	// The two instances share their key, so they are named by address.
	if len(jg.Coders) != 2 || jg.Coders[1] != addr("stage.rank_ideas.novelty2", genA) || jg.Extra["units"] != 12 || len(jg.Pairs) != 1 || jg.Pairs[0].Shared != 12 || jg.Count != 12 {
		t.Errorf("agreement between judges: %+v", jg)
	}
	if _, ok := jg.Extra["order_tau_b"]; ok {
		t.Errorf("order_tau_b between instances: %+v", jg)
	}

	// Changing resamples re-runs the bootstrap nodes that read it and the
	// report that shows them, and nothing upstream or beside them.
	sum, err = e.Run(context.Background(), build(t, dir, "resamples=2000"), engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.LLMCalls != 0 {
		t.Errorf("%d calls after changing resamples", sum.LLMCalls)
	}
	for a, st := range sum.Stages {
		wantRan := 0
		if a == addr("stage.bootstrap.novelty", genA) || a == addr("stage.bootstrap.novelty", genB) || a == "report.table" {
			wantRan = 1
		}
		if st.Ran != wantRan {
			t.Errorf("%s: %d nodes ran after changing resamples, want %d", a, st.Ran, wantRan)
		}
	}
	var b aggregate.BootstrapOutput
	output(t, e, g, addr("stage.bootstrap.novelty", genA), &b)
	if b.Extra["resamples"] != 1000 {
		t.Errorf("the first graph's node: %v resamples", b.Extra["resamples"])
	}
	output(t, e, build(t, dir, "resamples=2000"), addr("stage.bootstrap.novelty", genA), &b)
	if b.Extra["resamples"] != 2000 || b.Value != insight[genA].Value {
		t.Errorf("after the change: %+v", b)
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
