package liveideabench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages/liveideabench"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"

	_ "github.com/ideaflow/ideaflow/stages/all"
)

// generateHCL generates two ideas per keyword with two models (for_each),
// so the engine counts drops per model. %s is the provider block.
const generateHCL = `
%s
model "a" {
  provider    = provider.p
  name        = "gen-a"
  temperature = 0.8
}
model "b" {
  provider    = provider.p
  name        = "gen-b"
  temperature = 0.8
}
dataset "keywords" {
  format     = "keywords"
  path       = "keywords.txt"
  categories = "categories.csv"
}
stage "generate_from_keyword" "main" {
  for_each          = { for m in [model.a, model.b] : m.name => m }
  model             = each.value
  keywords          = dataset.keywords
  ideas_per_keyword = 2
}
`

const categories = "keyword,category,similarity_score\nmeteorology,Earth science,0.85\nvolcanology,Earth science,0.8\nperiodic table,Chemistry,0.7\n"

// scripted answers by keyword: "volcanology" is refused once and answered
// after the re-ask, "forbidden topic" is refused every time, and
// "periodic table" gets a 250-word idea. Every other prompt gets an idea
// of 19 words (more than the authors' 100 characters) naming its keyword
// and model. The re-ask is the fallback prompt, a request of its own.
func scripted(req *openai.ChatCompletionRequest) string {
	first := req.Messages[0].Content
	reasked := isReask(req)
	switch {
	case strings.Contains(first, `"volcanology"`) && !reasked:
		return "I'm sorry, but I can't help with volcanic hazards."
	case strings.Contains(first, `"forbidden topic"`):
		return "I am unable to assist with that request."
	case strings.Contains(first, `"periodic table"`):
		return strings.Repeat("element ", 250)
	}
	return scriptedIdea(keywordIn(first), req.Model)
}

func scriptedIdea(keyword, model string) string {
	return fmt.Sprintf("We propose measuring %s with low-cost sensor swarms, open models and a public archive that keeps every reading (%s).", keyword, model)
}

// isReask tells the fallback prompt (v2's re-ask, sent alone) from the
// idea prompt.
func isReask(req *openai.ChatCompletionRequest) bool {
	return len(req.Messages) > 1 || strings.Contains(req.Messages[0].Content, "This is a research study")
}

func keywordIn(prompt string) string {
	_, rest, _ := strings.Cut(prompt, `keyword is: "`)
	kw, _, _ := strings.Cut(rest, `"`)
	return kw
}

func writeExperiment(t *testing.T, provider string, keywords ...string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"exp.hcl":        fmt.Sprintf(generateHCL, provider),
		"keywords.txt":   strings.Join(keywords, "\n") + "\n",
		"categories.csv": categories,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func run(t *testing.T, e *engine.Engine, dir string) (*engine.Graph, *engine.Summary) {
	t.Helper()
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	e.Exec = engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %+v", sum.Failures)
	}
	return g, sum
}

func ideas(t *testing.T, e *engine.Engine, g *engine.Graph, address string) map[string]liveideabench.Idea {
	t.Helper()
	views, err := e.Inspect(e.Plan(g), address, engine.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]liveideabench.Idea{}
	for _, v := range views {
		var idea liveideabench.Idea
		if err := json.Unmarshal(v.Result.Output, &idea); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%s/%d", v.Item, v.Slot)] = idea
	}
	return out
}

// countingResponder counts the requests per keyword and whether re-asked.
type countingResponder struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *countingResponder) respond(req *openai.ChatCompletionRequest) string {
	c.mu.Lock()
	k := keywordIn(req.Messages[0].Content)
	if isReask(req) {
		k += " (re-ask)"
	}
	c.counts[k]++
	c.mu.Unlock()
	return scripted(req)
}

func TestGenerateThroughTheEngine(t *testing.T) {
	cr := &countingResponder{counts: map[string]int{}}
	srv := llmtest.New(llmtest.WithResponder(cr.respond))
	t.Cleanup(srv.Close)
	t.Setenv("LIB_API_KEY", "sk-liveideabench-test")
	provider := fmt.Sprintf("provider \"p\" {\n  kind        = \"openai\"\n  base_url    = %q\n  api_key_env = \"LIB_API_KEY\"\n}", srv.URL)
	keywords := []string{"meteorology", "volcanology", "periodic table", "forbidden topic"}
	dir := writeExperiment(t, provider, keywords...)
	e := &engine.Engine{Store: cache.NewMemory()}
	g, sum := run(t, e, dir)

	// 4 keywords x 2 samples x 2 models first asks, and one re-ask per
	// refusal: volcanology and forbidden topic, 2 x 2 each. A second
	// refusal is not re-asked again, whatever repair_attempts says.
	if sum.LLMCalls != 16+8 || srv.Count() != 24 {
		t.Errorf("%d model calls (server: %d), want 24", sum.LLMCalls, srv.Count())
	}
	wantCounts := map[string]int{"meteorology": 4, "volcanology": 4, "volcanology (re-ask)": 4,
		"periodic table": 4, "forbidden topic": 4, "forbidden topic (re-ask)": 4}
	if !reflect.DeepEqual(cr.counts, wantCounts) {
		t.Errorf("requests per keyword %v, want %v", cr.counts, wantCounts)
	}
	// Drops are counted per model (stage instance), by reason: the twice
	// refused answers are judged, as the authors judge the fallback's
	// answer, but these are shorter than 101 characters.
	for _, m := range []string{"gen-a", "gen-b"} {
		st := sum.Stages[fmt.Sprintf(`stage.generate_from_keyword.main["%s"]`, m)]
		if st.Total != 8 || st.Ran != 8 || st.LLMCalls != 12 || st.Dropped != 4 ||
			!reflect.DeepEqual(st.DropReasons, map[string]int{"too_long": 2, "too_short": 2}) {
			t.Errorf("%s: %+v", m, st)
		}
	}

	got := ideas(t, e, g, `stage.generate_from_keyword.main["gen-a"]`)
	if len(got) != 8 {
		t.Fatalf("%d ideas, want 8", len(got))
	}
	want := map[string]liveideabench.Idea{
		"meteorology/0": {Keyword: "meteorology", Domain: "Earth science", Words: 19,
			Idea: scriptedIdea("meteorology", "gen-a"), Answer: scriptedIdea("meteorology", "gen-a")},
		"volcanology/0": {Keyword: "volcanology", Domain: "Earth science", Words: 19, Refused: true,
			RefusalAnswer: "I'm sorry, but I can't help with volcanic hazards.",
			Idea:          scriptedIdea("volcanology", "gen-a"), Answer: scriptedIdea("volcanology", "gen-a")},
		"periodic table/0": {Keyword: "periodic table", Domain: "Chemistry", Words: 250, Dropped: true, Reason: "too_long",
			Idea: strings.TrimSpace(strings.Repeat("element ", 250)), Answer: strings.TrimSpace(strings.Repeat("element ", 250))},
		"forbidden topic/0": {Keyword: "forbidden topic", Words: 8, Refused: true, FallbackRefused: true, Dropped: true, Reason: "too_short",
			RefusalAnswer: "I am unable to assist with that request.",
			Idea:          "I am unable to assist with that request.", Answer: "I am unable to assist with that request."},
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s:\n got %+v\nwant %+v", k, got[k], w)
		}
		k1 := strings.TrimSuffix(k, "/0") + "/1"
		if !reflect.DeepEqual(got[k1], w) {
			t.Errorf("%s differs from sample 0: %+v", k1, got[k1])
		}
	}

	// A second run calls nothing.
	before := srv.Count()
	_, sum = run(t, e, dir)
	if sum.LLMCalls != 0 || sum.Nodes.Ran != 0 || srv.Count() != before {
		t.Errorf("re-run: %d model calls, nodes %+v", sum.LLMCalls, sum.Nodes)
	}

	// One more keyword runs only its 2 samples x 2 models.
	if err := os.WriteFile(filepath.Join(dir, "keywords.txt"), []byte(strings.Join(append(keywords, "quantum dots"), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, sum = run(t, e, dir)
	if sum.LLMCalls != 4 || sum.Nodes.Ran != 4 || srv.Count() != before+4 || cr.counts["quantum dots"] != 4 {
		t.Errorf("added keyword: %d model calls, nodes %+v", sum.LLMCalls, sum.Nodes)
	}

	// max_words is keyed on: lowering it re-runs the nodes rather than
	// serving ideas filtered under the old limit, but their answers are
	// the cached ones, re-derived: the plan estimates no call, and the run
	// makes none.
	before = srv.Count()
	exp := strings.Replace(fmt.Sprintf(generateHCL, provider), "ideas_per_keyword = 2", "ideas_per_keyword = 2\n  max_words = 5", 1)
	if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	exp5, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g5, diags := engine.Build(exp5)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if p := e.Plan(g5); p.Summary.Nodes.ToRun != 20 || p.Summary.Estimate.LLMCalls != 0 {
		t.Errorf("plan after max_words changed: %+v nodes, %d calls estimated; want 20 to run and no call", p.Summary.Nodes, p.Summary.Estimate.LLMCalls)
	}
	g, sum = run(t, e, dir)
	if sum.Nodes.Ran != 20 || sum.AnswersReused != 20 || sum.LLMCalls != 0 || srv.Count() != before {
		t.Errorf("max_words changed: %d nodes ran, %d reused, %d calls (server %d new); want 20, 20, 0, 0", sum.Nodes.Ran, sum.AnswersReused, sum.LLMCalls, srv.Count()-before)
	}
	five := ideas(t, e, g, `stage.generate_from_keyword.main["gen-a"]`)
	if idea := five["meteorology/0"]; !idea.Dropped || idea.Reason != "too_long" || idea.Words != 19 {
		t.Errorf("max_words = 5: %+v", idea)
	}
	// The re-ask's first refusal is kept through the stored answer.
	if v := five["volcanology/0"]; !v.Refused || v.RefusalAnswer != want["volcanology/0"].RefusalAnswer || v.Reason != "too_long" {
		t.Errorf("max_words = 5, volcanology: %+v", v)
	}
	// Each re-derived record names the answer it came from (show prints it).
	views, err := e.Inspect(e.Plan(g), `stage.generate_from_keyword.main["gen-a"]`, engine.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.Result == nil || v.Result.AnswerKey == "" || v.Result.AnswerKey == v.Key {
			t.Errorf("%s: answer key %q (node key %s)", v.Address, v.Result.AnswerKey, v.Key)
		}
	}
	// gc keeps the answers: the plan reaches each of the 20 answer records.
	keys := e.Plan(g).Keys()
	answers := 0
	if err := e.Store.List(func(en cache.Entry) error {
		if strings.HasSuffix(en.Address, "#answer") {
			answers++
			if !keys[en.Key] {
				t.Errorf("the plan does not reach the answer record of %s", en.Address)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if answers != 20 {
		t.Errorf("%d answer records, want 20", answers)
	}
	// Back to the default: every node's own record is there from before.
	if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(fmt.Sprintf(generateHCL, provider)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, sum = run(t, e, dir); sum.Nodes.Ran != 0 || sum.LLMCalls != 0 || srv.Count() != before {
		t.Errorf("max_words back to 200: nodes %+v, %d calls", sum.Nodes, sum.LLMCalls)
	}
}

// The mock provider writes on-topic ideas of 60 to 100 words for the
// paper's prompt, so an offline run of the stage keeps every idea.
func TestGenerateOnTheMock(t *testing.T) {
	keywords := []string{"meteorology", "volcanology", "periodic table", "quantum dots"}
	dir := writeExperiment(t, "provider \"p\" {\n  kind = \"mock\"\n  seed = 3\n}", keywords...)
	e := &engine.Engine{Store: cache.NewMemory()}
	g, sum := run(t, e, dir)
	if sum.LLMCalls != 16 {
		t.Errorf("%d calls, want 16", sum.LLMCalls)
	}
	for _, m := range []string{"gen-a", "gen-b"} {
		addr := fmt.Sprintf(`stage.generate_from_keyword.main["%s"]`, m)
		if st := sum.Stages[addr]; st.Dropped != 0 {
			t.Errorf("%s dropped %d: %v", m, st.Dropped, st.DropReasons)
		}
		for k, idea := range ideas(t, e, g, addr) {
			if !strings.Contains(idea.Idea, idea.Keyword) || idea.Words < 60 || idea.Words > 100 || idea.Refused {
				t.Errorf("%s %s: %d words: %s", m, k, idea.Words, idea.Idea)
			}
		}
	}
}

// A categories file that misses keywords is a warning at the attribute;
// on a generic format it is an error.
func TestCategoriesDiagnostics(t *testing.T) {
	dir := writeExperiment(t, "provider \"p\" {\n  kind = \"mock\"\n}", "meteorology", "quantum dots", "soil health")
	_, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() || len(diags) != 1 || diags[0].Summary != "2 of 3 keywords have no category" ||
		!strings.Contains(diags[0].Detail, `categories.csv does not list ["quantum dots" "soil health"]`) || diags[0].Subject == nil {
		t.Errorf("diagnostics: %v", diags)
	}
	hcl := strings.Replace(fmt.Sprintf(generateHCL, "provider \"p\" {\n  kind = \"mock\"\n}"), `format     = "keywords"`, `format     = "csv"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags = config.Load(dir, config.Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "categories needs a keyword format") {
		t.Errorf("csv with categories: %v", diags)
	}
}
