package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine/config"
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
		{"model", 0, []string{"### `model`", "| `seed` |  | sent with each call; sample s", "| `input_per_mtok` |"}, []string{"### `quality`", "## Stage types"}},
		{"quality", 0, []string{"### `quality`", "| `definition` |"}, []string{"### `model`"}},
		{"variable", 0, []string{"### `variable`", "| `default` |"}, []string{"### `model`"}},
		{"settings", 0, []string{"### `settings`", "| `max_nodes` |"}, []string{"### `model`"}},
		{"locals", 0, []string{"### `locals`"}, []string{"### `model`"}},
		{"report", 0, []string{"`report \"NAME\" { ... }`", "| parameter | kind |"}, []string{"### `model`"}},
		{"blocks", 0, []string{"## Blocks", "### `variable`", "### `settings`"}, []string{"## Stage types"}},
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
	if code != exitBadInput || !strings.Contains(stderr, `no topic "nope": use stages, datasets, providers, blocks, a block kind (variable, locals, provider, model, dataset, quality, stage, report, expect, settings, stop_when), a stage type (`) || !strings.Contains(stderr, "filter_references, ") || !strings.Contains(stderr, "generate_ideas, ") {
		t.Errorf("doc nope: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := cli(t, "doc", "--format", "html"); code != exitBadInput || !strings.Contains(stderr, `--format "html": only markdown is supported`) {
		t.Errorf("doc --format html: exit %d\n%s", code, stderr)
	}
}

// Every block kind and attribute the experiment decoder knows has its doc
// (cmd/ideaflow/docblocks.go), and no doc names one it does not know.
func TestBlockDocsCoverTheDecoder(t *testing.T) {
	known := map[string]bool{}
	for _, k := range config.BlockKinds() {
		known[k.Type] = true
		d, ok := blockDocs[k.Type]
		if !ok || strings.TrimSpace(d.about) == "" {
			t.Errorf("block %s has no doc", k.Type)
			continue
		}
		attrs := map[string]bool{}
		for _, a := range k.Attributes {
			attrs[a.Name] = true
			if strings.TrimSpace(d.attrs[a.Name]) == "" {
				t.Errorf("%s { %s } has no doc", k.Type, a.Name)
			}
		}
		for a := range d.attrs {
			if !attrs[a] {
				t.Errorf("the doc of %s names %s, which the decoder does not accept", k.Type, a)
			}
		}
	}
	for typ := range blockDocs {
		if !known[typ] {
			t.Errorf("a doc for block %s, which the decoder does not know", typ)
		}
	}
	prices := map[string]bool{}
	for _, a := range config.PriceAttributes() {
		prices[a] = true
		if priceDocs[a] == "" {
			t.Errorf("price { %s } has no doc", a)
		}
	}
	for a := range priceDocs {
		if !prices[a] {
			t.Errorf("the price doc names %s, which the decoder does not accept", a)
		}
	}
}
