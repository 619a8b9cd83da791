package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
)

// writeScaleExperiment writes a synthetic experiment of models x items x 8
// nodes (6 independent samples + 2 ranking permutations per item and model)
// on the mock provider.
func writeScaleExperiment(tb testing.TB, dir string, models, items, n, perms int) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "data", "targets.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for i := 0; i < items; i++ {
		var refs []map[string]any
		for r := 0; r < 5; r++ {
			refs = append(refs, map[string]any{
				"id": fmt.Sprintf("t%d-r%d", i, r), "title": fmt.Sprintf("Reference %d of target %d", r, i),
				"abstract":  fmt.Sprintf("We study mechanism %d in system %d and report a measurable effect on outcome %d under controlled conditions.", r, i, i%17),
				"citations": 10 + r, "types": []string{"JournalArticle"}, "intents": []string{"background"},
			})
		}
		if err := enc.Encode(map[string]any{
			"id": fmt.Sprintf("t%d", i), "title": fmt.Sprintf("Target paper %d", i),
			"abstract": fmt.Sprintf("Target %d shows that combining mechanisms yields a new effect.", i), "references": refs,
		}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("provider \"mock\" {\n  kind = \"mock\"\n}\n")
	var refs []string
	for m := 0; m < models; m++ {
		fmt.Fprintf(&b, "model \"m%02d\" {\n  provider = provider.mock\n  name = \"mock-%02d\"\n  max_tokens = 200\n}\n", m, m)
		refs = append(refs, fmt.Sprintf("model.m%02d", m))
	}
	ranking := ""
	if perms > 0 {
		ranking = fmt.Sprintf(`
stage "rank_ideas" "novelty" {
  ideas        = stage.generate_ideas.main
  judge        = model.judge
  quality      = quality.novelty
  permutations = %d
}
stage "insight_score" "novelty" {
  ranks = stage.rank_ideas.novelty
}
report "table" {
  rows    = stage.generate_ideas.main
  columns = [stage.insight_score.novelty]
}
`, perms)
	}
	fmt.Fprintf(&b, `
model "judge" {
  provider   = provider.mock
  name       = "mock-judge"
  max_tokens = 100
}
dataset "targets" {
  format = "ideabench"
  path   = "data/targets.jsonl"
}
quality "novelty" {
  definition = "new methods"
}
stage "filter_references" "low" {
  dataset = dataset.targets
  limit   = 5
}
stage "generate_ideas" "main" {
  for_each   = { for m in [%s] : m.name => m }
  model      = each.value
  references = stage.filter_references.low
  n          = %d
}
%s`, strings.Join(refs, ", "), n, ranking)
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func loadGraph(tb testing.TB, dir string) *engine.Graph {
	tb.Helper()
	return loadGraphWith(tb, dir, engine.BuildOptions{})
}

// loadGraphWith is loadGraph with build options (a run's LayAhead).
func loadGraphWith(tb testing.TB, dir string, opts engine.BuildOptions) *engine.Graph {
	tb.Helper()
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	g, diags := engine.BuildWith(exp, opts)
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	return g
}

// BenchmarkScale measures, at 20 models x {300, 600, 1200} items x 8 nodes
// (48k, 96k, 192k model nodes), plan time on an empty and on a full cache,
// the cold run that fills the cache, and the warm re-run as a separate
// process (the CLI, as a user runs it) with its peak RSS.
func BenchmarkScale(b *testing.B) {
	for _, items := range []int{300, 600, 1200} {
		b.Run(fmt.Sprintf("items=%d", items), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchScale(b, 20, items, 6, 2)
			}
		})
	}
	// The other shape: one model, many items (filter + one idea per target).
	for _, items := range []int{25_000, 50_000, 100_000} {
		b.Run(fmt.Sprintf("one-model/items=%d", items), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchScale(b, 1, items, 1, 0)
			}
		})
	}
}

// BenchmarkScaleMillion is BenchmarkScale at issue 23's two 1M-node shapes:
// 20 models x 50,000 items (1.05M nodes with the filter's) and one model x
// 500,000 items (filter + one idea per target: 1M nodes). The targets: a
// warm run (run-warm-s, its own process) under 10 s and under 2 GiB peak
// RSS (warm-peak-MiB). Each cold run takes minutes.
//
//	go test -run '^$' -bench ScaleMillion -benchtime 1x -timeout 120m ./cmd/ideaflow/
func BenchmarkScaleMillion(b *testing.B) {
	for _, c := range []struct{ models, items int }{{20, 50_000}, {1, 500_000}} {
		b.Run(fmt.Sprintf("models=%d/items=%d", c.models, c.items), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchScale(b, c.models, c.items, 1, 0)
			}
		})
	}
}

func benchScale(b *testing.B, models, items, n, perms int) {
	dir := b.TempDir()
	exp := filepath.Join(dir, "exp")
	writeScaleExperiment(b, exp, models, items, n, perms)
	cacheDir := filepath.Join(dir, "cache")
	store, err := cache.Create(cacheDir)
	if err != nil {
		b.Fatal(err)
	}
	g := loadGraph(b, exp)
	e := &engine.Engine{Store: store, Log: zerolog.Nop(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}

	t0 := time.Now()
	p := e.Plan(g)
	planCold := time.Since(t0)
	if p.Summary.Nodes.Cached != 0 {
		b.Fatalf("cold plan: %d nodes cached in an empty cache", p.Summary.Nodes.Cached)
	}

	t0 = time.Now()
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: filepath.Join(dir, "results")})
	if err != nil {
		b.Fatal(err)
	}
	runCold := time.Since(t0)
	if sum.Nodes.Failed != 0 || sum.Nodes.Ran != sum.Nodes.Total {
		b.Fatalf("cold run: %+v", sum.Nodes)
	}

	t0 = time.Now()
	p = e.Plan(g)
	planWarm := time.Since(t0)
	if p.Summary.Nodes.ToRun != 0 {
		b.Fatalf("warm plan: %d nodes to run", p.Summary.Nodes.ToRun)
	}
	store.Close()

	// The warm re-run, as a user would type it, in its own process. The
	// cold run above was in-process and wrote no report.html, so the first
	// CLI run writes the page (collecting every node's output); the user's
	// warm re-run, measured second, finds it current.
	cliRun := func(hwm string) time.Duration {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1", "IDEAFLOW_TEST_HWM_FILE="+hwm,
			"IDEAFLOW_TEST_ARGS="+strings.Join([]string{"run", exp, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "results"),
				"--summary-json", filepath.Join(dir, "warm.json")}, "\x1f"))
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("warm run: %v\n%s", err, out)
		}
		return time.Since(t0)
	}
	withPage := cliRun(filepath.Join(dir, "page-peak-rss"))
	hwm := filepath.Join(dir, "warm-peak-rss")
	runWarm := cliRun(hwm)
	warm := readSummary(b, filepath.Join(dir, "warm.json"))
	if warm.Nodes.Ran != 0 || warm.LLMCalls != 0 {
		b.Fatalf("warm run ran %d nodes, %d calls", warm.Nodes.Ran, warm.LLMCalls)
	}
	var rssKiB float64
	if b, err := os.ReadFile(hwm); err == nil {
		fmt.Sscanf(string(b), "%f kB", &rssKiB)
	}

	b.ReportMetric(float64(sum.Nodes.Total), "nodes")
	b.ReportMetric(planCold.Seconds(), "plan-cold-s")
	b.ReportMetric(runCold.Seconds(), "run-cold-s")
	b.ReportMetric(planWarm.Seconds(), "plan-warm-s")
	b.ReportMetric(runWarm.Seconds(), "run-warm-s")
	b.ReportMetric(withPage.Seconds(), "run-warm-writing-page-s")
	b.ReportMetric(rssKiB/1024, "warm-peak-MiB")
	b.ReportMetric(warm.Phases.Load, "warm-load-s")
	b.ReportMetric(warm.Phases.Plan, "warm-plan-s")
	b.ReportMetric(float64(planWarm.Nanoseconds())/float64(sum.Nodes.Total)/1e3, "plan-warm-µs/node")
}

// BenchmarkPlanVsWarm times, as the CLI runs them in processes of their own,
// `plan` and a warm `run` of the same experiment on the same full cache,
// interleaved (plan, run, plan, run), and reports the plan over the warm run:
// a plan must never take longer than the run it describes. Shapes: one model
// x 100,000 items (issue 23's 17-27 s plan against an 8-12 s warm run), and
// 20 models x 5,000 items.
func BenchmarkPlanVsWarm(b *testing.B) {
	for _, c := range []struct{ models, items, n, perms int }{{1, 100_000, 1, 0}, {20, 5000, 1, 0}} {
		b.Run(fmt.Sprintf("models=%d/items=%d", c.models, c.items), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchPlanVsWarm(b, c.models, c.items, c.n, c.perms)
			}
		})
	}
}

func benchPlanVsWarm(b *testing.B, models, items, n, perms int) {
	dir := b.TempDir()
	exp := filepath.Join(dir, "exp")
	writeScaleExperiment(b, exp, models, items, n, perms)
	cacheDir := filepath.Join(dir, "cache")
	cli := func(args ...string) time.Duration {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1", "IDEAFLOW_TEST_ARGS="+strings.Join(args, "\x1f"))
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
		return time.Since(t0)
	}
	run := []string{"run", exp, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "results")}
	plan := []string{"plan", exp, "--cache-dir", cacheDir}
	cli(run...) // cold
	cli(run...) // writes the page
	var p, w time.Duration
	for r := 0; r < 2; r++ {
		p += cli(plan...)
		w += cli(run...)
	}
	b.ReportMetric(p.Seconds()/2, "plan-s")
	b.ReportMetric(w.Seconds()/2, "warm-run-s")
	b.ReportMetric(p.Seconds()/w.Seconds(), "plan/warm")
}

// BenchmarkBuild lays out a loaded experiment of 420,000 nodes (20 models x
// 20,000 items, plus the items' filter nodes): the part of loading that
// grows with the node count, before the first call can leave. allocs/op is
// the figure to watch (load-independent): 1.72M before a layout call's nodes
// and edges were allocated in one slab each, 0.88M after.
func BenchmarkBuild(b *testing.B) {
	exp := filepath.Join(b.TempDir(), "exp")
	writeScaleExperiment(b, exp, 20, 20_000, 1, 0)
	e, diags := config.Load(exp, config.Options{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, diags := engine.Build(e); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}
