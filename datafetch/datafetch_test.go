package datafetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ideaflow/ideaflow/internal/shareddata"
)

// The manifest pins exactly the verbatim copies: every file of each set,
// with its size and sha256, and no other.
func TestManifestMatchesSharedCopies(t *testing.T) {
	// The verbatim copies of the authors' files (tests may read them; the
	// project never ships them).
	shared := shareddata.Dir(t)
	for _, s := range Sets() {
		if len(s.Files) == 0 || len(s.Commit) != 40 || !strings.Contains(s.Repo, "/") {
			t.Fatalf("%s: %d files, commit %q, repo %q", s.Name, len(s.Files), s.Commit, s.Repo)
		}
		onDisk := map[string]bool{}
		root := filepath.Join(shared, s.Name)
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			onDisk[filepath.ToSlash(rel)] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range s.Files {
			if err := checkFile(filepath.Join(root, filepath.FromSlash(f.Path)), f); err != nil {
				t.Errorf("%s %s: %v", s.Name, f.Path, err)
			}
			delete(onDisk, f.Path)
		}
		for p := range onDisk {
			t.Errorf("%s: %s is in the shared copy but not in the manifest", s.Name, p)
		}
	}
	want := map[string]int{"liveideabench": 5, "ideabench": 2, "scholareval": 354}
	for _, s := range Sets() {
		if len(s.Files) != want[s.Name] {
			t.Errorf("%s: %d files, want %d", s.Name, len(s.Files), want[s.Name])
		}
	}
}

// fakeRepo serves files at /<repo>/<commit>/<path>, counting requests.
type fakeRepo struct {
	mu       sync.Mutex
	files    map[string][]byte // URL path -> body
	requests map[string]int
}

func (f *fakeRepo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests[r.URL.Path]++
	body, ok := f.files[r.URL.Path]
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(body)
}

func (f *fakeRepo) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.requests {
		n += c
	}
	return n
}

func pin(path string, body []byte) File {
	sum := sha256.Sum256(body)
	return File{Path: path, Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}
}

// testSet is a set of three small files, and a fake server holding them.
func testSet(t *testing.T) (*Set, *fakeRepo, *httptest.Server) {
	t.Helper()
	bodies := map[string][]byte{"csvs/kws.csv": []byte(",Keyword\n0,meteorology\n"), "results/board.csv": []byte("Rank,Model\n1,m\n"), "ScholarIdeas/ai_1/ai_1.txt": []byte("An idea.\n")}
	s := &Set{Name: "testset", Repo: "owner/repo", Commit: strings.Repeat("ab", 20)}
	repo := &fakeRepo{files: map[string][]byte{}, requests: map[string]int{}}
	for p, b := range bodies {
		s.Files = append(s.Files, pin(p, b))
		repo.files["/owner/repo/"+s.Commit+"/"+p] = b
	}
	srv := httptest.NewServer(repo)
	t.Cleanup(srv.Close)
	return s, repo, srv
}

// Get downloads every file once, checked; a second Get downloads nothing;
// a file changed on disk is downloaded again.
func TestGetDownloadsCheckedFilesOnce(t *testing.T) {
	s, repo, srv := testSet(t)
	dir := t.TempDir()
	f := &Fetcher{Dir: dir, BaseURL: srv.URL}
	rep, err := f.Get(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Downloaded != 3 || rep.Present != 0 || repo.count() != 3 {
		t.Fatalf("first get: %+v, %d requests", rep, repo.count())
	}
	b, err := os.ReadFile(filepath.Join(dir, "testset", "csvs", "kws.csv"))
	if err != nil || string(b) != ",Keyword\n0,meteorology\n" {
		t.Fatalf("kws.csv: %q %v", b, err)
	}
	rep, err = f.Get(context.Background(), s)
	if err != nil || rep.Downloaded != 0 || rep.Present != 3 || repo.count() != 3 {
		t.Fatalf("second get: %+v %v, %d requests", rep, err, repo.count())
	}
	if err := os.WriteFile(filepath.Join(dir, "testset", "csvs", "kws.csv"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = f.Get(context.Background(), s)
	if err != nil || rep.Downloaded != 1 || rep.Present != 2 || repo.count() != 4 {
		t.Fatalf("after an edit: %+v %v, %d requests", rep, err, repo.count())
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(filepath.Join(dir, "testset", "csvs"))
	if len(entries) != 1 {
		t.Errorf("csvs holds %d entries", len(entries))
	}
}

// A download whose sha256 is not the pinned one is refused: nothing is
// saved, an old file stays, and the error says so and how to fix it.
func TestGetRefusesShaMismatch(t *testing.T) {
	s, repo, srv := testSet(t)
	repo.files["/owner/repo/"+s.Commit+"/csvs/kws.csv"] = []byte(",Keyword\n0,tampered\n")
	dir := t.TempDir()
	rep, err := (&Fetcher{Dir: dir, BaseURL: srv.URL}).Get(context.Background(), s)
	var ge *GetError
	if !errors.As(err, &ge) || len(ge.Files) != 1 || !errors.Is(err, ErrMismatch) || rep.Downloaded != 2 {
		t.Fatalf("err %v, report %+v", err, rep)
	}
	for _, want := range []string{"data set testset: 1 of 3 files not saved", "has sha256", "is refused, not saved",
		"https://github.com/owner/repo/tree/" + s.Commit, filepath.Join(dir, "testset") + string(filepath.Separator), "\n  csvs/kws.csv\n", "`ideaflow data get testset`"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "testset", "csvs", "kws.csv")); !os.IsNotExist(err) {
		t.Errorf("a refused download was saved: %v", err)
	}
	// A larger body is refused too, without reading it whole.
	repo.files["/owner/repo/"+s.Commit+"/csvs/kws.csv"] = []byte(strings.Repeat("x", 1<<20))
	if _, err := (&Fetcher{Dir: dir, BaseURL: srv.URL}).Get(context.Background(), s); !errors.Is(err, ErrMismatch) {
		t.Errorf("a larger body: %v", err)
	}
}

// Offline (the server unreachable) or a missing file on the server: a
// GetError that lists every file and where to put it by hand.
func TestGetOfflineSaysWhatToDownload(t *testing.T) {
	s, _, srv := testSet(t)
	srv.Close()
	dir := t.TempDir()
	_, err := (&Fetcher{Dir: dir, BaseURL: srv.URL}).Get(context.Background(), s)
	var ge *GetError
	if !errors.As(err, &ge) || len(ge.Files) != 3 {
		t.Fatalf("offline: %v", err)
	}
	for _, want := range []string{"3 of 3 files not saved", "cannot download (offline, or the host is unreachable?)", "download from https://github.com/owner/repo/tree/",
		"\n  ScholarIdeas/ai_1/ai_1.txt\n  csvs/kws.csv\n  results/board.csv\n"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("offline error lacks %q:\n%v", want, err)
		}
	}
	_, repo, srv := testSet(t)
	delete(repo.files, "/owner/repo/"+s.Commit+"/results/board.csv")
	_, err = (&Fetcher{Dir: dir, BaseURL: srv.URL}).Get(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 files not saved") || !strings.Contains(err.Error(), "404 Not Found") {
		t.Errorf("404: %v", err)
	}
}

// Find returns a file or folder once every file under it is in place and
// pinned, and otherwise says what to run or download.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	_, err := Find(dir, "liveideabench", "csvs/kws.csv")
	if err == nil || !strings.Contains(err.Error(), "run `ideaflow data get liveideabench` (or, offline, download https://raw.githubusercontent.com/x66ccff/liveideabench/6fc8285269c7679ed427b20864d1f1b127b1a228/csvs/kws.csv and save it as "+filepath.Join(dir, "liveideabench", "csvs", "kws.csv")+")") {
		t.Errorf("missing: %v", err)
	}
	if _, err := Find(dir, "livebench", "x"); err == nil || !strings.Contains(err.Error(), `no data set "livebench"; the sets are liveideabench, ideabench, scholareval`) {
		t.Errorf("unknown set: %v", err)
	}
	if _, err := Find(dir, "liveideabench", "csvs/kw.csv"); err == nil || !strings.Contains(err.Error(), `has no file or folder "csvs/kw.csv"; its files include csvs/Livebench20250315.csv`) {
		t.Errorf("unknown file: %v", err)
	}
	if _, err := Find(dir, "scholareval", "ScholarIdeas"); err == nil || !strings.Contains(err.Error(), "354 of the 354 authors' files under scholareval ScholarIdeas are not in the data folder") {
		t.Errorf("missing folder: %v", err)
	}
	// A file of the right name and other content is not the authors'.
	set, _ := Lookup("liveideabench")
	local := set.LocalPath(dir, "csvs/kws.csv")
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, []byte(",Keyword\n0,meteorology\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(dir, "liveideabench", "csvs/kws.csv"); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "it is not the authors' file at 6fc8285: run `ideaflow data get liveideabench` to replace it") {
		t.Errorf("changed: %v", err)
	}
	// The verbatim copy is found.
	src, err := os.ReadFile(shareddata.Path(t, "liveideabench/csvs/kws.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(dir, "liveideabench", "csvs/kws.csv"); err != nil || got != local {
		t.Errorf("found %q, %v", got, err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv(EnvDir, "/data/here")
	if got := DefaultDir("/work"); got != "/data/here" {
		t.Errorf("with %s: %s", EnvDir, got)
	}
	t.Setenv(EnvDir, "")
	t.Setenv("XDG_CACHE_HOME", "/home/u/.cache")
	if got := DefaultDir("/work"); got != "/home/u/.cache/ideaflow-data" {
		t.Errorf("default: %s", got)
	}
}
