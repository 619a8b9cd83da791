package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// docs/REFERENCE.md is `ideaflow doc`: a stage, dataset format or provider
// kind changed without regenerating it fails here. Regenerate with
// `go run ./cmd/ideaflow doc > docs/REFERENCE.md`.
func TestReferenceIsGenerated(t *testing.T) {
	code, stdout, stderr := cli(t, "doc")
	if code != 0 {
		t.Fatalf("doc: exit %d\n%s", code, stderr)
	}
	want, err := os.ReadFile("../../docs/REFERENCE.md")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(want) {
		t.Errorf("docs/REFERENCE.md differs from `ideaflow doc`; regenerate it with `go run ./cmd/ideaflow doc > docs/REFERENCE.md`\n%s", firstDiff(string(want), stdout))
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  file:    " + w + "\n  command: " + g
		}
	}
	return ""
}

func TestDocTopics(t *testing.T) {
	tests := []struct {
		topic string
		code  int
		has   []string
		hasnt []string
	}{
		{"generate_ideas", 0, []string{"### `generate_ideas`", "| `n` | number (whole), 1 to 100 |  | `3` |", "Default `prompt`:", "Here are the abstracts:"}, []string{"### `rank_ideas`", "## Provider kinds"}},
		{"stages", 0, []string{"## Stage types", "### `rank_ideas`", "### `report`"}, []string{"## Dataset formats"}},
		{"dataset", 0, []string{"## Dataset formats", "| `references[].intents` |", "| `abstract_summary` |"}, []string{"## Stage types"}},
		{"provider", 0, []string{"## Provider kinds", "### `openai`", "| `api_key_env` | string | yes |"}, []string{"## Stage types"}},
		{"mock", 0, []string{"### `mock`", "Synthetic:"}, []string{"### `openai`"}},
		{"ideabench", 0, []string{"### `ideabench`", "| `references[].citations` |"}, []string{"### `jsonl`"}},
	}
	for _, tc := range tests {
		code, stdout, stderr := cli(t, "doc", tc.topic)
		if code != tc.code {
			t.Errorf("doc %s: exit %d, want %d\n%s", tc.topic, code, tc.code, stderr)
		}
		for _, s := range tc.has {
			if !strings.Contains(stdout, s) {
				t.Errorf("doc %s: no %q in\n%s", tc.topic, s, stdout)
			}
		}
		for _, s := range tc.hasnt {
			if strings.Contains(stdout, s) {
				t.Errorf("doc %s: %q should not be there", tc.topic, s)
			}
		}
	}
	code, _, stderr := cli(t, "doc", "nope")
	if code != exitBadInput || !strings.Contains(stderr, `no topic "nope": use stages, datasets, providers, a stage type (`) || !strings.Contains(stderr, "fluency, generate_from_keyword, generate_ideas") {
		t.Errorf("doc nope: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := cli(t, "doc", "--format", "html"); code != exitBadInput || !strings.Contains(stderr, `--format "html": only markdown is supported`) {
		t.Errorf("doc --format html: exit %d\n%s", code, stderr)
	}
}
