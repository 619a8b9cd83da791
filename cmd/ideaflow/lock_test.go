package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// TestLockDriftNamedByPlan runs the scenario, which writes ideaflow.lock, then
// changes one thing the results rest on and checks that plan names it: the
// model the endpoint serves and its fingerprint (seen in the answers of a run
// on a fresh cache, the committed lock restored), a dataset file edited, a
// prompt file edited. Each case names exactly its drift, nothing else about
// models.
func TestLockDriftNamedByPlan(t *testing.T) {
	cases := []struct {
		name string
		// change alters the world; it returns true when a run on a fresh
		// cache must record the new answers before plan can see them.
		change func(t *testing.T, srv *llmtest.Server, exp string) bool
		want   string
	}{
		{"served model", func(t *testing.T, srv *llmtest.Server, _ string) bool {
			srv.SetHook(func(r *llmtest.Request) (llmtest.Fault, bool) {
				if r.Chat.Model == "gen-a" {
					return llmtest.Fault{ServedModel: "gen-a-2024-11-20"}, true
				}
				return llmtest.Fault{}, false
			})
			return true
		}, "served model changed: gen-a -> gen-a-2024-11-20 (provider fake, model gen-a)"},
		{"fingerprint", func(t *testing.T, srv *llmtest.Server, _ string) bool {
			srv.SetFingerprint("fp_updated")
			return true
		}, "fingerprint changed: fp_llmtest -> fp_updated (provider fake, model judge-model)"},
		{"dataset edit", func(t *testing.T, _ *llmtest.Server, exp string) bool {
			appendFile(t, filepath.Join(exp, "data/targets.jsonl"), "\n")
			return false
		}, "dataset digest changed: data/targets.jsonl"},
		{"prompt edit", func(t *testing.T, _ *llmtest.Server, exp string) bool {
			appendFile(t, filepath.Join(exp, "prompts/generate.tmpl"), "\nBe brief.\n")
			return false
		}, `prompt changed: stage.generate_ideas.main["gen-a"]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, exp, cacheDir, _ := newScenario(t)
			if code, out, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 || !strings.Contains(out, "wrote "+filepath.Join(exp, "ideaflow.lock")) {
				t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
			}
			lockPath := filepath.Join(exp, "ideaflow.lock")
			committed, err := os.ReadFile(lockPath)
			if err != nil {
				t.Fatal(err)
			}
			if _, out, _ := cli(t, "plan", exp, "--cache-dir", cacheDir); !strings.Contains(out, "Lock: no drift from ideaflow.lock.") {
				t.Fatalf("plan right after the run finds drift:\n%s", out)
			}
			if _, js, _ := cli(t, "plan", exp, "--cache-dir", cacheDir, "--json"); !strings.Contains(js, `"lock": {
    "file": "ideaflow.lock",
    "drift": []
  }`) {
				t.Errorf("plan --json right after the run:\n%s", js)
			}
			planCache := cacheDir
			if c.change(t, srv, exp) {
				planCache = filepath.Join(t.TempDir(), "fresh")
				code, out, stderr := cli(t, "run", exp, "--cache-dir", planCache)
				if code != 0 || !strings.Contains(out, "lock: "+c.want+"\n") {
					t.Fatalf("run on a fresh cache: exit %d, want it to say %q\n%s\n%s", code, c.want, out, stderr)
				}
				// The committed lock, checked out again, against the new answers.
				if err := os.WriteFile(lockPath, committed, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, out, stderr := cli(t, "plan", exp, "--cache-dir", planCache)
			if !strings.Contains(out, "Lock drift from ideaflow.lock:\n") || !strings.Contains(out, "  "+c.want+"\n") {
				t.Fatalf("plan does not name %q:\n%s\n%s", c.want, out, stderr)
			}
			// plan --json gives the same drift, and nothing else.
			_, js, _ := cli(t, "plan", exp, "--cache-dir", planCache, "--json")
			var pj struct {
				Nodes *struct{ Total int } `json:"nodes"`
				Lock  *lockJSON            `json:"lock"`
			}
			_, text, _ := strings.Cut(out, "Lock drift from ideaflow.lock:\n")
			var lines []string
			for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
				lines = append(lines, strings.TrimPrefix(l, "  "))
			}
			if err := json.Unmarshal([]byte(js), &pj); err != nil || pj.Nodes == nil || pj.Lock == nil || pj.Lock.File != "ideaflow.lock" ||
				strings.Join(pj.Lock.Drift, "\n") != strings.Join(lines, "\n") || !slices.Contains(pj.Lock.Drift, c.want) {
				t.Errorf("plan --json: %v, lock %+v; want the text's %q", err, pj.Lock, lines)
			}
			for _, other := range []string{"served model changed", "fingerprint changed", "dataset digest changed", "prompt changed"} {
				if !strings.HasPrefix(c.want, other) && strings.Contains(out, other) {
					t.Errorf("plan names %q too:\n%s", other, out)
				}
			}
		})
	}
}

// TestLockIsDeterministic: a second run over the same cache rewrites nothing
// (same bytes, no "wrote"), and the lock holds what answered, as the records
// say, with no time nor absolute path in it.
func TestLockIsDeterministic(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	first, err := os.ReadFile(filepath.Join(exp, "ideaflow.lock"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr := cli(t, "run", exp, "--cache-dir", cacheDir)
	if code != 0 || strings.Contains(out, "ideaflow.lock") {
		t.Fatalf("second run: exit %d, want the lock left alone\n%s\n%s", code, out, stderr)
	}
	second, _ := os.ReadFile(filepath.Join(exp, "ideaflow.lock"))
	if string(first) != string(second) {
		t.Fatalf("lock changed between two runs of the same cache:\n%s\n---\n%s", first, second)
	}
	text := string(first)
	for _, want := range []string{"# ideaflow.lock", `"provider": "fake"`, `"requested": "judge-model"`, `"fp_llmtest"`, `"data/targets.jsonl": "sha256:`, `"n": "sha256:`} {
		if !strings.Contains(text, want) {
			t.Errorf("lock lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, exp) || regexp.MustCompile(`\d{4}-\d\d-\d\dT`).MatchString(text) {
		t.Errorf("lock holds a path or a time:\n%s", text)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
