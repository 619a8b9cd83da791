package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfine runs validate with --confine on experiments that read outside
// their folder in each way an experiment can: file() with .. and with an
// absolute path, a symlink in the folder, a dataset path, a references
// file, a corpus path and a folder dataset's file symlinked out. Each is
// refused at its attribute (or, for the folder's file, at the dataset);
// without --confine each validates, and a confined experiment that reads
// only its own files validates.
func TestConfine(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	writeFile(t, secret, "alpha\nbeta\n")
	writeFile(t, filepath.Join(outside, "refs.jsonl"), `{"target_id": "p1", "paperId": "r1", "title": "R", "abstract": "B"}`+"\n")
	writeFile(t, filepath.Join(outside, "corpus.jsonl"), `{"paperId": "a", "title": "A"}`+"\n")
	writeFile(t, filepath.Join(outside, "plan.txt"), "a plan\n")
	withLocal := func(expr string) string { return boundsBase + "\nlocals {\n  x = " + expr + "\n}\n" }
	cases := []struct {
		name  string
		hcl   string
		setup func(dir string)
		at    string
	}{
		{"file with ..", withLocal(`file("../` + filepath.Base(outside) + `/secret.txt")`), func(dir string) {
			// The experiment folder beside outside, so .. reaches it.
		}, "main.hcl:21:"},
		{"file absolute", withLocal(`file("` + secret + `")`), nil, "main.hcl:21:"},
		{"file through a symlink", withLocal(`file("link.txt")`), func(dir string) {
			if err := os.Symlink(secret, filepath.Join(dir, "link.txt")); err != nil {
				t.Fatal(err)
			}
		}, "main.hcl:21:"},
		{"templatefile", withLocal(`templatefile("` + secret + `", {})`), nil, "main.hcl:21:"},
		{"dataset path", strings.Replace(boundsBase, `"kw.txt"`, `"`+secret+`"`, 1), nil, "main.hcl:12:"},
		{"corpus path", boundsBase + "\nprovider \"papers\" {\n  kind = \"corpus\"\n  path = \"" + filepath.Join(outside, "corpus.jsonl") + "\"\n}\n", nil, "main.hcl:22:"},
		{"folder dataset file", strings.Replace(strings.Replace(boundsBase, `"keywords"`, `"scholarideas"`, 1), `"kw.txt"`, `"ideas"`, 1), func(dir string) {
			writeFile(t, filepath.Join(dir, "ideas/ai_1/cutoff.txt"), "2024-01-01\n")
			writeFile(t, filepath.Join(dir, "ideas/ai_1/ai_1.jsonl"), `{"statement": "s", "type": "strength", "axis": "soundness", "severity": "major"}`+"\n")
			if err := os.Symlink(filepath.Join(outside, "plan.txt"), filepath.Join(dir, "ideas/ai_1/ai_1.txt")); err != nil {
				t.Fatal(err)
			}
		}, "main.hcl:10:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(filepath.Dir(outside), "exp-"+strings.ReplaceAll(c.name, " ", "-"))
			t.Cleanup(func() { os.RemoveAll(dir) })
			writeFile(t, filepath.Join(dir, "kw.txt"), "alpha\nbeta\n")
			writeFile(t, filepath.Join(dir, "main.hcl"), c.hcl)
			if c.setup != nil {
				c.setup(dir)
			}
			cacheDir := t.TempDir()
			if c.name != "folder dataset file" { // the scholarideas stage list needs no generate stage; validate is enough below
				if code, _, stderr := cli(t, "validate", dir, "--cache-dir", cacheDir); code != 0 {
					t.Fatalf("without --confine: exit %d\n%s", code, stderr)
				}
			}
			code, _, stderr := cli(t, "validate", dir, "--confine", "--cache-dir", cacheDir)
			if code != exitBadInput || !strings.Contains(stderr, filepath.Join(dir, c.at)) || !strings.Contains(stderr, "outside the experiment folder") ||
				!strings.Contains(stderr, "with --confine an experiment may read only under") {
				t.Errorf("--confine: exit %d, want 2 with an error at %s\n%s", code, c.at, stderr)
			}
		})
	}
	// An experiment that reads only its own folder validates confined.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kw.txt"), "alpha\nbeta\n")
	writeFile(t, filepath.Join(dir, "p.tmpl"), "Propose an idea about {{.Keyword}}.")
	writeFile(t, filepath.Join(dir, "main.hcl"), withLocal(`file("p.tmpl")`))
	if code, _, stderr := cli(t, "validate", dir, "--confine", "--cache-dir", t.TempDir()); code != 0 {
		t.Errorf("confined experiment reading its own files: exit %d\n%s", code, stderr)
	}
}
