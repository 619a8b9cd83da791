package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// A run answered from the queue's results store (the answers a killed
// coordinator's workers stored, here those of a run whose cache is then
// lost: the same records) counts them apart: as many call nodes as the
// first run made calls, their tokens and cost exactly the first run's,
// as the records read say, and none of it in the run's own calls, tokens
// and cost; the summary line says so. A run whose calls are its own has
// no such count.
func TestEarlierCoordinatorsAnswersApart(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("EARLIER_TEST_KEY", "sk-test")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "EARLIER_TEST_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5, JudgePriced: true})
	f := startFleet(t, 2)
	run := func(cacheDir, summary string) string {
		code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, cacheDir), "--summary-json", filepath.Join(dir, summary), "--executor", f.url)
		if code != 0 {
			t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		return stdout
	}
	stdout := run("first", "first.json")
	first := readSummary(t, filepath.Join(dir, "first.json"))
	if first.Earlier != nil || first.LLMCalls != 32 || first.CostUSD <= 0 || strings.Contains(stdout, "earlier coordinator") {
		t.Fatalf("first run: %d calls, $%v, earlier %+v; want 32 calls of its own, priced\n%s", first.LLMCalls, first.CostUSD, first.Earlier, stdout)
	}
	calls := srv.Count()

	stdout = run("lost", "lost.json")
	again := readSummary(t, filepath.Join(dir, "lost.json"))
	if srv.Count() != calls {
		t.Fatalf("the second run made %d call(s)", srv.Count()-calls)
	}
	e := again.Earlier
	if e == nil || e.Calls != first.LLMCalls || e.Tokens != first.Tokens || e.CostUSD != first.CostUSD {
		t.Fatalf("earlier answers %+v, want the first run's %d calls, %+v tokens, $%v", e, first.LLMCalls, first.Tokens, first.CostUSD)
	}
	if again.LLMCalls != 0 || again.Requests != 0 || again.CostUSD != 0 || again.Tokens != (engine.Tokens{}) {
		t.Errorf("the second run counts %d calls, %d requests, %+v tokens, $%v as its own; want none", again.LLMCalls, again.Requests, again.Tokens, again.CostUSD)
	}
	if again.ResultsDigest != first.ResultsDigest {
		t.Errorf("results digest %s, first run %s", again.ResultsDigest, first.ResultsDigest)
	}
	want := fmt.Sprintf("%d call(s) answered by an earlier coordinator (results its workers stored before this run asked): %d+%d tokens, $%.4f, paid then, not counted above.",
		e.Calls, e.Tokens.Input, e.Tokens.Output, e.CostUSD)
	if !strings.Contains(stdout, want) {
		t.Errorf("the run does not say %q:\n%s", want, stdout)
	}
}
