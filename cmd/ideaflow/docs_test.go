package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// docs/ARCHITECTURE.md is the house a newcomer reads: every Go package of
// the module is named in it (as its folder, `stages/llm/`), so a package
// added without a word about what it owns fails here.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	arch, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/ideaflow/ideaflow/"
	for _, p := range strings.Fields(string(out)) {
		dir := strings.TrimPrefix(p, module) + "/"
		if !strings.Contains(string(arch), dir) {
			t.Errorf("docs/ARCHITECTURE.md does not name package %s: add a line for %s to its Layout block", p, dir)
		}
	}
}

// docs/BENCHMARKS.md holds the figures `make bench` measures: every
// benchmark the Makefile's bench target runs is named there.
func TestBenchmarksDocNamesEveryBenchmark(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	names := 0
	for _, m := range regexp.MustCompile(`-bench ["']([^"']+)["']`).FindAllStringSubmatch(string(mk), -1) {
		for _, alt := range strings.Split(m[1], "|") {
			name := strings.SplitN(alt, "/", 2)[0]
			// Anchored patterns ('^BenchmarkScale$$', make's $$ for $)
			// name the benchmark whole.
			name = strings.TrimPrefix(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "^"), "$$"), "$"), "Benchmark")
			names++
			// The Makefile's patterns are parts of names (Prepare runs
			// BenchmarkRankPrepare and BenchmarkGeneratePrepare).
			if !regexp.MustCompile(`Benchmark\w*` + regexp.QuoteMeta(name)).Match(doc) {
				t.Errorf("docs/BENCHMARKS.md does not name Benchmark%s, which `make bench` runs: add its figures", name)
			}
		}
	}
	if names < 10 {
		t.Fatalf("read %d benchmark names from the Makefile's bench target; the pattern no longer matches it", names)
	}
}
