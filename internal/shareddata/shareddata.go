// Package shareddata finds the benchmark authors' files for the tests that
// read them (the IdeaBench target list, LiveIdeaBench's keywords and
// leaderboard, the ScholarIdeas folders). The project never ships them; a
// developer's machine may lack them, and then those tests skip, but CI sets
// IDEAFLOW_REQUIRE_DATA=1 and a missing file fails the test instead of
// hiding it.
//
// The folder has the layout `ideaflow data get` writes (<folder>/<set>/<path
// in the authors' repository>) and is, in order: $IDEAFLOW_DATA_DIR;
// ../shared/data beside the repository root; /work/shared/data.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvRequire names the variable that turns a missing file into a failure.
const EnvRequire = "IDEAFLOW_REQUIRE_DATA"

// envDir is datafetch.EnvDir, spelt here so that this package imports
// nothing of the project's (any package's tests may use it).
const envDir = "IDEAFLOW_DATA_DIR"

// fallback is where the data lives on the project's machines when the
// repository is not checked out beside it.
const fallback = "/work/shared/data"

// dir and why are resolved once, when the test binary starts: tests that
// point IDEAFLOW_DATA_DIR at a temporary folder (t.Setenv) must not move it.
var dir, why = locate()

// locate returns the data folder, or "" and the places it looked.
func locate() (string, string) {
	if d := os.Getenv(envDir); d != "" {
		if isDir(d) {
			return abs(d), ""
		}
		return "", envDir + "=" + d + " is not a folder"
	}
	var tried []string
	if root := repoRoot(); root != "" {
		d := filepath.Join(filepath.Dir(root), "shared", "data")
		if isDir(d) {
			return d, ""
		}
		tried = append(tried, d)
	}
	if isDir(fallback) {
		return fallback, ""
	}
	tried = append(tried, fallback)
	msg := envDir + " is unset and no folder at"
	for i, t := range tried {
		if i > 0 {
			msg += " or"
		}
		msg += " " + t
	}
	return "", msg
}

// repoRoot is the nearest folder above the working directory (a test's is
// its package's) that holds go.mod.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// Required reports whether a missing file must fail the test (CI).
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Dir returns the data folder, skipping t (failing it under
// IDEAFLOW_REQUIRE_DATA=1) when there is none.
func Dir(t testing.TB) string {
	t.Helper()
	if dir == "" {
		missing(t, "the authors' data folder: "+why)
	}
	return dir
}

// Path returns the absolute path of elem (slash-separated parts under the
// data folder, e.g. "liveideabench", "csvs/kws.csv"), skipping t (failing it
// under IDEAFLOW_REQUIRE_DATA=1) when the file or folder is absent.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Dir(t)}, filepath.FromSlash(filepath.Join(elem...)))...)
	if _, err := os.Stat(p); err != nil {
		missing(t, err.Error())
	}
	return p
}

// missing skips t, or fails it when the data is required.
func missing(t testing.TB, what string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s (%s=1: tests that read the authors' files must run; put them in place with `ideaflow data get` and point %s at the folder)", what, EnvRequire, envDir)
	}
	t.Skipf("%s (set %s=1 to make this a failure)", what, EnvRequire)
}
