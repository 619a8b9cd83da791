package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/engine"
)

// TestProgressLogFollowsGrowth: the log's total grows with the nodes an
// expansion adds, and a line is written when done reaches the total, not
// for every node past the first total.
func TestProgressLogFollowsGrowth(t *testing.T) {
	var buf bytes.Buffer
	report, grow := progressLog(zerolog.New(&buf), time.Hour)(2)
	report("a", engine.StatusRan)
	report("b", engine.StatusCached)
	grow(3)
	for range 3 {
		report("c", engine.StatusRan)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"done":2,"total":2,"ran":1,"cached":1`) || !strings.Contains(lines[1], `"done":5,"total":5,"ran":4,"cached":1`) {
		t.Fatalf("progress lines:\n%s", buf.String())
	}
}
