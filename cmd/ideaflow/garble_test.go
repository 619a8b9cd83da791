package main

import (
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Issue 21's cache-damage repros, through the CLI. A panic anywhere (Badger
// panicked in its own goroutines) ends the test binary, so a passing run
// of these tests is also "no command panicked".

// TestSSTGarbles: 4 KiB of garbage in the index table at 20 seeded places.
// It used to make `cache verify` say "all records verified" and run, plan,
// report and verify --repair panic. Now verify finds every garble, a run
// gives tables byte-identical to the undamaged run's (never a wrong value)
// and leaves the cache sound; for the first seeds, every reading command
// (dry runs included) leaves the damaged folder byte for byte as it was,
// and verify --repair then a run gives the same tables too.
func TestSSTGarbles(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	clean := t.TempDir()
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", clean); code != 0 {
		t.Fatal(stderr)
	}
	want := reportTables(t, clean)
	tables, _ := filepath.Glob(filepath.Join(cacheDir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("the run left no index table")
	}
	repaid := make([]int, 0, 20)
	for seed := range 20 {
		dir := filepath.Join(t.TempDir(), "cache")
		copyTree(t, cacheDir, dir)
		rng := rand.New(rand.NewSource(int64(seed)))
		sst := filepath.Join(dir, filepath.Base(tables[rng.Intn(len(tables))]))
		info, err := os.Stat(sst)
		if err != nil {
			t.Fatal(err)
		}
		garbage := make([]byte, 4096)
		rng.Read(garbage)
		writeAt(t, sst, rng.Int63n(max(1, info.Size()-4096)), garbage)
		all := seed < 4 // every command on the first seeds
		spare := filepath.Join(t.TempDir(), "spare")
		if all {
			copyTree(t, dir, spare)
		}
		untouched := treeDigest(t, dir)

		code, stdout, stderr := cli(t, "cache", "verify", "--cache-dir", dir)
		if code != exitFailedNodes || !strings.Contains(stdout, "damaged: index table "+filepath.Base(sst)) {
			t.Fatalf("seed %d: verify did not find the garble: exit %d\n%s%s", seed, code, stdout, stderr)
		}
		if all {
			for _, args := range [][]string{{"plan", exp}, {"cache", "stats"}, {"cache", "ls"}, {"cache", "gc", exp, "--dry-run"},
				{"run", exp, "--verify"}, {"run", exp, "--offline", "--out", t.TempDir()}, {"cache", "export", filepath.Join(t.TempDir(), "b")}} {
				cli(t, append(args, "--cache-dir", dir)...)
			}
			out := t.TempDir()
			if code, _, _ := cli(t, "report", exp, "--cache-dir", dir, "--out", out); code == 0 {
				if got := reportTables(t, out); got != want {
					t.Fatalf("seed %d: report from the damaged cache wrote other tables:\n%s\nwant\n%s", seed, got, want)
				}
			}
		}
		if treeDigest(t, dir) != untouched {
			t.Fatalf("seed %d: a reading command changed the damaged cache", seed)
		}

		before := srv.Count()
		out := t.TempDir()
		if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", dir, "--out", out); code != 0 {
			t.Fatalf("seed %d: run on the damaged cache: exit %d\n%s%s", seed, code, stdout, stderr)
		}
		repaid = append(repaid, srv.Count()-before)
		if got := reportTables(t, out); got != want {
			t.Fatalf("seed %d: the run on the damaged cache wrote other tables:\n%s\nwant\n%s", seed, got, want)
		}
		if code, stdout, _ := cli(t, "cache", "verify", "--cache-dir", dir); code != 0 || !strings.Contains(stdout, "all entries verified") {
			t.Fatalf("seed %d: verify after the healing run: exit %d\n%s", seed, code, stdout)
		}

		if !all {
			continue
		}
		if code, stdout, stderr := cli(t, "cache", "verify", "--repair", "--cache-dir", spare); code != 0 {
			t.Fatalf("seed %d: verify --repair: exit %d\n%s%s", seed, code, stdout, stderr)
		}
		out = t.TempDir()
		if code, _, stderr := cli(t, "run", exp, "--cache-dir", spare, "--out", out); code != 0 || reportTables(t, out) != want {
			t.Fatalf("seed %d: run after verify --repair: exit %d (or other tables)\n%s", seed, code, stderr)
		}
	}
	// The calls re-paid are records of at most 511 bytes, which live in the
	// table itself and were in its damaged blocks; records in the value log
	// are restored from there.
	t.Logf("calls re-paid per garble: %v", repaid)
}

// TestLastLogGarbles: 20 random bytes at 8 offsets of the newest value log.
// Badger's writable open used to cut the log there, losing every record
// after it (and re-paying their calls). Now the run re-pays at most the
// records the garble hit (those verify reports), cuts nothing, and writes
// the undamaged run's tables.
func TestLastLogGarbles(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	clean := t.TempDir()
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", clean); code != 0 {
		t.Fatal(stderr)
	}
	want := reportTables(t, clean)
	logs, _ := filepath.Glob(filepath.Join(cacheDir, "*.vlog"))
	if len(logs) == 0 {
		t.Fatal("the run left no value log")
	}
	last := filepath.Base(logs[len(logs)-1])
	data, err := os.ReadFile(filepath.Join(cacheDir, last))
	if err != nil {
		t.Fatal(err)
	}
	end := int64(len(strings.TrimRight(string(data), "\x00")))
	dropped := regexp.MustCompile(`(\d+) unreadable record\(s\) dropped`)
	var hits, repaid []int
	for k := range 8 {
		dir := filepath.Join(t.TempDir(), "cache")
		copyTree(t, cacheDir, dir)
		garbage := make([]byte, 20)
		rand.New(rand.NewSource(int64(100 + k))).Read(garbage)
		writeAt(t, filepath.Join(dir, last), end*int64(2*k+1)/16, garbage)
		damaged, _ := os.ReadFile(filepath.Join(dir, last))

		_, stdout, _ := cli(t, "cache", "verify", "--cache-dir", dir)
		hit := strings.Count(stdout, "corrupt: ")
		before := srv.Count()
		out := t.TempDir()
		code, stdout, stderr := cli(t, "run", exp, "--cache-dir", dir, "--out", out)
		if code != 0 {
			t.Fatalf("offset %d/16: run: exit %d\n%s%s", 2*k+1, code, stdout, stderr)
		}
		calls := srv.Count() - before
		hits, repaid = append(hits, hit), append(repaid, calls)
		if calls > hit {
			t.Errorf("offset %d/16: the run re-paid %d calls for %d damaged record(s)", 2*k+1, calls, hit)
		}
		if m := dropped.FindStringSubmatch(stdout); hit > 0 && (m == nil || m[1] != strconv.Itoa(hit)) {
			t.Errorf("offset %d/16: %d damaged record(s), the run says %v:\n%s", 2*k+1, hit, m, stdout)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, last)); string(got) != string(damaged) {
			t.Errorf("offset %d/16: the run's open cut or changed the damaged log", 2*k+1)
		}
		if got := reportTables(t, out); got != want {
			t.Errorf("offset %d/16: the run wrote other tables:\n%s\nwant\n%s", 2*k+1, got, want)
		}
	}
	t.Logf("records hit per garble %v, calls re-paid %v", hits, repaid)
}

// reportTables is every table file a run or report wrote, in one string.
func reportTables(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, pat := range []string{"*.md", "*.csv"} {
		paths, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "== %s\n%s", filepath.Base(p), data)
		}
	}
	if b.Len() == 0 {
		t.Fatalf("no table in %s", dir)
	}
	return b.String()
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if d.Name() == "HEADROOM" {
			return nil // reserved free space (zeros), taken again by the next writable open
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}
