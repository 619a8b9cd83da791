package liveideabench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/judging"
	"github.com/ideaflow/ideaflow/stages/liveideabench"
)

// pipeHCL is a small LiveIdeaBench on the mock provider: generators and
// judges as named, K keywords, 2 ideas each, 2 judges per idea, one
// fluency judge per pair. %[1]s: generator refs, %[2]s: panel refs,
// %[3]s: extra model blocks.
const pipeHCL = `
provider "mock" {
  kind = "mock"
  seed = 3
}
model "gen_a" {
  provider = provider.mock
  name     = "openai/gpt-4o-mini"
  family   = "openai"
}
model "gen_b" {
  provider = provider.mock
  name     = "qwen/qwq-32b-preview"
  family   = "qwen"
}
model "gen_c" {
  provider = provider.mock
  name     = "x-ai/grok-2-1212"
  family   = "xai"
}
model "j_openai" {
  provider = provider.mock
  name     = "openai/gpt-4o"
  family   = "openai"
}
model "j_anthropic" {
  provider = provider.mock
  name     = "anthropic/claude-3.5-sonnet"
  family   = "anthropic"
}
model "j_google" {
  provider = provider.mock
  name     = "google/gemini-pro-1.5"
  family   = "google"
}
model "j_meta" {
  provider = provider.mock
  name     = "meta-llama/llama-3.1-405b-instruct"
  family   = "meta"
}
model "j_mistral" {
  provider = provider.mock
  name     = "mistralai/mistral-large-2411"
  family   = "mistral"
}
dataset "kw" {
  format = "jsonl"
  path   = "kw.jsonl"
}
stage "test_keyword_ideas" "gen" {
  for_each          = { for m in [%[1]s] : m.name => m }
  keywords          = dataset.kw
  model             = each.value
  ideas_per_keyword = 2
}
stage "judge_panel" "main" {
  ideas           = stage.test_keyword_ideas.gen
  panel           = [%[2]s]
  judges_per_idea = 2
  seed            = 1
}
stage "fluency" "main" {
  ideas = stage.test_keyword_ideas.gen
  panel = [%[2]s]
  seed  = 1
}
stage "liveideabench_score" "average" {
  ideas      = stage.test_keyword_ideas.gen
  judgements = stage.judge_panel.main
  fluency    = stage.fluency.main
}
stage "liveideabench_score" "originality" {
  ideas      = stage.test_keyword_ideas.gen
  judgements = stage.judge_panel.main
  fluency    = stage.fluency.main
  metric     = "originality"
}
stage "leaderboard" "main" {
  ideas      = [stage.test_keyword_ideas.gen]
  judgements = [stage.judge_panel.main]
  fluency    = [stage.fluency.main]
}
report "table" {
  rows    = stage.test_keyword_ideas.gen
  columns = [stage.liveideabench_score.average, stage.liveideabench_score.originality]
  formats = ["csv"]
}
`

var domains = []string{"Physics", "Biology", "Chemistry"}

func writePipe(t *testing.T, dir string, keywords int, gens, panel string) {
	t.Helper()
	var kw strings.Builder
	for i := 0; i < keywords; i++ {
		fmt.Fprintf(&kw, `{"id": "k%02d", "keyword": "keyword number %d", "domain": %q}`+"\n", i, i, domains[i%len(domains)])
	}
	for name, text := range map[string]string{"exp.hcl": fmt.Sprintf(pipeHCL, gens, panel), "kw.jsonl": kw.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runPipe(t *testing.T, e *engine.Engine, dir string) (*engine.Graph, *engine.Summary) {
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

const (
	twoGens   = "model.gen_a, model.gen_b"
	fourJudge = "model.j_openai, model.j_anthropic, model.j_google, model.j_meta"
)

// ran sums the nodes that ran per stage block (instances together).
func ran(sum *engine.Summary) map[string]int {
	out := map[string]int{}
	for addr, s := range sum.Stages {
		if i := strings.IndexByte(addr, '['); i >= 0 {
			addr = addr[:i]
		}
		if s.Ran > 0 {
			out[addr] += s.Ran
		}
	}
	return out
}

func total(sum *engine.Summary, block string) int {
	n := 0
	for addr, s := range sum.Stages {
		if addr == block || strings.HasPrefix(addr, block+"[") {
			n += s.Total
		}
	}
	return n
}

func sameCounts(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func TestPipelineNodesAndReruns(t *testing.T) {
	dir := t.TempDir()
	writePipe(t, dir, 6, twoGens, fourJudge)
	e := &engine.Engine{Store: cache.NewMemory()}
	g, sum := runPipe(t, e, dir)

	// 6 keywords x 2 models x 2 ideas; 2 judgements each; one pair per
	// (keyword, model), one judge each; two score columns per model.
	for block, want := range map[string]int{
		"stage.test_keyword_ideas.gen": 24, "stage.judge_panel.main": 48, "stage.fluency.main": 12,
		"stage.liveideabench_score.average": 2, "stage.liveideabench_score.originality": 2, "stage.leaderboard.main": 1,
	} {
		if got := total(sum, block); got != want {
			t.Errorf("%s: %d nodes, want %d", block, got, want)
		}
	}
	if sum.LLMCalls != 24+48+12 {
		t.Errorf("%d calls, want 84", sum.LLMCalls)
	}
	// Every judgement is complete, with the authors' read of the same
	// answer beside it; the judges of gen_a (family openai) include
	// openai/gpt-4o, as the authors exclude only the generator's own name.
	sameFamily := 0
	for _, v := range outputsOf(t, e, g, `stage.judge_panel.main["openai/gpt-4o-mini"]`) {
		var j liveideabench.Judgement
		if err := json.Unmarshal(v.Result.Output, &j); err != nil {
			t.Fatal(err)
		}
		if j.Judge == "openai/gpt-4o-mini" || len(j.Scores) != 3 || j.Reasoning == "" || j.AuthorsParse == nil || !strings.Contains(j.AuthorsParse.Parser, "6fc8285") {
			t.Errorf("%s: %+v", v.Address, j)
		}
		if j.Judge == "openai/gpt-4o" {
			sameFamily++
		}
	}
	if sameFamily == 0 {
		t.Error("openai/gpt-4o never judged gen_a: the draw excludes more than the generator")
	}
	lb := leaderboardOf(t, e, g)
	if len(lb.Models) != 2 || lb.Models[0].Judgements != 24 || lb.Models[0].Pairs != 6 || len(lb.Domains) != 3 {
		t.Errorf("leaderboard: %s", mustJSON(t, lb))
	}

	// A re-run runs nothing.
	_, sum = runPipe(t, e, dir)
	if sum.Nodes.Ran != 0 || sum.LLMCalls != 0 {
		t.Errorf("re-run: %+v, %d calls", sum.Nodes, sum.LLMCalls)
	}

	// One more keyword: its 4 ideas, 8 judgements, 2 pairs, and the
	// aggregates above them.
	writePipe(t, dir, 7, twoGens, fourJudge)
	_, sum = runPipe(t, e, dir)
	sameCounts(t, "one more keyword", ran(sum), map[string]int{
		"stage.test_keyword_ideas.gen": 4, "stage.judge_panel.main": 8, "stage.fluency.main": 2,
		"stage.liveideabench_score.average": 2, "stage.liveideabench_score.originality": 2, "stage.leaderboard.main": 1, "report.table": 1,
	})
	if sum.LLMCalls != 14 {
		t.Errorf("one more keyword: %d calls, want 14", sum.LLMCalls)
	}

	// One more model: its ideas, judgements and pairs, its own score
	// columns, the leaderboard and the report; the other models' columns
	// stay cached.
	writePipe(t, dir, 7, twoGens+", model.gen_c", fourJudge)
	_, sum = runPipe(t, e, dir)
	sameCounts(t, "one more model", ran(sum), map[string]int{
		"stage.test_keyword_ideas.gen": 14, "stage.judge_panel.main": 28, "stage.fluency.main": 7,
		"stage.liveideabench_score.average": 1, "stage.liveideabench_score.originality": 1, "stage.leaderboard.main": 1, "report.table": 1,
	})

	// One more judge: only the judgements whose draw now picks it run.
	newJudge := &stages.Model{Name: "mistralai/mistral-large-2411", Family: "mistral"}
	panel := []*stages.Model{{Name: "openai/gpt-4o", Family: "openai"}, {Name: "anthropic/claude-3.5-sonnet", Family: "anthropic"},
		{Name: "google/gemini-pro-1.5", Family: "google"}, {Name: "meta-llama/llama-3.1-405b-instruct", Family: "meta"}, newJudge}
	gens := []*stages.Model{{Name: "openai/gpt-4o-mini", Family: "openai"}, {Name: "qwen/qwq-32b-preview", Family: "qwen"}, {Name: "x-ai/grok-2-1212", Family: "xai"}}
	judgements, pairs, models := 0, 0, map[string]bool{}
	for _, gen := range gens {
		eligible := judging.Eligible(panel, gen, judging.ExcludeModel)
		for k := 0; k < 7; k++ {
			item := fmt.Sprintf("k%02d", k)
			for s := 0; s < 2; s++ {
				if picks(judging.Draw(1, liveideabench.DrawKey(false, gen, item, strconv.Itoa(s)), eligible, 2), newJudge) {
					judgements++
					models[gen.Name] = true
				}
			}
			if picks(judging.Draw(1, liveideabench.DrawKey(false, gen, item, "pair", "0"), eligible, 1), newJudge) {
				pairs++
				models[gen.Name] = true
			}
		}
	}
	if judgements == 0 || pairs == 0 {
		t.Fatalf("the new judge is drawn %d and %d times; pick a seed that draws it", judgements, pairs)
	}
	writePipe(t, dir, 7, twoGens+", model.gen_c", fourJudge+", model.j_mistral")
	_, sum = runPipe(t, e, dir)
	sameCounts(t, "one more judge", ran(sum), map[string]int{
		"stage.judge_panel.main": judgements, "stage.fluency.main": pairs,
		"stage.liveideabench_score.average": len(models), "stage.liveideabench_score.originality": len(models), "stage.leaderboard.main": 1, "report.table": 1,
	})
	if sum.LLMCalls != judgements+pairs {
		t.Errorf("one more judge: %d calls, want %d + %d", sum.LLMCalls, judgements, pairs)
	}
	t.Logf("the fifth judge takes %d of 84 judgements and %d of 21 pair judgements", judgements, pairs)
}

func picks(draw []*stages.Model, m *stages.Model) bool {
	for _, d := range draw {
		if d.Name == m.Name {
			return true
		}
	}
	return false
}

func outputsOf(t *testing.T, e *engine.Engine, g *engine.Graph, address string) []engine.NodeView {
	t.Helper()
	views, err := e.Inspect(e.Plan(g), address, engine.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return views
}

func leaderboardOf(t *testing.T, e *engine.Engine, g *engine.Graph) *liveideabench.Leaderboard {
	t.Helper()
	v := outputsOf(t, e, g, "stage.leaderboard.main")
	if len(v) != 1 {
		t.Fatalf("leaderboard: %d nodes", len(v))
	}
	var f stages.Files
	if err := json.Unmarshal(v[0].Result.Output, &f); err != nil {
		t.Fatal(err)
	}
	var lb liveideabench.Leaderboard
	if err := json.Unmarshal([]byte(f.Files["leaderboard.main.json"]), &lb); err != nil {
		t.Fatalf("%v: %v", err, f.Files)
	}
	return &lb
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A panel too small once the generator's family is out (exclude =
// "family") is a validate-time error at the panel attribute.
func TestPanelTooSmallAtAttribute(t *testing.T) {
	dir := t.TempDir()
	writePipe(t, dir, 2, twoGens, "model.j_openai, model.j_anthropic")
	writeFile(t, dir, "exp.hcl", strings.Replace(fmt.Sprintf(pipeHCL, twoGens, "model.j_openai, model.j_anthropic"), "  judges_per_idea = 2\n", "  judges_per_idea = 2\n  exclude = \"family\"\n", 1))
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	_, diags = engine.Build(exp)
	if !diags.HasErrors() {
		t.Fatal("no error for a panel of 2 with judges_per_idea = 2 and an openai generator")
	}
	var found bool
	for _, d := range diags {
		if d.Subject != nil && strings.Contains(d.Detail+d.Summary, "panel has 1 judge(s) for the ideas of openai/gpt-4o-mini, fewer than judges_per_idea = 2") {
			found = true
			line := strings.Split(fmt.Sprintf(pipeHCL, twoGens, "model.j_openai, model.j_anthropic"), "\n")[d.Subject.Start.Line-1]
			if !strings.Contains(line, "panel") || !strings.HasSuffix(d.Subject.Filename, "exp.hcl") {
				t.Errorf("error at %s line %q, want the panel attribute", d.Subject, line)
			}
		}
	}
	if !found {
		t.Fatalf("diags: %s", diags.Error())
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
