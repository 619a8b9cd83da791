package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
)

// damagedStore reads some records as damaged until they are written again.
type damagedStore struct {
	cache.Store
	mu  sync.Mutex
	bad map[string]bool
}

func (d *damagedStore) Get(key string) (*cache.Record, error) {
	d.mu.Lock()
	bad := d.bad[key]
	d.mu.Unlock()
	if bad {
		return nil, fmt.Errorf("get record %s: %w", key, cache.ErrCorrupt)
	}
	return d.Store.Get(key)
}

func (d *damagedStore) PutIndexed(rec *cache.Record, address, inputKey string, memo []byte) error {
	d.mu.Lock()
	delete(d.bad, rec.Key)
	d.mu.Unlock()
	return d.Store.PutIndexed(rec, address, inputKey, memo)
}

// A damaged record that a dependent must read is recomputed in the same
// run (a model node asked again, once) and replaced; nothing fails.
func TestDamagedInputIsRecomputed(t *testing.T) {
	dir := copyQuickstart(t)
	store := &damagedStore{Store: cache.NewMemory(), bad: map[string]bool{}}
	g := buildAt(t, dir)
	local := NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())
	counting := &cancelAfter{Executor: local, n: 1 << 30, cancel: func() {}}
	e := &Engine{Store: store, Exec: counting}
	if _, err := e.Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	first := counting.calls.Load()
	// Damage two generated ideas of one generator, and drop a third (a
	// memo left naming a record that is gone).
	p := e.Plan(buildAt(t, dir))
	damaged := 0
	for i, n := range p.g.Nodes {
		if n.Inst.Address == `stage.generate_ideas.main["mock-generator-a"]` && n.Spec.Slot == 1 && damaged < 3 && !p.states[i].dropped {
			if damaged < 2 {
				store.bad[p.states[i].key] = true
			} else if err := store.Store.Drop(p.states[i].key); err != nil {
				t.Fatal(err)
			}
			damaged++
		}
	}
	// A new judge temperature makes every ranking read its ideas.
	editFile(t, filepath.Join(dir, "main.hcl"), "temperature = 0\n", "temperature = 0.3\n")
	sum, err := e.Run(context.Background(), buildAt(t, dir), RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	calls := counting.calls.Load() - first
	// 8 rankings + the 3 damaged ideas, asked again once each.
	if sum.Repaired != 3 || calls != 11 || sum.Nodes.Failed != 0 || len(store.bad) != 0 {
		t.Fatalf("repaired %d, %d calls, %d failed, %d still damaged", sum.Repaired, calls, sum.Nodes.Failed, len(store.bad))
	}
	if got := sum.Stages[`stage.generate_ideas.main["mock-generator-a"]`].Ran; got != 3 {
		t.Fatalf("generations recomputed: %d, want 3", got)
	}
}
