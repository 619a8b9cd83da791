package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// benchmarkPackages are the packages whose stage types belong to one
// benchmark: what their outputs mean is theirs to say (stages.Presenter),
// so the CLI must not import them, or a new benchmark would show wrong
// until cmd/ learnt it. stages/all (which links them in), the stage
// contract (stages), the report and plot stages, and shared services
// (datasets, literature, llm) are not per-benchmark.
var benchmarkPackages = []string{
	"github.com/ideaflow/ideaflow/stages/ideabench",
	"github.com/ideaflow/ideaflow/stages/liveideabench",
	"github.com/ideaflow/ideaflow/stages/scholareval",
}

// No package under cmd/ imports a benchmark package (tests aside: they
// may decode a benchmark's output to check the CLI's).
func TestCmdKnowsNoBenchmark(t *testing.T) {
	root := filepath.Join("..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range benchmarkPackages {
				if p == b || strings.HasPrefix(p, b+"/") {
					t.Errorf("%s imports %s: cmd/ keeps no per-benchmark knowledge; let the stage type present its outputs (stages.Presenter)", path, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("read %d Go files under cmd/; the walk missed the commands", files)
	}
}
