package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// How the binary was built must not change a report's bytes: `make build`
// (which stamps a version) and a plain `go build` (which may stamp none)
// of one checkout write the same tables; the build is named only in the
// .provenance.json beside them.
func TestMakeBuildAndGoBuildWriteTheSameReports(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI twice")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dir := t.TempDir()
	made, plain := filepath.Join(dir, "made"), filepath.Join(dir, "plain")
	if out, err := exec.Command("make", "-C", "../..", "build", "BIN="+made).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	gob := exec.Command("go", "build", "-o", plain, ".")
	if out, err := gob.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	exp := filepath.Join(dir, "quickstart")
	if err := os.CopyFS(exp, os.DirFS("../../experiments/quickstart")); err != nil {
		t.Fatal(err)
	}
	run := func(bin, name string) string {
		out := filepath.Join(dir, "out-"+name)
		cmd := exec.Command(bin, "run", exp, "--cache-dir", filepath.Join(dir, "cache-"+name), "--out", out)
		cmd.Env = append(os.Environ(), "IDEAFLOW_NO_SUPERVISOR=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s run: %v\n%s", name, err, b)
		}
		return out
	}
	a, b := run(made, "made"), run(plain, "plain")
	// Every file but the two that name the build (the provenance and the
	// page, whose header shows it) and a run's times.
	names, err := filepath.Glob(filepath.Join(a, "*"))
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, p := range names {
		f := filepath.Base(p)
		if strings.HasSuffix(f, ".provenance.json") || strings.HasSuffix(f, ".html") {
			continue
		}
		x, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between make build and go build:\n%s\n---\n%s", f, x, y)
		}
		compared++
	}
	if compared != 2 {
		t.Errorf("compared %d files; want the quickstart's table1.md and table1.csv", compared)
	}
}
