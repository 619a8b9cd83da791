package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/config"
)

// A graph laid out as the walk goes (BuildOptions.LayAhead: the largest
// runs, so calls start before every node is laid out) runs the same nodes
// as one laid out whole: the same counts per stage, the same calls, the
// same results digest (its nodes are in another order) and the same
// reports, cold and warm.
func TestLayAheadRunsTheSameGraph(t *testing.T) {
	load := func(t *testing.T, layAhead int) *Graph {
		exp, diags := config.Load("../experiments/quickstart", config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		g, diags := BuildWith(exp, BuildOptions{LayAhead: layAhead})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		return g
	}
	type outcome struct {
		sum     *Summary
		calls   int
		reports map[string]string
	}
	run := func(t *testing.T, store cache.Store, layAhead int) outcome {
		g := load(t, layAhead)
		rec := &recordingExec{Executor: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop()), tasks: map[string]*Task{}}
		dir := t.TempDir()
		sum, err := (&Engine{Store: store, Exec: rec}).Run(context.Background(), g, RunOptions{ReportDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		reports := map[string]string{}
		for name, b := range readDir(t, dir) {
			if !strings.HasSuffix(name, ".provenance.json") && name != "report.html" { // those hold times
				reports[name] = b
			}
		}
		return outcome{sum, len(rec.tasks), reports}
	}
	// LayAhead 1: Build lays out the instances up to the first that asks a
	// model (its calls can start), none after it.
	g := load(t, 1)
	var laid []string
	asking, after := 0, false
	for _, inst := range g.Instances {
		if inst.source {
			continue
		}
		if inst.laidOut {
			laid = append(laid, inst.Address)
			if after {
				t.Errorf("%s laid out after the first instance that asks a model", inst.Address)
			}
			if inst.asksModels() {
				asking++
				after = true
			}
		}
	}
	if asking != 1 || len(laid) == len(g.Instances)-1 {
		t.Fatalf("LayAhead 1 laid out %v at Build (%d asking a model); want up to the first that asks one", laid, asking)
	}
	eagerStore, lazyStore := cache.NewMemory(), cache.NewMemory()
	eager, lazy := run(t, eagerStore, 0), run(t, lazyStore, 1)
	if eager.sum.Nodes != lazy.sum.Nodes || eager.calls != lazy.calls || eager.calls == 0 ||
		eager.sum.ResultsDigest != lazy.sum.ResultsDigest || !reflect.DeepEqual(eager.sum.Stages, lazy.sum.Stages) {
		t.Fatalf("laid out whole: %+v, %d calls, %s\nas walked: %+v, %d calls, %s", eager.sum.Nodes, eager.calls, eager.sum.ResultsDigest, lazy.sum.Nodes, lazy.calls, lazy.sum.ResultsDigest)
	}
	if len(eager.reports) == 0 || !reflect.DeepEqual(eager.reports, lazy.reports) {
		t.Errorf("reports differ: %d files laid out whole, %d as walked", len(eager.reports), len(lazy.reports))
	}
	warm := run(t, lazyStore, 1)
	if warm.calls != 0 || warm.sum.Nodes.Cached != warm.sum.Nodes.Total || warm.sum.ResultsDigest != eager.sum.ResultsDigest {
		t.Errorf("warm as walked: %d calls, %+v, digest %s", warm.calls, warm.sum.Nodes, warm.sum.ResultsDigest)
	}
}

// What a deferred layout refuses is found by the run's plan: an input
// error, no node of the refused stage run, the others' answers kept.
func TestLayAheadLayoutErrorIsAnInputError(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../experiments/quickstart")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "main.hcl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// rank_ideas has a node per item: an expect cannot check it.
	if _, err := f.WriteString("\nexpect \"per_item\" {\n  score     = stage.rank_ideas.novelty[\"mock-generator-a\"]\n  field     = \"n\"\n  published = 1\n  tolerance = 0\n}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if _, diags := Build(exp); !diags.HasErrors() || !strings.Contains(diags.Error(), "an expect checks one number") {
		t.Fatalf("laid out whole: %v", diags)
	}
	g, diags := BuildWith(exp, BuildOptions{LayAhead: 1})
	if diags.HasErrors() {
		t.Fatalf("as walked, Build refused it already: %v", diags)
	}
	_, err = (&Engine{Store: cache.NewMemory(), Exec: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}).Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()})
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Error(), "an expect checks one number") {
		t.Fatalf("run: %v", err)
	}
}
