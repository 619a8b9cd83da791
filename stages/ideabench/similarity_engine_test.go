package ideabench_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	_ "github.com/ideaflow/ideaflow/stages/all"
	"github.com/ideaflow/ideaflow/stages/ideabench"
)

// The quickstart's five targets (one dropped by the filter), n = 3
// independent ideas each, scored every way similarity can.
const similarityHCL = `
provider "mock" {
  kind = "mock"
  seed = 7
}
model "gen" {
  provider    = provider.mock
  name        = "mock-generator-a"
  temperature = 0.8
}
model "emb" {
  provider = provider.mock
  name     = "mock-embedder"
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
stage "generate_ideas" "main" {
  model      = model.gen
  references = stage.filter_references.low
  n          = 3
}
stage "similarity" "rouge" {
  ideas = stage.generate_ideas.main
}
stage "similarity" "bert" {
  ideas  = stage.generate_ideas.main
  method = "bertscore"
  model  = model.emb
  layer  = 24 # mock-embedder is in no bert_score table
}
stage "similarity" "emb" {
  ideas  = stage.generate_ideas.main
  method = "embedding"
  model  = model.emb
}
stage "similarity" "emb_upper" {
  ideas       = stage.generate_ideas.main
  method      = "embedding"
  model       = model.emb
  upper_limit = true
}
stage "similarity_score" "rouge" { similarity = stage.similarity.rouge }
stage "similarity_score" "bert" { similarity = stage.similarity.bert }
stage "similarity_score" "bert_idf" {
  similarity = stage.similarity.bert
  idf        = true
  baseline   = 0.25
}
stage "similarity_score" "emb" { similarity = stage.similarity.emb }
stage "similarity_score" "emb_upper" { similarity = stage.similarity.emb_upper }
report "sim" {
  rows    = stage.generate_ideas.main
  columns = [stage.similarity_score.rouge, stage.similarity_score.bert, stage.similarity_score.bert_idf, stage.similarity_score.emb, stage.similarity_score.emb_upper]
  formats = ["csv"]
}
`

func buildSimilarity(t *testing.T, dir string) *engine.Graph {
	t.Helper()
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return g
}

// outputs returns the cached outputs of the nodes at address, in order.
func outputs(t *testing.T, e *engine.Engine, g *engine.Graph, address string) []engine.NodeView {
	t.Helper()
	views, err := e.Inspect(e.Plan(g), address, engine.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return views
}

func TestSimilarityThroughTheEngine(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../experiments/quickstart/data/targets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"exp.hcl": []byte(similarityHCL), "targets.jsonl": data} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := buildSimilarity(t, dir)
	e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Two quickstart records have no idea: upper_limit cannot compare them.
	if len(sum.Failures) != 2 || sum.Failures[0].Address != "stage.similarity.emb_upper/qs-codegen/idea" || sum.Failures[1].Address != "stage.similarity.emb_upper/qs-reef/idea" {
		t.Fatalf("failures: %+v", sum.Failures)
	}

	// Node counts: rouge_l one compute node per target, bertscore one
	// token_matching node; embedding the reference, one node per
	// generate_ideas node and the scores node (5 x (1+3+1)); upper_limit
	// the abstract, the idea and the scores node (5 x 3); one aggregate per
	// score.
	for addr, want := range map[string]int{
		"stage.similarity.rouge": 5, "stage.similarity.bert": 5, "stage.similarity.emb": 25,
		"stage.similarity.emb_upper": 15, "stage.similarity_score.bert_idf": 1,
	} {
		if got := sum.Stages[addr].Total; got != want {
			t.Errorf("%s: %d nodes, want %d", addr, got, want)
		}
	}

	// Service calls, one per distinct request: bertscore one matching per
	// kept target; embedding the five references and the twelve ideas of
	// the four kept targets (the dropped target's ideas nodes embed
	// nothing); emb_upper's abstracts are emb's references again, so it
	// adds only the three target ideas there are.
	ideas := outputs(t, e, g, "stage.generate_ideas.main")
	distinct := map[string]bool{}
	for _, v := range ideas {
		var o ideabench.IdeasOutput
		if err := json.Unmarshal(v.Result.Output, &o); err != nil {
			t.Fatal(err)
		}
		if !o.Dropped {
			distinct[string(v.Result.Output)] = true
		}
	}
	if len(distinct) != 12 {
		t.Fatalf("%d distinct idea answers, want 12 (the counts below assume no duplicates)", len(distinct))
	}
	if got := sum.Stages["stage.similarity.rouge"].ServiceCalls; got != 0 {
		t.Errorf("rouge_l made %d service calls", got)
	}
	// (A shared call counts for whichever instance sent it first.)
	calls := func(addr string) int { return sum.Stages[addr].ServiceCalls }
	if calls("stage.similarity.bert") != 4 || calls("stage.similarity.emb")+calls("stage.similarity.emb_upper") != 17+3 {
		t.Errorf("service calls: bert %d, emb %d, emb_upper %d; want 4 and 17+3 together", calls("stage.similarity.bert"), calls("stage.similarity.emb"), calls("stage.similarity.emb_upper"))
	}
	if sum.ServiceCalls != 4+17+3 {
		t.Errorf("%d service calls in all, want 24 (emb_upper shares emb's abstracts)", sum.ServiceCalls)
	}

	// Every score counts the dropped target and scores the four others;
	// upper_limit drops nothing and misses the two targets without an idea.
	for _, name := range []string{"rouge", "bert", "bert_idf", "emb", "emb_upper"} {
		v := outputs(t, e, g, "stage.similarity_score."+name)
		var s stages.Score
		if err := json.Unmarshal(v[0].Result.Output, &s); err != nil {
			t.Fatal(err)
		}
		wantDropped, wantCount, wantMissing := 1.0, 4, 0
		if name == "emb_upper" {
			wantDropped, wantCount, wantMissing = 0, 3, 2
		}
		if s.Count != wantCount || s.Missing != wantMissing || s.Extra["dropped"] != wantDropped || len(s.PerItem) != wantCount {
			t.Errorf("%s: %+v", name, s)
		}
		mean := 0.0
		for _, b := range s.PerItem {
			mean += b / float64(len(s.PerItem))
		}
		if math.Abs(s.Value-mean) > 1e-12 || s.Value > 1 || s.Extra["p80"] < s.Extra["median"] {
			t.Errorf("%s: value %v (mean of per-item best %v), median %v, p80 %v", name, s.Value, mean, s.Extra["median"], s.Extra["p80"])
		}
	}

	// A re-run sends nothing.
	sum, err = e.Run(context.Background(), buildSimilarity(t, dir), engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ServiceCalls != 0 || sum.LLMCalls != 0 || sum.Nodes.Ran != 0 || sum.Nodes.Failed != 2 {
		t.Errorf("re-run: %d service calls, %d model calls, nodes %+v", sum.ServiceCalls, sum.LLMCalls, sum.Nodes)
	}

	// Scoring choices are the aggregate's alone: a new idf baseline and a
	// switch to recall re-run bert_idf's one node and the report, no
	// embedding and no scores node.
	changed := strings.Replace(similarityHCL, "  idf        = true\n  baseline   = 0.25\n", "  idf        = true\n  baseline   = 0.5\n  score      = \"recall\"\n", 1)
	if changed == similarityHCL {
		t.Fatal("the experiment text to change was not found")
	}
	if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err = e.Run(context.Background(), buildSimilarity(t, dir), engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ServiceCalls != 0 || sum.Nodes.Ran != 2 || sum.Stages["stage.similarity_score.bert_idf"].Ran != 1 || sum.Stages["stage.similarity.bert"].Ran != 0 {
		t.Errorf("scoring change: %d service calls, nodes %+v, bert_idf %+v", sum.ServiceCalls, sum.Nodes, sum.Stages["stage.similarity_score.bert_idf"])
	}
}
