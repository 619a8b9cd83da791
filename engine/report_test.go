package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/config"
	_ "github.com/ideaflow/ideaflow/stages/all"
)

// cancelAfter cancels the run once it has made n calls.
type cancelAfter struct {
	Executor
	n      int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Execute(ctx context.Context, t *Task) (*Result, error) {
	if c.calls.Add(1) > c.n {
		c.cancel()
		return nil, ctx.Err()
	}
	return c.Executor.Execute(ctx, t)
}

func quickstart(t *testing.T, vars ...string) *Graph {
	t.Helper()
	exp, diags := config.Load("../experiments/quickstart", config.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return g
}

// An interrupted run never replaces a complete report: its report goes
// beside the old one, marked partial.
func TestInterruptedRunDoesNotReplaceCompleteReport(t *testing.T) {
	store := cache.NewMemory()
	dir := t.TempDir()
	g := quickstart(t)
	local := NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())
	e := &Engine{Store: store, Exec: local}
	if _, err := e.Run(context.Background(), g, RunOptions{ReportDir: dir}); err != nil {
		t.Fatal(err)
	}
	complete, err := os.ReadFile(filepath.Join(dir, "table1.md"))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.Exec = &cancelAfter{Executor: local, n: 3, cancel: cancel}
	sum, err := e.Run(ctx, quickstart(t, "n=5"), RunOptions{ReportDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted {
		t.Fatal("the run was not interrupted")
	}
	after, err := os.ReadFile(filepath.Join(dir, "table1.md"))
	if err != nil || string(after) != string(complete) {
		t.Fatalf("the complete report was replaced by an interrupted run's (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "table1.partial.md")); err != nil {
		t.Fatalf("no partial report beside the complete one: %v (reports %v)", err, sum.Reports)
	}
	// Completing the run writes the report and drops the partial one.
	e.Exec = local
	if _, err := e.Run(context.Background(), quickstart(t, "n=5"), RunOptions{ReportDir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "table1.partial.md")); !os.IsNotExist(err) {
		t.Fatalf("the partial report outlived the complete run: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "table1.md")); string(after) == string(complete) {
		t.Fatal("the completed n=5 run did not write its report")
	}
}

// copyQuickstart copies the quickstart folder so a test can edit it.
func copyQuickstart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "quickstart")
	for _, sub := range []string{"", "data", "prompts"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"main.hcl", "data/targets.jsonl", "prompts/generate.tmpl"} {
		b, err := os.ReadFile(filepath.Join("../experiments/quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(s, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func buildAt(t *testing.T, dir string, vars ...string) *Graph {
	t.Helper()
	exp, diags := config.Load(dir, config.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return g
}

// A plan's reason names exactly the params that changed since the last key
// at the node's address, in the user's words.
func TestPlanReasonsNameTheChangedParams(t *testing.T) {
	dir := copyQuickstart(t)
	main := filepath.Join(dir, "main.hcl")
	store := cache.NewMemory()
	g := buildAt(t, dir)
	e := &Engine{Store: store, Exec: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	run := func() {
		t.Helper()
		if _, err := e.Run(context.Background(), buildAt(t, dir), RunOptions{ReportDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
	}
	reasons := func() map[string]int {
		t.Helper()
		return e.Plan(buildAt(t, dir)).Summary.Stages[`stage.rank_ideas.novelty["mock-generator-a"]`].Reasons
	}
	run()

	editFile(t, main, "developing new methodologies", "devising new methodologies")
	if got := reasons(); len(got) != 1 || got["quality.definition changed"] != 4 {
		t.Fatalf("reworded definition: %v", got)
	}
	run()

	editFile(t, main, `  judge   = model.judge`, `  judge   = model.judge2`)
	if err := os.WriteFile(filepath.Join(dir, "judge2.hcl"), []byte(`
model "judge2" {
  provider    = provider.mock
  name        = "mock-judge-2"
  temperature = 0
  max_tokens  = 300
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := reasons(); len(got) != 1 || got["judge changed (mock-judge -> mock-judge-2)"] != 4 {
		t.Fatalf("judge swap: %v", got)
	}

	// Reverting both finds the earlier answers: nothing to run.
	editFile(t, main, `  judge   = model.judge2`, `  judge   = model.judge`)
	editFile(t, main, "devising new methodologies", "developing new methodologies")
	if got := reasons(); len(got) != 0 {
		t.Fatalf("after reverting: %v", got)
	}
}

// plan and run agree: on the same cache, the plan's cached / to-run counts
// per stage are the run's cached / (ran + failed + skipped), across the
// quickstart's edits. The one licensed difference: a node the plan says will
// run because an upstream call will ("upstream will run") is cached after
// all when the new answer leaves its inputs unchanged (early cutoff); no
// plan can know a model's answer.
func TestPlanAndRunAgree(t *testing.T) {
	dir := copyQuickstart(t)
	main := filepath.Join(dir, "main.hcl")
	store := cache.NewMemory()
	steps := []struct {
		name string
		edit func()
		vars []string
	}{
		{"cold", func() {}, nil},
		{"n=5", func() {}, []string{"n=5"}},
		{"reworded definition", func() { editFile(t, main, "developing new methodologies", "devising new methodologies") }, []string{"n=5"}},
		{"judge temperature", func() { editFile(t, main, "temperature = 0\n", "temperature = 0.3\n") }, []string{"n=5"}},
		{"back to n=3", func() {}, nil},
		{"warm", func() {}, nil},
	}
	for _, s := range steps {
		s.edit()
		g := buildAt(t, dir, s.vars...)
		e := &Engine{Store: store, Exec: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
		plan := e.Plan(buildAt(t, dir, s.vars...)).Summary
		sum, err := e.Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		for addr, pc := range plan.Stages {
			rc := sum.Stages[addr]
			cutoff := rc.Cached - pc.Cached
			if cutoff < 0 || cutoff > pc.Reasons["upstream will run"] || pc.ToRun-cutoff != rc.Ran+rc.Failed+rc.Skipped || pc.Total != rc.Total {
				t.Errorf("%s: %s planned %d cached / %d to run, ran %+v", s.name, addr, pc.Cached, pc.ToRun, rc.Counts)
			}
		}
		if plan.Estimate.LLMCalls != sum.LLMCalls {
			t.Errorf("%s: plan estimated %d calls, the run made %d", s.name, plan.Estimate.LLMCalls, sum.LLMCalls)
		}
	}
}

// Reports say what produced them: a footer in Markdown, a provenance file
// beside every report, and nothing that differs between two runs of the
// same results in the table files themselves.
func TestReportsCarryProvenance(t *testing.T) {
	dir := t.TempDir()
	g := quickstart(t, "n=2")
	e := &Engine{Store: cache.NewMemory(), Exec: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	opts := RunOptions{ReportDir: dir, Version: "v9.9.9", Variables: map[string]string{"n": "2"}}
	if _, err := e.Run(context.Background(), g, opts); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "table1.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Produced by ideaflow from experiment quickstart (files sha256:", "Variables: n = 2.",
		"Models: mock-generator-a; mock-generator-b; mock-judge.", "Datasets: targets sha256:",
		"Dropped by stage.filter_references.low: 1 item(s): N of N references kept, fewer than min_references = 3."} {
		if !strings.Contains(string(md), want) {
			t.Errorf("table1.md lacks %q:\n%s", want, md)
		}
	}
	var p Provenance
	b, err := os.ReadFile(filepath.Join(dir, "table1.provenance.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Ideaflow != "v9.9.9" || p.Variables["n"] != "2" || p.Models["mock-judge"]["mock-judge"] != 8 || !p.Synthetic ||
		!strings.HasPrefix(p.Datasets["targets"], "sha256:") || p.Written.IsZero() || p.ExperimentDigest != g.Exp.Source {
		t.Fatalf("provenance: %+v", p)
	}
	// A warm re-run writes the same table bytes.
	if _, err := e.Run(context.Background(), quickstart(t, "n=2"), opts); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "table1.md"))
	if string(again) != string(md) {
		t.Fatalf("a warm re-run changed table1.md:\n%s\n---\n%s", md, again)
	}
}
