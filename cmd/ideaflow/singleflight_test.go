package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// An n-sweep in independent mode: sample i of n = 3 is the same request as
// sample i of n = 5, so a run sends each distinct request once, however
// many nodes share it — the same count in every fresh run.
func TestNSweepSendsEachDistinctRequestOnce(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	defer srv.Close()
	t.Setenv("SWEEP_API_KEY", "sk-sweep-test")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "SWEEP_API_KEY", Generators: []string{"gen-a"}, N: 3, Limit: 5})
	sweep := fmt.Sprintf(`
provider "sweep" {
  kind            = "openai"
  base_url        = %q
  api_key_env     = "SWEEP_API_KEY"
  max_concurrency = 8
}
model "sweeper" {
  provider    = provider.sweep
  name        = "sweeper"
  temperature = 0.8
  max_tokens  = 300
  seed        = 11 # sample i is sent with seed 11+i: each distinct request has its own body
}
stage "generate_ideas" "sweep" {
  for_each   = { for n in [1, 3, 5, 10] : tostring(n) => n }
  model      = model.sweeper
  references = stage.filter_references.low
  n          = each.value
  mode       = "independent"
}
`, srv.URL)
	if err := os.WriteFile(filepath.Join(exp, "sweep.hcl"), []byte(sweep), 0o644); err != nil {
		t.Fatal(err)
	}
	// The quickstart data keeps 4 targets under limit 5: 4 x 10 distinct
	// samples of the sweep, 4 x 3 of gen-a, 4 x 1 rankings.
	const distinct = 4*10 + 4*3 + 4
	for run := 0; run < 3; run++ {
		before := srv.Count()
		sumPath := filepath.Join(dir, fmt.Sprintf("summary-%d.json", run))
		code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, fmt.Sprintf("cache-%d", run)), "--summary-json", sumPath)
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s\n%s", run, code, stdout, stderr)
		}
		// The sweep's requests carry a seed, so distinct keys are distinct
		// bodies (gen-a's unseeded samples share a body, as README says).
		bodies := map[string]int{}
		for _, r := range srv.Requests()[before:] {
			if r.Chat != nil && r.Chat.Model == "sweeper" {
				bodies[string(r.Body)]++
			}
		}
		if len(bodies) != 40 {
			t.Fatalf("run %d: %d distinct sweep bodies, want 40", run, len(bodies))
		}
		for b, n := range bodies {
			if n > 1 {
				t.Fatalf("run %d: a request body was sent %d times: %s", run, n, b)
			}
		}
		sum := readSummary(t, sumPath)
		if got := srv.Count() - before; got != distinct || sum.LLMCalls != distinct {
			t.Fatalf("run %d: %d requests, summary %d calls; want %d (distinct keys)", run, got, sum.LLMCalls, distinct)
		}
		// 5 targets x 10 samples, the dropped target's included; which
		// instance sends a shared request first varies, the counts do not.
		if c := sum.Stages[`stage.generate_ideas.sweep["10"]`]; c.Ran != 50 || c.Total != 50 {
			t.Fatalf("run %d: n=10 instance %+v", run, c)
		}
		if sum.Deduplicated != 4*(1+3+5) {
			t.Fatalf("run %d: %d nodes shared a request, want %d", run, sum.Deduplicated, 4*(1+3+5))
		}
	}
}
