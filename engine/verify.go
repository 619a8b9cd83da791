package engine

import (
	"bytes"
	"sort"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
)

// The verify mode (walker.verify, a plan that never trusts a memo):
// every cached compute node is recomputed and compared with its record.

// Verify recomputes every cached deterministic node of the graph and
// compares the result with the cache (Go's GODEBUG=gocacheverify=1 for
// ideaflow): a mismatch means a stage changed its outputs without a
// Version bump. It makes no calls and writes nothing.
func (e *Engine) Verify(g *Graph) *VerifyReport {
	w := e.newWalker(g, true)
	w.verify = true
	w.walk(e.Resolvers)
	sort.Slice(w.mismatches, func(i, j int) bool { return w.mismatches[i].Address < w.mismatches[j].Address })
	return &VerifyReport{Verified: w.verified, Mismatches: w.mismatches}
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Verified   int              `json:"verified"`
	Mismatches []VerifyMismatch `json:"mismatches,omitempty"`
}

// VerifyMismatch is a cached deterministic node whose recomputed output
// differs from the cache: a stage changed its outputs without a Version bump.
type VerifyMismatch struct {
	Address string `json:"address"`
	Key     string `json:"key"`
	Error   string `json:"error,omitempty"` // recomputing failed
}

func (w *walker) verifyCompute(n *Node, work *stages.Work, rec *cache.Record) {
	out, err := work.Compute()
	w.errMu.Lock()
	defer w.errMu.Unlock()
	w.verified++
	switch {
	case err != nil:
		w.mismatches = append(w.mismatches, VerifyMismatch{Address: n.Address, Key: rec.Key, Error: err.Error()})
	case !bytes.Equal(out, rec.Output):
		w.mismatches = append(w.mismatches, VerifyMismatch{Address: n.Address, Key: rec.Key})
	}
}
