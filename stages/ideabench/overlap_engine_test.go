package ideabench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/ideabench"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// overlapHCL runs the quickstart's five targets (one dropped by the filter,
// two of the kept four without an idea) through extract_idea and both ways
// of overlap_rating. %s is the provider block.
const overlapHCL = `
%s
model "gen" {
  provider    = provider.p
  name        = "mock-generator-a"
  temperature = 0.8
}
model "judge" {
  provider    = provider.p
  name        = "mock-judge"
  temperature = 0
}
dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}
stage "filter_references" "low" {
  dataset        = dataset.targets
  min_citations  = 5
  require_intent = "background"
  limit          = 5
}
stage "extract_idea" "main" {
  targets = stage.filter_references.low
  model   = model.judge
}
stage "generate_ideas" "main" {
  model      = model.gen
  references = stage.filter_references.low
  n          = 3
}
stage "similarity" "rouge" {
  ideas = stage.generate_ideas.main
}
stage "overlap_rating" "best" {
  ideas      = stage.generate_ideas.main
  judge      = model.judge
  similarity = stage.similarity.rouge
}
stage "overlap_rating" "each" {
  ideas = stage.generate_ideas.main
  judge = model.judge
}
stage "overlap_score" "best" { ratings = stage.overlap_rating.best }
stage "overlap_score" "each" { ratings = stage.overlap_rating.each }
report "overlap" {
  rows    = stage.generate_ideas.main
  columns = [stage.overlap_score.best, stage.overlap_score.each]
  formats = ["csv"]
}
`

const mockProvider = `provider "p" {
  kind = "mock"
  seed = 7
}`

func writeOverlap(t *testing.T, provider string) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile("../../experiments/quickstart/data/targets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"exp.hcl": []byte(fmt.Sprintf(overlapHCL, provider)), "targets.jsonl": data} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runOverlap(t *testing.T, e *engine.Engine, dir string) (*engine.Graph, *engine.Summary) {
	t.Helper()
	g := buildSimilarity(t, dir)
	if e.Exec == nil {
		e.Exec = engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())
	}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %+v", sum.Failures)
	}
	return g, sum
}

func score(t *testing.T, e *engine.Engine, g *engine.Graph, address string) stages.Score {
	t.Helper()
	v := outputs(t, e, g, address)
	if len(v) != 1 {
		t.Fatalf("%s: %d nodes, want 1", address, len(v))
	}
	var s stages.Score
	if err := json.Unmarshal(v[0].Result.Output, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOverlapThroughTheEngine(t *testing.T) {
	dir := writeOverlap(t, mockProvider)
	e := &engine.Engine{Store: cache.NewMemory()}
	g, sum := runOverlap(t, e, dir)

	// Nodes: extract_idea and the most similar idea one per target; every
	// idea one per generate_ideas node (5 x 3); one aggregate per score.
	for addr, want := range map[string]int{
		"stage.extract_idea.main": 5, "stage.overlap_rating.best": 5, "stage.overlap_rating.each": 15,
		"stage.overlap_score.best": 1, "stage.overlap_score.each": 1,
	} {
		if got := sum.Stages[addr].Total; got != want {
			t.Errorf("%s: %d nodes, want %d", addr, got, want)
		}
	}
	// Calls: extract_idea asks only for the kept target without an idea
	// (the other one without is the dropped target). Rating every idea asks
	// 4 x 3, the most similar idea 4 more: its inputs differ from those of
	// the same idea's node in "each", so the two never share a key.
	calls := func(addr string) int { return sum.Stages[addr].LLMCalls }
	for addr, want := range map[string]int{"stage.extract_idea.main": 1, "stage.overlap_rating.best": 4, "stage.overlap_rating.each": 12} {
		if got := calls(addr); got != want {
			t.Errorf("%s made %d calls, want %d", addr, got, want)
		}
	}
	if sum.LLMCalls != 12+1+4+12 {
		t.Errorf("%d model calls in all, want 29 (12 ideas, 1 extraction, 16 ratings)", sum.LLMCalls)
	}

	// extract_idea: the dataset's idea where there is one, else the model's.
	sources := map[string]string{}
	for _, v := range outputs(t, e, g, "stage.extract_idea.main") {
		var o ideabench.ExtractOutput
		if err := json.Unmarshal(v.Result.Output, &o); err != nil {
			t.Fatal(err)
		}
		switch {
		case o.Dropped:
			sources[v.Item] = "dropped"
		case strings.TrimSpace(o.Idea) == "" || o.Idea != strings.TrimSpace(o.Idea):
			t.Errorf("%s: idea %q", v.Item, o.Idea)
		default:
			sources[v.Item] = o.Source
		}
	}
	wantSources := map[string]string{"qs-membrane": "dataset", "qs-spindle": "dataset", "qs-greenroof": "dataset", "qs-reef": "model", "qs-codegen": "model"}
	dropped := ""
	for item, src := range sources {
		if src == "dropped" {
			dropped = item
			continue
		}
		if src != wantSources[item] {
			t.Errorf("%s: source %q, want %q", item, src, wantSources[item])
		}
	}
	if len(sources) != 5 || dropped != "qs-codegen" {
		t.Fatalf("extract_idea outputs: %v", sources)
	}

	// The most similar idea is the one rouge_l scores highest.
	sims := map[string][]float64{}
	for _, v := range outputs(t, e, g, "stage.similarity.rouge") {
		var o ideabench.SimilarityOutput
		if err := json.Unmarshal(v.Result.Output, &o); err != nil {
			t.Fatal(err)
		}
		for _, s := range o.Scores {
			sims[v.Item] = append(sims[v.Item], s.F1)
		}
	}
	for _, v := range outputs(t, e, g, "stage.overlap_rating.best") {
		if v.Item == dropped {
			if string(v.Result.Output) != `{"dropped":true}` {
				t.Errorf("dropped target %s: %s", v.Item, v.Result.Output)
			}
			continue
		}
		var o ideabench.OverlapOutput
		if err := json.Unmarshal(v.Result.Output, &o); err != nil {
			t.Fatal(err)
		}
		s := sims[v.Item]
		for i, f := range s {
			if f > s[o.IdeaIndex] || (f == s[o.IdeaIndex] && i < o.IdeaIndex) {
				t.Errorf("%s: rated idea %d (F1 %v), but idea %d has F1 %v", v.Item, o.IdeaIndex, s[o.IdeaIndex], i, f)
			}
		}
		if o.Rating < 0 || o.Rating > 10 || o.Explanation == "" {
			t.Errorf("%s: %+v", v.Item, o)
		}
	}

	// Both scores count the dropped target and rate the four others.
	for _, name := range []string{"best", "each"} {
		s := score(t, e, g, "stage.overlap_score."+name)
		if s.Count != 4 || s.Missing != 0 || s.Extra["dropped"] != 1 || len(s.PerItem) != 4 || s.Extra["p80"] < s.Extra["median"] {
			t.Errorf("%s: %+v", name, s)
		}
	}

	// A re-run sends nothing.
	_, sum = runOverlap(t, e, dir)
	if sum.LLMCalls != 0 || sum.Nodes.Ran != 0 {
		t.Errorf("re-run: %d model calls, nodes %+v", sum.LLMCalls, sum.Nodes)
	}
}

// A judge that always answers 7 gives exact scores: every rated target 7,
// the dropped one excluded.
func TestOverlapScriptedJudge(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(func(req *openai.ChatCompletionRequest) string {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "Rating: N") {
			return "Rating: 7\nExplanation: Both study the same mechanism."
		}
		return llmtest.DefaultResponder(req)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("OVERLAP_API_KEY", "sk-overlap-test")
	dir := writeOverlap(t, fmt.Sprintf("provider \"p\" {\n  kind        = \"openai\"\n  base_url    = %q\n  api_key_env = \"OVERLAP_API_KEY\"\n}", srv.URL))
	e := &engine.Engine{Store: cache.NewMemory()}
	g, sum := runOverlap(t, e, dir)
	if sum.LLMCalls != srv.Count() {
		t.Errorf("%d model calls, the server saw %d", sum.LLMCalls, srv.Count())
	}
	for _, name := range []string{"best", "each"} {
		got := score(t, e, g, "stage.overlap_score."+name)
		want := stages.Score{Value: 7, Count: 4, Extra: map[string]float64{"dropped": 1, "mean": 7, "median": 7, "p80": 7}, PerItem: map[string]float64{}}
		for item := range got.PerItem {
			want.PerItem[item] = 7
		}
		if string(mustMarshal(t, got)) != string(mustMarshal(t, want)) || len(got.PerItem) != 4 {
			t.Errorf("%s: %s\nwant %s", name, mustMarshal(t, got), mustMarshal(t, want))
		}
	}
	for _, v := range outputs(t, e, g, "stage.overlap_rating.each") {
		var o ideabench.OverlapOutput
		if err := json.Unmarshal(v.Result.Output, &o); err != nil {
			t.Fatal(err)
		}
		if string(v.Result.Output) != `{"dropped":true}` && (o.Rating != 7 || o.Explanation != "Both study the same mechanism." || o.IdeaIndex != v.Slot) {
			t.Errorf("%s slot %d: %s", v.Item, v.Slot, v.Result.Output)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
