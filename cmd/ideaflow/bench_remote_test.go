package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// BenchmarkWarmRunRemote times a warm run of the 48-node scenario three
// ways: "local" (no remote tier, everything cached locally), "tier" (the
// same, with --cache-remote on: every lookup is a local hit, the remote is
// never read), and "fresh" (a new machine: an empty local cache, every
// record read through from the in-process S3). tier/local is the cost of
// having the tier on for a warm run; fresh/local what a new machine's
// first run pays instead of the calls.
func BenchmarkWarmRunRemote(b *testing.B) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	b.Cleanup(srv.Close)
	b.Setenv("CLI_TEST_KEY", "sk-cli-test")
	_, remoteURL := fakeS3(b)
	dir := b.TempDir()
	exp := filepath.Join(dir, "exp")
	writeScenarioTB(b, exp, scenario{BaseURL: srv.URL, KeyEnv: "CLI_TEST_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5})
	warm := filepath.Join(dir, "warm")
	if code, _, stderr := benchCLI("run", exp, "--cache-dir", warm, "--cache-remote", remoteURL); code != 0 {
		b.Fatal(stderr)
	}
	for _, mode := range []string{"local", "tier", "fresh"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				args := []string{"run", exp, "--cache-dir", warm}
				switch mode {
				case "tier":
					args = append(args, "--cache-remote", remoteURL)
				case "fresh":
					b.StopTimer()
					fresh := filepath.Join(dir, "fresh")
					if err := os.RemoveAll(fresh); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					args = []string{"run", exp, "--cache-dir", fresh, "--cache-remote", remoteURL}
				}
				before := srv.Count()
				if code, _, stderr := benchCLI(args...); code != 0 || srv.Count() != before {
					b.Fatalf("exit %d, %d calls\n%s", code, srv.Count()-before, stderr)
				}
			}
		})
	}
}

// benchCLI runs the CLI in-process, its output discarded but stderr's.
func benchCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// writeScenarioTB is writeExperiment for a benchmark.
func writeScenarioTB(tb testing.TB, dir string, s scenario) {
	tb.Helper()
	for _, f := range []string{"data/targets.jsonl", "prompts/generate.tmpl"} {
		b, err := os.ReadFile(filepath.Join("../../experiments/quickstart", f))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(s.hcl()), 0o644); err != nil {
		tb.Fatal(err)
	}
}
