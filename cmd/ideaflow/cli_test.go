package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
	_ "github.com/ideaflow/ideaflow/stages/stagetest"
)

// newScenario starts a fake server and writes the two-generator experiment.
func newScenario(t *testing.T, opts ...llmtest.Option) (*llmtest.Server, string, string, scenario) {
	t.Helper()
	srv := llmtest.New(append([]llmtest.Option{llmtest.WithResponder(responder)}, opts...)...)
	t.Cleanup(srv.Close)
	t.Setenv("CLI_TEST_KEY", "sk-cli-test")
	dir := t.TempDir()
	sc := scenario{BaseURL: srv.URL, KeyEnv: "CLI_TEST_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5}
	writeExperiment(t, filepath.Join(dir, "exp"), sc)
	return srv, filepath.Join(dir, "exp"), filepath.Join(dir, "cache"), sc
}

func TestOfflineFailsBeforeAnyCall(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--offline")
	if code != exitBadInput || srv.Count() != 0 {
		t.Fatalf("offline on an empty cache: exit %d, %d requests; want exit 2 and none\n%s", code, srv.Count(), stderr)
	}
	if !strings.Contains(stderr, "32 model node(s) are not in the cache") {
		t.Errorf("stderr does not say how many nodes are missing:\n%s", stderr)
	}
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("online run: exit %d\n%s", code, stderr)
	}
	n := srv.Count()
	// A fully cached experiment runs offline, and without its API key.
	t.Setenv("CLI_TEST_KEY", "")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--offline"); code != 0 || srv.Count() != n {
		t.Fatalf("offline on a full cache: exit %d, %d new requests\n%s", code, srv.Count()-n, stderr)
	}
}

func TestMissingKeyIsBadInputBeforeAnyCall(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	t.Setenv("CLI_TEST_KEY", "")
	code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir)
	if code != exitBadInput || srv.Count() != 0 {
		t.Fatalf("exit %d with %d requests; want 2 and none\n%s", code, srv.Count(), stderr)
	}
	if !strings.Contains(stderr, "main.hcl:7:") || !strings.Contains(stderr, "Missing API key") || !strings.Contains(stderr, "CLI_TEST_KEY") {
		t.Errorf("stderr should point at api_key_env and name the variable:\n%s", stderr)
	}
}

// TestFailedNodesAreRecordedAndRetried makes the server refuse every ranking
// request with a 400: those nodes fail with the server's message, the
// Insight Score aggregates what it has (counting the failures), the exit code
// is 1, and the next run retries exactly the failed nodes.
func TestFailedNodesAreRecordedAndRetried(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	failing := true
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
		if failing && rankInstruction.MatchString(r.Chat.Messages[len(r.Chat.Messages)-1].Content) {
			return llmtest.Fault{Status: 400, Message: "context length exceeded"}, true
		}
		return llmtest.Fault{}, false
	})
	sum := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sum)
	if code != exitFailedNodes {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, sum)
	if s.Nodes.Failed != 8 || s.Stages[stage(rank, "gen-a")].Failed != 4 || s.Stages[stage(rank, "gen-b")].Failed != 4 {
		t.Fatalf("failed = %d (rank gen-a %d), want 8 and 4", s.Nodes.Failed, s.Stages[stage(rank, "gen-a")].Failed)
	}
	if !strings.Contains(s.Failures[0].Error, "context length exceeded") {
		t.Errorf("failure does not carry the server's message: %q", s.Failures[0].Error)
	}
	if s.Stages[stage(ins, "gen-a")].Ran != 1 || s.Nodes.Skipped != 0 {
		t.Errorf("the insight score should aggregate despite failures: %+v, skipped %d", s.Stages[stage(ins, "gen-a")], s.Nodes.Skipped)
	}
	if requests := srv.Count(); requests != 32 {
		t.Errorf("400s must not be retried: %d requests, want 32", requests)
	}
	failing = false
	before := srv.Count()
	code, _, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sum)
	if code != 0 || srv.Count()-before != 8 {
		t.Fatalf("retry run: exit %d, %d requests; want 0 and 8\n%s", code, srv.Count()-before, stderr)
	}
}

func TestMaxCostStopsDispatching(t *testing.T) {
	srv, exp, cacheDir, sc := newScenario(t)
	sc.JudgePriced = true // a budget binds only priced models (TestMaxCostRefusesUnpricedModels)
	writeExperiment(t, exp, sc)
	sum := filepath.Join(t.TempDir(), "s.json")
	// Each generation request is estimated at about 300 output + ~250 input tokens:
	// about $0.00085 at $1/$2 per million. A budget of $0.005 admits a handful.
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--max-cost", "0.005", "--summary-json", sum)
	if code != exitBudget || !strings.Contains(stderr, "stopped by --max-cost $0.005") {
		t.Fatalf("exit %d, want %d (budget)\n%s\n%s", code, exitBudget, stdout, stderr)
	}
	s := readSummary(t, sum)
	if !s.BudgetExhausted || s.CostUSD > 0.005 || srv.Count() == 0 || srv.Count() >= 24 {
		t.Fatalf("budget: exhausted=%v cost=%v requests=%d", s.BudgetExhausted, s.CostUSD, srv.Count())
	}
	if s.LLMCalls != srv.Count() || s.Nodes.Skipped == 0 {
		t.Errorf("calls %d vs requests %d; skipped %d", s.LLMCalls, srv.Count(), s.Nodes.Skipped)
	}
	if !strings.Contains(stdout, "Budget reached") {
		t.Errorf("stdout does not say the budget was reached:\n%s", stdout)
	}
}

func TestInterruptKeepsCompletedWork(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	g := loadGraph(t, exp)
	ctx, cancel := context.WithCancel(context.Background())
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
		if r.Seq == 10 {
			cancel()
		}
		return llmtest.Fault{}, false
	})
	store := openTestCache(t, cacheDir)
	e := &engine.Engine{Store: store, Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), nopLog)}
	s, err := e.Run(ctx, g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || s.Nodes.Ran == 0 || s.Nodes.Skipped == 0 {
		t.Fatalf("interrupted=%v ran=%d skipped=%d", s.Interrupted, s.Nodes.Ran, s.Nodes.Skipped)
	}
	made := settledCount(srv) // a request cancelled in flight may reach the server late
	s2, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Every model node is asked exactly once over both runs, except those
	// cancelled in flight, which the first run did not store.
	if s2.Nodes.Failed != 0 || s.LLMCalls+s2.LLMCalls != 32 || srv.Count()-made != s2.LLMCalls {
		t.Fatalf("first %d calls, second %d calls (server %d then %d)", s.LLMCalls, s2.LLMCalls, made, srv.Count()-made)
	}
}

func TestPlanJSONAndReasons(t *testing.T) {
	_, exp, cacheDir, sc := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	sc.JudgeTemperature = 0.3
	writeExperiment(t, exp, sc)
	code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir, "--json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var p struct {
		Nodes    map[string]int `json:"nodes"`
		Estimate map[string]any `json:"estimate"`
		Stages   map[string]struct {
			Reasons  map[string]int `json:"reasons"`
			Estimate *struct {
				LLMCalls int `json:"llm_calls"`
			} `json:"estimate"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if p.Nodes["total"] != 48 || p.Nodes["to_run"] != 8+2+1 || p.Estimate["llm_calls"].(float64) != 8 {
		t.Fatalf("plan: %v estimate %v", p.Nodes, p.Estimate)
	}
	if got := p.Stages[stage(rank, "gen-a")].Reasons["judge.temperature changed (0 -> 0.3)"]; got != 4 {
		t.Errorf("reasons: %v", p.Stages[stage(rank, "gen-a")].Reasons)
	}
	if e := p.Stages[stage(rank, "gen-a")].Estimate; e == nil || e.LLMCalls != 4 {
		t.Errorf("per-stage estimate of the rankings: %+v", e)
	}
	if e := p.Stages[stage(gen, "gen-a")].Estimate; e != nil {
		t.Errorf("cached generations have an estimate: %+v", e)
	}
	code, stdout, _ = cli(t, "plan", exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "judge.temperature changed (0 -> 0.3)") || !strings.Contains(stdout, "Estimate: 8 model calls") {
		t.Errorf("text plan:\n%s", stdout)
	}
}

func TestMovedFolderStaysCached(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	moved := filepath.Join(t.TempDir(), "renamed-experiment")
	if err := os.Rename(exp, moved); err != nil {
		t.Fatal(err)
	}
	before := srv.Count()
	sum := filepath.Join(t.TempDir(), "s.json")
	if code, _, stderr := cli(t, "run", moved, "--cache-dir", cacheDir, "--summary-json", sum); code != 0 {
		t.Fatal(stderr)
	}
	if s := readSummary(t, sum); s.Nodes.Cached != s.Nodes.Total || srv.Count() != before {
		t.Fatalf("after moving the folder: %+v, %d requests", s.Nodes, srv.Count()-before)
	}
}

func TestValidateAndGraph(t *testing.T) {
	_, exp, _, _ := newScenario(t)
	code, stdout, stderr := cli(t, "validate", exp)
	if code != 0 || !strings.Contains(stdout, "is valid: 8 stage instances, 48 nodes over 5 items") {
		t.Fatalf("validate: %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = cli(t, "graph", exp, "--format", "mermaid")
	if code != 0 || !strings.Contains(stdout, "flowchart LR") || strings.Count(stdout, "-->") != 11 {
		t.Errorf("mermaid graph:\n%s", stdout)
	}
	code, stdout, _ = cli(t, "graph", exp, "--format", "dot")
	if code != 0 || !strings.HasPrefix(stdout, "digraph ideaflow {") || strings.Count(stdout, "->") != 11 {
		t.Errorf("dot graph:\n%s", stdout)
	}
	if code, _, _ := cli(t, "graph", exp, "--format", "svg"); code != exitBadInput {
		t.Errorf("unknown format: exit %d", code)
	}
}

func TestBadExperimentExitsTwoWithLocation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("model \"a\" {\n  provider = provider.none\n  name = 3\n  colour = \"red\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli(t, "validate", dir)
	if code != exitBadInput {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"main.hcl:2:14: error: Reference to undeclared provider", "main.hcl:4:3: error: Unsupported argument", "2 error(s)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestServedModelDrift: the endpoint answers the first run's generations as
// one model and, after the judge changes, the new rankings as another; the
// summary counts what served each requested name and the CLI says so.
func TestServedModelDrift(t *testing.T) {
	srv, exp, cacheDir, sc := newScenario(t)
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
		return llmtest.Fault{ServedModel: r.Chat.Model + "-2024-08-06"}, true
	})
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
		return llmtest.Fault{ServedModel: r.Chat.Model + "-2025-01-01"}, true
	})
	sc.JudgeTemperature = 0.5
	writeExperiment(t, exp, sc)
	sum := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sum)
	if code != 0 {
		t.Fatal(stderr)
	}
	s := readSummary(t, sum)
	if got := s.ServedModels["judge-model"]; got["judge-model-2025-01-01"] != 8 || len(got) != 1 {
		t.Errorf("judge served by %v, want 8 new answers from judge-model-2025-01-01", got)
	}
	if got := s.ServedModels["gen-a"]; got["gen-a-2024-08-06"] != 12 || len(got) != 1 {
		t.Errorf("gen-a served by %v, want its 12 cached answers from gen-a-2024-08-06", got)
	}
	if !strings.Contains(stdout, `note: answers for model "gen-a" came from gen-a-2024-08-06 (12)`) {
		t.Errorf("stdout does not note the served model:\n%s", stdout)
	}
	if st := s.Stages[stage(rank, "gen-a")]; st.LLMCalls != 4 || st.Tokens == nil || st.Tokens.Input == 0 || st.CostUSD != 0 {
		t.Errorf("per-stage usage of the rankings: %+v", st)
	}
}

// TestIntermittentFaultsCompleteEveryNode: every 5th request fails in a way a
// real endpoint fails (429 with Retry-After, 500, 503, a body cut short,
// malformed JSON); the run still completes every node, and no prompt is
// answered twice.
func TestIntermittentFaultsCompleteEveryNode(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	faults := []llmtest.Fault{{Status: 429, RetryAfter: "0"}, {Status: 500}, {Status: 503}, {CutBody: true}, {Malformed: true}}
	srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
		if r.Seq%5 == 0 {
			return faults[(r.Seq/5)%len(faults)], true
		}
		return llmtest.Fault{}, false
	})
	sum := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sum)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, sum)
	if s.Nodes.Ran != 48 || s.Nodes.Failed != 0 || s.LLMCalls != 32 {
		t.Fatalf("nodes %+v, calls %d", s.Nodes, s.LLMCalls)
	}
	// Every model node got exactly one good answer: 32 good replies in all
	// (independent samples of one target send identical bodies, so bodies
	// are not unique), and every other request was a fault that was retried.
	good, faulty := 0, 0
	for _, r := range srv.Requests() {
		if r.Answered && r.Fault == (llmtest.Fault{}) {
			good++
		} else {
			faulty++
		}
	}
	if good != 32 || faulty == 0 || good+faulty != srv.Count() {
		t.Fatalf("%d good and %d faulty replies of %d requests; want 32 good", good, faulty, srv.Count())
	}
}

func TestValidateWarnsAboutMissingKey(t *testing.T) {
	_, exp, _, _ := newScenario(t)
	t.Setenv("CLI_TEST_KEY", "")
	code, stdout, stderr := cli(t, "validate", exp)
	if code != 0 || !strings.Contains(stdout, "is valid") {
		t.Fatalf("a missing key must not make validate fail: %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "main.hcl:7:21: warning: Missing API key") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// A model without a price block has an unknown cost, never $0: plan names
// it and sums only the known prices.
func TestPlanNamesModelsWithoutAPrice(t *testing.T) {
	_, exp, cacheDir, sc := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	// Only the unpriced judge must run again.
	sc.JudgeTemperature = 0.5
	writeExperiment(t, exp, sc)
	code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "cost unknown (no price for model.judge)") || strings.Contains(stdout, "for priced models") {
		t.Fatalf("judge only: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Generators (priced) and the judge (not): a partial sum, said so.
	code, stdout, _ = cli(t, "plan", exp, "--cache-dir", cacheDir, "-var", "n=5")
	if code != 0 || !strings.Contains(stdout, "for priced models, cost unknown (no price for model.judge)") {
		t.Fatalf("mixed: exit %d\n%s", code, stdout)
	}
}

// A wrong API key stops dispatch to its provider after one request: the
// run ends saying the provider is unavailable, with the failure exit code.
func TestWrongKeyStopsAfterOneRequest(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder), llmtest.WithAPIKey("sk-the-right-key"))
	defer srv.Close()
	t.Setenv("WRONG_KEY", "sk-a-wrong-key-here")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "WRONG_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5})
	sumPath := filepath.Join(dir, "s.json")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "cache"), "--summary-json", sumPath)
	if code != exitFailedNodes || srv.Count() != 1 {
		t.Fatalf("wrong key: exit %d, %d requests; want exit 1 after 1 request\n%s\n%s", code, srv.Count(), stdout, stderr)
	}
	sum := readSummary(t, sumPath)
	// Calls already handed to the client fail at once without a request;
	// the rest are not dispatched.
	if sum.Unavailable["fake"] == "" || !strings.Contains(stdout, "provider fake unavailable: ") || sum.LLMCalls != 0 ||
		sum.Nodes.Failed+sum.Skipped["provider unavailable"] != 24 {
		t.Fatalf("summary %+v %v\n%s", sum.Nodes, sum.Unavailable, stdout)
	}
	if strings.Contains(stdout+stderr, "sk-a-wrong-key-here") {
		t.Fatal("the key was printed")
	}
}

// validate warns about a report that cannot fill: its column's instance
// keys match none of its rows'.
func TestValidateWarnsAboutAReportThatCannotFill(t *testing.T) {
	_, exp, _, _ := newScenario(t)
	extra := `
stage "generate_ideas" "alt" {
  for_each   = { alt = model.gen-a }
  model      = each.value
  references = stage.filter_references.low
  n          = 1
}
stage "rank_ideas" "alt" {
  ideas   = stage.generate_ideas.alt
  judge   = model.judge
  quality = quality.novelty
}
stage "insight_score" "alt" {
  ranks = stage.rank_ideas.alt
}
report "mismatch" {
  rows    = stage.generate_ideas.main
  columns = [stage.insight_score.novelty, stage.insight_score.alt]
}
`
	if err := os.WriteFile(filepath.Join(exp, "extra.hcl"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "validate", exp)
	if code != 0 || !strings.Contains(stderr, "warning: Check report.mismatch") ||
		!strings.Contains(stderr, "column insight_score.alt matches no row: its instance keys (alt) are none of the rows' (gen-a, gen-b)") ||
		strings.Contains(stderr, "column insight_score.novelty") {
		t.Fatalf("validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "extra.hcl:18:13: warning") {
		t.Errorf("the warning does not point at the columns attribute:\n%s", stderr)
	}
}

// All errors in one pass: a reference error does not hide a type error in
// another block, nor a dataset error found while laying out a third.
func TestValidateReportsIndependentErrorsInOnePass(t *testing.T) {
	dir := t.TempDir()
	hcl := `
provider "mock" {
  kind = "mock"
}
model "m" {
  provider = provider.mock
  name     = "m"
}
dataset "good" {
  format = "jsonl"
  path   = "good.jsonl"
}
dataset "broken" {
  format = "jsonl"
  path   = "broken.jsonl"
}
stage "test_list" "undeclared" {
  items = dataset.good
  model = model.nope
}
stage "test_list" "typed" {
  items  = dataset.good
  model  = model.m
  prompt = ["not", "a", "string"]
}
stage "test_list" "reads_broken" {
  items = dataset.broken
  model = model.m
}
`
	for name, body := range map[string]string{"exp.hcl": hcl, "good.jsonl": "{\"id\":\"a\"}\n", "broken.jsonl": "{\"id\":\"a\"}\n{not json\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := cli(t, "validate", dir)
	if code != exitBadInput {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"exp.hcl:19:11: error: Reference to undeclared model", "exp.hcl:24:12: error: Wrong type for prompt", "Cannot load dataset \"broken\"", "broken.jsonl:2"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("one pass lacks %q:\n%s", want, stderr)
		}
	}
}

// TestRefusedAnswersCountAsCalls: a judge that never gives a ranking is
// re-asked (a repair) and then the node fails; every completion it was asked
// for was paid for, so llm_calls equals the requests the server answered.
func TestRefusedAnswersCountAsCalls(t *testing.T) {
	answer := func(req *openai.ChatCompletionRequest) string {
		if rankInstruction.MatchString(req.Messages[0].Content) || rankInstruction.MatchString(req.Messages[len(req.Messages)-1].Content) {
			return "These ideas are all interesting in their own ways."
		}
		return responder(req)
	}
	srv := llmtest.New(llmtest.WithResponder(answer))
	t.Cleanup(srv.Close)
	t.Setenv("CLI_TEST_KEY", "sk-cli-test")
	dir := t.TempDir()
	writeExperiment(t, filepath.Join(dir, "exp"), scenario{BaseURL: srv.URL, KeyEnv: "CLI_TEST_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5})
	sum := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr := cli(t, "run", filepath.Join(dir, "exp"), "--cache-dir", filepath.Join(dir, "cache"), "--summary-json", sum)
	if code != exitFailedNodes {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, sum)
	if s.Nodes.Failed != 8 {
		t.Fatalf("failed = %d, want the 8 rankings", s.Nodes.Failed)
	}
	// 24 generations, and each ranking asked and re-asked at least once.
	if s.LLMCalls != srv.Count() || srv.Count() < 24+16 {
		t.Errorf("llm_calls = %d, server answered %d requests; want them equal (>= 40)", s.LLMCalls, srv.Count())
	}
	// Their tokens are counted too: the summary's totals are the usage the
	// server reported (its prompt and completion counts, recomputed).
	var in, out int64
	for _, r := range srv.Requests() {
		for _, m := range r.Chat.Messages {
			in += int64(llmtest.Tokens(m.Content))
		}
		out += int64(llmtest.Tokens(answer(r.Chat)))
	}
	if s.Tokens.Input != in || s.Tokens.Output != out {
		t.Errorf("tokens %+v, the server reported %d in and %d out", s.Tokens, in, out)
	}
	rank := s.Stages[`stage.rank_ideas.novelty["gen-a"]`]
	if rank.Tokens == nil || rank.Tokens.Output == 0 || rank.Failed != 4 {
		t.Errorf("a failed ranking stage: %+v", rank)
	}
}

// TestValidateWarnsOnlyForUsedProviders: a provider block no used model
// points at (a gateway beside the mock, chosen by a variable) needs no key,
// so validate does not warn about it; switched on, it does.
func TestValidateWarnsOnlyForUsedProviders(t *testing.T) {
	t.Setenv("UNUSED_GATEWAY_KEY", "")
	dir := t.TempDir()
	hcl := `
variable "offline" {
  default = true
}
provider "mock" {
  kind = "mock"
}
provider "gateway" {
  kind        = "openai"
  base_url    = "http://localhost:8000/v1"
  api_key_env = "UNUSED_GATEWAY_KEY"
}
model "m" {
  provider = var.offline ? provider.mock : provider.gateway
  name     = "m"
}
dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}
stage "filter_references" "f" {
  dataset = dataset.targets
}
stage "generate_ideas" "g" {
  model      = model.m
  references = stage.filter_references.f
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := `{"id":"t1","title":"T","abstract":"A","references":[{"id":"r1","title":"R","abstract":"B","citations":9,"intents":["background"]}]}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "targets.jsonl"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli(t, "validate", dir)
	if code != 0 || strings.Contains(stderr, "Missing API key") {
		t.Fatalf("offline: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = cli(t, "validate", dir, "-var", "offline=false")
	if code != 0 || !strings.Contains(stderr, "UNUSED_GATEWAY_KEY") {
		t.Fatalf("online: exit %d, want a warning naming UNUSED_GATEWAY_KEY:\n%s", code, stderr)
	}
}
