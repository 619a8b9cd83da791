package liveideabench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/judging"
	"github.com/ideaflow/ideaflow/stages/liveideabench"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// The ablation on scripted judges: the same ideas and judges under the
// authors' protocol (the stage defaults, parse = "authors") and under
// ideaflow's choices (the debiased files' settings), through the engine
// and the real client. The judges are scripted so that each of ideaflow's
// choices meets what it guards against:
//
//   - openai/gpt-4o favours its own family: originality 9 for an idea of
//     openai/gpt-4o-mini, 5 for any other (exclude = "family" keeps it out)
//   - google/gemini-pro-1.5 writes its scores as prose ("Originality:
//     5/10"), which the authors' parser reads nothing from (parse)
//   - every fluency judge but gemini answers "Answer: C", which the
//     authors' parser reads as A (parse)
//   - openai/gpt-4o-mini refuses keyword 0 twice, at length: the authors
//     judge the refusal (scored 1s), drop_refused leaves it out
//
// Every other score is 5 (originality), 6 (feasibility), 7 (clarity).
// The expected numbers are computed here from the draws (judging.Draw on
// the stages' keys) and the scripts; docs/REPRODUCTIONS.md and FIDELITY.md quote the table this logs.
func TestAblationOnScriptedJudges(t *testing.T) {
	const keywords = 12
	gens := []*stages.Model{{Name: "openai/gpt-4o-mini", Family: "openai"}, {Name: "x-ai/grok-2-1212", Family: "xai"}}
	panel := []*stages.Model{{Name: "openai/gpt-4o", Family: "openai"}, {Name: "anthropic/claude-3.5-sonnet", Family: "anthropic"},
		{Name: "google/gemini-pro-1.5", Family: "google"}, {Name: "meta-llama/llama-3.1-405b-instruct", Family: "meta"}}
	refusal := "I'm sorry, but I cannot help with keyword number 0: it could be misused, so I must decline to propose any research on it in any form."
	idea := func(kw, model string) string {
		return fmt.Sprintf("We propose measuring %s with low-cost sensor swarms, open models and a public archive that keeps every reading (%s).", kw, model)
	}
	srv := llmtest.New(llmtest.WithResponder(func(req *openai.ChatCompletionRequest) string {
		first := req.Messages[0].Content
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(first, "Good Scientific Idea\" expert review panel"):
			kw := keywordIn(first)
			if kw == "keyword number 0" && req.Model == gens[0].Name {
				return refusal
			}
			return idea(kw, req.Model)
		case strings.Contains(first, "demanding scientific reviewer"):
			o, f, c := 5, 6, 7
			switch {
			case strings.Contains(last, "I'm sorry"):
				o, f, c = 1, 1, 1
			case req.Model == "openai/gpt-4o" && strings.Contains(last, "(openai/gpt-4o-mini)"):
				o = 9
			}
			if req.Model == "google/gemini-pro-1.5" {
				return fmt.Sprintf("Originality: %d/10\nFeasibility: %d/10\nClarity: %d/10", o, f, c)
			}
			return fmt.Sprintf("Brief analysis.\n\n```json\n{\"originality\": %d, \"feasibility\": %d, \"clarity\": %d}\n```", o, f, c)
		case strings.Contains(first, "Good Scientific Ideas\" Competition"):
			if req.Model == "google/gemini-pro-1.5" {
				return "C"
			}
			return "Answer: C"
		}
		return llmtest.DefaultResponder(req)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("LIB_ABLATION_KEY", "sk-ablation-test")

	type setting struct {
		name                           string
		exclude, draw, parse, dropHCL  string
		ex                             judging.Exclusion
		shared, authorsParse, dropsRef bool
	}
	configs := []setting{
		{name: "authors", exclude: "model", draw: "independent", parse: "authors", dropHCL: "false", ex: judging.ExcludeModel, authorsParse: true},
		{name: "family panel, shared draw", exclude: "family", draw: "shared", parse: "authors", dropHCL: "false", ex: judging.ExcludeFamily, shared: true, authorsParse: true},
		{name: "strict parse", exclude: "model", draw: "independent", parse: "strict", dropHCL: "false", ex: judging.ExcludeModel},
		{name: "refusals dropped", exclude: "model", draw: "independent", parse: "authors", dropHCL: "true", ex: judging.ExcludeModel, authorsParse: true, dropsRef: true},
		{name: "ideaflow (all three)", exclude: "family", draw: "shared", parse: "strict", dropHCL: "true", ex: judging.ExcludeFamily, shared: true, dropsRef: true},
	}
	type result struct{ originality, fluency, flexibility, average float64 }
	got := map[string]map[string]result{}
	for _, cf := range configs {
		dir := t.TempDir()
		var kw strings.Builder
		for i := 0; i < keywords; i++ {
			fmt.Fprintf(&kw, `{"id": "k%02d", "keyword": "keyword number %d"}`+"\n", i, i)
		}
		writeFile(t, dir, "kw.jsonl", kw.String())
		writeFile(t, dir, "exp.hcl", fmt.Sprintf(ablationHCL, srv.URL, cf.dropHCL, cf.exclude, cf.draw, cf.parse))
		exp, diags := config.Load(dir, config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		g, diags := engine.Build(exp)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
		sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Failures) != 0 {
			t.Fatalf("%s: failures %+v", cf.name, sum.Failures)
		}
		lb := leaderboardOf(t, e, g)
		got[cf.name] = map[string]result{}
		for _, m := range lb.Models {
			got[cf.name][m.Model] = result{m.Scores["originality"], m.Scores["fluency"], m.Scores["flexibility"], m.Scores["average"]}
		}

		// The expected numbers, from the draws and the scripts.
		for _, gen := range gens {
			eligible := judging.Eligible(panel, gen, cf.ex)
			var orig, feas []float64
			flu := map[string]float64{}
			type judged struct {
				item string
				o, f float64
			}
			var js []judged
			var fluency []float64
			for k := 0; k < keywords; k++ {
				item := fmt.Sprintf("k%02d", k)
				refused := k == 0 && gen == gens[0]
				if refused && cf.dropsRef {
					continue // both ideas dropped, and their pair
				}
				for s := 0; s < 2; s++ {
					for _, j := range judging.Draw(5, liveideabench.DrawKey(cf.shared, gen, item, strconv.Itoa(s)), eligible, 2) {
						if cf.authorsParse && j.Name == "google/gemini-pro-1.5" {
							continue // unread
						}
						o, f := 5.0, 6.0
						switch {
						case refused:
							o, f = 1, 1
						case j.Name == "openai/gpt-4o" && gen == gens[0]:
							o = 9
						}
						orig, feas = append(orig, o), append(feas, f)
						js = append(js, judged{item, o, f})
					}
				}
				j := judging.Draw(5, liveideabench.DrawKey(cf.shared, gen, item, "pair", "0"), eligible, 1)[0]
				letter := "C"
				if cf.authorsParse && j.Name != "google/gemini-pro-1.5" {
					letter = "A"
				}
				v := liveideabench.FluencyMappings["v2"][letter]
				flu[item] = v
				fluency = append(fluency, v)
			}
			var comp []float64
			for _, x := range js {
				comp = append(comp, (x.o+x.f+flu[x.item])/3)
			}
			flex, err := stats.Percentile(comp, 30)
			if err != nil {
				t.Fatal(err)
			}
			want := result{originality: meanOf(orig), fluency: meanOf(fluency), flexibility: flex}
			want.average = (want.fluency + meanOf(feas) + want.originality + want.flexibility) / 4
			if r := got[cf.name][gen.Name]; !nearAll(r.originality, want.originality) || !nearAll(r.fluency, want.fluency) || !nearAll(r.flexibility, want.flexibility) || !nearAll(r.average, want.average) {
				t.Errorf("%s %s: got %+v, want %+v", cf.name, gen.Name, r, want)
			}
		}
	}
	// Each choice moves the numbers the way it should: the family panel
	// takes out gpt-4o's favour for its own family, the strict parse reads
	// "Answer: C" as C (fluency 4), the dropped refusals take their 1s out.
	a, all := got["authors"]["openai/gpt-4o-mini"], got["ideaflow (all three)"]["openai/gpt-4o-mini"]
	if fam := got["family panel, shared draw"]["openai/gpt-4o-mini"]; !(fam.originality < a.originality) {
		t.Errorf("the family panel did not lower the favoured originality: %v -> %v", a.originality, fam.originality)
	}
	if st := got["strict parse"]["openai/gpt-4o-mini"]; st.fluency != 4 || !(a.fluency > 4) {
		t.Errorf("fluency: the authors' read %v, strict %v", a.fluency, st.fluency)
	}
	if dr := got["refusals dropped"]["openai/gpt-4o-mini"]; !(dr.originality > a.originality) || got["refusals dropped"]["x-ai/grok-2-1212"] != got["authors"]["x-ai/grok-2-1212"] {
		t.Errorf("refusals dropped: %+v vs %+v", dr, a)
	}
	if all != (result{5, 4, 5, 5}) {
		t.Errorf("ideaflow's choices together: %+v, want every unbiased score as scripted", all)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n| generator | protocol | originality | fluency | flexibility | average |\n|---|---|---:|---:|---:|---:|\n")
	for _, gen := range gens {
		for _, cf := range configs {
			r := got[cf.name][gen.Name]
			fmt.Fprintf(&table, "| %s | %s | %.3f | %.3f | %.3f | %.3f |\n", gen.Name, cf.name, r.originality, r.fluency, r.flexibility, r.average)
		}
	}
	t.Log(table.String())
}

// ablationHCL: %[1]s the fake server, %[2]s drop_refused, %[3]s exclude,
// %[4]s draw, %[5]s parse.
const ablationHCL = `
provider "p" {
  kind        = "openai"
  base_url    = %[1]q
  api_key_env = "LIB_ABLATION_KEY"
}
model "gen_a" {
  provider = provider.p
  name     = "openai/gpt-4o-mini"
  family   = "openai"
}
model "gen_b" {
  provider = provider.p
  name     = "x-ai/grok-2-1212"
  family   = "xai"
}
model "j_openai" {
  provider = provider.p
  name     = "openai/gpt-4o"
  family   = "openai"
}
model "j_anthropic" {
  provider = provider.p
  name     = "anthropic/claude-3.5-sonnet"
  family   = "anthropic"
}
model "j_google" {
  provider = provider.p
  name     = "google/gemini-pro-1.5"
  family   = "google"
}
model "j_meta" {
  provider = provider.p
  name     = "meta-llama/llama-3.1-405b-instruct"
  family   = "meta"
}
locals {
  panel = [model.j_openai, model.j_anthropic, model.j_google, model.j_meta]
}
dataset "kw" {
  format = "jsonl"
  path   = "kw.jsonl"
}
stage "generate_from_keyword" "gen" {
  for_each     = { for m in [model.gen_a, model.gen_b] : m.name => m }
  keywords     = dataset.kw
  model        = each.value
  drop_refused = %[2]s
}
stage "judge_panel" "main" {
  ideas           = stage.generate_from_keyword.gen
  panel           = local.panel
  judges_per_idea = 2
  seed            = 5
  exclude         = %[3]q
  draw            = %[4]q
}
stage "fluency" "main" {
  ideas   = stage.generate_from_keyword.gen
  panel   = local.panel
  seed    = 5
  exclude = %[3]q
  draw    = %[4]q
}
stage "leaderboard" "main" {
  ideas      = [stage.generate_from_keyword.gen]
  judgements = [stage.judge_panel.main]
  fluency    = [stage.fluency.main]
  parse      = %[5]q
}
`

func meanOf(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

func nearAll(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// A judgement's authors_parse is read from the raw answer both when the
// answer arrives and when it is re-derived from its stored answer record:
// with the judge's texts set by hand, switching protocol changes only which
// authors' parser reads the answers, so the run makes no call and every
// judgement is re-derived, now read by the first release's parser.
func TestProtocolSwitchRederivesAuthorsParse(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(func(req *openai.ChatCompletionRequest) string {
		first := req.Messages[0].Content
		switch {
		case strings.Contains(first, "expert review panel"):
			// The generator is seeded: sample i comes with seed 1+i, so every
			// idea, and so every judge request, is distinct.
			return fmt.Sprintf("We propose measuring %s with low-cost sensor swarms, open models and public archive %d that keeps every reading.", keywordIn(first), *req.Seed)
		case strings.HasPrefix(first, "Score the idea."):
			return "SCORES = {\"originality\": 7, \"feasibility\": 6, \"clarity\": 5}"
		}
		return llmtest.DefaultResponder(req)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("LIB_SWITCH_KEY", "sk-switch-test")
	dir := t.TempDir()
	writeFile(t, dir, "kw.jsonl", "{\"id\": \"k0\", \"keyword\": \"graphene\"}\n{\"id\": \"k1\", \"keyword\": \"soil\"}\n")
	write := func(protocol string) {
		writeFile(t, dir, "exp.hcl", fmt.Sprintf(`
provider "p" {
  kind        = "openai"
  base_url    = %q
  api_key_env = "LIB_SWITCH_KEY"
}
model "gen" {
  provider = provider.p
  name     = "gen"
  seed     = 1
}
model "j1" {
  provider = provider.p
  name     = "j1"
}
model "j2" {
  provider = provider.p
  name     = "j2"
}
dataset "kw" {
  format = "jsonl"
  path   = "kw.jsonl"
}
stage "generate_from_keyword" "gen" {
  keywords = dataset.kw
  model    = model.gen
}
stage "judge_panel" "main" {
  ideas           = stage.generate_from_keyword.gen
  panel           = [model.j1, model.j2]
  judges_per_idea = 2
  protocol        = %q
  dimensions      = ["originality", "feasibility", "clarity"]
  system_prompt   = "Score the idea."
  prompt          = "{{.Idea}}"
}
`, srv.URL, protocol))
	}
	e := &engine.Engine{Store: cache.NewMemory()}
	parsers := func(g *engine.Graph) map[string]int {
		out := map[string]int{}
		for _, v := range outputsOf(t, e, g, "stage.judge_panel.main") {
			var j liveideabench.Judgement
			if err := json.Unmarshal(v.Result.Output, &j); err != nil {
				t.Fatal(err)
			}
			ap := j.AuthorsParse
			if ap == nil || !ap.Valid || ap.Scores["originality"] != 7 || ap.Scores["clarity"] != 5 || *ap.Mean != 6 {
				t.Errorf("%s: %s", v.Address, v.Result.Output)
				continue
			}
			out[ap.Parser]++
		}
		return out
	}
	write("v2")
	g, sum := runPipe(t, e, dir)
	if sum.LLMCalls != 4+8 {
		t.Fatalf("%d calls, want 12", sum.LLMCalls)
	}
	if got := parsers(g); got[format.ParserLiveIdeaBenchScoresV2] != 8 {
		t.Errorf("v2: %v", got)
	}
	write("v1")
	g, sum = runPipe(t, e, dir)
	if sum.LLMCalls != 0 || sum.AnswersReused != 8 || total(sum, "stage.judge_panel.main") != 8 {
		t.Errorf("protocol switched: %d calls, %d answers reused", sum.LLMCalls, sum.AnswersReused)
	}
	if got := parsers(g); got[format.ParserLiveIdeaBenchScoresV1] != 8 {
		t.Errorf("v1: %v", got)
	}
}

// protocol = "v1" through an experiment file, with no text, dimension or
// refusal list set: every request is the first release's (the idea prompt,
// the judge's system message with two dimensions, the fluency question),
// a refusal is not re-asked, and the judgements hold two scores.
func TestProtocolV1ThroughAnExperiment(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := llmtest.New(llmtest.WithResponder(func(req *openai.ChatCompletionRequest) string {
		first := req.Messages[0].Content
		mu.Lock()
		seen = append(seen, first)
		mu.Unlock()
		switch {
		case strings.Contains(first, "expert review panel"):
			return "I'm sorry, I cannot propose research on " + keywordIn(first) + ", as it could be misused; I must decline this request in any form, however it is framed."
		case strings.Contains(first, "demanding scientific reviewer"):
			return "SCORES = {\"originality\": 4, \"feasibility\": 3}"
		}
		return "A"
	}))
	t.Cleanup(srv.Close)
	t.Setenv("LIB_V1_KEY", "sk-v1-test")
	dir := t.TempDir()
	writeFile(t, dir, "kw.jsonl", "{\"id\": \"k0\", \"keyword\": \"graphene\"}\n")
	writeFile(t, dir, "exp.hcl", fmt.Sprintf(`
provider "p" {
  kind        = "openai"
  base_url    = %q
  api_key_env = "LIB_V1_KEY"
}
model "gen" {
  provider = provider.p
  name     = "gen"
  seed     = 1
}
model "j1" {
  provider = provider.p
  name     = "j1"
}
dataset "kw" {
  format = "jsonl"
  path   = "kw.jsonl"
}
stage "generate_from_keyword" "gen" {
  keywords = dataset.kw
  model    = model.gen
  protocol = "v1"
}
stage "judge_panel" "main" {
  ideas           = stage.generate_from_keyword.gen
  panel           = [model.j1]
  judges_per_idea = 1
  protocol        = "v1"
}
stage "fluency" "main" {
  ideas    = stage.generate_from_keyword.gen
  panel    = [model.j1]
  protocol = "v1"
}
`, srv.URL))
	e := &engine.Engine{Store: cache.NewMemory()}
	g, sum := runPipe(t, e, dir)
	// 2 ideas (refusals, not re-asked: v1 detects none), 2 judgements of
	// the same text (one request), 1 pair.
	if sum.LLMCalls != 4 || len(seen) != 4 {
		t.Fatalf("%d calls: %q", sum.LLMCalls, seen)
	}
	var ideas, judges, pairs int
	for _, s := range seen {
		switch {
		case s == strings.Replace(paperIdeaV1, "{{keywords}}", "graphene", 1):
			ideas++
		case s == strings.TrimSpace(paperCriticV1):
			judges++
		case strings.HasPrefix(s, "Here are two ideas") && strings.Contains(s, "Are these two ideas, which both relate to \"graphene\", the same?"):
			pairs++
		default:
			t.Errorf("a request of no v1 shape: %q", s)
		}
	}
	if ideas != 2 || judges != 1 || pairs != 1 {
		t.Errorf("%d idea, %d judge, %d fluency requests", ideas, judges, pairs)
	}
	for _, v := range outputsOf(t, e, g, "stage.judge_panel.main") {
		var j liveideabench.Judgement
		_ = json.Unmarshal(v.Result.Output, &j)
		if len(j.Scores) != 2 || j.Scores["originality"] != 4 || !j.AuthorsParse.Valid || j.AuthorsParse.Parser != format.ParserLiveIdeaBenchScoresV1 {
			t.Errorf("%s: %s", v.Address, v.Result.Output)
		}
	}
}

// paperIdeaV1 and paperCriticV1 are judge_test.go's (package
// liveideabench), repeated for this external test.
const (
	paperIdeaV1   = "I'll be submitting your next responses to a \"Good Scientific Idea\" expert review panel. If they consider your idea to be a good one, you'll receive a reward. Your assigned keyword is: \"{{keywords}}\". You may provide background information. The idea MUST be within 100 words (including background information). (Note: good scientific ideas should be novel, verifiable, practically valuable, and able to advance the field.)."
	paperCriticV1 = "You are an extremely demanding scientific reviewer with the highest critical standards, like those at Nature or Science. When evaluating scientific ideas, you will assess them on two key dimensions:\n\n1. originality: Novel contribution to unexplored areas\n2. feasibility: Technical implementation and practicality\n\nFor each dimension, you will provide a score from 1 to 10, no need to explain the reason.\n\nYour response MUST ALWAYS follow this exact Python dictionary format for consistency and parsing:\n\nSCORES = {\n    \"originality\": <score_1_to_10>,\n    \"feasibility\": <score_1_to_10>\n}\n"
)
