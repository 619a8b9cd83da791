package engine

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
)

// readDir returns every file of dir by name.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// withoutTime drops a provenance file's time, the one field two renderings
// of the same results differ in.
func withoutTime(t *testing.T, s string) Provenance {
	t.Helper()
	var p Provenance
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatal(err)
	}
	p.Written = time.Time{}
	return p
}

// RenderReports writes, from the cache alone, the files the run wrote: a
// failed node stays failed (the report counts it missing, as the run's
// did), nothing is called, nothing is computed that the cache holds.
func TestRenderReportsWritesWhatTheRunWrote(t *testing.T) {
	store := cache.NewMemory()
	g := quickstart(t)
	rec := &recordingExec{Executor: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop()),
		fail: map[string]bool{sample: true}, tasks: map[string]*Task{}}
	runDir, renderDir := t.TempDir(), t.TempDir()
	opts := RunOptions{ReportDir: runDir, Version: "v1.2.3", Variables: map[string]string{"n": "3"}}
	sum, err := (&Engine{Store: store, Exec: rec}).Run(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Nodes.Failed != 1 {
		t.Fatalf("the run failed %d nodes, want 1", sum.Nodes.Failed)
	}
	sent := len(rec.tasks)

	opts.ReportDir = renderDir
	got, err := (&Engine{Store: store}).RenderReports(quickstart(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.tasks) != sent {
		t.Fatalf("rendering sent %d tasks", len(rec.tasks)-sent)
	}
	if got.Failed != 1 || got.Computed != nil || got.Missing != nil || len(got.Reports) != 3 {
		t.Fatalf("rendered %+v, want 1 failed node, nothing computed or missing, 3 files", got)
	}
	ran, rendered := readDir(t, runDir), readDir(t, renderDir)
	if names, want := slices.Sorted(maps.Keys(rendered)), slices.Sorted(maps.Keys(ran)); !reflect.DeepEqual(names, want) {
		t.Fatalf("rendered %v, the run wrote %v", names, want)
	}
	for name, want := range ran {
		if strings.HasSuffix(name, ".provenance.json") {
			if a, b := withoutTime(t, rendered[name]), withoutTime(t, want); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: rendered %+v, the run wrote %+v", name, a, b)
			}
			continue
		}
		if rendered[name] != want {
			t.Errorf("%s differs:\n%s\n--- the run wrote\n%s", name, rendered[name], want)
		}
	}
	if md := ran["table1.md"]; !strings.Contains(md, "1 item missing") {
		t.Errorf("the failed sample is not counted missing:\n%s", md)
	}
}

// A report whose own params changed is computed in memory from its cached
// inputs, and said so; the cache is not written.
func TestRenderReportsComputesFromCachedInputs(t *testing.T) {
	store := cache.NewMemory()
	dir := copyQuickstart(t)
	e := &Engine{Store: store, Exec: NewLocalExecutor(buildAt(t, dir).Exp.LLMProviders(), zerolog.Nop())}
	if _, err := e.Run(context.Background(), buildAt(t, dir), RunOptions{ReportDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	editFile(t, filepath.Join(dir, "main.hcl"), `title    = "Quickstart: Insight Score (novelty)"`, `title    = "Renamed"`)
	before, _ := store.Stats()
	out := t.TempDir()
	got, err := (&Engine{Store: store}).RenderReports(buildAt(t, dir), RunOptions{ReportDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"report.table1": 1}; !reflect.DeepEqual(got.Computed, want) || got.Missing != nil {
		t.Fatalf("computed %v, missing %v; want %v", got.Computed, got.Missing, want)
	}
	if after, _ := store.Stats(); !reflect.DeepEqual(before, after) {
		t.Errorf("rendering wrote the cache: %+v -> %+v", before, after)
	}
	if md := readDir(t, out)["table1.md"]; !strings.Contains(md, "# Renamed\n") {
		t.Errorf("table1.md:\n%s", md)
	}
}

// A report whose inputs need calls the cache lacks is named, with how many
// and which, and not written.
func TestRenderReportsNamesWhatIsMissing(t *testing.T) {
	store := cache.NewMemory()
	g := quickstart(t)
	e := &Engine{Store: store, Exec: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	if _, err := e.Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	got, err := (&Engine{Store: store}).RenderReports(quickstart(t, "n=4"), RunOptions{ReportDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Missing) != 1 || len(got.Reports) != 0 {
		t.Fatalf("missing %+v, reports %v", got.Missing, got.Reports)
	}
	m := got.Missing[0]
	// 4 targets kept x 2 generators x the one new sample.
	if m.Report != "report.table1" || m.Calls != 8 || m.Services != 0 || m.Other != 0 || len(m.Examples) != 3 {
		t.Fatalf("missing %+v", m)
	}
	sort.Strings(m.Examples)
	if !strings.HasPrefix(m.Examples[0], `stage.generate_ideas.main["mock-generator-`) || !strings.Contains(m.Examples[0], "/sample 3 (new)") {
		t.Errorf("examples %q", m.Examples)
	}
	want := "report.table1 needs 8 model node(s) not in the cache, e.g. "
	if !strings.HasPrefix(m.String(), want) {
		t.Errorf("%q does not start with %q", m.String(), want)
	}
	if files := readDir(t, out); len(files) != 0 {
		t.Errorf("wrote %v", slices.Sorted(maps.Keys(files)))
	}
}
