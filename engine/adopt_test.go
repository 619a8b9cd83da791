package engine

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// realExec answers like the mock (seed 7) but as an endpoint would: its
// answers are not marked synthetic. It counts its calls.
type realExec struct {
	*LocalExecutor
	calls atomic.Int64
}

func newRealExec() *realExec {
	p := llm.NewProvider("mock", "mock")
	p.Seed = 7
	return &realExec{LocalExecutor: NewLocalExecutor(map[string]llm.Provider{"mock": p}, zerolog.Nop())}
}

func (e *realExec) Execute(ctx context.Context, t *Task) (*Result, error) {
	e.calls.Add(1)
	r, err := e.LocalExecutor.Execute(ctx, t)
	if r != nil {
		r.Synthetic = false
	}
	return r, err
}

func (e *realExec) count() int { return int(e.calls.Load()) }

// gatewayQuickstart is the quickstart with its provider pointed at an
// OpenAI-compatible gateway (the executor in these tests never calls it).
func gatewayQuickstart(t *testing.T) *Graph {
	t.Helper()
	t.Setenv("ADOPT_TEST_KEY", "sk-adopt-test")
	dir := copyQuickstart(t)
	editFile(t, filepath.Join(dir, "main.hcl"), "kind = \"mock\"\n  seed = 7", `kind = "openai"
  base_url = "https://GW.example.org:443/v1/"
  api_key_env = "ADOPT_TEST_KEY"`)
	return buildAt(t, dir)
}

// v1Cache is what an ideaflow before key scheme v2 would have left after
// running g: every model record under its v1 key (the same parts without
// the answerer) and without an answerer, no compute record, no memo, and
// the latest-key index under the experiment's bare name (legacyPrefix),
// as every ideaflow before experiment identity kept it. The records of
// instances named in mock are marked synthetic, as v1 marked the mock's
// answers.
func v1Cache(t *testing.T, g *Graph, from cache.Store, mock ...string) *cache.Memory {
	t.Helper()
	old := cache.NewMemory()
	expKey := legacyPrefix(g.Exp)
	var keys []string
	if err := from.List(func(e cache.Entry) error { keys = append(keys, e.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		rec, err := from.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Answerer == nil {
			continue // a compute record: v1 keyed it otherwise, and it is recomputed for free
		}
		parts, err := from.Parts(k)
		if err != nil {
			t.Fatal(err)
		}
		var named []namedPart
		var kept []cache.Part
		for _, p := range parts {
			if strings.HasPrefix(p.Name, aboutPrefix) || isAnswererPart(p.Name) {
				continue
			}
			np := namedPart{name: p.Name, display: p.Display}
			if _, err := hex.Decode(np.digest[:], []byte(p.Digest)); err != nil {
				t.Fatal(err)
			}
			named, kept = append(named, np), append(kept, p)
		}
		rec.Key, rec.Parts, rec.Answerer = keyOfFormat(keyFormatV1, named), kept, nil
		rec.Synthetic = false
		for _, m := range mock {
			if strings.HasPrefix(rec.Stage, m) {
				rec.Synthetic = true
			}
		}
		if err := old.PutIndexed(rec, expKey+rec.Address, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	return old
}

func records(t *testing.T, s cache.Store) int {
	t.Helper()
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	return st.Records
}

// TestAdoptKeepsOnlyWhatItMay: after the key-scheme upgrade every model
// node misses; adopting the old records for the provider that gave them
// serves them again, except those marked synthetic (the mock's), and the
// counts say exactly what was adopted, refused and left.
//
// The quickstart has 32 model nodes: 12 generations per generator (4
// targets kept x 3 samples) and 4 rankings per generator.
func TestAdoptKeepsOnlyWhatItMay(t *testing.T) {
	g := gatewayQuickstart(t)
	fresh := cache.NewMemory()
	exec := newRealExec()
	if _, err := (&Engine{Store: fresh, Exec: exec}).Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if exec.count() != 32 {
		t.Fatalf("the first run made %d calls, want 32", exec.count())
	}
	// generator b's answers were the mock's in that old cache.
	old := v1Cache(t, g, fresh, `stage.generate_ideas.main["mock-generator-b"]`)
	if n := records(t, old); n != 32 {
		t.Fatalf("old cache holds %d records, want 32", n)
	}

	// The upgraded ideaflow plans the same folder (a new graph: a graph
	// walks once).
	dir := g.Exp.Dir
	oldScheme := func(g *Graph) int {
		p := (&Engine{Store: old}).Plan(g)
		if p.Summary.Nodes.Cached != 0 {
			t.Fatalf("a v2 plan found %d nodes in a v1 cache", p.Summary.Nodes.Cached)
		}
		n := 0
		for _, c := range p.Summary.AnswererChanges {
			if c.OldScheme && c.Provider == "mock" && c.To == "endpoint https://gw.example.org/v1" {
				n += c.Nodes
			}
		}
		return n
	}
	// The rankings' requests hold the ideas, which must be asked first.
	if n := oldScheme(buildAt(t, dir)); n != 24 {
		t.Errorf("plan: %d nodes cached under the previous scheme, want 24", n)
	}
	// The old index is keyed by the bare folder name, which another
	// folder shares: its nodes are told apart by their own v1 keys. A
	// copy asks the same, a copy with another generation prompt does not.
	if n := oldScheme(gatewayQuickstart(t)); n != 24 {
		t.Errorf("plan of a copy: %d nodes cached under the previous scheme, want 24", n)
	}
	other := gatewayQuickstart(t)
	editFile(t, filepath.Join(other.Exp.Dir, "prompts", "generate.tmpl"), "", "Briefly. ")
	if n := oldScheme(buildAt(t, other.Exp.Dir)); n != 0 {
		t.Errorf("plan of a same-named folder asking otherwise: %d nodes cached under the previous scheme, want 0", n)
	}
	g = buildAt(t, dir)

	want := AdoptReport{Provider: "mock", Answerer: cache.Answerer{Class: "endpoint", Identity: "https://gw.example.org/v1"},
		Adopted: 16, RefusedSynthetic: 12, Unreached: 4}
	e := &Engine{Store: old}
	dry, err := e.Adopt(g, "mock", true)
	if err != nil {
		t.Fatal(err)
	}
	want.DryRun = true
	if *dry != want {
		t.Errorf("dry run:\n got %+v\nwant %+v", *dry, want)
	}
	if n := records(t, old); n != 32 {
		t.Fatalf("the dry run wrote: %d records", n)
	}
	got, err := e.Adopt(buildAt(t, g.Exp.Dir), "mock", false)
	if err != nil {
		t.Fatal(err)
	}
	want.DryRun = false
	if *got != want {
		t.Errorf("adopt:\n got %+v\nwant %+v", *got, want)
	}

	// The adopted nodes are cached, marked and answered by the gateway;
	// generator b (refused) and what reads it run.
	g = buildAt(t, g.Exp.Dir)
	p := e.Plan(g)
	views, err := e.Inspect(p, `stage.generate_ideas.main["mock-generator-a"]/qs-membrane/sample 0`, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := views[0].Result
	if views[0].Status != "cached" || r == nil || r.AdoptedFrom == "" || r.Answerer == nil || *r.Answerer != want.Answerer || r.Synthetic {
		t.Fatalf("adopted node %+v, result %+v", views[0], r)
	}
	exec = newRealExec()
	sum, err := (&Engine{Store: old, Exec: exec}).Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if exec.count() != 16 || sum.LLMCalls != 16 {
		t.Errorf("after adopting, the run made %d calls (summary %d), want 16: generator b's 12 and its 4 rankings", exec.count(), sum.LLMCalls)
	}
	again, err := e.Adopt(buildAt(t, g.Exp.Dir), "mock", false)
	if err != nil {
		t.Fatal(err)
	}
	if *again != (AdoptReport{Provider: "mock", Answerer: want.Answerer, Cached: 32}) {
		t.Errorf("adopting again: %+v, want 32 cached and nothing adopted", *again)
	}

	// The mock never adopts a real answer, and a provider must exist.
	mock := quickstart(t)
	mockOld := v1Cache(t, mock, fresh)
	if r, err := (&Engine{Store: mockOld}).Adopt(mock, "mock", true); err != nil || r.Adopted != 0 || r.RefusedReal != 24 || r.Unreached != 8 {
		t.Errorf("adopting real answers for the mock: %+v, %v", r, err)
	}
	if _, err := e.Adopt(g, "nope", true); !errors.Is(err, ErrNoSuchProvider) {
		t.Errorf("an unknown provider: %v", err)
	}
}

// TestReportFollowsProvenance: an endpoint that answers exactly as the mock
// did (the same bytes) is still another answerer: its nodes are asked, and
// though every output downstream is unchanged, the deterministic nodes are
// recomputed because who answered their inputs changed, and the report
// loses its SYNTHETIC banner; back on the mock, the mock's records serve
// again and the banner is back.
func TestReportFollowsProvenance(t *testing.T) {
	store := cache.NewMemory()
	dir := t.TempDir()
	mock := quickstart(t)
	sum, err := (&Engine{Store: store, Exec: NewLocalExecutor(mock.Exp.LLMProviders(), zerolog.Nop())}).Run(context.Background(), mock, RunOptions{ReportDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	md := func() string { b, _ := os.ReadFile(filepath.Join(dir, "table1.md")); return string(b) }
	if !sum.Synthetic || !strings.HasPrefix(md(), "SYNTHETIC RESULTS") {
		t.Fatalf("mock: synthetic %v\n%s", sum.Synthetic, md())
	}
	before := md()
	exec := newRealExec()
	sum, err = (&Engine{Store: store, Exec: exec}).Run(context.Background(), gatewayQuickstart(t), RunOptions{ReportDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st := func(addr string) StageSummary { return sum.Stages[addr] }
	if exec.count() != 32 || sum.Synthetic || strings.HasPrefix(md(), "SYNTHETIC") {
		t.Fatalf("gateway: %d calls, synthetic %v\n%s", exec.count(), sum.Synthetic, md())
	}
	// The same numbers, recomputed: insight scores and the report ran.
	if c := st(`stage.insight_score.novelty["mock-generator-a"]`); c.Ran != 1 {
		t.Errorf("insight score: %+v, want it recomputed", c.Counts)
	}
	if c := st("report.table1"); c.Ran != 1 {
		t.Errorf("report: %+v, want it recomputed", c.Counts)
	}
	table := func(s string) string { _, t, _ := strings.Cut(s, "# "); t, _, _ = strings.Cut(t, "\n---\n"); return t }
	if table(md()) != table(before) {
		t.Errorf("the endpoint's answers were the mock's bytes, yet the table's numbers changed:\n%s\n%s", md(), before)
	}
	sum, err = (&Engine{Store: store, Exec: NewLocalExecutor(mock.Exp.LLMProviders(), zerolog.Nop())}).Run(context.Background(), quickstart(t), RunOptions{ReportDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if sum.LLMCalls != 0 || !sum.Synthetic || md() != before {
		t.Errorf("back on the mock: %d calls, synthetic %v, report as before: %v", sum.LLMCalls, sum.Synthetic, md() == before)
	}
}
