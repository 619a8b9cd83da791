package engine

// Experiment identity: whose last keys a plan explains its reasons against.
//
// Each node's latest key is kept under the experiment's prefix plus the
// node's address (markLatest), and whyDirty compares a miss with the key
// last computed there. The prefix is derived from the experiment's ID
// (config.Experiment.ID: settings { name }, else the absolute path it was
// loaded from), so two experiments that share a folder name do not share
// reasons. A moved or renamed experiment has a new ID and no latest keys
// yet; its first plans compare with the last run of the experiment it most
// likely was (priorRun) until it has run under its new ID.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/config"
)

// latestPrefix is the prefix of the experiment's latest-key addresses: its
// name (so `cache gc` can say whose records it deletes) and a digest of its
// ID (so same-named experiments are apart). The name's colons are replaced:
// the first colon ends the prefix.
func latestPrefix(exp *config.Experiment) string {
	id := exp.ID
	if id == "" { // an experiment built without config.Load (tests)
		id = "path:" + exp.Dir + "\x00" + exp.Name
	}
	sum := sha256.Sum256([]byte(id))
	name := strings.NewReplacer(":", "_", "\x00", "_").Replace(exp.Name)
	return name + "@" + hex.EncodeToString(sum[:6]) + ":"
}

// minPriorOverlap is the share of declared blocks (Jaccard index) a
// vanished experiment's last run must have in common with this one to be
// taken for it before a move or rename: edits between the move and the
// plan may add or drop a few blocks.
const minPriorOverlap = 0.5

// priorRun returns, for an experiment that has never run under its ID, the
// last run of the experiment it most likely was: the last run from its own
// path under another ID (a settings { name } given or removed since), else
// one whose path no longer exists (it was moved or renamed: a copy, or an
// unrelated experiment, still exists and is not taken) with the most blocks
// in common, at least minPriorOverlap, the most recent of those. It returns
// nil when the experiment has run under its ID, or nothing fits.
func priorRun(store cache.Store, exp *config.Experiment) *cache.RunRecord {
	runs, err := store.Runs()
	if err != nil {
		return nil
	}
	var here, moved *cache.RunRecord
	bestOverlap := 0.0
	for _, r := range runs { // oldest first
		if r.ExperimentID == exp.ID {
			return nil
		}
		if r.ExperimentID == "" || r.LatestPrefix == "" || r.ExperimentPath == "" {
			continue
		}
		if r.ExperimentPath == exp.Path {
			here = r
			continue
		}
		if _, err := os.Stat(r.ExperimentPath); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		o := overlap(r.Blocks, exp.Blocks)
		if o >= minPriorOverlap && o >= bestOverlap {
			moved, bestOverlap = r, o
		}
	}
	if here != nil {
		return here
	}
	return moved
}

// overlap is the Jaccard index of two sorted lists of distinct strings.
func overlap(a, b []string) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	both, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			both++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

// ranHere reports whether some node of the graph has a latest key under
// the experiment's own prefix: it has run under its ID. A probe of each
// instance's first node is enough; it spares reading every run record
// when a known experiment gains a node.
func (w *walker) ranHere() bool {
	for _, inst := range w.g.Instances {
		if inst.source || len(inst.nodes) == 0 {
			continue
		}
		if _, ok, err := w.store.Latest(w.expKey + w.g.Nodes[inst.nodes[0]].Address); err == nil && ok {
			return true
		}
	}
	return false
}

// legacyPrefix is the latest-key prefix of every ideaflow before
// experiment identity: the experiment's bare name, which unrelated folders
// of that name share. Caches of key scheme v1 are indexed only under it, so
// after an upgrade neither the experiment's own prefix nor a prior run's
// (run records of that time name none) knows their keys. whyDirty reads it
// for one reason only: a call's v1 key, exactly, last computed at the
// node's address (planOldScheme, the cue for `cache adopt`). The key is
// the request's, so a same-named folder's entry gives no node a reason
// that is not its own.
func legacyPrefix(exp *config.Experiment) string { return exp.Name + ":" }

// legacyIndex is legacyPrefix when some instance's first node has a
// latest key under it, probed once per walk (a cache written since
// experiment identity has none, and its misses cost no further lookup);
// "" otherwise.
func (w *walker) legacyIndex() string {
	w.legacyOnce.Do(func() {
		p := legacyPrefix(w.g.Exp)
		for _, inst := range w.g.Instances {
			if inst.source || len(inst.nodes) == 0 {
				continue
			}
			if _, ok, err := w.store.Latest(p + w.g.Nodes[inst.nodes[0]].Address); err == nil && ok {
				w.legacy = p
				return
			}
		}
	})
	return w.legacy
}

// priorPrefix is the latest-key prefix whyDirty falls back on for a node
// without a latest key of its own: priorRun's, found once per walk; "" for
// none.
func (w *walker) priorPrefix() string {
	w.priorOnce.Do(func() {
		if w.ranHere() {
			return
		}
		if r := priorRun(w.store, w.g.Exp); r != nil {
			w.prior, w.priorPath = r.LatestPrefix, r.ExperimentPath
		}
	})
	return w.prior
}
