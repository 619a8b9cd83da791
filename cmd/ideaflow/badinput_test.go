package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editExperiment replaces old with new in the scenario's main.hcl.
func editExperiment(t *testing.T, exp, old, new string) {
	t.Helper()
	path := filepath.Join(exp, "main.hcl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("main.hcl has no %q", old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOutputPathsCheckedBeforeAnyCall: an output path the run cannot write
// is refused before any model call is paid for.
func TestOutputPathsCheckedBeforeAnyCall(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"summary in a missing folder", []string{"--summary-json", filepath.Join(file, "sum.json")},
			"ideaflow: --summary-json " + filepath.Join(file, "sum.json") + ": cannot create the file: not a directory; give a path in a folder you can write to\n"},
		{"summary is a folder", []string{"--summary-json", t.TempDir()}, ""},
		{"out under a file", []string{"--out", filepath.Join(file, "reports")},
			"ideaflow: --out " + filepath.Join(file, "reports") + ": cannot create the folder: not a directory; give a folder you can write to\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, append([]string{"run", exp, "--cache-dir", cacheDir}, tc.args...)...)
			if code != exitBadInput || srv.Count() != 0 {
				t.Fatalf("exit %d after %d requests, want 2 before any\n%s", code, srv.Count(), stderr)
			}
			want := tc.want
			if want == "" {
				want = "ideaflow: --summary-json " + tc.args[1] + ": is a folder; give a file name\n"
			}
			if !strings.HasSuffix(stderr, want) {
				t.Errorf("stderr ends\n%s\nwant\n%s", stderr, want)
			}
		})
	}
}

// TestMisspeltIntentWarns: a require_intent no reference carries is a
// warning naming the intents the dataset has, not a run that silently drops
// every target.
func TestMisspeltIntentWarns(t *testing.T) {
	_, exp, _, _ := newScenario(t)
	editExperiment(t, exp, "  limit   = 5\n", "  limit   = 5\n  require_intent = \"backgorund\"\n")
	code, _, stderr := cli(t, "validate", exp)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	want := filepath.Join(exp, "main.hcl") + `:53:20: warning: require_intent matches nothing in dataset.targets
    stage.filter_references.low: require_intent = "backgorund" is the intent of no reference, so every target would be dropped; the references' intents are "background", "methodology", "result". Use one of those values, or "" for any.
      53 |   require_intent = "backgorund"
`
	if stderr != want {
		t.Errorf("stderr\n%s\nwant\n%s", stderr, want)
	}
}

// TestBadInputRefusedEarly: sizes past their bounds, a plan past the node
// budget and an empty experiment exit 2 with a located error.
func TestBadInputRefusedEarly(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	empty := filepath.Join(t.TempDir(), "empty.hcl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(exp, "main.hcl")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"n past its bound", []string{"plan", exp, "--cache-dir", cacheDir, "-var", "n=1e19"},
			main + ":59:16: error: Invalid n\n    -var n=1e19: n must be from 1 to 100, got 1e+19. Give a value in that range.\n"},
		{"n not a number", []string{"validate", exp, "-var", "n=abc"},
			main + ":59:16: error: Wrong type for n\n    -var n=abc: n must be a number, got string. For example: n = 3.\n"},
		{"empty file", []string{"validate", empty},
			empty + ":1:1: error: Experiment declares no stage\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, tc.args...)
			if code != exitBadInput || !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("exit %d, stderr\n%s\nwant 2 and a start of\n%s", code, stderr, tc.want)
			}
		})
	}
	t.Run("node budget", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(exp, "settings.hcl"), []byte("settings {\n  max_nodes = 40\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := cli(t, "validate", exp)
		want := main + `:63:1: error: Too many nodes
    stage.rank_ideas.novelty["gen-a"] lays out 5 nodes after 40 others: 45 in all, more than the limit of 40. Lower what multiplies them (a dataset's limit, n, permutations), or raise the limit with settings { max_nodes = 45 } in the experiment.
`
		if code != exitBadInput || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "Too many nodes") != 1 {
			t.Errorf("exit %d, stderr\n%s\nwant 2 and one error, starting\n%s", code, stderr, want)
		}
	})
}
