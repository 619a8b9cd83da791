package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cache folder named by --cache-dir or $IDEAFLOW_CACHE_DIR that holds no
// cache yet is planned as an empty cache (the user prices a run before paying
// for it), loudly, so that a typo in the path is seen, and nothing is created:
// the folder still does not exist, or is still empty.
func TestPlanOnANamedCacheThatDoesNotExistYet(t *testing.T) {
	_, exp, _, _ := newScenario(t)
	for _, tc := range []struct {
		name    string
		mkdir   bool // the folder exists, empty
		byEnv   bool // named by $IDEAFLOW_CACHE_DIR, not --cache-dir
		named   string
		finding string
	}{
		{"flag, missing", false, false, "--cache-dir", "the folder does not exist"},
		{"flag, empty", true, false, "--cache-dir", "the folder holds no cache"},
		{"env, missing", false, true, "$IDEAFLOW_CACHE_DIR", "the folder does not exist"},
		{"env, empty", true, true, "$IDEAFLOW_CACHE_DIR", "the folder holds no cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "typo-cache")
			if tc.mkdir {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"plan", exp}
			if tc.byEnv {
				t.Setenv("IDEAFLOW_CACHE_DIR", dir)
			} else {
				t.Setenv("IDEAFLOW_CACHE_DIR", "")
				args = append(args, "--cache-dir", dir)
			}
			code, stdout, stderr := cli(t, args...)
			wantErr := "WARNING: no cache at " + dir + " (named by " + tc.named + "): " + tc.finding +
				". Planning as on an empty cache: every node will run"
			wantOut := "(cache: " + dir + ", which does not exist yet: " + tc.finding + "; nothing is cached)"
			if code != 0 || !strings.Contains(stderr, wantErr) || !strings.Contains(stdout, wantOut) ||
				!strings.Contains(stdout, "48 nodes: 0 cached, 48 to run.") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			// show and export read the same way.
			if code, _, stderr := cli(t, append([]string{"show", "stage.filter_references.low"}, args[1:]...)...); code != 0 || !strings.Contains(stderr, "WARNING: no cache at") {
				t.Fatalf("show: exit %d\n%s", code, stderr)
			}
			entries, err := os.ReadDir(dir)
			switch {
			case !tc.mkdir && err == nil:
				t.Fatalf("plan created %s", dir)
			case tc.mkdir && len(entries) != 0:
				t.Fatalf("plan wrote %v into %s", entries, dir)
			}
		})
	}
}
