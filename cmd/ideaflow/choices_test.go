package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

const choicesExperiment = `
variable "n" { default = 5 }
provider "fake" {
  kind            = "openai"
  base_url        = %q
  api_key_env     = "CHOICES_API_KEY"
  max_concurrency = 4
  n_choices       = %v
}
model "gen" {
  provider    = provider.fake
  name        = "gen"
  temperature = 0.8
  max_tokens  = 300
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
  n          = var.n
}
`

func writeChoicesExperiment(t *testing.T, dir, url string, nChoices bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, "../../experiments/quickstart/data/targets.jsonl", filepath.Join(dir, "data/targets.jsonl"))
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(fmt.Sprintf(choicesExperiment, url, nChoices)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// promptTokens sums the prompt tokens the server billed.
func promptTokens(reqs []llmtest.Request) int {
	n := 0
	for _, r := range reqs {
		for _, m := range r.Chat.Messages {
			n += llmtest.Tokens(m.Content)
		}
	}
	return n
}

// With n_choices, the independent samples of one prompt go as one request
// with n choices: the input is sent once, each answer is cached as its own
// sample, and raising n asks only for the new samples, again as one request.
func TestIndependentSamplesAsChoices(t *testing.T) {
	t.Setenv("CHOICES_API_KEY", "sk-choices-test")
	run := func(nChoices bool, opts ...llmtest.Option) (*llmtest.Server, string, string) {
		srv := llmtest.New(append([]llmtest.Option{llmtest.WithResponder(responder)}, opts...)...)
		t.Cleanup(srv.Close)
		dir := t.TempDir()
		exp := filepath.Join(dir, "exp")
		writeChoicesExperiment(t, exp, srv.URL, nChoices)
		cacheDir := filepath.Join(dir, "cache")
		code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir)
		if code != 0 {
			t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		// The summary counts requests apart from the samples they carry.
		want := map[bool]string{false: " 20 model calls,", true: " 4 requests, 20 samples,"}[nChoices]
		if len(opts) == 0 && !strings.Contains(stdout, want) {
			t.Fatalf("run summary (n_choices %v) lacks %q:\n%s", nChoices, want, stdout)
		}
		return srv, exp, cacheDir
	}
	// The plan counts what the run will send: 4 requests with 5 choices
	// each, every target's input once.
	planDir := t.TempDir()
	planExp := filepath.Join(planDir, "exp")
	writeChoicesExperiment(t, planExp, "http://127.0.0.1:1", true)
	empty, err := cache.Create(filepath.Join(planDir, "cache-unused"))
	if err != nil {
		t.Fatal(err)
	}
	empty.Close()
	code, stdout, stderr := cli(t, "plan", planExp, "--cache-dir", filepath.Join(planDir, "cache-unused"))
	if !strings.Contains(stdout, "Estimate: 4 requests, 20 samples (n_choices: a prompt's samples share one request)") {
		t.Fatalf("plan with n_choices: exit %d\n%s\n%s", code, stdout, stderr)
	}
	writeChoicesExperiment(t, planExp, "http://127.0.0.1:1", false)
	_, stdout2, _ := cli(t, "plan", planExp, "--cache-dir", filepath.Join(planDir, "cache-unused"))
	if !strings.Contains(stdout2, "Estimate: 20 model calls,") {
		t.Fatalf("plan without n_choices:\n%s", stdout2)
	}
	t.Logf("plan:\n%s\n%s", lastLines(stdout, 3), lastLines(stdout2, 3))

	// 4 targets kept (one is dropped) x 5 samples.
	single, _, _ := run(false)
	batched, exp, cacheDir := run(true)
	if single.Count() != 20 || batched.Count() != 4 {
		t.Fatalf("requests: %d one by one, %d as choices; want 20 and 4", single.Count(), batched.Count())
	}
	for _, r := range batched.Requests() {
		if r.Chat.N != 5 {
			t.Fatalf("a batched request asked for n = %d, want 5", r.Chat.N)
		}
	}
	saved := promptTokens(single.Requests()) - promptTokens(batched.Requests())
	if saved*5 != promptTokens(single.Requests())*4 {
		t.Fatalf("input tokens: %d one by one, %d as choices; want a fifth", promptTokens(single.Requests()), promptTokens(batched.Requests()))
	}
	t.Logf("input tokens sent: %d one by one, %d as n choices (%d saved)", promptTokens(single.Requests()), promptTokens(batched.Requests()), saved)

	// Each choice is its own sample node: 20 distinct ideas in the export.
	code, out, stderr := cli(t, "export", "stage.generate_ideas.main", exp, "--cache-dir", cacheDir, "--format", "jsonl")
	if code != 0 || strings.Count(out, "\n") != 20 || !strings.Contains(out, "(choice 4)") {
		t.Fatalf("export: exit %d, %d rows\n%s\n%s", code, strings.Count(out, "\n"), out, stderr)
	}
	// Warm: nothing asked. n = 7: the two new samples, one request per target.
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 || batched.Count() != 4 {
		t.Fatalf("warm: exit %d, %d requests\n%s", code, batched.Count(), stderr)
	}
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "-var", "n=7"); code != 0 || batched.Count() != 8 {
		t.Fatalf("n = 7: exit %d, %d requests, want 8\n%s", code, batched.Count(), stderr)
	}

	// An endpoint that ignores n answers one choice: the rest are asked one by one.
	ignoring, _, _ := run(true, llmtest.WithIgnoreN())
	if ignoring.Count() != 4+16 {
		t.Fatalf("an endpoint ignoring n: %d requests, want 20 (4 batched + 16 alone)", ignoring.Count())
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// refusedChoiceScenario is the choices experiment on a fake whose first
// choice of each request holds no idea: the server, the test's folder and
// the experiment's.
func refusedChoiceScenario(t *testing.T) (*llmtest.Server, string, string) {
	t.Helper()
	t.Setenv("CHOICES_API_KEY", "sk-choices-test")
	srv := llmtest.New(llmtest.WithResponder(responder), llmtest.WithChoiceText(func(n, i int, text string) string {
		if i == 0 {
			return "" // no idea in it
		}
		return text
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeChoicesExperiment(t, exp, srv.URL, true)
	return srv, dir, exp
}

// A choice that does not parse is asked again alone, and the choice itself
// was paid for: llm_calls counts it, and the run's input tokens are the
// server's, the prompt billed with the batch (on the first choice, the one
// refused here) as well as with each lone re-ask.
func TestRefusedChoiceIsCounted(t *testing.T) {
	srv, dir, exp := refusedChoiceScenario(t)
	sumPath := filepath.Join(dir, "s.json")
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "cache"), "--summary-json", sumPath); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, sumPath)
	// 4 targets: one request with 5 choices each, then sample 0 alone.
	if srv.Count() != 8 || s.LLMCalls != 4*5+4 || s.Requests != 8 || s.Nodes.Failed != 0 {
		t.Fatalf("%d requests, llm_calls %d, requests %d, nodes %+v; want 8 requests and 24 calls", srv.Count(), s.LLMCalls, s.Requests, s.Nodes)
	}
	if in := int64(promptTokens(srv.Requests())); s.Tokens.Input != in {
		t.Errorf("input tokens %d, the server billed %d", s.Tokens.Input, in)
	}
}

func TestModelCallsText(t *testing.T) {
	for _, c := range []struct {
		requests, samples int
		want              string
	}{
		{0, 0, "0 model calls"},
		{1000, 1000, "1000 model calls"},
		{200, 1000, "200 requests, 1,000 samples"},
		{4, 20, "4 requests, 20 samples"},
		{12345, 1234567, "12,345 requests, 1,234,567 samples"},
	} {
		if got := modelCallsText(c.requests, c.samples); got != c.want {
			t.Errorf("modelCallsText(%d, %d) = %q, want %q", c.requests, c.samples, got, c.want)
		}
	}
}
