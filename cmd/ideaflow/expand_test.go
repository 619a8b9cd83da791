package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
	"github.com/ideaflow/ideaflow/stages/stagetest"
)

// The expansion scenario: a model lists each item's methods (a variable
// number), an Expander asks one question per method, an aggregate collects
// them once the expansion is complete.
const expandExperiment = `
variable "prompt" { default = "List the methods of" }

provider "fake" {
  kind            = "openai"
  base_url        = %q
  api_key_env     = "EXPAND_API_KEY"
  max_concurrency = 2
  max_retries     = 1
}

model "m" {
  provider   = provider.fake
  name       = "lister"
  max_tokens = 100
}

dataset "ideas" {
  format = "jsonl"
  path   = "items.jsonl"
}

stage "test_list" "methods" {
  items  = dataset.ideas
  model  = model.m
  prompt = var.prompt
}

stage "test_each" "search" {
  list  = stage.test_list.methods
  model = model.m
}

stage "test_collect" "all" {
  children = stage.test_each.search
}
`

var _ = stagetest.Label // registers the test stage types in the CLI

// expandLists answers each item's list; every other question gets an echo.
type expandLists struct {
	mu    sync.Mutex
	lists map[string]string
}

func (e *expandLists) respond(req *openai.ChatCompletionRequest) string {
	p := req.Messages[len(req.Messages)-1].Content
	e.mu.Lock()
	defer e.mu.Unlock()
	for item, list := range e.lists {
		if strings.HasSuffix(p, " "+item) && strings.Contains(p, "List the methods of") {
			return list
		}
	}
	return "details: " + p
}

func (e *expandLists) set(item, list string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lists[item] = list
}

func writeExpandExperiment(t *testing.T, dir, url string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(fmt.Sprintf(expandExperiment, url)), 0o644); err != nil {
		t.Fatal(err)
	}
	items := "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n{\"id\":\"d\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "items.jsonl"), []byte(items), 0o644); err != nil {
		t.Fatal(err)
	}
}

// 4 lists with 3 + 2 + 4 + 1 methods: 4 + 10 calls, 4 + 10 + 4 nodes.
func newExpandLists() *expandLists {
	return &expandLists{lists: map[string]string{
		"a": "alpha\nbeta\ngamma", "b": "delta\nepsilon", "c": "zeta\neta\ntheta\niota", "d": "kappa",
	}}
}

func TestExpansionThroughTheCLI(t *testing.T) {
	lists := newExpandLists()
	srv := llmtest.New(llmtest.WithResponder(lists.respond))
	defer srv.Close()
	t.Setenv("EXPAND_API_KEY", "sk-expand-test")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExpandExperiment(t, exp, srv.URL)
	cacheDir := filepath.Join(dir, "cache")
	sumPath := filepath.Join(dir, "summary.json")

	empty, err := cache.Create(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	empty.Close()
	code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir)
	t.Logf("cold plan:\n%s", stdout)
	if code != 0 || !strings.Contains(stdout, "expands after stage.test_list.methods runs (at most 20 per item, 4 item(s) to expand)") ||
		!strings.Contains(stdout, "laid out after stage.test_each.search is complete") {
		t.Fatalf("cold plan: exit %d\n%s\n%s", code, stdout, stderr)
	}

	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sum := readSummary(t, sumPath)
	if srv.Count() != 14 || sum.LLMCalls != 14 || sum.Nodes.Total != 18 || sum.Nodes.Ran != 18 {
		t.Fatalf("cold run: %d requests, summary %+v", srv.Count(), sum.Nodes)
	}
	if got := sum.Stages["stage.test_each.search"].Ran; got != 10 {
		t.Fatalf("children ran: %d, want 10", got)
	}
	// The wall time is the whole command's: its phases fit inside it.
	if ph := sum.Phases; ph.Plan <= 0 || ph.Run <= 0 || sum.WallSeconds < ph.Load+ph.Plan+ph.Run+ph.Reports {
		t.Fatalf("wall %.3f s, phases %+v", sum.WallSeconds, ph)
	}

	code, _, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath)
	if sum = readSummary(t, sumPath); code != 0 || srv.Count() != 14 || sum.Nodes.Cached != 18 {
		t.Fatalf("warm run: exit %d, %d requests, %+v\n%s", code, srv.Count(), sum.Nodes, stderr)
	}

	// One upstream answer changes (a new prompt re-asks every list; only a's
	// answer differs, by one method): exactly 4 lists + 1 new child.
	lists.set("a", "gamma\nalpha\nbeta\nlambda")
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath, "-var", "prompt=Please, List the methods of")
	sum = readSummary(t, sumPath)
	if code != 0 || srv.Count() != 14+5 {
		t.Fatalf("after the change: exit %d, %d requests, want 19\n%s\n%s", code, srv.Count(), stdout, stderr)
	}
	if c := sum.Stages["stage.test_each.search"]; c.Ran != 1 || c.Cached != 10 {
		t.Fatalf("children after the change: %+v", c)
	}

	// gc keeps the children the experiment reaches, so --offline still runs.
	if code, stdout, stderr := cli(t, "cache", "gc", exp, "--yes", "--cache-dir", cacheDir, "-var", "prompt=Please, List the methods of"); code != 0 {
		t.Fatalf("gc: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--offline", "-var", "prompt=Please, List the methods of")
	if code != 0 || srv.Count() != 19 {
		t.Fatalf("offline after gc: exit %d, %d requests\n%s\n%s", code, srv.Count(), stdout, stderr)
	}

	// A bundle carries the children: a fresh cache reproduces offline.
	bundle := filepath.Join(dir, "exp.bundle")
	if code, stdout, stderr := cli(t, "cache", "export", bundle, "--experiment", exp, "--cache-dir", cacheDir, "-var", "prompt=Please, List the methods of"); code != 0 {
		t.Fatalf("export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	fresh := filepath.Join(dir, "fresh")
	if code, stdout, stderr := cli(t, "cache", "import", bundle, "--cache-dir", fresh); code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Setenv("EXPAND_API_KEY", "")
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", fresh, "--offline", "--summary-json", sumPath, "-var", "prompt=Please, List the methods of")
	if sum = readSummary(t, sumPath); code != 0 || srv.Count() != 19 || sum.Nodes.Cached != 19 {
		t.Fatalf("offline from the bundle: exit %d, %d requests, %+v\n%s\n%s", code, srv.Count(), sum.Nodes, stdout, stderr)
	}
}

// TestKilledMidExpansionLosesNothing kills a run while children are being
// asked; the re-run asks only for what had not completed.
func TestKilledMidExpansionLosesNothing(t *testing.T) {
	lists := newExpandLists()
	srv := llmtest.New(llmtest.WithResponder(lists.respond), llmtest.WithLatency(25*time.Millisecond))
	defer srv.Close()
	t.Setenv("EXPAND_API_KEY", "sk-expand-test")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExpandExperiment(t, exp, srv.URL)
	cacheDir := filepath.Join(dir, "cache")

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1",
		"IDEAFLOW_TEST_ARGS="+strings.Join([]string{"run", exp, "--cache-dir", cacheDir, "--log-level", "warn"}, "\x1f"))
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for answered(srv) < 8 { // the 4 lists and some children
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatalf("child made only %d requests in 30 s", srv.Count())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	// What the cache holds is what completed; answers still in flight at
	// the kill are lost, and only those.
	store, err := cache.Open(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	completed := 0
	err = store.List(func(e cache.Entry) error {
		rec, err := store.Get(e.Key)
		if err == nil && rec.Model != "" {
			completed++
		}
		return err
	})
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	if completed < 5 || completed >= 14 {
		t.Fatalf("the kill was not mid-expansion: %d of 14 calls completed", completed)
	}
	before := settledCount(srv)
	sumPath := filepath.Join(dir, "summary.json")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := srv.Count() - before; got != 14-completed {
		t.Errorf("resume sent %d requests; want %d (14 - %d completed before the kill)", got, 14-completed, completed)
	}
	if sum := readSummary(t, sumPath); sum.Nodes.Total != 18 || sum.Nodes.Failed != 0 {
		t.Fatalf("resumed run: %+v", sum.Nodes)
	}
}
