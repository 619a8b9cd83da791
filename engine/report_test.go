package engine

import (
	"context"
	"os"
	"path/filepath"
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
