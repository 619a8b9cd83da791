package ideabench_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
)

// fullTargets is the paper's dataset size: 2,374 target papers.
const fullTargets = 2374

// writeFullDataset writes fullTargets synthetic targets shaped like the
// real ones: an abstract of about 1,300 characters, a one-sentence idea, a
// year, and 12 references with abstracts, of which 8 pass the filter.
func writeFullDataset(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	abstract := strings.Repeat("We measured how the pathway responds to the perturbation in several tissues. ", 17)
	for t := 0; t < fullTargets; t++ {
		type ref struct {
			ID        string   `json:"id"`
			Title     string   `json:"title"`
			Abstract  string   `json:"abstract"`
			Citations int      `json:"citations"`
			Types     []string `json:"types"`
			Intents   []string `json:"intents"`
		}
		refs := make([]ref, 12)
		for i := range refs {
			cites, intent := 20, "background"
			if i%3 == 2 {
				cites = 1
			}
			refs[i] = ref{ID: fmt.Sprintf("t%d-r%d", t, i), Title: fmt.Sprintf("Reference %d of target %d", i, t),
				Abstract: fmt.Sprintf("Reference %d of target %d: ", i, t) + abstract, Citations: cites,
				Types: []string{"JournalArticle"}, Intents: []string{intent}}
		}
		rec := map[string]any{"id": fmt.Sprintf("t%d", t), "title": fmt.Sprintf("Target %d", t),
			"abstract": fmt.Sprintf("Target %d. ", t) + abstract, "idea": fmt.Sprintf("Target %d's idea: the pathway drives the response.", t),
			"year": 2024, "references": refs}
		if err := enc.Encode(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // Linux: KiB
}

// BenchmarkTable1FullSize is the full-size Table 1 (experiments/ideabench/
// main.hcl on 2,374 targets: 7 generators x 2 scenarios, n = 3 independent
// requests, novelty and feasibility, similarity, overlap, both parses) on the mock
// provider. make bench runs each sub-benchmark in a process of its own, so
// peak-MiB (the process's peak resident memory, loading included) is that
// sub-benchmark's:
//
//	plan           the cold plan with BERTScore, as the paper
//	run-bertscore  a cold run into an on-disk cache, then a fresh graph
//	               planned and run warm; cache-MiB is the cache folder after
//	               the cold run
//	run-rouge      the same with ROUGE-L, which needs no service
func BenchmarkTable1FullSize(b *testing.B) {
	dir := b.TempDir()
	data := filepath.Join(dir, "targets.jsonl")
	writeFullDataset(b, data)
	runtime.GC()
	b.Run("plan", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			g := loadExperiment(b, ibExperiments+"main.hcl", "dataset="+data)
			load := time.Since(t0)
			e := &engine.Engine{Store: cache.NewMemory(), Log: zerolog.Nop()}
			t0 = time.Now()
			p := e.Plan(g)
			plan := time.Since(t0)
			if p.Summary.Nodes.Cached != 0 {
				b.Fatalf("cold plan: %d cached", p.Summary.Nodes.Cached)
			}
			b.ReportMetric(float64(p.Summary.Nodes.Total), "nodes")
			b.ReportMetric(float64(p.Summary.Estimate.LLMCalls), "planned-calls")
			b.ReportMetric(float64(p.Summary.Estimate.ServiceCalls), "planned-service-calls")
			b.ReportMetric(load.Seconds(), "load-s")
			b.ReportMetric(plan.Seconds(), "plan-s")
			b.ReportMetric(peakRSSMiB(), "peak-MiB")
		}
	})
	b.Run("run-bertscore", func(b *testing.B) { benchFullRun(b, "dataset="+data) })
	b.Run("run-rouge", func(b *testing.B) { benchFullRun(b, "dataset="+data, "similarity=rouge_l") })
}

// benchFullRun runs main.hcl with vars cold into an on-disk cache, then warm
// from a fresh graph, as a second invocation builds it.
func benchFullRun(b *testing.B, vars ...string) {
	for i := 0; i < b.N; i++ {
		g := loadExperiment(b, ibExperiments+"main.hcl", vars...)
		cacheDir := filepath.Join(b.TempDir(), "cache")
		store, err := cache.Create(cacheDir)
		if err != nil {
			b.Fatal(err)
		}
		e := &engine.Engine{Store: store, Log: zerolog.Nop(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
		t0 := time.Now()
		sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		runCold := time.Since(t0)
		if sum.Nodes.Failed != 0 || sum.Nodes.Ran != sum.Nodes.Total {
			b.Fatalf("cold run: %+v", sum.Nodes)
		}
		t0 = time.Now()
		g = loadExperiment(b, ibExperiments+"main.hcl", vars...)
		load := time.Since(t0)
		t0 = time.Now()
		p := e.Plan(g)
		planWarm := time.Since(t0)
		if p.Summary.Nodes.ToRun != 0 {
			b.Fatalf("warm plan: %d to run", p.Summary.Nodes.ToRun)
		}
		t0 = time.Now()
		warm, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		runWarm := time.Since(t0)
		if warm.Nodes.Ran != 0 || warm.LLMCalls != 0 || warm.ServiceCalls != 0 {
			b.Fatalf("warm run ran %d nodes, %d calls, %d service calls", warm.Nodes.Ran, warm.LLMCalls, warm.ServiceCalls)
		}
		store.Close()
		b.ReportMetric(float64(sum.Nodes.Total), "nodes")
		b.ReportMetric(float64(sum.LLMCalls), "calls")
		b.ReportMetric(float64(sum.ServiceCalls), "service-calls")
		b.ReportMetric(runCold.Seconds(), "run-cold-s")
		b.ReportMetric(load.Seconds(), "load-warm-s")
		b.ReportMetric(planWarm.Seconds(), "plan-warm-s")
		b.ReportMetric(runWarm.Seconds(), "run-warm-s")
		b.ReportMetric(dirMiB(b, cacheDir), "cache-MiB")
		b.ReportMetric(peakRSSMiB(), "peak-MiB")
	}
}

// dirMiB is the size of the files under dir.
func dirMiB(b *testing.B, dir string) float64 {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return float64(total) / (1 << 20)
}
