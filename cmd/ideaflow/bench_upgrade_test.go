package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkWarmAfterUpgrade builds ideaflow three times: twice differing
// only in the version string (-X main.version, as make build stamps every
// commit), once more with another render version (shared rendering code
// that changed, -X engine.renderVersion). It fills a cache with the first
// build (20 models x items x 8 nodes), then times warm runs, each as its own
// process, in one go: the first build's, the second build's two, the third
// build's two. Memos are keyed by versions, so the second build's warm runs
// are as fast as the first's; the third's first warm run renders every node
// and rewrites its memo, and its second is as fast again. Ratios are over
// the first build's warm run.
func BenchmarkWarmAfterUpgrade(b *testing.B) {
	for _, items := range []int{300, 1200} {
		b.Run(fmt.Sprintf("items=%d", items), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchWarmAfterUpgrade(b, items)
			}
		})
	}
}

func benchWarmAfterUpgrade(b *testing.B, items int) {
	dir := b.TempDir()
	build := func(name string, ldflags ...string) string {
		bin := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-ldflags", strings.Join(ldflags, " "), "-o", bin, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", name, err, out)
		}
		return bin
	}
	a := build("ideaflow-a", "-X main.version=bench-a")
	bb := build("ideaflow-b", "-X main.version=bench-b")
	c := build("ideaflow-c", "-X main.version=bench-c", "-X github.com/ideaflow/ideaflow/engine.renderVersion=bench-next")

	exp := filepath.Join(dir, "exp")
	writeScaleExperiment(b, exp, 20, items, 6, 2)
	cacheDir := filepath.Join(dir, "cache")
	var nodes int
	run := func(bin, label string) (time.Duration, map[string]int) {
		out := filepath.Join(dir, label+".json")
		cmd := exec.Command(bin, "run", exp, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "results"), "--summary-json", out)
		t0 := time.Now()
		if o, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", label, err, o)
		}
		d := time.Since(t0)
		s := readSummary(b, out)
		nodes = s.Nodes.Total
		return d, map[string]int{"ran": s.Nodes.Ran, "rendered": s.Memo.Rendered, "rewritten": s.Memo.Rewritten}
	}
	run(a, "cold")
	run(a, "page") // the first warm run writes report.html
	base, got := run(a, "warm-a")
	if got["ran"] != 0 || got["rendered"] != 0 {
		b.Fatalf("warm run of the same build: %v", got)
	}
	report := func(bin, label string, rendered bool) {
		d, got := run(bin, label)
		if got["ran"] != 0 || (got["rendered"] > 0) != rendered || (rendered && got["rewritten"] != got["rendered"]) {
			b.Fatalf("%s: %v (rendered expected: %v)", label, got, rendered)
		}
		b.ReportMetric(d.Seconds()/base.Seconds(), label+"/warm-a")
	}
	report(bb, "warm-b1", false)
	report(bb, "warm-b2", false)
	report(c, "warm-c1", true)
	report(c, "warm-c2", false)
	b.ReportMetric(float64(nodes), "nodes")
	b.ReportMetric(base.Seconds(), "warm-a-s")
}
