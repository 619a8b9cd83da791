// Package datafetch brings the benchmark authors' public data files (the
// LiveIdeaBench keyword list and published leaderboard, the IdeaBench
// target list, the ScholarIdeas folders) from their repositories into a
// data folder of the user's, so the shipped experiments run from a clone.
//
// Every file is pinned: the repository, the commit and the file's sha256
// (manifest.tsv, computed from verbatim copies). A download is saved only
// when its sha256 is the pinned one, and a file is found (Find) only when
// it still is, so what an experiment reads is byte for byte the authors'
// file at that commit, wherever it came from: ideaflow data get, or a copy
// put in place by hand.
//
// The data folder is $IDEAFLOW_DATA_DIR, else the user's cache folder +
// "/ideaflow-data", beside ideaflow's cache ("ideaflow"): the files are
// the authors', not results, and outlive any one cache. A set's files keep
// their paths in the repository under <folder>/<set>/.
package datafetch

import (
	"bufio"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// EnvDir names the environment variable that relocates the data folder.
const EnvDir = "IDEAFLOW_DATA_DIR"

// DefaultBaseURL serves a repository's file at a commit as
// <base>/<owner>/<repo>/<commit>/<path>.
const DefaultBaseURL = "https://raw.githubusercontent.com"

// DefaultDir is the data folder: $IDEAFLOW_DATA_DIR if set, else the
// user's cache folder + "/ideaflow-data", else (no home) .ideaflow/data
// under workdir.
func DefaultDir(workdir string) string {
	if dir := os.Getenv(EnvDir); dir != "" {
		return dir
	}
	if base, err := os.UserCacheDir(); err == nil && base != "" {
		return filepath.Join(base, "ideaflow-data")
	}
	return filepath.Join(workdir, ".ideaflow", "data")
}

// File is one pinned file of a set.
type File struct {
	Path   string // in the repository, slash-separated
	Size   int64
	SHA256 string // hex
}

// Set is one benchmark's files: a repository at a commit.
type Set struct {
	Name    string // the name ideaflow data get takes
	Repo    string // owner/name on GitHub
	Commit  string
	License string // the repository's license, "" when it ships none
	About   string
	Files   []File // by path
}

// URL is where file path of the set is downloaded from, under base.
func (s *Set) URL(base, path string) string {
	return strings.TrimRight(base, "/") + "/" + s.Repo + "/" + s.Commit + "/" + path
}

// TreeURL is the repository's page at the pinned commit, for a download by
// hand.
func (s *Set) TreeURL() string { return "https://github.com/" + s.Repo + "/tree/" + s.Commit }

// Dir is the set's folder under the data folder dir.
func (s *Set) Dir(dir string) string { return filepath.Join(dir, s.Name) }

// LocalPath is where the set's file path lives under the data folder dir.
func (s *Set) LocalPath(dir, path string) string {
	return filepath.Join(s.Dir(dir), filepath.FromSlash(path))
}

// Size is the total size of the set's files.
func (s *Set) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// under returns the set's files at path or below it (path a folder).
func (s *Set) under(path string) []File {
	path = strings.Trim(path, "/")
	var out []File
	for _, f := range s.Files {
		if f.Path == path || path == "" || strings.HasPrefix(f.Path, path+"/") {
			out = append(out, f)
		}
	}
	return out
}

//go:embed manifest.tsv
var manifest string

var sets = []*Set{
	{Name: "liveideabench", Repo: "x66ccff/liveideabench", Commit: "6fc8285269c7679ed427b20864d1f1b127b1a228", License: "MIT",
		About: "LiveIdeaBench: the 1,180 keywords (csvs/kws.csv) and their domains (csvs/keyword_classifications.csv), the published December 2024 leaderboard (results/LiveIdeaBench-202412.csv), LiveBench scores and the keyword workbook"},
	{Name: "ideabench", Repo: "amir-hassan25/IdeaBench", Commit: "9dbd125f2e72987a852a26afa3abd018bf518049",
		About: "IdeaBench: the 461 published target papers (data/dataset/ablation_target_papers.csv) and the topic clusters"},
	{Name: "scholareval", Repo: "skai-research/ScholarEval", Commit: "b8391a0f40178f34eaac0ccc420b4a1022f851b4", License: "MIT",
		About: "ScholarEval: the ScholarIdeas folders (118 ideas, their rubrics and literature cutoffs)"},
}

func init() {
	byName := map[string]*Set{}
	for _, s := range sets {
		byName[s.Name] = s
	}
	sc := bufio.NewScanner(strings.NewReader(manifest))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		parts := strings.Split(text, "\t")
		if len(parts) != 4 {
			panic(fmt.Sprintf("datafetch: manifest.tsv:%d: %d fields, want set, path, size, sha256", line, len(parts)))
		}
		s, ok := byName[parts[0]]
		size, err := strconv.ParseInt(parts[2], 10, 64)
		if !ok || err != nil || len(parts[3]) != 64 {
			panic(fmt.Sprintf("datafetch: manifest.tsv:%d: bad line %q", line, text))
		}
		s.Files = append(s.Files, File{Path: parts[1], Size: size, SHA256: parts[3]})
	}
	for _, s := range sets {
		sort.Slice(s.Files, func(i, j int) bool { return s.Files[i].Path < s.Files[j].Path })
	}
}

// Sets lists the sets, in the order ideaflow data list shows them.
func Sets() []*Set { return sets }

// Lookup finds a set by name.
func Lookup(name string) (*Set, error) {
	for _, s := range sets {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no data set %q; the sets are %s", name, strings.Join(Names(), ", "))
}

// ByDigest finds the pinned file whose bytes have the SHA-256 sha (hex):
// where a copy of a file, wherever it lies, can be fetched again.
func ByDigest(sha string) (*Set, File, bool) {
	for _, s := range sets {
		for _, f := range s.Files {
			if f.SHA256 == sha {
				return s, f, true
			}
		}
	}
	return nil, File{}, false
}

// Names lists the sets' names.
func Names() []string {
	out := make([]string, len(sets))
	for i, s := range sets {
		out[i] = s.Name
	}
	return out
}
