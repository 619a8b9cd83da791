package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
)

// lastRunRecord reads the last run record of the cache in dir.
func lastRunRecord(t *testing.T, dir string) *cache.RunRecord {
	t.Helper()
	st, err := cache.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs()
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	return runs[len(runs)-1]
}

// run records its variable values and -var-file files, in the run record
// and in the reports' provenance; a value that holds a secret is withheld
// everywhere. show, export and report then describe the last run's
// configuration without its -var flags, say so, and warn when the values
// given differ; a bundle carries the values to another cache.
func TestRunVariablesAreRememberedAndReused(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	// A string variable the stages do not read, to carry a pasted secret.
	main := filepath.Join(exp, "main.hcl")
	src, _ := os.ReadFile(main)
	if err := os.WriteFile(main, append(src, []byte("\nvariable \"note\" {\n  type    = string\n  default = \"\"\n}\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	varFile := filepath.Join(t.TempDir(), "two.tfvars")
	if err := os.WriteFile(varFile, []byte("n = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", out, "-var-file", varFile, "-var", "note=key sk-cli-test here")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	calls := srv.Count()

	r := lastRunRecord(t, cacheDir)
	if r.Variables["n"] != "2" || r.VarValues["n"] != "2" || len(r.VarFiles) != 1 || r.VarFiles[0].Path != varFile || len(r.VarFiles[0].SHA256) != 64 {
		t.Fatalf("run record: variables %v, values %v, files %+v", r.Variables, r.VarValues, r.VarFiles)
	}
	if r.Variables["note"] != "(withheld: holds the value of $CLI_TEST_KEY)" || r.VarValues["note"] != "" {
		t.Fatalf("a secret reached the run record: %q, %q", r.Variables["note"], r.VarValues["note"])
	}
	prov, err := os.ReadFile(filepath.Join(out, "table1.provenance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p engine.Provenance
	if err := json.Unmarshal(prov, &p); err != nil {
		t.Fatal(err)
	}
	if p.Variables["n"] != "2" || len(p.VarFiles) != 1 || p.VarFiles[0].Path != varFile || strings.Contains(string(prov), "sk-cli-test") {
		t.Fatalf("provenance: %s", prov)
	}

	note := "note: using the variables of the last run of exp at " + r.Started.UTC().Format("2006-01-02 15:04:05") + " UTC: n=2 (give -var to describe another configuration)"
	for _, tc := range []struct {
		name string
		args []string
		note string // on stderr
		want string // on stdout
	}{
		{"show", []string{"show", `stage.generate_ideas.main["gen-a"]`, exp, "--json"}, note, `"status": "cached"`},
		{"export", []string{"export", `stage.generate_ideas.main["gen-a"]`, exp}, note, "gen-a"},
		{"report", []string{"report", exp, "--out", t.TempDir()}, note, "wrote "},
		{"given values that differ", []string{"show", `stage.generate_ideas.main["gen-a"]`, exp, "--json", "-var", "n=3"},
			"warning: the values given differ from the last run of exp at " + r.Started.UTC().Format("2006-01-02 15:04:05") + " UTC: n=3 (last run: 2)",
			`"status": "to run"`},
		{"given values that agree", []string{"show", `stage.generate_ideas.main["gen-a"]`, exp, "--json", "-var", "n=2"}, "", `"status": "cached"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, append(tc.args, "--cache-dir", cacheDir)...)
			if code != 0 || !strings.Contains(stdout, tc.want) || tc.note != "" && !strings.Contains(stderr, tc.note) ||
				tc.note == "" && strings.Contains(stderr, "last run") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
		})
	}
	// plan prices the configuration given, not the last run's.
	if _, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir); strings.Contains(stderr, "last run") || strings.Contains(stdout, " 0 to run.") {
		t.Fatalf("plan took the last run's variables:\n%s\n%s", stdout, stderr)
	}

	// A bundle of the experiment carries the run, so another cache reports
	// on the same configuration without the -var flags.
	bundle := filepath.Join(t.TempDir(), "exp.bundle")
	if code, stdout, stderr := cli(t, "cache", "export", bundle, "--experiment", exp, "-var", "n=2", "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("cache export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	other := filepath.Join(t.TempDir(), "other")
	if code, stdout, stderr := cli(t, "cache", "import", bundle, "--cache-dir", other); code != 0 {
		t.Fatalf("cache import: exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, _ := os.ReadFile(bundle)
	if strings.Contains(string(gunzipBytes(t, b)), "sk-cli-test") {
		t.Fatal("the bundle holds the secret")
	}
	code, stdout, stderr = cli(t, "report", exp, "--out", t.TempDir(), "--cache-dir", other)
	if code != 0 || !strings.Contains(stderr, "using the variables of the last run of exp at") || srv.Count() != calls {
		t.Fatalf("report from the imported bundle: exit %d, %d calls\n%s\n%s", code, srv.Count()-calls, stdout, stderr)
	}
}

func gunzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
