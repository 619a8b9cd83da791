package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ideaflow/ideaflow/datafetch"
	"github.com/ideaflow/ideaflow/internal/shareddata"
)

// fakeGitHub serves the verbatim copies of the authors' files of the sets
// at /<owner>/<repo>/<commit>/<path>, as the raw-file host does, and counts
// the requests. Files may be overridden (a tampered copy).
type fakeGitHub struct {
	root     string // the authors' data folder it serves from
	mu       sync.Mutex
	override map[string][]byte
	requests int
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	body, ok := f.override[r.URL.Path]
	f.mu.Unlock()
	if ok {
		_, _ = w.Write(body)
		return
	}
	for _, s := range datafetch.Sets() {
		prefix := "/" + s.Repo + "/" + s.Commit + "/"
		if p, ok := strings.CutPrefix(r.URL.Path, prefix); ok {
			b, err := os.ReadFile(filepath.Join(f.root, s.Name, filepath.FromSlash(p)))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write(b)
			return
		}
	}
	http.NotFound(w, r)
}

func (f *fakeGitHub) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

func newFakeGitHub(t *testing.T) (*fakeGitHub, *httptest.Server) {
	t.Helper()
	shareddata.Path(t, "liveideabench")
	fg := &fakeGitHub{root: shareddata.Dir(t), override: map[string][]byte{}}
	srv := httptest.NewServer(fg)
	t.Cleanup(srv.Close)
	return fg, srv
}

// ideaflow data get downloads the pinned files once, and the shipped
// December 2024 reproduction then finds them with no variable set.
func TestDataGetThenTheExperimentFindsTheFiles(t *testing.T) {
	fg, srv := newFakeGitHub(t)
	dir := t.TempDir()
	t.Setenv(datafetch.EnvDir, dir)

	// Before: the experiment says what to run.
	code, _, stderr := cli(t, "validate", "../../experiments/liveideabench/leaderboard.hcl")
	if code != exitBadInput || !strings.Contains(stderr, "leaderboard.hcl:") || !strings.Contains(stderr, "run `ideaflow data get liveideabench`") {
		t.Fatalf("validate without the data: exit %d\n%s", code, stderr)
	}

	code, stdout, stderr := cli(t, "data", "get", "liveideabench", "--base-url", srv.URL)
	if code != exitOK || fg.count() != 5 {
		t.Fatalf("data get: exit %d, %d requests\n%s%s", code, fg.count(), stdout, stderr)
	}
	for _, want := range []string{"liveideabench: 5 files (136 kB) of x66ccff/liveideabench@6fc8285: 5 downloaded (136 kB), 0 already in place, in " + filepath.Join(dir, "liveideabench")} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// Again: nothing downloaded.
	code, stdout, _ = cli(t, "data", "get", "liveideabench", "--base-url", srv.URL)
	if code != exitOK || fg.count() != 5 || !strings.Contains(stdout, "0 downloaded (0 B), 5 already in place") {
		t.Errorf("second data get: exit %d, %d requests\n%s", code, fg.count(), stdout)
	}
	code, stdout, _ = cli(t, "data", "list")
	if code != exitOK || !strings.Contains(stdout, "liveideabench  x66ccff/liveideabench@6fc8285 (MIT), 5 files, 136 kB: in place") ||
		!strings.Contains(stdout, "ideabench      amir-hassan25/IdeaBench@9dbd125 (no license file), 2 files, 1.5 MB: not downloaded: ideaflow data get ideabench") {
		t.Errorf("data list: exit %d\n%s", code, stdout)
	}

	// The reproduction finds them: no -var.
	code, stdout, stderr = cli(t, "validate", "../../experiments/liveideabench/leaderboard.hcl")
	if code != exitOK || !strings.Contains(stdout, "212525 nodes over 1200 items") {
		t.Fatalf("validate with the data: exit %d\n%s%s", code, stdout, stderr)
	}
	// A file changed by hand is not the authors': refused at the variable.
	if err := os.WriteFile(filepath.Join(dir, "liveideabench", "csvs", "kws.csv"), []byte(",Keyword\n0,meteorology\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli(t, "validate", "../../experiments/liveideabench/leaderboard.hcl")
	if code != exitBadInput || !strings.Contains(stderr, "it is not the authors' file at 6fc8285: run `ideaflow data get liveideabench` to replace it") {
		t.Errorf("validate with a changed file: exit %d\n%s", code, stderr)
	}
	// data get puts the authors' file back.
	code, stdout, _ = cli(t, "data", "get", "liveideabench", "--base-url", srv.URL)
	if code != exitOK || fg.count() != 6 || !strings.Contains(stdout, "1 downloaded (24 kB), 4 already in place") {
		t.Errorf("repair: exit %d, %d requests\n%s", code, fg.count(), stdout)
	}
}

// A download whose sha256 is not the pinned one is refused and not saved;
// offline, the error says what to download by hand and where to put it;
// an unknown set is bad input.
func TestDataGetRefusesAndExplains(t *testing.T) {
	fg, srv := newFakeGitHub(t)
	set, err := datafetch.Lookup("liveideabench")
	if err != nil {
		t.Fatal(err)
	}
	fg.override["/x66ccff/liveideabench/"+set.Commit+"/results/LiveIdeaBench-202412.csv"] = []byte("Rank,Model\n1,tampered\n")
	dir := t.TempDir()
	code, _, stderr := cli(t, "data", "get", "liveideabench", "--base-url", srv.URL, "--dir", dir)
	if code != exitFailedNodes || !strings.Contains(stderr, "1 of 5 files not saved") || !strings.Contains(stderr, "is refused, not saved") ||
		!strings.Contains(stderr, "\n  results/LiveIdeaBench-202412.csv\n") {
		t.Errorf("tampered: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "liveideabench", "results", "LiveIdeaBench-202412.csv")); !os.IsNotExist(err) {
		t.Errorf("the tampered file was saved: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "liveideabench", "csvs", "kws.csv")); err != nil {
		t.Errorf("the good files were not kept: %v", err)
	}

	srv.Close()
	offline := t.TempDir()
	code, _, stderr = cli(t, "data", "get", "ideabench", "--base-url", srv.URL, "--dir", offline)
	for _, want := range []string{"2 of 2 files not saved", "cannot download (offline, or the host is unreachable?)",
		"download from https://github.com/amir-hassan25/IdeaBench/tree/9dbd125f2e72987a852a26afa3abd018bf518049 (at that commit) and save each file at its path under " + filepath.Join(offline, "ideabench") + "/:",
		"\n  data/dataset/ablation_target_papers.csv\n  data/dataset/ideabench_clustering.json\n", "then run `ideaflow data get ideabench` again"} {
		if code != exitFailedNodes || !strings.Contains(stderr, want) {
			t.Errorf("offline: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
	code, _, stderr = cli(t, "data", "get", "livebench")
	if code != exitBadInput || !strings.Contains(stderr, `no data set "livebench"; the sets are liveideabench, ideabench, scholareval`) {
		t.Errorf("unknown set: exit %d\n%s", code, stderr)
	}
}

// The ScholarIdeas folders come whole, and scholareval's experiments can
// name the folder with authors_file.
func TestDataGetScholarIdeas(t *testing.T) {
	fg, srv := newFakeGitHub(t)
	dir := t.TempDir()
	code, stdout, stderr := cli(t, "data", "get", "scholareval", "--base-url", srv.URL, "--dir", dir)
	if code != exitOK || fg.count() != 354 || !strings.Contains(stdout, "354 downloaded") {
		t.Fatalf("scholareval: exit %d, %d requests\n%s%s", code, fg.count(), stdout, stderr)
	}
	if got, err := datafetch.Find(dir, "scholareval", "ScholarIdeas"); err != nil || got != filepath.Join(dir, "scholareval", "ScholarIdeas") {
		t.Errorf("find: %q %v", got, err)
	}
	if !strings.Contains(stdout, "set "+datafetch.EnvDir+"="+dir+" for them to find these") {
		t.Errorf("a --dir other than the default should say how experiments find it:\n%s", stdout)
	}
}

// authorsDataDir is a data folder holding the verbatim copies of sets, as
// `ideaflow data get` leaves it, set as the experiments' data folder.
func authorsDataDir(t *testing.T, sets ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range sets {
		s, err := datafetch.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range s.Files {
			b, err := os.ReadFile(shareddata.Path(t, name, f.Path))
			if err != nil {
				t.Fatal(err)
			}
			local := s.LocalPath(dir, f.Path)
			if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(local, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv(datafetch.EnvDir, dir)
	return dir
}
