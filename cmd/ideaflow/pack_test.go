package main

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/internal/pack"
	"github.com/ideaflow/ideaflow/internal/shareddata"
)

// twoTables is the scenario with a second table, over a second quality:
// table1's closure leaves the feasibility rankings out.
func twoTables(t *testing.T, exp string, sc scenario) {
	t.Helper()
	extra := `
quality "feasibility" {
  definition = "can be carried out with today's instruments"
}

stage "rank_ideas" "feasibility" {
  ideas   = stage.generate_ideas.main
  judge   = model.judge
  quality = quality.feasibility
}

stage "insight_score" "feasibility" {
  ranks = stage.rank_ideas.feasibility
}

report "table_feasibility" {
  rows    = stage.generate_ideas.main
  columns = [stage.insight_score.feasibility]
}
`
	if err := os.WriteFile(filepath.Join(exp, "main.hcl"), []byte(sc.hcl()+extra), 0o644); err != nil {
		t.Fatal(err)
	}
}

func firstInt(t *testing.T, re, s string) int {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, s)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestPackReproducesOneTable packs table1 of a two-table experiment run with
// -var n=2, and reproduces it in an empty folder on a fresh cache: no
// request reaches the server, table1's files (.md, .csv) are byte for byte
// the run's, and the pack's records are strictly fewer than the experiment's
// bundle (the other table's rankings are not in table1's closure), yet
// sufficient. The unpacked variables are the run's, not the defaults.
func TestPackReproducesOneTable(t *testing.T) {
	srv, exp, cacheDir, sc := newScenario(t)
	twoTables(t, exp, sc)
	if code, out, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--var", "n=2"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	bundle := filepath.Join(t.TempDir(), "all.bundle")
	code, out, stderr := cli(t, "cache", "export", bundle, "--experiment", exp, "--cache-dir", cacheDir, "--var", "n=2")
	if code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	all := firstInt(t, `exported (\d+) records`, out)
	packFile := filepath.Join(t.TempDir(), "table1.pack")
	code, out, stderr = cli(t, "pack", "report.table1", exp, "-o", packFile, "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("pack: exit %d\n%s\n%s", code, out, stderr)
	}
	packed := firstInt(t, `: (\d+) records`, out)
	if packed == 0 || packed >= all {
		t.Fatalf("table1's pack holds %d records, the experiment's bundle %d: want fewer, not none", packed, all)
	}
	t.Logf("table1's pack: %d of the experiment's %d records\n%s", packed, all, out)
	calls := srv.Count()
	dir := filepath.Join(t.TempDir(), "fresh")
	code, out, stderr = cli(t, "reproduce", packFile, dir)
	if code != 0 {
		t.Fatalf("reproduce: exit %d\n%s\n%s", code, out, stderr)
	}
	if n := srv.Count() - calls; n != 0 {
		t.Fatalf("reproduce sent %d requests, want 0", n)
	}
	if !strings.Contains(out, "not rebuilt (not in this pack): report.table_feasibility") {
		t.Errorf("reproduce does not say the other table is not in the pack:\n%s", out)
	}
	// Every file of table1 but its .provenance.json, which holds the time.
	files, _ := filepath.Glob(filepath.Join(exp, "results", "table1.*"))
	compared := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".provenance.json") {
			continue
		}
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "exp", "results", filepath.Base(f)))
		if err != nil {
			t.Fatalf("%s not rebuilt: %v\n%s", filepath.Base(f), err, out)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the run's:\n%s\n--- run:\n%s", filepath.Base(f), got, want)
		}
		compared++
	}
	if compared < 2 {
		t.Fatalf("compared %d files of table1 (%v), want its .md and .csv at least", compared, files)
	}
	vars, _ := os.ReadFile(filepath.Join(dir, packVarsName))
	if !strings.Contains(string(vars), "n = 2\n") {
		t.Errorf("pack.vars = %q, want the run's n = 2", vars)
	}
}

// packedTable1 runs the test scenario and packs its table1: the
// experiment's folder and the pack's path.
func packedTable1(t *testing.T) (string, string) {
	t.Helper()
	_, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	packFile := filepath.Join(t.TempDir(), "t.pack")
	if code, _, stderr := cli(t, "pack", "report.table1", exp, "-o", packFile, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	return exp, packFile
}

// TestTamperedPackRefusedWhole edits one byte of a data file inside a pack:
// unpack refuses it, names the file, and writes nothing.
func TestTamperedPackRefusedWhole(t *testing.T) {
	exp, packFile := packedTable1(t)
	b, _ := os.ReadFile(packFile)
	data, _ := os.ReadFile(filepath.Join(exp, "data/targets.jsonl"))
	at := bytes.Index(b, data)
	if at < 0 {
		t.Fatal("the data file is not in the pack")
	}
	b[at+10] ^= 0x01
	if err := os.WriteFile(packFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "into")
	fresh := filepath.Join(t.TempDir(), "cache")
	code, _, stderr := cli(t, "unpack", packFile, dir, "--cache-dir", fresh)
	if code != exitBadInput || !strings.Contains(stderr, "pack refused: experiment/data/targets.jsonl differs from its manifest digest (nothing was unpacked)") {
		t.Fatalf("tampered pack: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused pack left %s behind", dir)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a refused pack created the cache %s", fresh)
	}
}

// TestPackLeavesLargeFilesOut packs with --max-file below the data file's
// size: the pack lists it by digest instead of carrying it; reproduce on a
// machine without it names it and exits 2; unpack with it put in place
// (same bytes) imports the records, and report rebuilds table1 with no call.
func TestPackLeavesLargeFilesOut(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	data, _ := os.ReadFile(filepath.Join(exp, "data/targets.jsonl"))
	packFile := filepath.Join(t.TempDir(), "t.pack")
	code, out, stderr := cli(t, "pack", "report.table1", exp, "-o", packFile, "--cache-dir", cacheDir, "--max-file", strconv.Itoa(len(data)-1))
	if code != 0 || !strings.Contains(out, "not carried (over "+strconv.Itoa(len(data)-1)+" bytes): data/targets.jsonl, "+strconv.Itoa(len(data))+" bytes, sha256:") ||
		!strings.Contains(out, "; no known source: send it beside the pack\n") {
		t.Fatalf("pack: exit %d\n%s\n%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(packFile); bytes.Contains(b, data) {
		t.Fatal("the pack carries the data file over --max-file")
	}
	dir := filepath.Join(t.TempDir(), "r")
	code, _, stderr = cli(t, "reproduce", packFile, dir)
	if code != exitBadInput || !strings.Contains(stderr, filepath.Join(dir, "exp", "data", "targets.jsonl")+" ("+strconv.Itoa(len(data))+" bytes, sha256:") {
		t.Fatalf("reproduce without the data file: exit %d\n%s", code, stderr)
	}
	into := filepath.Join(t.TempDir(), "u")
	fresh := filepath.Join(t.TempDir(), "cache")
	if code, _, stderr := cli(t, "unpack", packFile, into, "--cache-dir", fresh); code != exitBadInput || !strings.Contains(stderr, "targets.jsonl") {
		t.Fatalf("unpack without the data file: exit %d\n%s", code, stderr)
	}
	if err := os.MkdirAll(filepath.Join(into, "exp", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(into, "exp", "data", "targets.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	calls := srv.Count()
	code, out, stderr = cli(t, "report", filepath.Join(into, "exp"), "--cache-dir", fresh, "--var-file", filepath.Join(into, packVarsName))
	if code != 0 || srv.Count() != calls {
		t.Fatalf("report after unpack: exit %d, %d requests\n%s\n%s", code, srv.Count()-calls, out, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(exp, "results", "table1.md"))
	got, _ := os.ReadFile(filepath.Join(into, "exp", "results", "table1.md"))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("table1.md after unpack differs:\n%s\n--- run:\n%s", got, want)
	}
}

// A data file a pack leaves out says where to get its bytes again when
// they are a benchmark's pinned file, wherever the packer's copy lay.
func TestPackNamesWhereToGetPinnedFiles(t *testing.T) {
	b, err := os.ReadFile(shareddata.Path(t, "liveideabench", "results/LiveIdeaBench-202412.csv"))
	if err != nil {
		t.Fatal(err)
	}
	x := external("/anywhere/board.csv", b)
	if x.Source != "ideaflow data get liveideabench: results/LiveIdeaBench-202412.csv of x66ccff/liveideabench@6fc8285 (MIT)" || x.Size != int64(len(b)) {
		t.Errorf("pinned file: %+v", x)
	}
	if x := external("data/own.csv", []byte("Model,Average\n")); x.Source != "" {
		t.Errorf("a file of no set: source %q", x.Source)
	}
}

// Every single-byte flip of a pack the CLI made (the test scenario's
// table1: its experiment files, data and 38 records) is refused by the
// reader unpack and reproduce open it with, before anything is written.
func TestEveryByteFlipOfACLIPackIsRefused(t *testing.T) {
	_, packFile := packedTable1(t)
	orig, err := os.ReadFile(packFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := pack.Read(orig); err != nil {
		t.Fatalf("the pack as written: %v", err)
	}
	for i := range orig {
		orig[i] ^= 0xff
		_, _, err := pack.Read(orig)
		orig[i] ^= 0xff
		if !errors.Is(err, pack.ErrRefused) {
			t.Fatalf("byte %d of %d flipped: accepted (err %v)", i, len(orig), err)
		}
	}
	t.Logf("%d flips of a %d-byte pack, each refused", len(orig), len(orig))
}

// A one-file experiment shares its folder with others: its pack carries the
// file, its lock and what it reads (its dataset, the prompt file() reads),
// not the folder's other experiments and files, and still rebuilds its
// table with no call, byte for byte.
func TestPackOneFileExperimentCarriesWhatItReads(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	one := filepath.Join(exp, "one.hcl")
	if err := os.Rename(filepath.Join(exp, "main.hcl"), one); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"other.hcl": "# another experiment of the folder\n", "notes.txt": "not read by one.hcl\n", "data/unread.jsonl": "{}\n"} {
		if err := os.WriteFile(filepath.Join(exp, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := cli(t, "run", one, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	packFile := filepath.Join(t.TempDir(), "one.pack")
	if code, _, stderr := cli(t, "pack", "report.table1", one, "-o", packFile, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	b, err := os.ReadFile(packFile)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := pack.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(slices.Sorted(maps.Keys(m.Files)), " "); got != "experiment/data/targets.jsonl experiment/one.hcl experiment/one.ideaflow.lock experiment/prompts/generate.tmpl records.bundle" || m.Main != "one.hcl" {
		t.Errorf("the pack holds %s (main %q)", got, m.Main)
	}
	calls := srv.Count()
	dir := filepath.Join(t.TempDir(), "fresh")
	if code, out, stderr := cli(t, "reproduce", packFile, dir); code != 0 || srv.Count() != calls {
		t.Fatalf("reproduce: exit %d, %d requests\n%s\n%s", code, srv.Count()-calls, out, stderr)
	}
	for _, f := range []string{"table1.md", "table1.csv"} {
		want, _ := os.ReadFile(filepath.Join(exp, "results", "one", f))
		got, err := os.ReadFile(filepath.Join(dir, "exp", "results", "one", f))
		if err != nil || len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s after reproduce (%v):\n%s\n--- run:\n%s", f, err, got, want)
		}
	}
}
