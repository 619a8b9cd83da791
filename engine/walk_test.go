package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/stagetest"
)

// fakeExec answers chat tasks with answer(prompt) and counts calls per key.
type fakeExec struct {
	mu     sync.Mutex
	answer func(prompt string) (string, error)
	calls  map[string]int // key -> calls
	total  int
}

func newFakeExec(answer func(string) (string, error)) *fakeExec {
	return &fakeExec{answer: answer, calls: map[string]int{}}
}

func (f *fakeExec) Concurrency(string) int { return 4 }

func (f *fakeExec) Execute(ctx context.Context, t *Task) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.calls[t.Key]++
	f.total++
	f.mu.Unlock()
	msgs := t.Chat.Messages
	text, err := f.answer(msgs[len(msgs)-1].Content)
	if err != nil {
		return nil, &ExecError{Err: err}
	}
	a, err := format.Parse(t.Chat.Format, text)
	if err != nil {
		return nil, &ExecError{Err: err, Raw: text}
	}
	return &Result{Answer: a, Raw: text, ServedModel: t.Chat.Model, Usage: executor.Usage{InputTokens: 10, OutputTokens: 5, Attempts: 1}}, nil
}

func (f *fakeExec) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total
}

// maxPerKey is the most calls any one key received.
func (f *fakeExec) maxPerKey() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := 0
	for _, n := range f.calls {
		m = max(m, n)
	}
	return m
}

// lists answers "List the methods of <item>" from a table; anything else
// echoes the prompt's last word.
func lists(table map[string]string) func(string) (string, error) {
	return func(p string) (string, error) {
		if item, ok := strings.CutPrefix(p, "List the methods of "); ok {
			if ans, ok := table[item]; ok {
				return ans, nil
			}
			return "", fmt.Errorf("no list for %q", item)
		}
		if strings.Contains(p, "FAIL") {
			return "", errors.New("scripted failure")
		}
		return "about " + p, nil
	}
}

const expandHCL = itemsPreamble + `
stage "test_list" "methods" {
  items  = dataset.ideas
  model  = model.m
  prompt = var.prompt
}
stage "test_each" "search" {
  list  = stage.test_list.methods
  model   = model.m
  compute = !var.each_model
  first_word_labels = var.first_word_labels
}
stage "test_collect" "all" {
  children      = stage.test_each.search
  allow_missing = var.allow_missing
}
variable "prompt" {
  default = "List the methods of"
}
variable "each_model" {
  default = true
}
variable "allow_missing" {
  default = true
}
variable "first_word_labels" {
  default = false
}
`

// expExp writes the expansion experiment and builds it with vars.
func expExp(t *testing.T, dir string, vars ...string) *Graph {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "exp.hcl")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(expandHCL), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "items.jsonl"), []byte("{\"id\":\"a\"}\n{\"id\":\"b\"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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

func runOnce(t *testing.T, e *Engine, g *Graph) *Summary {
	t.Helper()
	sum, err := e.Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func stageCounts(sum *Summary, addr string) Counts { return sum.Stages[addr].Counts }

const (
	listAddr    = "stage.test_list.methods"
	eachAddr    = "stage.test_each.search"
	collectAddr = "stage.test_collect.all"
)

var _ = stagetest.Label // the stage types register on import

func TestExpansionPlanRunAndRerun(t *testing.T) {
	dir := t.TempDir()
	store := cache.NewMemory()
	exec := newFakeExec(lists(map[string]string{"a": "alpha\nbeta\ngamma", "b": "delta"}))
	e := &Engine{Store: store, Exec: exec}

	// Cold plan: the children cannot be known yet.
	p := e.Plan(expExp(t, dir))
	if got := p.Summary.Stages[listAddr]; got.Total != 2 || got.ToRun != 2 {
		t.Fatalf("plan list: %+v", got)
	}
	each := p.Summary.Stages[eachAddr]
	if each.Total != 0 || each.Pending == nil || each.Pending.Items != 2 || each.Pending.MaxPerItem != 20 ||
		strings.Join(each.Pending.After, ",") != listAddr || !each.Pending.LaidOut {
		t.Fatalf("plan each: %+v pending %+v", each, each.Pending)
	}
	if ub := each.Pending.UpperBound; ub == nil || ub.LLMCalls != 40 {
		t.Fatalf("upper bound: %+v", ub)
	}
	if c := p.Summary.Stages[collectAddr]; c.Pending == nil || c.Pending.LaidOut {
		t.Fatalf("collect should wait for the expansion: %+v", c)
	}
	if p.Summary.Estimate.LLMCalls != 2 || p.Summary.UpperBound.LLMCalls != 40 {
		t.Fatalf("estimate %+v upper bound %+v", p.Summary.Estimate, p.Summary.UpperBound)
	}

	// Cold run: 2 lists + 4 children, 2 collects.
	sum := runOnce(t, e, expExp(t, dir))
	if exec.count() != 6 || sum.LLMCalls != 6 {
		t.Fatalf("cold run made %d calls (summary %d), want 6", exec.count(), sum.LLMCalls)
	}
	for addr, want := range map[string]Counts{
		listAddr: {Total: 2, Ran: 2}, eachAddr: {Total: 4, Ran: 4}, collectAddr: {Total: 2, Ran: 2},
	} {
		if got := stageCounts(sum, addr); got != want {
			t.Errorf("%s: %+v, want %+v", addr, got, want)
		}
	}
	g := expExp(t, dir)
	sum = runOnce(t, e, g)
	if exec.count() != 6 || sum.Nodes.Cached != 8 || sum.Nodes.Ran != 0 {
		t.Fatalf("warm run: %d calls, %+v", exec.count(), sum.Nodes)
	}
	got := collected(t, e, g, "a")
	if strings.Join(got, ",") != "alpha,beta,gamma" {
		t.Fatalf("collected %v", got)
	}

	// A warm plan expands from the cache: every child is planned, so gc and
	// bundles reach them.
	p = e.Plan(expExp(t, dir))
	if p.Summary.Nodes.Total != 8 || p.Summary.Nodes.Cached != 8 || p.Summary.Stages[eachAddr].Pending != nil {
		t.Fatalf("warm plan: %+v", p.Summary.Nodes)
	}
	keys := p.Keys()
	if len(keys) != 8 {
		t.Fatalf("plan keys: %d, want 8", len(keys))
	}
	if removed, err := store.GC(keys); err != nil || removed != 0 {
		t.Fatalf("gc with the plan's keys removed %+v (%v)", removed, err)
	}
	if exec.maxPerKey() != 1 {
		t.Fatalf("a request was sent twice")
	}
}

// collected reads the test_collect output of item from the cache.
func collected(t *testing.T, e *Engine, g *Graph, item string) []string {
	t.Helper()
	p := e.Plan(g)
	for i, n := range g.Nodes {
		if n.Inst.Address == collectAddr && n.Spec.Item == item {
			rec, err := e.Store.Get(p.states[i].key)
			if err != nil {
				t.Fatal(err)
			}
			var out stagetest.CollectOutput
			if err := json.Unmarshal(rec.Output, &out); err != nil {
				t.Fatal(err)
			}
			return out.Elements
		}
	}
	t.Fatalf("no collect node for %q", item)
	return nil
}

func TestExpansionChangedAnswer(t *testing.T) {
	dir := t.TempDir()
	answers := map[string]string{"a": "alpha\nbeta", "b": "delta"}
	exec := newFakeExec(func(p string) (string, error) {
		// Both prompts ask for the same lists; the version marker only changes the key.
		p = strings.TrimPrefix(p, "v2 ")
		return lists(answers)(p)
	})
	e := &Engine{Store: cache.NewMemory(), Exec: exec}
	runOnce(t, e, expExp(t, dir))
	if exec.count() != 5 {
		t.Fatalf("cold: %d calls", exec.count())
	}
	answers["a"] = "beta\nepsilon\nalpha"
	sum := runOnce(t, e, expExp(t, dir, "prompt=v2 List the methods of"))
	// 2 lists re-asked; of the children only "epsilon" is new.
	if exec.count() != 8 {
		t.Fatalf("after the change: %d calls, want 8", exec.count())
	}
	if got := stageCounts(sum, eachAddr); got != (Counts{Total: 4, Ran: 1, Cached: 3}) {
		t.Fatalf("children: %+v", got)
	}
	// Collect of b: its children are the same, so early cutoff keeps it.
	if got := stageCounts(sum, collectAddr); got != (Counts{Total: 2, Ran: 1, Cached: 1}) {
		t.Fatalf("collect: %+v", got)
	}
}

// TestExpansionChildRequestBeyondLabel: a model child's request carries its
// whole element while its label names only the first word. When an element
// changes but keeps its first word, the memo must not answer the child from
// the old request: the child is prepared again and asks anew, and its
// unchanged sibling stays cached by its request's key.
func TestExpansionChildRequestBeyondLabel(t *testing.T) {
	dir := t.TempDir()
	answers := map[string]string{"a": "alpha one\nbeta two", "b": "delta"}
	exec := newFakeExec(func(p string) (string, error) { return lists(answers)(strings.TrimPrefix(p, "v2 ")) })
	e := &Engine{Store: cache.NewMemory(), Exec: exec}
	runOnce(t, e, expExp(t, dir, "first_word_labels=true"))
	if exec.count() != 5 {
		t.Fatalf("cold: %d calls, want 5", exec.count())
	}
	answers["a"] = "alpha three\nbeta two"
	sum := runOnce(t, e, expExp(t, dir, "first_word_labels=true", "prompt=v2 List the methods of"))
	// 2 lists re-asked, and the child that now stands for "alpha three".
	if exec.count() != 8 {
		t.Fatalf("after the change: %d calls, want 8", exec.count())
	}
	if got := stageCounts(sum, eachAddr); got != (Counts{Total: 3, Ran: 1, Cached: 2}) {
		t.Fatalf("children: %+v, want 1 ran (alpha three), 2 cached", got)
	}
	if got := collected(t, e, expExp(t, dir, "first_word_labels=true", "prompt=v2 List the methods of"), "a"); strings.Join(got, ",") != "alpha three,beta two" {
		t.Fatalf("collected %v", got)
	}
}

func TestExpansionComputeChildrenKeyedByLabel(t *testing.T) {
	dir := t.TempDir()
	answers := map[string]string{"a": "alpha\nbeta\ngamma", "b": "delta"}
	exec := newFakeExec(func(p string) (string, error) { return lists(answers)(strings.TrimPrefix(p, "v2 ")) })
	e := &Engine{Store: cache.NewMemory(), Exec: exec}
	runOnce(t, e, expExp(t, dir, "each_model=false"))
	answers["a"] = "gamma\nalpha\nbeta"
	sum := runOnce(t, e, expExp(t, dir, "each_model=false", "prompt=v2 List the methods of"))
	if got := stageCounts(sum, eachAddr); got != (Counts{Total: 4, Cached: 4}) {
		t.Fatalf("reordered compute children: %+v, want all cached", got)
	}
	// The collected order follows the new list.
	if got := collected(t, e, expExp(t, dir, "each_model=false", "prompt=v2 List the methods of"), "a"); strings.Join(got, ",") != "gamma,alpha,beta" {
		t.Fatalf("collected %v", got)
	}
}

func TestFailurePropagation(t *testing.T) {
	dir := t.TempDir()
	exec := newFakeExec(lists(map[string]string{"a": "alpha\nFAIL here"})) // no list for b
	e := &Engine{Store: cache.NewMemory(), Exec: exec}
	sum := runOnce(t, e, expExp(t, dir, "allow_missing=false"))
	if got := stageCounts(sum, listAddr); got != (Counts{Total: 2, Ran: 1, Failed: 1}) {
		t.Fatalf("list: %+v", got)
	}
	if got := stageCounts(sum, eachAddr); got != (Counts{Total: 2, Ran: 1, Failed: 1}) {
		t.Fatalf("each: %+v", got)
	}
	// a: a child failed, so its collect is skipped; b expanded to nothing.
	if got := stageCounts(sum, collectAddr); got != (Counts{Total: 2, Ran: 1, Skipped: 1}) {
		t.Fatalf("collect: %+v", got)
	}
	if sum.Skipped["input failed or skipped"] != 1 {
		t.Fatalf("skip reasons: %v", sum.Skipped)
	}
	var fails []string
	for _, f := range sum.Failures {
		fails = append(fails, f.Address)
	}
	sort.Strings(fails)
	if len(fails) != 2 || !strings.HasPrefix(fails[0], eachAddr+"/a/fail-") || fails[1] != listAddr+"/b" {
		t.Fatalf("failures: %v", fails)
	}

	// AllowMissing collects what succeeded.
	sum = runOnce(t, e, expExp(t, dir))
	if got := stageCounts(sum, collectAddr); got.Skipped != 0 || got.Ran != 2 {
		t.Fatalf("collect with allow_missing: %+v", got)
	}
}

func TestOneCallPerDistinctKey(t *testing.T) {
	dir := t.TempDir()
	hcl := `
provider "fake" {
  kind = "mock"
}
model "m" {
  provider = provider.fake
  name     = "fake-model"
}
dataset "ideas" {
  format = "jsonl"
  path   = "items.jsonl"
}
stage "test_list" "copies" {
  for_each = toset(["one", "two", "three"])
  items    = dataset.ideas
  model    = model.m
}
`
	if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "items.jsonl"), []byte("{\"id\":\"a\"}\n{\"id\":\"b\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	exec := newFakeExec(lists(map[string]string{"a": "x", "b": "y"}))
	e := &Engine{Store: cache.NewMemory(), Exec: exec}
	g, _ := Build(exp)
	p := e.Plan(g)
	if p.Summary.Nodes.ToRun != 6 || p.Summary.Estimate.LLMCalls != 2 {
		t.Fatalf("plan: %+v, estimate %+v; want 6 nodes, 2 calls", p.Summary.Nodes, p.Summary.Estimate)
	}
	g, _ = Build(exp)
	sum := runOnce(t, e, g)
	if exec.count() != 2 || exec.maxPerKey() != 1 || sum.LLMCalls != 2 || sum.Nodes.Ran != 6 || sum.Deduplicated != 4 {
		t.Fatalf("run: %d calls, summary %+v", exec.count(), sum)
	}
}

func TestInterruptedRunSkipsAndDoesNotGrow(t *testing.T) {
	dir := t.TempDir()
	exec := newFakeExec(lists(map[string]string{"a": "alpha", "b": "beta"}))
	e := &Engine{Store: cache.NewMemory(), Exec: exec}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sum, err := e.Run(ctx, expExp(t, dir), RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if exec.count() != 0 || sum.Nodes.Skipped != 2 || sum.Skipped["interrupted"] != 2 || sum.Nodes.Total != 2 {
		t.Fatalf("interrupted: %d calls, %+v %v", exec.count(), sum.Nodes, sum.Skipped)
	}
}

func TestVerifyFindsChangedDeterministicOutput(t *testing.T) {
	dir := t.TempDir()
	exec := newFakeExec(lists(map[string]string{"a": "alpha", "b": "beta"}))
	store := cache.NewMemory()
	e := &Engine{Store: store, Exec: exec}
	runOnce(t, e, expExp(t, dir, "each_model=false"))
	rep := e.Verify(expExp(t, dir, "each_model=false"))
	if rep.Verified != 4 || len(rep.Mismatches) != 0 {
		t.Fatalf("clean verify: %+v", rep)
	}
	// Tamper with one compute record, as a stage whose output changed
	// without a version bump would have left it.
	g := expExp(t, dir, "each_model=false")
	p := e.Plan(g)
	for i, n := range g.Nodes {
		if n.Inst.Address == eachAddr && n.Spec.Item == "a" {
			rec, err := store.Get(p.states[i].key)
			if err != nil {
				t.Fatal(err)
			}
			rec.Output = []byte(`{"element":"alpha","length":99}`)
			rec.OutputDigest = ""
			if err := store.Put(rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep = e.Verify(expExp(t, dir, "each_model=false"))
	if len(rep.Mismatches) != 1 || !strings.HasPrefix(rep.Mismatches[0].Address, eachAddr+"/a/alpha-") {
		t.Fatalf("verify after tampering: %+v", rep)
	}
	if exec.count() != 2 {
		t.Fatalf("verify made calls: %d", exec.count())
	}
}

// Calls are the critical path: a node of a calling instance that is ready is
// resolved before any deterministic node that is ready too.
func TestCallsAreResolvedBeforeDeterministicNodes(t *testing.T) {
	dir := t.TempDir()
	var items strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&items, "{\"id\":\"t%d\",\"title\":\"T\",\"abstract\":\"A\",\"references\":[{\"id\":\"r\"}]}\n", i) // a reference: a filter over none is an error
	}
	if err := os.WriteFile(filepath.Join(dir, "targets.jsonl"), []byte(items.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	hcl := `
provider "fake" {
  kind = "mock"
}
model "m" {
  provider = provider.fake
  name     = "fake-model"
}
dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}
stage "filter_references" "f" {
  dataset = dataset.targets
}
stage "test_list" "l" {
  items = dataset.targets
  model = model.m
}
`
	if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, _ := Build(exp)
	answers := map[string]string{}
	for i := 0; i < 50; i++ {
		answers[fmt.Sprintf("t%d", i)] = "x"
	}
	e := &Engine{Store: cache.NewMemory(), Exec: newFakeExec(lists(answers)), Resolvers: 1}
	plan := e.Plan(g)
	w := newWalker(g, e.Store, false)
	w.ctx, w.budget, w.states = context.Background(), &budget{}, plan.states
	for i := range w.states {
		if w.states[i].status != StatusCached {
			w.states[i] = nodeState{}
		}
	}
	var order []string
	w.onResolve = func(i int32) { order = append(order, g.Nodes[i].Inst.Type) }
	e.startWorkers(w, len(g.Nodes))
	w.startWriters()
	w.walk(1)
	for _, q := range w.queues {
		close(q)
	}
	w.stopWriters()
	if len(order) != 100 {
		t.Fatalf("resolved %d nodes, want 100", len(order))
	}
	for k, typ := range order {
		if (k < 50) != (typ == "test_list") {
			t.Fatalf("resolve order %v: calls must all come first", order)
		}
	}
}

// itemsPreamble is the mock model and the items dataset the small
// experiments below share.
const itemsPreamble = `
provider "fake" {
  kind = "mock"
}
model "m" {
  provider = provider.fake
  name     = "fake-model"
}
dataset "ideas" {
  format = "jsonl"
  path   = "items.jsonl"
}
`

const selfHCL = itemsPreamble + `
stage "test_count" "c" {
  items   = dataset.ideas
  model   = model.m
  forward = var.forward
}
variable "forward" {
  default = false
}
`

// A node reading an earlier node of its own instance (stages.Self) waits for
// it and reads its output; a warm run runs neither; a dependency on a later
// node is refused at layout.
func TestSelfDependency(t *testing.T) {
	build := writeItemsExp(t, selfHCL, "a", "b")
	exec := newFakeExec(lists(map[string]string{"a": "alpha\nbeta\ngamma", "b": "delta"}))
	e := &Engine{Store: cache.NewMemory(), Exec: exec}
	counts := func() map[string]int {
		out := map[string]int{}
		for _, item := range []string{"a", "b"} {
			views, err := e.Inspect(e.Plan(mustBuild(t, build)), "stage.test_count.c/"+item+"/count", InspectOptions{})
			if err != nil || len(views) != 1 || views[0].Result == nil {
				t.Fatalf("inspect %s: %v %+v", item, err, views)
			}
			var c stagetest.CountOutput
			if err := json.Unmarshal(views[0].Result.Output, &c); err != nil {
				t.Fatal(err)
			}
			out[item] = c.Count
		}
		return out
	}

	sum := runOnce(t, e, mustBuild(t, build))
	if exec.count() != 2 || sum.Nodes.Ran != 4 || sum.Stages["stage.test_count.c"].Total != 4 {
		t.Fatalf("cold run: %d calls, nodes %+v", exec.count(), sum.Nodes)
	}
	if got := counts(); got["a"] != 3 || got["b"] != 1 {
		t.Errorf("counts %v, want a 3, b 1", got)
	}
	if sum := runOnce(t, e, mustBuild(t, build)); sum.Nodes.Ran != 0 || exec.count() != 2 {
		t.Errorf("warm run: nodes %+v, %d calls", sum.Nodes, exec.count())
	}

	_, diags := build("forward=true")
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "stage type test_count laid out node 0 of stage.test_count.c on its own node 1, which is not laid out before it") {
		t.Errorf("forward dependency: %v", diags)
	}
}

func mustBuild(t *testing.T, build func(...string) (*Graph, hcl.Diagnostics)) *Graph {
	t.Helper()
	g, diags := build()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return g
}

const linesHCL = itemsPreamble + `
stage "test_lines" "l" {
  items     = dataset.ideas
  model     = model.m
  min_lines = var.min_lines
}
variable "min_lines" {
  default = 1
}
`

// A call whose Output reads a param (Call.KeyParams): a change of the param
// re-derives the output from the stored answer with no call; an answer the
// Output refuses under the new param is asked again (and fails again here,
// the fake answering the same), and a plan estimates exactly that call.
func TestAnswerReuse(t *testing.T) {
	write := writeItemsExp(t, linesHCL, "a", "b")
	build := func(vars ...string) *Graph {
		t.Helper()
		return mustBuild(t, func(...string) (*Graph, hcl.Diagnostics) { return write(vars...) })
	}
	exec := newFakeExec(lists(map[string]string{"a": "alpha\nbeta\ngamma", "b": "delta"}))
	e := &Engine{Store: cache.NewMemory(), Exec: exec}
	if sum := runOnce(t, e, build()); exec.count() != 2 || sum.Nodes.Ran != 2 || sum.AnswersReused != 0 {
		t.Fatalf("first run: %d calls, %+v", exec.count(), sum.Nodes)
	}
	// min_lines = 2: a's answer passes and is re-derived; b's is refused,
	// so b is asked again.
	p := e.Plan(build("min_lines=2"))
	if p.Summary.Nodes.ToRun != 2 || p.Summary.Estimate.LLMCalls != 1 {
		t.Errorf("plan at min_lines = 2: %+v, %d calls estimated; want 2 to run and 1 call (b)", p.Summary.Nodes, p.Summary.Estimate.LLMCalls)
	}
	// (The fake reports no attempts, so the summary cannot count b's
	// refused answer as a call: the executor's count is the truth here.)
	sum := runOnce(t, e, build("min_lines=2"))
	if exec.count() != 3 || sum.AnswersReused != 1 || sum.Nodes.Ran != 1 || sum.Nodes.Failed != 1 ||
		!strings.Contains(sum.Failures[0].Error, "1 lines, fewer than min_lines = 2") {
		t.Errorf("min_lines = 2: %d calls in all, %d reused, %+v, failures %+v", exec.count(), sum.AnswersReused, sum.Nodes, sum.Failures)
	}
	views, err := e.Inspect(e.Plan(build("min_lines=2")), "stage.test_lines.l/a", InspectOptions{})
	if err != nil || len(views) != 1 || views[0].Result == nil || views[0].Result.AnswerKey == "" || !strings.Contains(string(views[0].Result.Output), "gamma") {
		t.Errorf("a at min_lines = 2: %v %+v", err, views)
	}
	// Back to 1: both records are there from the first run.
	if sum := runOnce(t, e, build()); sum.Nodes.Ran != 0 || exec.count() != 3 {
		t.Errorf("min_lines = 1 again: %+v, %d calls", sum.Nodes, exec.count())
	}
}

const linesGridHCL = itemsPreamble + `
stage "test_lines" "grid" {
  for_each  = toset(["0", "1", "2"])
  items     = dataset.ideas
  model     = model.m
  min_lines = tonumber(each.key)
}
`

// Three instances that differ only in a param their Output reads, in one
// run: each item's request is sent once (its answer flight), the other
// nodes derive from the answer when it lands, and the plan estimates
// exactly those calls.
func TestAnswerFlightInOneRun(t *testing.T) {
	g := mustBuild(t, writeItemsExp(t, linesGridHCL, "a", "b", "c"))
	exec := newFakeExec(lists(map[string]string{"a": "alpha\nbeta\ngamma", "b": "delta\nepsilon", "c": "zeta"}))
	e := &Engine{Store: cache.NewMemory(), Exec: exec}
	if p := e.Plan(g); p.Summary.Nodes.ToRun != 9 || p.Summary.Estimate.LLMCalls != 3 {
		t.Errorf("plan: %+v, %d calls; want 9 to run and 3 calls", p.Summary.Nodes, p.Summary.Estimate.LLMCalls)
	}
	sum := runOnce(t, e, g)
	// c has one line, which min_lines = 2 refuses: whichever instance sent
	// c's request first, that node asks once more on its own (a refused
	// answer is never stored, nor derived from) and fails. So 3 + 1 calls,
	// none twice under one node key, 2 + 2 + 1 nodes derived.
	if exec.count() != 3+1 || exec.maxPerKey() != 1 || sum.AnswersReused != 5 || sum.Nodes.Ran != 8 || sum.Nodes.Failed != 1 {
		t.Errorf("%d calls (at most %d per key), %d reused, nodes %+v", exec.count(), exec.maxPerKey(), sum.AnswersReused, sum.Nodes)
	}
}

// writeItemsExp writes an experiment and its items.jsonl (one record per
// id) into a new folder and returns a builder for it.
func writeItemsExp(t *testing.T, hclText string, ids ...string) func(vars ...string) (*Graph, hcl.Diagnostics) {
	t.Helper()
	dir := t.TempDir()
	var items strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&items, "{\"id\":%q}\n", id)
	}
	for name, text := range map[string]string{"exp.hcl": hclText, "items.jsonl": items.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return func(vars ...string) (*Graph, hcl.Diagnostics) {
		exp, diags := config.Load(dir, config.Options{Vars: vars})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		return Build(exp)
	}
}
