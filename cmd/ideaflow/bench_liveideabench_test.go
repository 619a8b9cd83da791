package main

import (
	"context"
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

// BenchmarkLiveIdeaBench runs experiments/liveideabench/leaderboard.hcl at
// full size on the mock provider (-var offline=true): 20 models x 1,180
// keywords x 2 ideas, 3 judges per idea, one judged fluency pair per
// keyword and model, the score columns, the leaderboard and the report:
// 212,504 nodes, 212,400 of them model calls. The keywords, domains and
// published board are synthetic files of the same shape, so it needs no
// shared data. It measures the plan on an empty cache, the cold run, the
// plan on the full cache, and the warm re-run as its own CLI process with
// its peak RSS.
func BenchmarkLiveIdeaBench(b *testing.B) {
	for i := 0; i < b.N; i++ {
		benchLiveIdeaBench(b)
	}
}

func writeLiveIdeaBenchData(tb testing.TB, dir string, keywords int) []string {
	tb.Helper()
	var kws, cats strings.Builder
	kws.WriteString(",Keyword\n")
	cats.WriteString("keyword,category,similarity_score\n")
	domains := []string{"Physics", "Biology", "Chemistry", "Medicine", "Earth Sciences", "Computer Science"}
	for k := 0; k < keywords; k++ {
		fmt.Fprintf(&kws, "%d,keyword %d\n", k, k)
		fmt.Fprintf(&cats, "keyword %d,%s,0.5\n", k, domains[k%len(domains)])
	}
	src, err := os.ReadFile("../../experiments/liveideabench/leaderboard.hcl")
	if err != nil {
		tb.Fatal(err)
	}
	var pub strings.Builder
	pub.WriteString("Rank,Model,Fluency,Feasibility,Originality,Flexibility,Average,Model_Short,Is_Open_Source\n")
	for r, line := range strings.Split(string(src), "\n") {
		_ = r
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "name     = "); ok {
			n := strings.Count(pub.String(), "\n")
			fmt.Fprintf(&pub, "%d,%s,8,7,6,5,6.5,%s,False\n", n, strings.Trim(name, `"`), strings.Trim(name, `"`))
		}
	}
	for name, text := range map[string]string{"kws.csv": kws.String(), "cats.csv": cats.String(), "published.csv": pub.String(), "leaderboard.hcl": string(src)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return []string{"offline=true", "keywords=kws.csv", "categories=cats.csv", "published=published.csv"}
}

func benchLiveIdeaBench(b *testing.B) {
	dir := b.TempDir()
	exp := filepath.Join(dir, "exp")
	if err := os.MkdirAll(exp, 0o755); err != nil {
		b.Fatal(err)
	}
	vars := writeLiveIdeaBenchData(b, exp, 1180)
	file := filepath.Join(exp, "leaderboard.hcl")
	cacheDir := filepath.Join(dir, "cache")
	store, err := cache.Create(cacheDir)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	x, diags := config.Load(file, config.Options{Vars: vars})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	g, diags := engine.Build(x)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	load := time.Since(t0)
	e := &engine.Engine{Store: store, Log: zerolog.Nop(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}

	t0 = time.Now()
	p := e.Plan(g)
	planCold := time.Since(t0)
	if p.Summary.Nodes.Total != 212_504 || p.Summary.Nodes.Cached != 0 {
		b.Fatalf("cold plan: %+v", p.Summary.Nodes)
	}

	t0 = time.Now()
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: filepath.Join(dir, "results")})
	if err != nil {
		b.Fatal(err)
	}
	runCold := time.Since(t0)
	if sum.Nodes.Failed != 0 || sum.Nodes.Ran != sum.Nodes.Total {
		b.Fatalf("cold run: %+v, failures %v", sum.Nodes, sum.Failures)
	}

	t0 = time.Now()
	p = e.Plan(g)
	planWarm := time.Since(t0)
	if p.Summary.Nodes.ToRun != 0 {
		b.Fatalf("warm plan: %d nodes to run", p.Summary.Nodes.ToRun)
	}
	store.Close()

	args := []string{"run", file, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "results"), "--summary-json", filepath.Join(dir, "warm.json")}
	for _, v := range vars {
		args = append(args, "-var", v)
	}
	// The cold run above was in-process and wrote no report.html: the
	// first CLI run writes it (every idea and judgement collected, the
	// page's full-size cost), and the user's warm re-run, measured second,
	// finds it current.
	cliRun := func(hwm string) time.Duration {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1", "IDEAFLOW_TEST_HWM_FILE="+hwm, "IDEAFLOW_TEST_ARGS="+strings.Join(args, "\x1f"))
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("warm run: %v\n%s", err, out)
		}
		return time.Since(t0)
	}
	pageHWM := filepath.Join(dir, "page-peak-rss")
	withPage := cliRun(pageHWM)
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
	b.ReportMetric(float64(sum.LLMCalls), "calls")
	b.ReportMetric(load.Seconds(), "load-build-s")
	b.ReportMetric(planCold.Seconds(), "plan-cold-s")
	b.ReportMetric(runCold.Seconds(), "run-cold-s")
	b.ReportMetric(planWarm.Seconds(), "plan-warm-s")
	b.ReportMetric(runWarm.Seconds(), "run-warm-s")
	b.ReportMetric(withPage.Seconds(), "run-warm-writing-page-s")
	var pageKiB float64
	if b, err := os.ReadFile(pageHWM); err == nil {
		fmt.Sscanf(string(b), "%f kB", &pageKiB)
	}
	b.ReportMetric(pageKiB/1024, "writing-page-peak-MiB")
	if st, err := os.Stat(filepath.Join(dir, "results", "report.html")); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "page-MiB")
	}
	b.ReportMetric(rssKiB/1024, "warm-peak-MiB")
	b.ReportMetric(warm.Phases.Load, "warm-load-s")
	b.ReportMetric(warm.Phases.Plan, "warm-plan-s")
}
