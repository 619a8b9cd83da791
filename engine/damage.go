package engine

import (
	"errors"
	"sync"

	"github.com/ideaflow/ideaflow/cache"
)

// Damaged records. A warm node is settled from its memo without reading its
// record, so a record whose value fails its checksum is found only when a
// dependent (or a report) reads it. Such a record is a miss, never a
// failure: the walk notes the node as damaged, lets the round finish, then
// resets the node and everything downstream of it and walks them again. The
// node is recomputed (a model node re-asked, once) and its record replaced;
// dependents whose inputs changed with it run too. A run also drops the
// damaged record at once, so no later memo trusts it; a plan, which never
// writes, only distrusts it.
type damage struct {
	mu    sync.Mutex
	nodes map[int32]bool  // damaged nodes found this round
	keys  map[string]bool // keys known damaged: memos naming them are not trusted
	fixed int             // records found damaged (and, in a run, recomputed)
}

// seen reports whether the walk has met a damaged record.
func (d *damage) seen() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fixed > 0 || len(d.nodes) > 0 || len(d.keys) > 0
}

// isDamaged reports whether err says a record could not be read intact.
func isDamaged(err error) bool {
	return errors.Is(err, cache.ErrCorrupt) || errors.Is(err, cache.ErrNotFound)
}

// noteDamaged records that node d's record cannot be read.
func (w *walker) noteDamaged(d int32) {
	st := &w.states[d]
	w.dmg.mu.Lock()
	defer w.dmg.mu.Unlock()
	if w.dmg.nodes == nil {
		w.dmg.nodes, w.dmg.keys = map[int32]bool{}, map[string]bool{}
	}
	if !w.dmg.nodes[d] {
		w.dmg.nodes[d] = true
		w.dmg.keys[st.key] = true
		w.dmg.fixed++
	}
}

func (w *walker) distrusted(key string) bool {
	if w.plan && w.early.sent(key) {
		// Answered by an early call of this plan (early.go): to the plan
		// (and the run that takes its states over) it is a node to run.
		return true
	}
	w.dmg.mu.Lock()
	defer w.dmg.mu.Unlock()
	return w.dmg.keys[key]
}

// resetDamaged resets the damaged nodes of the last round, and every node
// downstream of them, to be walked again. It reports whether there were any.
func (w *walker) resetDamaged() bool {
	w.dmg.mu.Lock()
	damaged := w.dmg.nodes
	w.dmg.nodes = nil
	w.dmg.mu.Unlock()
	if len(damaged) == 0 {
		return false
	}
	stack := make([]int32, 0, len(damaged))
	for d := range damaged {
		if !w.plan {
			if err := w.store.Drop(w.states[d].key); err != nil {
				w.log.Warn().Str("node", w.g.Nodes[d].Address).Err(err).Msg("could not drop a damaged record")
			}
		}
		stack = append(stack, d)
	}
	seen := map[int32]bool{}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			continue
		}
		seen[i] = true
		w.states[i] = nodeState{}
		w.log.Warn().Str("node", w.g.Nodes[i].Address).Msg("recomputing: a cache record it depends on is damaged")
		stack = append(stack, w.g.Dependents(int(i))...)
	}
	return true
}
