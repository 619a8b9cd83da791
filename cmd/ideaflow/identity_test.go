package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// planReasons plans exp as JSON and returns gen-a's ranking reasons and
// where the reasons were compared from.
func planReasons(t *testing.T, exp, cacheDir string) (map[string]int, string) {
	t.Helper()
	code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir, "--json")
	if code != 0 {
		t.Fatalf("plan %s: exit %d\n%s", exp, code, stderr)
	}
	var p struct {
		Stages map[string]struct {
			Reasons map[string]int `json:"reasons"`
		} `json:"stages"`
		ReasonsFrom string `json:"reasons_from"`
	}
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatal(err)
	}
	return p.Stages[stage(rank, "gen-a")].Reasons, p.ReasonsFrom
}

// TestRenamedExperimentKeepsReasons renames an experiment folder that has
// run, edits the judge's temperature, and plans: the reasons are those the
// old folder's last run gives ("judge.temperature changed"), not "new",
// and the plan says where they come from. Once it has run under its new
// name, its reasons are its own.
func TestRenamedExperimentKeepsReasons(t *testing.T) {
	_, exp, cacheDir, sc := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	renamed := filepath.Join(filepath.Dir(exp), "exp-renamed")
	if err := os.Rename(exp, renamed); err != nil {
		t.Fatal(err)
	}
	sc.JudgeTemperature = 0.3
	writeExperiment(t, renamed, sc)
	reasons, from := planReasons(t, renamed, cacheDir)
	if reasons["judge.temperature changed (0 -> 0.3)"] != 4 || len(reasons) != 1 {
		t.Errorf("renamed and edited: reasons %v, want 4 x judge.temperature changed (0 -> 0.3)", reasons)
	}
	if abs, _ := filepath.Abs(exp); from != abs {
		t.Errorf("reasons_from = %q, want the old folder %q", from, abs)
	}
	code, stdout, _ := cli(t, "plan", renamed, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "Reasons compare with the last run of "+from+", which is no longer there") {
		t.Errorf("text plan does not say where its reasons come from:\n%s", stdout)
	}
	if code, _, stderr := cli(t, "run", renamed, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	sc.JudgeTemperature = 0.5
	writeExperiment(t, renamed, sc)
	reasons, from = planReasons(t, renamed, cacheDir)
	if reasons["judge.temperature changed (0.3 -> 0.5)"] != 4 || from != "" {
		t.Errorf("after a run under the new name: reasons %v from %q", reasons, from)
	}
}

// TestSameNamedExperimentsKeepTheirReasons runs two unrelated folders both
// named exp, with judges at different temperatures, on one cache: each
// one's reasons compare with its own last run. A copy of a folder that
// still exists never borrows its reasons.
func TestSameNamedExperimentsKeepTheirReasons(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("CLI_TEST_KEY", "sk-cli-test")
	cacheDir := filepath.Join(t.TempDir(), "cache")
	a, b := filepath.Join(t.TempDir(), "exp"), filepath.Join(t.TempDir(), "exp")
	sa := scenario{BaseURL: srv.URL, KeyEnv: "CLI_TEST_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5}
	sb := sa
	sb.JudgeTemperature = 0.7
	writeExperiment(t, a, sa)
	writeExperiment(t, b, sb)
	for _, exp := range []string{a, b} {
		if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
			t.Fatal(stderr)
		}
	}
	sa.JudgeTemperature = 0.3
	writeExperiment(t, a, sa)
	if reasons, from := planReasons(t, a, cacheDir); reasons["judge.temperature changed (0 -> 0.3)"] != 4 || len(reasons) != 1 || from != "" {
		t.Errorf("a: reasons %v (from %q), want 4 x judge.temperature changed (0 -> 0.3)", reasons, from)
	}
	sb.JudgeTemperature = 0.3
	writeExperiment(t, b, sb)
	if reasons, _ := planReasons(t, b, cacheDir); reasons["judge.temperature changed (0.7 -> 0.3)"] != 4 || len(reasons) != 1 {
		t.Errorf("b: reasons %v, want 4 x judge.temperature changed (0.7 -> 0.3)", reasons)
	}
	// A copy of a (which still exists), never run: its reasons are new.
	c := filepath.Join(t.TempDir(), "exp")
	sc := sa
	sc.JudgeTemperature = 0.9
	writeExperiment(t, c, sc)
	if reasons, from := planReasons(t, c, cacheDir); reasons["new"] != 4 || len(reasons) != 1 || from != "" {
		t.Errorf("a copy: reasons %v (from %q), want 4 x new", reasons, from)
	}
}

// TestSettingsNameIsTheIdentity gives two files one settings { name }: the
// second's reasons compare with the first's run, as the user declared them
// one experiment, and the name is what plan calls it.
func TestSettingsNameIsTheIdentity(t *testing.T) {
	_, exp, cacheDir, sc := newScenario(t)
	named := func(s scenario) string { return s.hcl() + "\nsettings {\n  name = \"table1-study\"\n}\n" }
	writeFile(t, filepath.Join(exp, "main.hcl"), named(sc))
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	other := filepath.Join(t.TempDir(), "elsewhere")
	sc.JudgeTemperature = 0.3
	writeExperiment(t, other, sc)
	writeFile(t, filepath.Join(other, "main.hcl"), named(sc))
	if reasons, _ := planReasons(t, other, cacheDir); reasons["judge.temperature changed (0 -> 0.3)"] != 4 {
		t.Errorf("reasons %v, want the named experiment's", reasons)
	}
	if code, stdout, _ := cli(t, "plan", other, "--cache-dir", cacheDir); code != 0 || !strings.HasPrefix(stdout, "Plan for table1-study ") {
		t.Errorf("plan does not use the name:\n%s", stdout)
	}
}

// TestNamingAnExperimentKeepsReasons gives an experiment that has run a
// settings { name }: its first plan under the name compares with its own
// last run, from the same folder.
func TestNamingAnExperimentKeepsReasons(t *testing.T) {
	_, exp, cacheDir, sc := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	sc.JudgeTemperature = 0.3
	writeFile(t, filepath.Join(exp, "main.hcl"), sc.hcl()+"\nsettings {\n  name = \"named-now\"\n}\n")
	reasons, from := planReasons(t, exp, cacheDir)
	if abs, _ := filepath.Abs(exp); reasons["judge.temperature changed (0 -> 0.3)"] != 4 || from != abs {
		t.Errorf("reasons %v from %q", reasons, from)
	}
	if code, stdout, _ := cli(t, "plan", exp, "--cache-dir", cacheDir); code != 0 || !strings.Contains(stdout, "before its settings { name } changed") {
		t.Errorf("text plan:\n%s", stdout)
	}
}
