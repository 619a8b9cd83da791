package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
)

// refusingStore refuses to write the records of deterministic nodes (no
// model) with err, and counts the refusals.
type refusingStore struct {
	cache.Store
	err     error
	refused atomic.Int64
}

func (r *refusingStore) PutIndexed(rec *cache.Record, address, inputKey string, memo []byte) error {
	if rec.Model == "" {
		r.refused.Add(1)
		return fmt.Errorf("put record %s: %w", rec.Key, r.err)
	}
	return r.Store.PutIndexed(rec, address, inputKey, memo)
}

// Summary.Unsaved counts the nodes that ran but whose records were not
// written, so that the disk-full message never counts them as saved: a
// read-only cache (run --offline) is no failure, a full disk stops the run.
func TestUnsavedNodesAreCounted(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		fail bool
	}{{"read-only", cache.ErrReadOnly, false}, {"disk full", cache.ErrDiskFull, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyQuickstart(t)
			store := &refusingStore{Store: cache.NewMemory(), err: tc.err}
			g := buildAt(t, dir)
			e := &Engine{Store: store, Exec: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
			sum, err := e.Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()})
			if tc.fail != (err != nil) || (err != nil && !errors.Is(err, cache.ErrDiskFull)) {
				t.Fatalf("Run: %v", err)
			}
			if sum == nil || sum.Unsaved == 0 || int64(sum.Unsaved) != store.refused.Load() || sum.Unsaved > sum.Nodes.Ran {
				t.Fatalf("Unsaved = %v, %d writes refused", sum, store.refused.Load())
			}
		})
	}
}
