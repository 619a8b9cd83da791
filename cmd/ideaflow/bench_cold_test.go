package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// BenchmarkColdEqualWork is the equal-work cold run measured beside other
// tools: targets x 1 idea through the real OpenAI client against the
// in-process fake server (50 ms per reply, max_concurrency 32), with the
// deterministic filter stage not cached. It reports the wall time over the
// ideal (calls x latency / concurrency) and when the first call arrived.
func BenchmarkColdEqualWork(b *testing.B) {
	// 5,000 calls, 50,000, and 100,000 (a 200k-node experiment: the
	// filter's 100,000 deterministic nodes must not delay the first call).
	for _, targets := range []int{5000, 50_000, 100_000} {
		b.Run(fmt.Sprintf("calls=%d", targets), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchCold(b, targets)
			}
		})
	}
}

func benchCold(b *testing.B, targets int) {
	const latency, conc = 50 * time.Millisecond, 32
	srv := llmtest.New(llmtest.WithLatency(latency))
	defer srv.Close()
	b.Setenv("COLD_API_KEY", "sk-cold-bench")
	dir := b.TempDir()
	exp := filepath.Join(dir, "exp")
	writeScaleExperiment(b, exp, 1, targets, 1, 0)
	main := fmt.Sprintf(`
provider "fake" {
  kind            = "openai"
  base_url        = %q
  api_key_env     = "COLD_API_KEY"
  max_concurrency = %d
}
model "gen" {
  provider   = provider.fake
  name       = "gen"
  max_tokens = 200
}
dataset "targets" {
  format = "ideabench"
  path   = "data/targets.jsonl"
}
stage "filter_references" "low" {
  dataset = dataset.targets
  limit   = 5
}
stage "generate_ideas" "main" {
  model      = model.gen
  references = stage.filter_references.low
  n          = 1
}
`, srv.URL, conc)
	if err := os.WriteFile(filepath.Join(exp, "main.hcl"), []byte(main), 0o644); err != nil {
		b.Fatal(err)
	}
	store, err := cache.Create(filepath.Join(dir, "cache"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	start := time.Now()
	g := loadGraph(b, exp)
	loaded := time.Since(start)
	e := &engine.Engine{Store: store, Log: zerolog.Nop(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: filepath.Join(dir, "results")})
	if err != nil {
		b.Fatal(err)
	}
	wall := time.Since(start)
	if sum.LLMCalls != targets || sum.Nodes.Failed != 0 {
		b.Fatalf("cold run: %d calls, %+v", sum.LLMCalls, sum.Nodes)
	}
	reqs := srv.Requests()
	first := reqs[0].Time.Sub(start)
	ideal := time.Duration(targets) * latency / conc
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
	b.ReportMetric(first.Seconds(), "first-call-s")
	// After the plan: how long until the first call, and the run phase over the ideal.
	b.ReportMetric(first.Seconds()-sum.Phases.Plan-loaded.Seconds(), "first-call-after-plan-s")
	b.ReportMetric(sum.Phases.Run/ideal.Seconds(), "run/ideal")
}

// BenchmarkFirstRequest measures how long after start (loading the
// experiment included) the first request reaches the fake server, at about
// 5k, 100k and 1M nodes (the 1M shape: 20 models x 50,000 items, plus the
// items' filter nodes). Calls start while planning goes on (engine/early.go),
// so the first leaves long before the plan of every node is complete; the
// run is cancelled once it has, and the plan's own length is reported beside.
//
// At 1M nodes it runs twice: laid out as `run` lays it out (the instances
// past engine.DefaultLayAhead nodes laid out as the walk goes) and laid
// out whole first, as before, so the two can be set side by side.
func BenchmarkFirstRequest(b *testing.B) {
	for _, c := range []struct {
		models, items int
		layAhead      int
		name          string
	}{
		{1, 2500, engine.DefaultLayAhead, ""}, {1, 50_000, engine.DefaultLayAhead, ""},
		{20, 50_000, engine.DefaultLayAhead, "/as-walked"}, {20, 50_000, 0, "/whole"},
	} {
		b.Run(fmt.Sprintf("nodes=%d%s", c.items*(c.models+1), c.name), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchFirstRequest(b, c.models, c.items, c.layAhead)
			}
		})
	}
}

func benchFirstRequest(b *testing.B, models, items, layAhead int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	var first time.Time
	srv := llmtest.New(llmtest.WithLatency(50*time.Millisecond), llmtest.WithResponder(func(r *openai.ChatCompletionRequest) string {
		once.Do(func() { first = time.Now(); cancel() })
		return llmtest.DefaultResponder(r)
	}))
	defer srv.Close()
	b.Setenv("COLD_API_KEY", "sk-cold-bench")
	dir := b.TempDir()
	exp := filepath.Join(dir, "exp")
	writeScaleExperiment(b, exp, models, items, 1, 0)
	var refs []string
	var blocks strings.Builder
	for m := 0; m < models; m++ {
		fmt.Fprintf(&blocks, "model \"m%02d\" {\n  provider = provider.fake\n  name = \"gen-%02d\"\n  max_tokens = 200\n}\n", m, m)
		refs = append(refs, fmt.Sprintf("model.m%02d", m))
	}
	main := fmt.Sprintf(`
provider "fake" {
  kind            = "openai"
  base_url        = %q
  api_key_env     = "COLD_API_KEY"
  max_concurrency = 32
}
%s
dataset "targets" {
  format = "ideabench"
  path   = "data/targets.jsonl"
}
stage "filter_references" "low" {
  dataset = dataset.targets
  limit   = 5
}
stage "generate_ideas" "main" {
  for_each   = { for m in [%s] : m.name => m }
  model      = each.value
  references = stage.filter_references.low
  n          = 1
}
`, srv.URL, blocks.String(), strings.Join(refs, ", "))
	if err := os.WriteFile(filepath.Join(exp, "main.hcl"), []byte(main), 0o644); err != nil {
		b.Fatal(err)
	}
	store, err := cache.Create(filepath.Join(dir, "cache"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	start := time.Now()
	// As `run` loads (layAhead engine.DefaultLayAhead): past it the rest is
	// laid out as the walk goes, so the first calls leave before every
	// node is laid out.
	g := loadGraphWith(b, exp, engine.BuildOptions{LayAhead: layAhead})
	loaded := time.Since(start)
	e := &engine.Engine{Store: store, Log: zerolog.Nop(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	sum, err := e.Run(ctx, g, engine.RunOptions{ReportDir: filepath.Join(dir, "results")})
	if err != nil {
		b.Fatal(err)
	}
	if first.IsZero() {
		b.Fatalf("no request reached the server: %+v", sum.Nodes)
	}
	b.ReportMetric(float64(sum.Nodes.Total), "nodes")
	b.ReportMetric(first.Sub(start).Seconds(), "first-request-s")
	b.ReportMetric(first.Sub(start).Seconds()-loaded.Seconds(), "first-request-after-load-s")
	b.ReportMetric(loaded.Seconds(), "load-s")
	b.ReportMetric(sum.Phases.Plan, "plan-s")
}
