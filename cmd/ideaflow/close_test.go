package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestSummaryWallIncludesTheCompaction: a run that wrote 20,000 records or
// more compacts the cache as it closes. The CLI closes the cache before it
// prints the summary, so the compaction is a phase of the printed wall time
// ("closing the cache N s"), said while it happens (the cache's two
// progress lines come before the summary), never a silent tail after it.
func TestSummaryWallIncludesTheCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 21,000 records")
	}
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeScaleExperiment(t, exp, 1, 10_500, 1, 0) // 10,500 filter + 10,500 generation nodes
	cacheDir := filepath.Join(dir, "cache")
	sumPath := filepath.Join(dir, "sum.json")
	// One writer for both streams, as a terminal shows them: the order of
	// the compaction's lines and the summary is what a researcher sees.
	w := &syncBuffer{}
	code := Main([]string{"run", exp, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "results"), "--summary-json", sumPath}, w, w)
	text := w.String()
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, lastBytes(text, 3000))
	}
	compacting, compacted, summary := strings.Index(text, "cache: compacting"), strings.Index(text, "cache: compacted"), strings.Index(text, "21000 nodes:")
	if compacting < 0 || compacted < compacting || summary < compacted {
		t.Fatalf("want the compaction's two lines, then the summary; got positions %d, %d, %d in:\n%s", compacting, compacted, summary, lastBytes(text, 3000))
	}
	// The page, written before the close, says so too (its time is the
	// reports phase's).
	if page := strings.Index(text, "writing report.html"); page < 0 || compacting < page {
		t.Fatalf("want the page's line before the compaction:\n%s", lastBytes(text, 3000))
	}
	// Its 21,000 memo lookups (misses) also make the close write the memo
	// index, said the same way.
	indexed := strings.Index(text, "cache: indexed the memos")
	if indexed < 0 || summary < indexed {
		t.Fatalf("want the memo index's line before the summary:\n%s", lastBytes(text, 3000))
	}
	if !strings.Contains(text[summary:], ", compacting the cache and indexing 21000 memos ") {
		t.Fatalf("the summary line must name the close as a phase:\n%s", lastBytes(text, 1000))
	}
	sum := readSummary(t, sumPath)
	ph := sum.Phases
	if !sum.Compacted || sum.MemosIndexed != 21000 || ph.Close <= 0 || sum.WallSeconds < ph.Load+ph.Plan+ph.Run+ph.Reports+ph.Close {
		t.Fatalf("wall %.3f s must hold every phase, the close (%.3f s) included: %+v (indexed %d)", sum.WallSeconds, ph.Close, ph, sum.MemosIndexed)
	}

	// The warm re-run reads its memos from the index: it sends no lookup to
	// the tables, so its close neither compacts nor rewrites the index.
	w = &syncBuffer{}
	if code := Main([]string{"run", exp, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "results"), "--summary-json", sumPath}, w, w); code != 0 {
		t.Fatalf("warm run: exit %d\n%s", code, lastBytes(w.String(), 3000))
	}
	warm := readSummary(t, sumPath)
	if warm.Nodes.Cached != 21000 || warm.Compacted || warm.MemosIndexed != 0 || strings.Contains(w.String(), "indexing") {
		t.Fatalf("warm run: %+v, compacted %v, indexed %d\n%s", warm.Nodes, warm.Compacted, warm.MemosIndexed, lastBytes(w.String(), 1000))
	}
}

// syncBuffer is a bytes.Buffer that two streams (and the logger's
// goroutines) may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
