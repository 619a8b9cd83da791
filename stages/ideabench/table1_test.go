package ideabench_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// The scripted Table 1: two generators x low/high on four targets
// (testdata/table1), judged by a scripted judge on the fake OpenAI server,
// so every cell is worked by hand below.
//
// Targets: t1 and t2 have the abstract "alpha beta gamma delta", t3 "alpha
// beta gamma delta epsilon"; their ideas have 3, 3 and 5 words. t1's three
// references all pass the filter (low = high), t2 has 4 good and 2 cited
// once (low 4, high 6), t3 3 good and a Review (low 3, high 4), t4 one
// reference (dropped in both scenarios: min_references = 3).
//
// Generators (one request for n = 3 ideas, the same in both scenarios):
//
//	gen-a: "alpha beta gamma delta", "alpha beta", "omega"
//	gen-b: t1 "alpha beta", t2 "alpha", t3 "alpha beta gamma"; then "omega", "psi"
//
// ROUGE-L F1 of the best idea (P = LCS/|idea|, R = LCS/|abstract|):
//
//	gen-a: t1 1, t2 1, t3 2*(1*0.8)/1.8 = 8/9
//	gen-b: t1 2*(1*0.5)/1.5 = 2/3, t2 2*(1*0.25)/1.25 = 0.4, t3 2*(1*0.6)/1.6 = 0.75
//
// p80 (linear, numpy): sorted v, position 0.8*(3-1) = 1.6, v[1] + 0.6*(v[2]-v[1]):
// gen-a [8/9, 1, 1] -> 1; gen-b [0.4, 2/3, 0.75] -> 2/3 + 0.6*(0.75-2/3) = 0.71667.
//
// Overlap judge: rating = 2 x the words of the rated (most similar) idea:
// gen-a 8, 8, 8 -> p80 8; gen-b 4, 2, 6 -> sorted [2, 4, 6], p80 4 + 0.6*2 = 5.2.
//
// Ranking judge: novelty ranks longer texts first, feasibility shorter first
// (ties between ideas in letter order; no idea ties a target in length):
//
//	novelty     gen-a: t1 rank 2 of 4 (4 > 3 > 2 > 1), t2 rank 2, t3 rank 1 -> (1/3 + 1/3 + 0)/3 = 2/9
//	            gen-b: the target is longest everywhere -> 0
//	feasibility gen-a: t1 rank 3 (1 < 2 < 3 < 4), t2 rank 3, t3 rank 4 -> (2/3 + 2/3 + 1)/3 = 7/9
//	            gen-b: the target is longest -> rank 4 -> 1
const table1HCL = `
variable "novelty" { default = "new ideas" }
variable "scenarios" { default = ["low", "high"] }
provider "p" {
  kind        = "openai"
  base_url    = "%s"
  api_key_env = "TABLE1_API_KEY"
}
model "gen_a" {
  provider = provider.p
  name     = "gen-a"
}
model "gen_b" {
  provider = provider.p
  name     = "gen-b"
}
model "judge" {
  provider    = provider.p
  name        = "judge"
  temperature = 0
}
dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}
quality "novelty" { definition = var.novelty }
quality "feasibility" { definition = "easy to test" }
locals {
  scenarios = { for k, v in { low = { mode = "filtered", limit = 5 }, high = { mode = "all", limit = 0 } } : k => v if contains(var.scenarios, k) }
  cells     = { for p in setproduct(["gen-a", "gen-b"], keys(local.scenarios)) : "${p[0]} ${p[1]}" => { model = p[0], scenario = p[1] } }
}
stage "filter_references" "s" {
  for_each = local.scenarios
  dataset  = dataset.targets
  mode     = each.value.mode
  limit    = each.value.limit
}
stage "generate_ideas" "t" {
  for_each   = local.cells
  model      = each.value.model == "gen-a" ? model.gen_a : model.gen_b
  references = stage.filter_references.s[each.value.scenario]
  n          = 3
  mode       = "batch"
}
stage "similarity" "rouge" { ideas = stage.generate_ideas.t }
stage "similarity_score" "semantic_similarity" {
  similarity = stage.similarity.rouge
  summary    = "p80"
}
stage "rank_ideas" "novelty" {
  ideas   = stage.generate_ideas.t
  judge   = model.judge
  quality = quality.novelty
}
stage "rank_ideas" "feasibility" {
  ideas   = stage.generate_ideas.t
  judge   = model.judge
  quality = quality.feasibility
}
stage "insight_score" "novelty" { ranks = stage.rank_ideas.novelty }
stage "insight_score" "feasibility" { ranks = stage.rank_ideas.feasibility }
report "table1" {
  rows          = stage.generate_ideas.t
  columns       = [%s]
  row_dims      = ["model", "scenario"]
  key_separator = " "
  row_order     = ["low", "high"]
  labels = {
    model                                       = "Model"
    scenario                                    = "Resource"
    "similarity_score.semantic_similarity"      = "Semantic Similarity"
    "overlap_score.idea_overlap"                = "Idea Overlap"
    "insight_score.novelty"                     = "Novelty Insight Score"
    "insight_score.feasibility"                 = "Feasibility Insight Score"
  }
  better  = { "insight_score.novelty" = "higher", "insight_score.feasibility" = "higher" }
  formats = ["csv", "markdown"]
}
`

const table1Columns = "stage.similarity_score.semantic_similarity, stage.insight_score.novelty, stage.insight_score.feasibility"

const table1Overlap = `
stage "best_idea" "b" {
  ideas      = stage.generate_ideas.t
  similarity = stage.similarity.rouge
}
stage "overlap_rating" "o" {
  ideas      = stage.generate_ideas.t
  judge      = model.judge
  similarity = stage.best_idea.b
}
stage "overlap_score" "idea_overlap" {
  ratings = stage.overlap_rating.o
  summary = "p80"
}
`

var (
	hypothesisRE = regexp.MustCompile(`(?m)^Hypothesis ([A-Z]):\n(.*)$`)
	overlapIdea  = regexp.MustCompile(`Hypothesis: (.*)\n\nAbstract:`)
)

// table1Responder is the scripted generators and judge.
func table1Responder(req *openai.ChatCompletionRequest) string {
	user := req.Messages[len(req.Messages)-1].Content
	switch {
	case req.Model == "gen-a":
		return `["alpha beta gamma delta", "alpha beta", "omega"]`
	case req.Model == "gen-b":
		first := map[string]string{"t1": "alpha beta", "t2": "alpha", "t3": "alpha beta gamma"}
		for t, idea := range first {
			if strings.Contains(user, t+"-ref") {
				return fmt.Sprintf(`[%q, "omega", "psi"]`, idea)
			}
		}
	case strings.Contains(user, "rate the overlap"):
		m := overlapIdea.FindStringSubmatch(user)
		if m == nil {
			return "no idea found"
		}
		return fmt.Sprintf("Rating: %d\nExplanation: %d words.", 2*len(strings.Fields(m[1])), len(strings.Fields(m[1])))
	case strings.Contains(user, "Please rank"):
		type cand struct {
			letter string
			words  int
		}
		var cs []cand
		for _, m := range hypothesisRE.FindAllStringSubmatch(user, -1) {
			cs = append(cs, cand{m[1], len(strings.Fields(m[2]))})
		}
		// A novelty judge reads its definition: "never seen" ideas are the
		// short ones.
		longFirst := strings.Contains(user, "novelty") && !strings.Contains(user, "never seen")
		sort.SliceStable(cs, func(i, j int) bool {
			if longFirst {
				return cs[i].words > cs[j].words
			}
			return cs[i].words < cs[j].words
		})
		var order []string
		for _, c := range cs {
			order = append(order, c.letter)
		}
		return strings.Join(order, " > ")
	}
	return "unscripted request"
}

type table1 struct {
	t   *testing.T
	dir string
	srv *llmtest.Server
	e   *engine.Engine
}

func newTable1(t *testing.T) *table1 {
	srv := llmtest.New(llmtest.WithResponder(table1Responder))
	t.Cleanup(srv.Close)
	t.Setenv("TABLE1_API_KEY", "sk-table1-test")
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/table1/targets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "targets.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return &table1{t: t, dir: dir, srv: srv, e: &engine.Engine{Store: cache.NewMemory()}}
}

// run writes the experiment (columns, extra stages) and runs it with vars.
func (tb *table1) run(columns, extra string, vars ...string) (*engine.Graph, *engine.Summary, string) {
	t := tb.t
	t.Helper()
	hcl := fmt.Sprintf(table1HCL, tb.srv.URL, columns) + extra
	if err := os.WriteFile(filepath.Join(tb.dir, "exp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, diags := config.Load(tb.dir, config.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	tb.e.Exec = engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())
	out := t.TempDir()
	sum, err := tb.e.Run(context.Background(), g, engine.RunOptions{ReportDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %+v", sum.Failures)
	}
	csv, _ := os.ReadFile(filepath.Join(out, "table1.csv"))
	md, _ := os.ReadFile(filepath.Join(out, "table1.md"))
	csv = append(csv, md...)
	return g, sum, string(csv)
}

func TestTable1ScriptedCells(t *testing.T) {
	tb := newTable1(t)
	g, sum, csv := tb.run(table1Columns+", stage.overlap_score.idea_overlap", table1Overlap)
	if sum.LLMCalls != tb.srv.Count() {
		t.Errorf("%d calls counted, the server saw %d", sum.LLMCalls, tb.srv.Count())
	}
	// Generation: 2 models x 3 kept targets, t1's request shared by low and
	// high: 2 x (3 + 2) = 10. The scripted generators answer alike in both
	// scenarios, so a target's rankings and overlap rating in high are the
	// same requests on the same inputs as in low, sent once: rankings
	// 2 models x 3 targets x 2 qualities = 12, overlap 2 x 3 = 6. In all 28.
	if sum.LLMCalls != 28 {
		t.Errorf("%d model calls, want 28", sum.LLMCalls)
	}
	type cell struct{ sim, overlap, novelty, feasibility float64 }
	want := map[string]cell{
		"gen-a": {1, 8, 2.0 / 9, 7.0 / 9},
		"gen-b": {2.0/3 + 0.6*(0.75-2.0/3), 5.2, 0, 1},
	}
	for _, row := range []string{"gen-a low", "gen-a high", "gen-b low", "gen-b high"} {
		w := want[strings.Fields(row)[0]]
		for addr, v := range map[string]float64{
			"stage.similarity_score.semantic_similarity": w.sim, "stage.overlap_score.idea_overlap": w.overlap,
			"stage.insight_score.novelty": w.novelty, "stage.insight_score.feasibility": w.feasibility,
		} {
			s := score(t, tb.e, g, fmt.Sprintf("%s[%q]", addr, row))
			if math.Abs(s.Value-v) > 1e-12 || s.Count != 3 || s.Extra["dropped"] != 1 || s.Missing != 0 {
				t.Errorf("%s %s: %+v, want value %v over 3 targets, 1 dropped", row, addr, s, v)
			}
		}
	}
	// The means and medians beside the p80s.
	for row, w := range map[string][2]float64{"gen-a low": {26.0 / 27, 1}, "gen-b high": {(2.0/3 + 0.4 + 0.75) / 3, 2.0 / 3}} {
		s := score(t, tb.e, g, fmt.Sprintf("stage.similarity_score.semantic_similarity[%q]", row))
		if math.Abs(s.Extra["mean"]-w[0]) > 1e-12 || math.Abs(s.Extra["median"]-w[1]) > 1e-12 {
			t.Errorf("%s similarity: mean %v median %v, want %v %v", row, s.Extra["mean"], s.Extra["median"], w[0], w[1])
		}
	}
	if s := score(t, tb.e, g, `stage.overlap_score.idea_overlap["gen-b low"]`); s.Extra["mean"] != 4 || s.Extra["median"] != 4 {
		t.Errorf("gen-b overlap: %+v", s)
	}
	// The CSV has every cell at full precision with its counts and, by
	// default, the 95% bootstrap interval over the 3 targets (seed 0); the
	// Markdown has the paper's column names, Model and Resource as two
	// columns, low before high, and the best Insight Scores in bold.
	for _, line := range []string{
		"gen-a,low,1,0.888888888888889,1,3,0,1,false,0.222222222222222,0,0.333333333333333,3,0,1,false,0.777777777777778,0.666666666666667,1,3,0,1,false,8,8,8,3,0,1,false,false\n",
		"gen-b,high,0.716666666666667,0.4,0.75,3,0,1,false,0,0,0,3,0,1,false,1,1,1,3,0,1,false,5.2,2,6,3,0,1,false,false\n",
		"| Model | Resource | Semantic Similarity | Novelty Insight Score ↑ | Feasibility Insight Score ↑ | Idea Overlap |\n",
		"| gen-a | low | 1.000 [0.89, 1.00] | **0.222** [0.00, 0.33] | 0.778 [0.67, 1.00] | 8.000 [8.00, 8.00] |\n| | high | 1.000 [0.89, 1.00] | **0.222** [0.00, 0.33] | 0.778 [0.67, 1.00] | 8.000 [8.00, 8.00] |\n",
		"| gen-b | low | 0.717 [0.40, 0.75] | 0.000 [0.00, 0.00] | **1.000** [1.00, 1.00] | 5.200 [2.00, 6.00] |\n| | high | 0.717 [0.40, 0.75] | 0.000 [0.00, 0.00] | **1.000** [1.00, 1.00] | 5.200 [2.00, 6.00] |\n",
		"- Idea Overlap: each value is over 3 items; 1 more item was dropped before scoring.\n",
		"- In brackets: 95% bootstrap intervals [low, high] over the items (1000 resamples, percentile method, seed 0).\n",
	} {
		if !strings.Contains(csv, line) {
			t.Errorf("table1.csv lacks %q:\n%s", line, csv)
		}
	}
}

// Changing one quality's definition re-runs that indicator's rankings and
// scores (and the report) only; the scripted judge then ranks short ideas
// first, so gen-a's novelty becomes its feasibility, 7/9.
func TestTable1QualityChangeReRunsItsRankings(t *testing.T) {
	tb := newTable1(t)
	tb.run(table1Columns, "")
	before := tb.srv.Count()
	g, sum, _ := tb.run(table1Columns, "", "novelty=ideas never seen before")
	// 2 models x 3 kept targets: low and high share their requests.
	if got := tb.srv.Count() - before; got != 6 || sum.LLMCalls != 6 {
		t.Errorf("%d calls (%d counted), want 6 novelty rankings", got, sum.LLMCalls)
	}
	if s := score(t, tb.e, g, `stage.insight_score.novelty["gen-a high"]`); math.Abs(s.Value-7.0/9) > 1e-12 {
		t.Errorf("gen-a novelty after the change: %v, want 7/9", s.Value)
	}
	for addr, st := range sum.Stages {
		want := 0
		switch {
		case strings.HasPrefix(addr, "stage.rank_ideas.novelty["):
			want = 3 // the dropped target's node stays cached
		case strings.HasPrefix(addr, "stage.insight_score.novelty["), addr == "report.table1":
			want = 1
		}
		if st.Ran != want {
			t.Errorf("%s: %d ran, want %d", addr, st.Ran, want)
		}
	}
}

// Switching low -> high asks generation only for the targets whose
// reference set changed (t2 and t3; t1's is the same, t4 is dropped).
func TestTable1LowToHighReRunsChangedTargets(t *testing.T) {
	tb := newTable1(t)
	_, sum, _ := tb.run(table1Columns, "", `scenarios=["low"]`)
	if sum.LLMCalls != 2*3+2*3*2 {
		t.Fatalf("low: %d calls, want 18", sum.LLMCalls)
	}
	_, sum, _ = tb.run(table1Columns, "", `scenarios=["high"]`)
	gen := 0
	for addr, st := range sum.Stages {
		if strings.HasPrefix(addr, "stage.generate_ideas.") {
			gen += st.LLMCalls
			if st.Ran != 2 || st.Cached != 2 {
				t.Errorf("%s: %d ran, %d cached; want 2 and 2 (t1 and dropped t4 cached)", addr, st.Ran, st.Cached)
			}
		}
	}
	// 2 generations per model, whose answers equal low's (the scripted
	// generators ignore the references), so every ranking is cached: the
	// new answers leave its inputs unchanged (early cutoff).
	if gen != 4 || sum.LLMCalls != 4 {
		t.Errorf("high: %d generation calls of %d; want 4 of 4", gen, sum.LLMCalls)
	}
}

// Adding the overlap stages runs their nodes and nothing that existed.
func TestTable1AddingOverlapReRunsNothing(t *testing.T) {
	tb := newTable1(t)
	_, first, _ := tb.run(table1Columns, "")
	_, sum, _ := tb.run(table1Columns, table1Overlap)
	if sum.Nodes.Cached != first.Nodes.Total {
		t.Errorf("%d of the %d existing nodes cached", sum.Nodes.Cached, first.Nodes.Total)
	}
	// New: best_idea and overlap_rating 4 x 4 each, overlap_score 4;
	// calls: 2 models x 3 kept targets (low and high rate the same ideas).
	if sum.Nodes.Ran != 4*4+4*4+4 || sum.LLMCalls != 6 {
		t.Errorf("%d nodes ran, %d calls; want 36 and 6", sum.Nodes.Ran, sum.LLMCalls)
	}
}
