package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
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
	// It says first what it will delete and whose it was, and deletes only
	// with --yes (or a yes on a terminal).
	for _, args := range [][]string{{"--dry-run"}, nil} {
		code, stdout, stderr = cli(t, append([]string{"cache", "gc", exp, "--cache-dir", cacheDir}, args...)...)
		if !strings.Contains(stdout, "48 record(s) reached by "+exp+" are kept; 11 record(s)") ||
			!strings.Contains(stdout, "11  last computed by experiment variant") {
			t.Fatalf("gc %v preview: %d\n%s%s", args, code, stdout, stderr)
		}
		if args == nil && (code != exitBadInput || !strings.Contains(stderr, "pass --yes")) {
			t.Fatalf("gc without --yes off a terminal: exit %d\n%s", code, stderr)
		}
	}
	code, stdout, stderr = cli(t, "cache", "gc", exp, "--cache-dir", cacheDir, "--yes")
	if code != 0 || !strings.Contains(stdout, "kept 48 records, removed 11") {
		t.Fatalf("gc: %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := cli(t, "cache", "verify", "--cache-dir", cacheDir); code != 0 || !strings.Contains(stdout, "all entries verified") {
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

// treeDigest hashes every file's name and bytes under dir, to show that a
// command left a cache exactly as it found it.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Name() == "HEADROOM" {
			fmt.Fprintf(h, "%s\n", p) // reserved free space: only its presence counts
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestNoCommandButRunCreatesACache: a typo in --cache-dir used to become an
// empty cache that "verified"; now every reading command says there is none.
// (plan prices the run as on an empty cache instead, loudly:
// TestPlanOnANamedCacheThatDoesNotExistYet.)
func TestNoCommandButRunCreatesACache(t *testing.T) {
	_, exp, _, _ := newScenario(t)
	typo := filepath.Join(t.TempDir(), "a", "typo")
	for _, args := range [][]string{
		{"cache", "verify"}, {"cache", "verify", "--repair"}, {"cache", "stats"}, {"cache", "ls"},
		{"cache", "export", filepath.Join(t.TempDir(), "b.bundle")}, {"cache", "gc", exp},
	} {
		code, _, stderr := cli(t, append(args, "--cache-dir", typo)...)
		if code != exitBadInput || !strings.Contains(stderr, "no cache at "+typo) || !strings.Contains(stderr, "what to do:") {
			t.Fatalf("%v on a missing cache: exit %d\n%s", args, code, stderr)
		}
		if _, err := os.Stat(typo); !os.IsNotExist(err) {
			t.Fatalf("%v created %s", args, typo)
		}
	}
}

// TestDeletedManifestIsNotAnEmptyCache: the data is still there; verify, stats
// and run must say so rather than report "all entries verified" or re-pay.
func TestDeletedManifestIsNotAnEmptyCache(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	if err := os.Remove(filepath.Join(cacheDir, "MANIFEST")); err != nil {
		t.Fatal(err)
	}
	before := srv.Count()
	for _, args := range [][]string{{"cache", "verify"}, {"cache", "stats"}, {"run", exp}} {
		code, stdout, stderr := cli(t, append(args, "--cache-dir", cacheDir)...)
		if code == 0 || !strings.Contains(stderr, "no MANIFEST") || !strings.Contains(stderr, cacheDir) || strings.Contains(stdout, "verified") {
			t.Fatalf("%v without MANIFEST: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	if srv.Count() != before {
		t.Fatal("run re-paid for a cache whose MANIFEST is missing")
	}
}

// TestDamagedValueLogIsReportedAndRepaired is the repro: truncate the
// value log to half, then every command either works around the damage or
// names it, verify --repair drops it, and the next run recomputes it.
func TestDamagedValueLogIsReportedAndRepaired(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	vlog := filepath.Join(cacheDir, "000001.vlog")
	info, err := os.Stat(vlog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(vlog, info.Size()/2); err != nil {
		t.Fatal(err)
	}
	untouched := treeDigest(t, cacheDir)

	code, stdout, stderr := cli(t, "cache", "verify", "--cache-dir", cacheDir)
	bad, badParts := strings.Count(stdout, "corrupt: "), strings.Count(stdout, "corrupt key parts (the record is sound): ")
	if code != exitFailedNodes || bad+badParts == 0 || !strings.Contains(stderr, "verify --repair") {
		t.Fatalf("verify of a truncated value log: exit %d\n%s%s", code, stdout, stderr)
	}
	// Stats counts what it cannot read instead of refusing.
	code, stdout, stderr = cli(t, "cache", "stats", "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("records:   %d\n", 48-bad)) || (bad > 0) != strings.Contains(stdout, fmt.Sprintf("damaged:   %d record(s)", bad)) {
		t.Fatalf("stats of a truncated value log: exit %d\n%s%s", code, stdout, stderr)
	}
	// Export leaves out the damaged records and keeps the sound records
	// whose key parts are damaged, without their parts.
	bundle := filepath.Join(t.TempDir(), "rest.bundle")
	code, stdout, stderr = cli(t, "cache", "export", bundle, "--cache-dir", cacheDir)
	if (bad > 0) != (code == exitFailedNodes) || strings.Count(stdout, "skipped corrupt: ") != bad ||
		strings.Count(stdout, "exported without its damaged key parts") != badParts || !strings.Contains(stdout, fmt.Sprintf("exported %d records", 48-bad)) {
		t.Fatalf("export around %d damaged records and %d damaged parts: exit %d\n%s%s", bad, badParts, code, stdout, stderr)
	}
	if _, err := os.Stat(bundle); err != nil {
		t.Fatalf("export kept no bundle of the sound records: %v", err)
	}
	if treeDigest(t, cacheDir) != untouched {
		t.Fatal("a read-only command changed the cache folder")
	}

	code, stdout, stderr = cli(t, "cache", "verify", "--repair", "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("dropped %d unreadable record(s), %d damaged key part(s)", bad, badParts)) {
		t.Fatalf("verify --repair: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := cli(t, "cache", "verify", "--cache-dir", cacheDir); code != 0 || !strings.Contains(stdout, "all entries verified") {
		t.Fatalf("verify after repair: exit %d\n%s", code, stdout)
	}
	before := srv.Count()
	sumPath := filepath.Join(t.TempDir(), "sum.json")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath); code != 0 {
		t.Fatalf("run after repair: %s", stderr)
	}
	// Each dropped record is recomputed; a model node among them is asked
	// again, once. Damaged key parts cost nothing: their records stayed.
	if sum := readSummary(t, sumPath); sum.Nodes.Ran < bad || srv.Count()-before > bad {
		t.Fatalf("the run after repair ran %d node(s) and made %d call(s) for %d dropped record(s)", sum.Nodes.Ran, srv.Count()-before, bad)
	}
	code, stdout, _ = cli(t, "cache", "stats", "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "records:   48") {
		t.Fatalf("stats after the repairing run:\n%s", stdout)
	}
}

// TestCommandsWhileARunHoldsTheCache: plan and stats name the holder.
func TestCommandsWhileARunHoldsTheCache(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	holder := openTestCache(t, cacheDir)
	defer holder.Close()
	for _, args := range [][]string{{"plan", exp}, {"cache", "stats"}} {
		code, _, stderr := cli(t, append(args, "--cache-dir", cacheDir)...)
		want := fmt.Sprintf("pid %d", os.Getpid())
		if code != exitBadInput || !strings.Contains(stderr, "in use by another process") || !strings.Contains(stderr, want) || !strings.Contains(stderr, "wait for it to finish") {
			t.Fatalf("%v while held: exit %d\n%s", args, code, stderr)
		}
	}
}

// TestImportExpectDigest: export prints the digest; import --expect refuses
// any other bundle before creating the cache.
func TestImportExpectDigest(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	bundle := filepath.Join(t.TempDir(), "exp.bundle")
	code, stdout, stderr := cli(t, "cache", "export", bundle, "--cache-dir", cacheDir)
	m := regexp.MustCompile(`digest: (sha256:[0-9a-f]{64})`).FindStringSubmatch(stdout)
	if code != 0 || m == nil {
		t.Fatalf("export printed no digest: exit %d\n%s%s", code, stdout, stderr)
	}
	wrong := "sha256:" + strings.Repeat("0", 64)
	dst := filepath.Join(t.TempDir(), "theirs")
	code, _, stderr = cli(t, "cache", "import", bundle, "--expect", wrong, "--cache-dir", dst)
	if code != exitBadInput || !strings.Contains(stderr, "digest does not match") || !strings.Contains(stderr, "nothing was imported") {
		t.Fatalf("import with the wrong digest: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatal("a refused import created the cache")
	}
	code, stdout, stderr = cli(t, "cache", "import", bundle, "--expect", m[1], "--cache-dir", dst)
	if code != 0 || !strings.Contains(stdout, "imported 48 records") {
		t.Fatalf("import with the right digest: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestOpenNeverDropsDataSilently: with a garbled block in the value log,
// reading commands (dry runs included) leave the folder as it is, and the
// first writable open (a run) cuts nothing, says what it found and drops
// only the records under the damage.
func TestOpenNeverDropsDataSilently(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	vlog := filepath.Join(cacheDir, "000001.vlog")
	info, err := os.Stat(vlog)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(vlog, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	for i := range block {
		block[i] = byte(i*131 + 7)
	}
	_, err = f.WriteAt(block, info.Size()/3)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	untouched := treeDigest(t, cacheDir)
	for _, args := range [][]string{{"cache", "stats"}, {"cache", "ls"}, {"cache", "verify"}, {"plan", exp},
		{"cache", "gc", exp, "--dry-run"}, {"run", exp, "--offline", "--out", t.TempDir()}, {"run", exp, "--verify"},
		{"cache", "export", filepath.Join(t.TempDir(), "b")}, {"report", exp, "--out", t.TempDir()}} {
		cli(t, append(args, "--cache-dir", cacheDir)...)
		if treeDigest(t, cacheDir) != untouched {
			t.Fatalf("%v changed the damaged cache", args)
		}
	}
	vlogBytes, _ := os.ReadFile(vlog)
	_, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir())
	if !strings.Contains(stdout, "cache damaged: value log 000001.vlog: damaged: ") || !strings.Contains(stderr, `"records_unreadable"`) {
		t.Fatalf("the run's open did not say what it found:\n%s\n%s", stdout, stderr)
	}
	if after, _ := os.ReadFile(vlog); !bytes.Equal(after, vlogBytes) {
		t.Fatal("the run's open cut or changed the damaged value log")
	}
}

// Before the first run the default cache does not exist yet: plan says so,
// plans every node to run, and creates nothing.
func TestPlanBeforeTheFirstRunOnTheDefaultCache(t *testing.T) {
	_, exp, _, _ := newScenario(t)
	wd, home := t.TempDir(), t.TempDir()
	t.Chdir(wd)
	t.Setenv("IDEAFLOW_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", home)
	code, stdout, stderr := cli(t, "plan", exp)
	if code != 0 || !strings.Contains(stderr, "yet: every node will run") || !strings.Contains(stdout, "0 cached") {
		t.Fatalf("plan before the first run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, d := range []string{wd, home} {
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Fatalf("plan created %v in %s", entries, d)
		}
	}
}

// The default cache is the user's, not the working folder's: running the
// same experiment from another folder finds every answer (it used to re-pay
// every call), and plan and run say where the cache is.
func TestDefaultCacheDoesNotDependOnTheWorkingFolder(t *testing.T) {
	srv, exp, _, _ := newScenario(t)
	home := t.TempDir()
	t.Setenv("IDEAFLOW_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", home)
	t.Chdir(t.TempDir())
	code, stdout, stderr := cli(t, "run", exp)
	want := filepath.Join(home, "ideaflow")
	if code != 0 || !strings.Contains(stdout, "cache: "+want) {
		t.Fatalf("first run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	calls := srv.Count()
	t.Chdir(exp) // the experiment's own folder, as `cd experiments/x && ideaflow run` does
	code, stdout, stderr = cli(t, "run", ".")
	if code != 0 || srv.Count() != calls {
		t.Fatalf("run from the experiment folder: exit %d, %d new calls\n%s\n%s", code, srv.Count()-calls, stdout, stderr)
	}
	if code, stdout, _ := cli(t, "plan", "."); code != 0 || !strings.Contains(stdout, "(cache: "+want+")") {
		t.Fatalf("plan does not name the cache:\n%s", stdout)
	}
}

// TestDiskFullMessageCountsOnlyWhatWasSaved: the message used to say "16
// node(s) completed and saved" (cached + ran) when none of the 16 was.
func TestDiskFullMessageCountsOnlyWhatWasSaved(t *testing.T) {
	for _, tc := range []struct {
		nodes   engine.Counts
		unsaved int
		want    string
	}{
		{engine.Counts{Total: 30, Ran: 16, Skipped: 14}, 16, "0 node(s) computed and saved in this run (0 were cached already), 16 computed but not saved, 14 failed or not run"},
		{engine.Counts{Total: 30, Cached: 5, Ran: 16, Failed: 2, Skipped: 7}, 4, "12 node(s) computed and saved in this run (5 were cached already), 4 computed but not saved, 9 failed or not run"},
	} {
		err := diskFullError("/c", &engine.Summary{Nodes: tc.nodes, Unsaved: tc.unsaved})
		if !strings.Contains(err.Error(), "disk full at /c: "+tc.want) {
			t.Errorf("%+v, %d unsaved:\n got %v\nwant %s", tc.nodes, tc.unsaved, err, tc.want)
		}
	}
}
