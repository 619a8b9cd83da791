package format

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func ideas(list ...string) *Answer { return &Answer{Ideas: list} }

func TestParseIdeas(t *testing.T) {
	three := Spec{Kind: Ideas, N: 3}
	runParseCases(t, []parseCase{
		{name: "numbered with preamble and outro", spec: three,
			text: "Here are three ideas:\n\n1. Map enhancer usage in aged neurons.\n2. Screen small molecules for remyelination.\n3. Build a retina organoid atlas.\n\nThese ideas could be combined.",
			want: ideas("Map enhancer usage in aged neurons.", "Screen small molecules for remyelination.", "Build a retina organoid atlas.")},
		{name: "parenthesis numbers", spec: three,
			text: "1) First idea text\n2) Second idea text\n3) Third idea text",
			want: ideas("First idea text", "Second idea text", "Third idea text")},
		{name: "Idea N colon multi-line", spec: three,
			text: "Idea 1: Title one\nBody of idea one.\n\nIdea 2: Title two\nBody of idea two.\n\nIdea 3: Title three\nBody of idea three.",
			want: ideas("Title one\nBody of idea one.", "Title two\nBody of idea two.", "Title three\nBody of idea three.")},
		{name: "bold Idea N then colon", spec: three,
			text: "**Idea 1**: alpha beta.\n**Idea 2**: gamma delta.\n**Idea 3**: epsilon zeta.",
			want: ideas("alpha beta.", "gamma delta.", "epsilon zeta.")},
		{name: "bold label inside colon", spec: three,
			text: "**Idea 1:** alpha.\n\n**Idea 2:** beta.\n\n**Idea 3:** gamma.\n\nOverall, these proposals share one dataset.",
			want: ideas("alpha.", "beta.", "gamma.")},
		{name: "word numbers and em dash", spec: three,
			text: "Research Idea One \u2014 alpha\nResearch Idea Two \u2014 beta\nResearch Idea Three \u2014 gamma",
			want: ideas("alpha", "beta", "gamma")},
		{name: "Idea #N and Hypothesis N mixed labels", spec: Spec{Kind: Ideas, N: 2},
			text: "Hypothesis 1: X causes Y.\nHypothesis 2: Z moderates the effect of X.",
			want: ideas("X causes Y.", "Z moderates the effect of X.")},
		{name: "numbered headings", spec: three,
			text: "## 1. Alpha\nalpha body\n## 2. Beta\nbeta body\n## 3. Gamma\ngamma body",
			want: ideas("Alpha\nalpha body", "Beta\nbeta body", "Gamma\ngamma body")},
		{name: "json array of strings in fence", spec: three,
			text: "```json\n[\"alpha idea\", \"beta idea\", \"gamma idea\"]\n```",
			want: ideas("alpha idea", "beta idea", "gamma idea")},
		{name: "json object with ideas key in prose", spec: three,
			text: "Sure, here you go: {\"ideas\": [\"alpha idea\", \"beta idea\", \"gamma idea\"]} Hope it helps.",
			want: ideas("alpha idea", "beta idea", "gamma idea")},
		{name: "json idea_N keys", spec: Spec{Kind: Ideas, N: 2},
			text: "{\"idea_1\": \"alpha idea\", \"idea_2\": \"beta idea\"}",
			want: ideas("alpha idea", "beta idea")},
		{name: "bullets", spec: three,
			text: "Ideas:\n- alpha idea\n- beta idea\n  with a second line\n- gamma idea",
			want: ideas("alpha idea", "beta idea\nwith a second line", "gamma idea")},
		{name: "unicode bullets", spec: Spec{Kind: Ideas, N: 2},
			text: "• alpha idea\n• beta idea",
			want: ideas("alpha idea", "beta idea")},
		{name: "outro on the line after the last idea", spec: three,
			text: "1. alpha\n2. beta\n3. gamma\nI hope these help!",
			want: ideas("alpha", "beta", "gamma")},
		{name: "last idea stops at a new section", spec: Spec{Kind: Ideas, N: 2},
			text: "1. alpha\n2. beta\n\n## Summary\nBoth ideas use the same cohort.",
			want: ideas("alpha", "beta")},
		{name: "more numbered ideas than asked keeps the first N", spec: Spec{Kind: Ideas, N: 2},
			text: "1. alpha\n2. beta\n3. gamma\n4. delta",
			want: ideas("alpha", "beta")},
		{name: "numbering restarting later is not a fourth idea", spec: three,
			text: "1. alpha\n2. beta\n3. gamma\n\nKey steps:\n1. collect\n2. analyse",
			want: ideas("alpha", "beta", "gamma")},
		{name: "any count accepted when N is zero", spec: Spec{Kind: Ideas},
			text: "1. alpha\n2. beta\n3. gamma\n4. delta",
			want: ideas("alpha", "beta", "gamma", "delta")},
		{name: "single idea as prose with preamble", spec: Spec{Kind: Ideas, N: 1},
			text: "Here is my idea:\n\nUse **quantum dots** to label single synapses.\nThis enables live imaging.",
			want: ideas("Use quantum dots to label single synapses.\nThis enables live imaging.")},
		{name: "single idea after Final Idea label", spec: Spec{Kind: Ideas, N: 1},
			text: "Let me think about polymers and what is missing.\nMaybe self-healing?\n\n**Final Idea:** Self-healing polymer binders for silicon anodes.",
			want: ideas("Self-healing polymer binders for silicon anodes.")},
		{name: "single idea with its own step list", spec: Spec{Kind: Ideas, N: 1},
			text: "Self-healing binders for silicon anodes.\n\n1. Synthesise the polymer.\n2. Cycle half cells.",
			want: ideas("Self-healing binders for silicon anodes.\n1. Synthesise the polymer.\n2. Cycle half cells.")},
		{name: "disclaimer then ideas is not a refusal", spec: Spec{Kind: Ideas, N: 2},
			text: "I'm sorry, but I can't access the full papers. However, here are two ideas based on the abstracts:\n\n1. alpha\n2. beta",
			want: ideas("alpha", "beta")},
		{name: "fewer than asked", spec: three,
			text:   "1. alpha\n2. beta",
			errSub: "found 2 ideas, expected 3 ideas"},
		{name: "unnumbered surplus is an error", spec: Spec{Kind: Ideas, N: 2},
			text:   "- alpha\n- beta\n- gamma",
			errSub: "found 3 unnumbered ideas, expected 2 ideas"},
		{name: "empty numbered idea", spec: Spec{Kind: Ideas, N: 2},
			text:   "1.\n2. beta",
			errSub: "idea 1 is empty"},
		{name: "blank numbered idea", spec: three,
			text:   "1. alpha\n2.    \n3. gamma",
			errSub: "idea 2 is empty"},
		{name: "markdown-only idea", spec: Spec{Kind: Ideas, N: 2},
			text:   "1. alpha\n2. ** **",
			errSub: "idea 2 is empty"},
		{name: "fewer than asked in JSON", spec: three,
			text:   `{"ideas": ["alpha idea", "beta idea"]}`,
			errSub: "found 2 ideas, expected 3 ideas"},
		{name: "empty JSON list with any count", spec: Spec{Kind: Ideas},
			text:   `{"ideas": []}`,
			errSub: "found no numbered ideas, expected at least 1 idea"},
		{name: "prose only", spec: three,
			text:   "Here are three ideas: we could study enhancers, screen molecules or build an atlas.",
			errSub: "found no numbered ideas, expected 3 ideas"},
		{name: "refusal", spec: three,
			text:   "I'm sorry, but I can't help with generating research ideas on this topic.",
			errSub: "declined", refusal: true},
		{name: "AI language model refusal", spec: three,
			text:   "As an AI language model, I cannot generate ideas that could be used to create pathogens.",
			errSub: "declined", refusal: true},
		{name: "think block only", spec: three,
			text:   "<think>\nThe user wants ideas. 1. maybe",
			errSub: "empty"},
	})
}

// TestParseIdeasGolden parses long, realistic answers in testdata/ideas; each
// NAME.txt has the expected ideas in NAME.json.
func TestParseIdeasGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "ideas", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden answers found: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(strings.TrimSuffix(file, ".txt") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatalf("golden %s: %v", name, err)
			}
			got, err := Parse(Spec{Kind: Ideas, N: len(want)}, string(text))
			checkParse(t, got, err, &Answer{Ideas: want}, "", false)
		})
	}
}

// TestCountIdeas pins the guarantee every Ideas answer passes through: exactly
// N trimmed, non-empty ideas (at least one when N is 0), so that a stage's
// Call.Output can convert an answer without checking it.
func TestCountIdeas(t *testing.T) {
	tests := []struct {
		name       string
		n          int
		ideas      []string
		enumerated bool
		want       []string
		err        string
	}{
		{"exact count", 2, []string{"a", "b"}, false, []string{"a", "b"}, ""},
		{"trimmed", 2, []string{" a\n", "\tb "}, false, []string{"a", "b"}, ""},
		{"numbered surplus dropped", 1, []string{"a", "b"}, true, []string{"a"}, ""},
		{"empty beyond n dropped with the surplus", 1, []string{"a", ""}, true, []string{"a"}, ""},
		{"unnumbered surplus", 1, []string{"a", "b"}, false, nil, "found 2 unnumbered ideas, expected 1 idea"},
		{"too few", 3, []string{"a", "b"}, true, nil, "found 2 ideas, expected 3 ideas"},
		{"none", 2, nil, true, nil, "found 0 ideas, expected 2 ideas"},
		{"none with any count", 0, nil, true, nil, "found 0 ideas, expected at least 1 idea"},
		{"any count", 0, []string{"a", "b", "c"}, false, []string{"a", "b", "c"}, ""},
		{"empty", 2, []string{"a", ""}, true, nil, "idea 2 is empty"},
		{"blank", 2, []string{" \n\t", "b"}, true, nil, "idea 1 is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := countIdeas(Spec{Kind: Ideas, N: tc.n}, tc.ideas, tc.enumerated)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("countIdeas = %#v, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, &Answer{Ideas: tc.want}) {
				t.Fatalf("countIdeas = %#v, %v; want ideas %q", got, err, tc.want)
			}
		})
	}
}
