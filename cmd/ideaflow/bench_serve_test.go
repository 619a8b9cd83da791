//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// BenchmarkRunWithReaders measures what readers cost a run: the same cold
// run (4 models x 40 items x 6 samples + 2 ranking permutations, 1,280
// calls to a fake endpoint answering in 5 ms, 8 at a time, as a
// rate-limited API would) alone and with two readers, separate processes
// as a user starts them, that run `cache stats` and `plan` through the
// run's socket back to back for as long as it goes. ratio is the run's wall
// time with readers over without, both measured in this one benchmark,
// alternately; reads counts the read commands that completed during each
// run with readers. A reader lowers its own priority once it reads a
// served view (yieldToRun): without that, on the 2-core VM, the readers'
// own work (loading, planning) took 18-47% more wall time from the run.
//
//	go test -run '^$' -bench RunWithReaders -benchtime 3x ./cmd/ideaflow/
func BenchmarkRunWithReaders(b *testing.B) {
	srv := llmtest.New(llmtest.WithResponder(responder), llmtest.WithLatency(5*time.Millisecond))
	defer srv.Close()
	b.Setenv("BENCH_SERVE_KEY", "sk-bench-serve")
	exp := filepath.Join(b.TempDir(), "exp")
	writeScaleExperiment(b, exp, 4, 40, 6, 2)
	main := filepath.Join(exp, "main.hcl")
	src, _ := os.ReadFile(main)
	endpoint := `provider "mock" {
  kind            = "openai"
  base_url        = "` + srv.URL + `"
  api_key_env     = "BENCH_SERVE_KEY"
  max_concurrency = 8
}
`
	if err := os.WriteFile(main, []byte(strings.Replace(string(src), "provider \"mock\" {\n  kind = \"mock\"\n}\n", endpoint, 1)), 0o644); err != nil {
		b.Fatal(err)
	}
	run := func(readers int) (time.Duration, int64) {
		cacheDir := filepath.Join(b.TempDir(), "cache")
		var stop atomic.Bool
		var reads atomic.Int64
		var wg sync.WaitGroup
		for r := 0; r < readers; r++ {
			wg.Add(1)
			go func(r int) {
				defer wg.Done()
				args := [][]string{{"cache", "stats", "--cache-dir", cacheDir}, {"plan", exp, "--cache-dir", cacheDir}}[r%2]
				for !stop.Load() {
					if _, err := os.Stat(filepath.Join(cacheDir, "serve.sock")); err != nil {
						time.Sleep(time.Millisecond) // the run has not started serving yet
						continue
					}
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1", "IDEAFLOW_TEST_ARGS="+strings.Join(args, "\x1f"))
					var errb bytes.Buffer
					cmd.Stderr = &errb
					if err := cmd.Start(); err != nil {
						b.Error(err)
						return
					}
					if cmd.Wait() == nil && strings.Contains(errb.String(), "reading the view it serves") {
						reads.Add(1)
					}
				}
			}(r)
		}
		t0 := time.Now()
		var out, errb bytes.Buffer
		code := Main([]string{"run", exp, "--cache-dir", cacheDir, "--out", b.TempDir(), "--log-level", "error"}, &out, &errb)
		took := time.Since(t0)
		stop.Store(true)
		wg.Wait()
		if code != 0 {
			b.Fatalf("run: exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		return took, reads.Load()
	}
	run(0) // warm the process: the first run pays for loading tokenizers and the like
	var alone, beside time.Duration
	var reads int64
	for i := 0; i < b.N; i++ {
		a, _ := run(0)
		w, n := run(2)
		alone += a
		beside += w
		reads += n
	}
	b.ReportMetric(alone.Seconds()/float64(b.N), "run-alone-s")
	b.ReportMetric(beside.Seconds()/float64(b.N), "run-with-readers-s")
	b.ReportMetric(float64(beside)/float64(alone), "ratio")
	b.ReportMetric(float64(reads)/float64(b.N), "reads/run")
}
