package engine

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/executor"
)

// recordingExec remembers every task it was handed, by address, and fails
// the addresses in fail.
type recordingExec struct {
	Executor
	fail  map[string]bool
	mu    sync.Mutex
	tasks map[string]*Task
}

func (r *recordingExec) Execute(ctx context.Context, t *Task) (*Result, error) {
	r.mu.Lock()
	r.tasks[t.Address] = t
	r.mu.Unlock()
	if r.fail[t.Address] {
		return nil, &ExecError{Err: errors.New("model said no"), Raw: "I cannot.", Attempts: []executor.Attempt{{Error: "model said no", Raw: "I cannot.", Status: 400}}}
	}
	return r.Executor.Execute(ctx, t)
}

const (
	genA   = `stage.generate_ideas.main["mock-generator-a"]`
	rankA  = `stage.rank_ideas.novelty["mock-generator-a"]`
	sample = genA + "/qs-membrane/sample 1"
)

// inspectQuickstart runs the quickstart on the mock (failing the nodes in
// fail) and returns a fresh plan with its engine and what was sent.
func inspectQuickstart(t *testing.T, fail ...string) (*Engine, *Plan, *recordingExec) {
	t.Helper()
	store := cache.NewMemory()
	g := quickstart(t)
	rec := &recordingExec{Executor: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop()), fail: map[string]bool{}, tasks: map[string]*Task{}}
	for _, a := range fail {
		rec.fail[a] = true
	}
	e := &Engine{Store: store, Exec: rec}
	if _, err := e.Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	return e, e.Plan(quickstart(t)), rec
}

func TestInspectShowsTheRequestAsSent(t *testing.T) {
	e, p, rec := inspectQuickstart(t)
	views, err := e.Inspect(p, sample, InspectOptions{Render: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 1 {
		t.Fatalf("%d views, want 1", len(views))
	}
	v := views[0]
	sent := rec.tasks[sample]
	if sent == nil {
		t.Fatalf("no task was sent for %s", sample)
	}
	if v.Status != "cached" || v.Work != "call" || v.Key != sent.Key || len(v.Notes) != 0 {
		t.Errorf("status %q work %q key %s notes %v; want cached call with key %s", v.Status, v.Work, v.Key, v.Notes, sent.Key)
	}
	if !reflect.DeepEqual(*v.Request, *sent.Chat) {
		t.Errorf("request re-rendered:\n%+v\nsent:\n%+v", *v.Request, *sent.Chat)
	}
	if v.Item != "qs-membrane" || v.Slot != 1 || v.Label != "sample 1" || v.InstanceKey != "mock-generator-a" || v.Provider != "mock" {
		t.Errorf("identity: %+v", v)
	}
	if v.Generator == nil || *v.Generator != (ModelName{Name: "mock-generator-a", Family: "mock-a"}) {
		t.Errorf("generator %+v", v.Generator)
	}
	if want := []string{"stage.filter_references.low/qs-membrane"}; !reflect.DeepEqual(v.Inputs, want) {
		t.Errorf("inputs %v, want %v", v.Inputs, want)
	}
	var out struct{ Ideas []string }
	if err := json.Unmarshal(v.Result.Output, &out); err != nil || len(out.Ideas) != 1 || !strings.Contains(v.Result.Raw, out.Ideas[0][:40]) {
		t.Errorf("output %s (err %v), raw %q", v.Result.Output, err, v.Result.Raw)
	}
	if v.Result.Model != "mock-generator-a" || v.Result.Usage.Attempts != 1 || !v.Result.Synthetic {
		t.Errorf("result %+v", v.Result)
	}
	names := map[string]string{}
	for _, part := range v.Parts {
		names[part.Name] = part.Display
	}
	if names["model"] != "mock-generator-a" || names["model.temperature"] != "0.8" || names["sample"] != "1" {
		t.Errorf("parts %v", names)
	}
}

func TestInspectMatchesItemsInstancesAndBlocks(t *testing.T) {
	e, p, _ := inspectQuickstart(t)
	tests := []struct {
		address string
		want    int
	}{
		{sample, 1},
		{genA + "/qs-membrane", 3},
		{genA + "/qs-membrane/", 3},
		{genA, 15},
		{"stage.generate_ideas.main", 30},
		{"report.table1", 1},
		{"report.table1/*", 1},
		{"dataset.targets/qs-reef", 1},
	}
	for _, tc := range tests {
		views, err := e.Inspect(p, tc.address, InspectOptions{})
		if err != nil || len(views) != tc.want {
			t.Errorf("%s: %d views (err %v), want %d", tc.address, len(views), err, tc.want)
		}
	}
}

func TestInspectUnknownAddressSuggests(t *testing.T) {
	e, p, _ := inspectQuickstart(t)
	tests := []struct {
		address string
		want    []string
	}{
		{genA + "/qs-membrane/sample 7", []string{genA + "/qs-membrane/sample 0", genA + "/qs-membrane/sample 1", genA + "/qs-membrane/sample 2"}},
		{"stage.generate_idea.main", []string{"stage.generate_ideas.main"}},
		{genA + "/qs-membrame", []string{genA + "/qs-membrane"}},
		{"nothing.like.it", nil},
	}
	for _, tc := range tests {
		_, err := e.Inspect(p, tc.address, InspectOptions{})
		var ae *AddressError
		if !errors.As(err, &ae) {
			t.Errorf("%s: err %v, want an *AddressError", tc.address, err)
			continue
		}
		if !reflect.DeepEqual(ae.Suggestions, tc.want) {
			t.Errorf("%s: suggestions %q, want %q", tc.address, ae.Suggestions, tc.want)
		}
	}
}

func TestInspectFailedAndUncachedNodes(t *testing.T) {
	e, p, _ := inspectQuickstart(t, sample)
	views, err := e.Inspect(p, sample, InspectOptions{Render: true})
	if err != nil {
		t.Fatal(err)
	}
	v := views[0]
	if v.Status != "to run" || !strings.HasPrefix(v.Reason, "failed last run (") || v.Result != nil {
		t.Errorf("status %q reason %q result %v", v.Status, v.Reason, v.Result)
	}
	if f := v.Failure; f == nil || f.Raw != "I cannot." || len(f.Attempts) != 1 || f.Attempts[0].Status != 400 || !strings.Contains(f.Error, "model said no") {
		t.Errorf("failure %+v", v.Failure)
	}
	if v.Request == nil || v.Key == "" {
		t.Errorf("a failed node's request is still shown: request %v key %q", v.Request, v.Key)
	}

	// The ranking of that item waits for the failed sample to be retried.
	views, err = e.Inspect(p, rankA+"/qs-membrane", InspectOptions{Render: true})
	if err != nil {
		t.Fatal(err)
	}
	if v := views[0]; v.Status != "to run" || v.Request != nil || v.Reason != "upstream will run" {
		t.Errorf("ranking: status %q reason %q request %v", v.Status, v.Reason, v.Request)
	}

	// An empty cache: the generation renders from the filter the plan
	// computed in memory; the ranking waits for it.
	g := quickstart(t)
	e = &Engine{Store: cache.NewMemory()}
	p = e.Plan(g)
	views, err = e.Inspect(p, "stage.filter_references.low/qs-membrane", InspectOptions{Render: true})
	if err != nil {
		t.Fatal(err)
	}
	if v := views[0]; v.Status != "to run" || v.Reason != "new" || v.Result == nil || !v.Result.Planned {
		t.Errorf("filter: %+v", v)
	}
	views, _ = e.Inspect(p, sample, InspectOptions{Render: true})
	if v := views[0]; v.Status != "to run" || v.Reason != "new" || v.Request == nil || v.Request.Model != "mock-generator-a" || v.Key == "" {
		t.Errorf("generation: %+v", v)
	}
	views, _ = e.Inspect(p, rankA+"/qs-membrane/perm 0", InspectOptions{Render: true})
	if v := views[0]; v.Reason != "upstream will run" || v.Request != nil || v.Key != "" {
		t.Errorf("ranking: %+v", v)
	}
}
