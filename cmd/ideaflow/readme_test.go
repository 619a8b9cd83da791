package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock returns the lines of the README code block that starts with
// the line beginning with first, up to the closing fence.
func readmeBlock(t *testing.T, first string) []string {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.HasPrefix(line, first):
			in = true
		case in && strings.HasPrefix(line, "```"):
			return out
		case in:
			out = append(out, line)
		}
	}
	t.Fatalf("README has no block starting with %q", first)
	return nil
}

// copyQuickstart copies the quickstart into a temporary folder, so the test
// never writes into the repository.
func copyQuickstart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "quickstart")
	for _, sub := range []string{"data", "prompts"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"main.hcl", "data/targets.jsonl", "prompts/generate.tmpl"} {
		copyFile(t, filepath.Join("../../experiments/quickstart", f), filepath.Join(dir, f))
	}
	return dir
}

var cacheInHeader = regexp.MustCompile(`\(cache: [^)]*\)`)

// README's plan example is this build's output: every line it shows (its
// "..." elides lines) is a line `plan` prints, the cache folder aside.
func TestREADMEPlanExampleIsCurrent(t *testing.T) {
	want := readmeBlock(t, "$ ideaflow plan experiments/quickstart -var n=5")
	exp := copyQuickstart(t)
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir()); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir, "-var", "n=5")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(cacheInHeader.ReplaceAllString(stdout, "(cache: X)"), "\n") {
		got[l] = true
	}
	for _, l := range want {
		if strings.TrimSpace(l) == "..." || strings.TrimSpace(l) == "" {
			continue
		}
		if l = cacheInHeader.ReplaceAllString(l, "(cache: X)"); !got[l] {
			t.Errorf("README shows a line plan does not print:\n  %s\nplan printed:\n%s", l, stdout)
		}
	}
}

// README's ablation grid is valid against the quickstart, and its tour's
// show, export and doc commands work.
func TestREADMETourCommandsWork(t *testing.T) {
	exp := copyQuickstart(t)
	grid := readmeBlock(t, "locals {")
	if err := os.WriteFile(filepath.Join(exp, "grid.hcl"), []byte("locals {\n"+strings.Join(grid, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := cli(t, "validate", exp); code != 0 || !strings.Contains(stdout, "is valid: 20 stage instances") {
		t.Fatalf("the README grid does not validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := os.Remove(filepath.Join(exp, "grid.hcl")); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir()); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	cmds := append([]string{firstLineOf(t, "ideaflow show ")}, readmeBlock(t, "ideaflow show ")...)
	for _, c := range cmds {
		c = strings.TrimSpace(strings.SplitN(c, "#", 2)[0])
		args := shellWords(t, c)[1:] // drop "ideaflow"
		for i, a := range args {
			if a == "experiments/quickstart" {
				args[i] = exp
			}
			if a == "rankings.csv" {
				args[i] = filepath.Join(t.TempDir(), "rankings.csv")
			}
		}
		if code, stdout, stderr := cli(t, append(args, "--cache-dir", cacheDir)...); code != 0 || stdout == "" && !strings.Contains(stderr, "wrote") {
			t.Errorf("%s: exit %d\n%s\n%s", c, code, stdout, stderr)
		}
	}
}

// firstLineOf returns the README line that starts with prefix.
func firstLineOf(t *testing.T, prefix string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("README has no line starting with %q", prefix)
	return ""
}

// shellWords splits a command line on spaces, honouring single quotes.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any || cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
		}
	}
	if any || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
