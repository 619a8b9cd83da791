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
	if !strings.Contains(text[summary:], ", compacting the cache ") {
		t.Fatalf("the summary line must name the close as a phase:\n%s", lastBytes(text, 1000))
	}
	sum := readSummary(t, sumPath)
	ph := sum.Phases
	if !sum.Compacted || ph.Close <= 0 || sum.WallSeconds < ph.Load+ph.Plan+ph.Run+ph.Reports+ph.Close {
		t.Fatalf("wall %.3f s must hold every phase, the close (%.3f s) included: %+v", sum.WallSeconds, ph.Close, ph)
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
