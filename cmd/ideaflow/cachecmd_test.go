package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShareACacheBundle is the colleague's path: export what an experiment
// reaches, import it elsewhere, and reproduce the table offline without a key.
func TestShareACacheBundle(t *testing.T) {
	srv, exp, cacheDir, sc := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", filepath.Join(t.TempDir(), "a")); code != 0 {
		t.Fatal(stderr)
	}
	// A second variant fills the cache with records the first does not reach.
	variant := filepath.Join(t.TempDir(), "variant")
	v := sc
	v.JudgeTemperature = 0.9
	writeExperiment(t, variant, v)
	if code, _, stderr := cli(t, "run", variant, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}

	bundle := filepath.Join(t.TempDir(), "exp.bundle")
	code, stdout, stderr := cli(t, "cache", "export", bundle, "--experiment", exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "exported 48 records") {
		t.Fatalf("export: %d\n%s%s", code, stdout, stderr)
	}
	fresh := filepath.Join(t.TempDir(), "colleague-cache")
	code, stdout, stderr = cli(t, "cache", "import", bundle, "--cache-dir", fresh)
	if code != 0 || !strings.Contains(stdout, "imported 48 records") {
		t.Fatalf("import: %d\n%s%s", code, stdout, stderr)
	}
	before := srv.Count()
	t.Setenv("CLI_TEST_KEY", "")
	outA, outB := filepath.Join(t.TempDir(), "mine"), filepath.Join(t.TempDir(), "theirs")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--offline", "--out", outA); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", fresh, "--offline", "--out", outB); code != 0 {
		t.Fatalf("offline from the bundle: %s", stderr)
	}
	if srv.Count() != before {
		t.Fatalf("offline runs made %d requests", srv.Count()-before)
	}
	a, _ := os.ReadFile(filepath.Join(outA, "table1.md"))
	b, _ := os.ReadFile(filepath.Join(outB, "table1.md"))
	if len(a) == 0 || string(a) != string(b) {
		t.Fatalf("tables differ:\n%s\n---\n%s", a, b)
	}

	// A corrupt bundle is refused whole.
	raw, _ := os.ReadFile(bundle)
	raw[len(raw)/2] ^= 0xff
	corrupt := filepath.Join(t.TempDir(), "corrupt.bundle")
	os.WriteFile(corrupt, raw, 0o644)
	empty := filepath.Join(t.TempDir(), "empty-cache")
	code, _, stderr = cli(t, "cache", "import", corrupt, "--cache-dir", empty)
	if code != exitBadInput || !strings.Contains(stderr, "nothing was imported") {
		t.Fatalf("corrupt import: exit %d\n%s", code, stderr)
	}
	// The bundle is checked before the cache is created: nothing is left behind.
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatalf("a refused import created %s (stat: %v)", empty, err)
	}
	code, _, stderr = cli(t, "cache", "stats", "--cache-dir", empty)
	if code != exitBadInput || !strings.Contains(stderr, "no cache at "+empty) {
		t.Fatalf("stats after a refused import: exit %d\n%s", code, stderr)
	}

	// gc keeps what the named experiment reaches: the variant's rankings,
	// insight scores and report go (8 + 2 + 1 records; the dropped
	// target's rankings are shared: they never saw the judge).
	code, stdout, stderr = cli(t, "cache", "gc", exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "kept 48 records, removed 11") {
		t.Fatalf("gc: %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := cli(t, "cache", "verify", "--cache-dir", cacheDir); code != 0 || !strings.Contains(stdout, "all records verified") {
		t.Fatalf("verify: %d %s", code, stdout)
	}
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--offline", "--out", outA); code != 0 {
		t.Fatalf("after gc the experiment must still run offline: %s", stderr)
	}
	code, stdout, _ = cli(t, "cache", "ls", "--cache-dir", cacheDir)
	if code != 0 || strings.Count(stdout, "\n") != 48 {
		t.Fatalf("ls: %d lines\n%s", strings.Count(stdout, "\n"), stdout)
	}
}

func TestCacheDirFromEnvironment(t *testing.T) {
	_, exp, _, _ := newScenario(t)
	envDir := filepath.Join(t.TempDir(), "from-env")
	t.Setenv("IDEAFLOW_CACHE_DIR", envDir)
	if code, _, stderr := cli(t, "run", exp); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, _ := cli(t, "cache", "stats")
	if code != 0 || !strings.Contains(stdout, "cache:     "+envDir) || !strings.Contains(stdout, "records:   48") {
		t.Fatalf("stats with IDEAFLOW_CACHE_DIR:\n%s", stdout)
	}
	flagDir := filepath.Join(t.TempDir(), "from-flag")
	code, _, stderr := cli(t, "cache", "stats", "--cache-dir", flagDir)
	if code != exitBadInput || !strings.Contains(stderr, "no cache at "+flagDir) {
		t.Fatalf("--cache-dir must win over the environment: exit %d\n%s", code, stderr)
	}
}
