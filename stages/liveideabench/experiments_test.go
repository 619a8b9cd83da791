package liveideabench_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/internal/shareddata"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/liveideabench"
	"github.com/ideaflow/ideaflow/stages/llm"
)

const experiments = "../../experiments/liveideabench/"

// paperVars points leaderboard.hcl at the authors' files in the shared
// data folder (tests may read it; the project never ships it).
func paperVars(t testing.TB, extra ...string) []string {
	t.Helper()
	abs := func(p string) string { return shareddata.Path(t, "liveideabench", p) }
	return append([]string{"keywords=" + abs("csvs/kws.csv"), "categories=" + abs("csvs/keyword_classifications.csv"),
		"published=" + abs("results/LiveIdeaBench-202412.csv")}, extra...)
}

func build(t testing.TB, path string, vars []string) *engine.Graph {
	t.Helper()
	exp, diags := config.Load(path, config.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return g
}

// planTotals sums a plan's nodes per stage block.
func planTotals(p *engine.Plan) map[string]int {
	out := map[string]int{}
	for addr, s := range p.Summary.Stages {
		if i := strings.IndexByte(addr, '['); i >= 0 {
			addr = addr[:i]
		}
		out[addr] += s.Total
	}
	return out
}

// leaderboard.hcl validates and plans offline (no key, no cache) with
// the paper run's exact node counts: 20 models x 1,180 keywords x 2
// ideas; 3 judgements each; one fluency pair per keyword and model with
// one judge; 5 score columns per model; the leaderboard, the report and
// the Fig. 5 and Fig. 3 plots.
func TestLeaderboardExperimentPlan(t *testing.T) {
	g := build(t, experiments+"leaderboard.hcl", paperVars(t))
	e := &engine.Engine{Store: cache.NewMemory()}
	p := e.Plan(g)
	want := map[string]int{
		"stage.generate_from_keyword.ideas": 47_200, "stage.judge_panel.scores": 141_600, "stage.fluency.pairs": 23_600,
		"stage.liveideabench_score.originality": 20, "stage.liveideabench_score.feasibility": 20, "stage.liveideabench_score.fluency": 20,
		"stage.liveideabench_score.flexibility": 20, "stage.liveideabench_score.average": 20,
		"stage.leaderboard.december_2024": 1, "report.leaderboard": 1, "stage.plot.figure5": 1, "stage.plot.figure3": 1,
		"expect.december_2024_order": 1, "expect.december_2024_average": 20,
	}
	sameCounts(t, "plan", planTotals(p), want)
	if p.Summary.Nodes.Total != 212_525 || p.Summary.Nodes.ToRun != 212_525 || p.Summary.Estimate.LLMCalls != 212_400 {
		t.Errorf("plan: %+v nodes, %d calls", p.Summary.Nodes, p.Summary.Estimate.LLMCalls)
	}
	// Exactly one instance per model (the expects: one per model and the
	// order), and every judge_panel instance keeps the generator's family out.
	if n := len(g.Exp.Stages); n != 185 {
		t.Errorf("%d stage instances, want 185", n)
	}
	// The expects carry the authors' CSV as it is: all 20 models, each
	// model's average as the board gives it.
	board := readBoard(t, shareddata.Path(t, "liveideabench", "results/LiveIdeaBench-202412.csv"))
	for _, si := range g.Exp.Stages {
		switch {
		case si.Address == "expect.december_2024_order":
			got := si.Params.NumberMap("published_values")
			if len(got) != 20 || si.Params.Number("min_tau_b") != 0.8 {
				t.Errorf("order: %d published values, min_tau_b %v", len(got), si.Params.Number("min_tau_b"))
			}
			for m, v := range board {
				if got[m] != v {
					t.Errorf("order: %s published %v, the CSV %v", m, got[m], v)
				}
			}
		case strings.HasPrefix(si.Address, "expect.december_2024_average["):
			m := strings.TrimSuffix(strings.TrimPrefix(si.Address, `expect.december_2024_average["`), `"]`)
			if v, ok := board[m]; !ok || si.Params.Number("published") != v || si.Params.Number("tolerance") != 0.25 {
				t.Errorf("%s: published %v ± %v, the CSV %v", si.Address, si.Params.Number("published"), si.Params.Number("tolerance"), v)
			}
		}
	}
}

// readCSV reads a whole CSV file: its header row first.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// readBoard reads a published board's Model -> Average.
func readBoard(t *testing.T, path string) map[string]float64 {
	t.Helper()
	rows := readCSV(t, path)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := map[string]float64{}
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[col["Average"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		out[r[col["Model"]]] = v
	}
	return out
}

// quick.hcl runs in seconds on the mock provider, then runs nothing.
func TestQuickExperiment(t *testing.T) {
	g := build(t, experiments+"quick.hcl", nil)
	e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	out := t.TempDir()
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %+v", sum.Failures)
	}
	// 20 keywords x 3 generators x 2 ideas; 2 judges each; a judged and a
	// Jaccard pair per keyword and generator; 6 columns per generator, a
	// bootstrap of originality per generator, and the Fig. 5 and 3 plots.
	sameCounts(t, "quick", ran(sum), map[string]int{
		"stage.generate_from_keyword.ideas": 120, "stage.judge_panel.scores": 240, "stage.fluency.pairs": 60, "stage.fluency.jaccard": 60,
		"stage.liveideabench_score.originality": 3, "stage.liveideabench_score.feasibility": 3, "stage.liveideabench_score.clarity": 3,
		"stage.liveideabench_score.fluency": 3, "stage.liveideabench_score.flexibility": 3, "stage.liveideabench_score.average": 3,
		"stage.leaderboard.quick": 1, "report.quick": 1, "stage.bootstrap.originality": 3, "stage.plot.figure5": 1, "stage.plot.figure3": 1,
	})
	if sum.LLMCalls != 120+240+60 {
		t.Errorf("%d calls, want 420", sum.LLMCalls)
	}
	// The authors' panel: generator_b shares judge_b's family, and judge_b
	// judges it all the same (only a model's own name is excluded).
	views := outputsOf(t, e, g, `stage.judge_panel.scores["mock-generator-b"]`)
	byB := 0
	for _, v := range views {
		var j liveideabench.Judgement
		if err := json.Unmarshal(v.Result.Output, &j); err != nil {
			t.Fatal(err)
		}
		if j.Judge == "mock-judge-b" {
			byB++
		}
		if j.AuthorsParse == nil || j.AuthorsParse.Parser != format.ParserLiveIdeaBenchScoresV2 {
			t.Fatalf("%s: no authors_parse: %s", v.Address, v.Result.Output)
		}
	}
	if byB == 0 {
		t.Error("judge_b never judged generator_b: the panel excludes more than the generator's name")
	}
	b, err := os.ReadFile(filepath.Join(out, "leaderboard.quick.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lb liveideabench.Leaderboard
	if err := json.Unmarshal(b, &lb); err != nil {
		t.Fatal(err)
	}
	if !lb.Synthetic || len(lb.Models) != 3 || len(lb.Domains) != 6 || len(lb.Pareto) == 0 {
		t.Errorf("leaderboard: %s", b)
	}
	for _, m := range lb.Models {
		if m.Ideas != 40 || m.Judgements != 80 || m.Pairs != 20 || m.Rank == 0 {
			t.Errorf("%s: %+v", m.Model, m)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "quick.md")); err != nil {
		t.Error(err)
	}
	_, sum = runQuickAgain(t, e)
	if sum.Nodes.Ran != 0 || sum.LLMCalls != 0 {
		t.Errorf("re-run: %+v, %d calls", sum.Nodes, sum.LLMCalls)
	}
}

func runQuickAgain(t *testing.T, e *engine.Engine) (*engine.Graph, *engine.Summary) {
	g := build(t, experiments+"quick.hcl", nil)
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return g, sum
}

// smallVars points a reproduction at a keyword list of 10 of the authors'
// keywords (the same categories), so its plan is quick; the protocol
// params do not depend on the keyword count.
func smallVars(t *testing.T, published bool) []string {
	t.Helper()
	full := paperVars(t)
	src, err := os.ReadFile(strings.TrimPrefix(full[0], "keywords="))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(src), "\n", 12)
	small := filepath.Join(t.TempDir(), "kws10.csv")
	if err := os.WriteFile(small, []byte(strings.Join(lines[:11], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := []string{"keywords=" + small, full[1]}
	if published {
		vars = append(vars, full[2])
	}
	return vars
}

// protocolPins are the protocol params each reproduction must run with,
// by stage type: the authors' settings (FIDELITY.md), whether the file
// sets them or leaves them to a default. A default that drifts from the
// paper's fails here.
var protocolPins = map[string]map[string]map[string]any{
	"leaderboard.hcl": {
		"generate_from_keyword": {"protocol": "v1", "ideas_per_keyword": 2, "max_words": 200, "max_chars": 2500, "min_chars": 101, "drop_refused": false, "reask_mode": "new_request", "system": "", "final_idea_marker": "authors"},
		"judge_panel":           {"protocol": "v1", "judges_per_idea": 3, "exclude": "model", "draw": "independent"},
		"fluency":               {"protocol": "v1", "method": "judge", "judges_per_pair": 1, "exclude": "model", "draw": "independent"},
		"liveideabench_score":   {"mapping": "v1", "flexibility": "paper", "flexibility_percentile": 30.0, "parse": "authors"},
		"leaderboard":           {"mapping": "v1", "flexibility": "paper", "flexibility_percentile": 30.0, "parse": "authors"},
	},
	"leaderboard_v2.hcl": {
		"generate_from_keyword": {"protocol": "v2", "ideas_per_keyword": 2, "max_words": 200, "max_chars": 2500, "min_chars": 101, "drop_refused": false, "reask_mode": "new_request", "system": "",
			"refusal_phrases": liveideabench.DefaultRefusalPhrases, "reask": liveideabench.FallbackPromptV2},
		"judge_panel":         {"protocol": "v2", "judges_per_idea": 3, "exclude": "model", "draw": "independent", "dimensions": []string{"originality", "feasibility", "clarity"}},
		"fluency":             {"protocol": "v2", "method": "judge", "judges_per_pair": 1, "exclude": "none", "draw": "independent"},
		"liveideabench_score": {"mapping": "v2", "flexibility": "paper", "flexibility_percentile": 30.0, "parse": "authors"},
		"leaderboard":         {"mapping": "v2", "flexibility": "paper", "flexibility_percentile": 30.0, "parse": "authors"},
	},
	// The ablations: ideaflow's choices where they differ, the rest as above.
	"leaderboard.debiased.hcl": {
		"generate_from_keyword": {"protocol": "v1", "max_chars": 2500, "min_chars": 101, "drop_refused": false},
		"judge_panel":           {"protocol": "v1", "judges_per_idea": 3, "exclude": "family", "draw": "shared"},
		"fluency":               {"protocol": "v1", "exclude": "family", "draw": "shared"},
		"liveideabench_score":   {"mapping": "v1", "flexibility": "paper", "parse": "strict"},
		"leaderboard":           {"mapping": "v1", "flexibility": "paper", "parse": "strict"},
	},
	"leaderboard_v2.debiased.hcl": {
		"generate_from_keyword": {"protocol": "v2", "max_chars": 2500, "min_chars": 101, "drop_refused": true},
		"judge_panel":           {"protocol": "v2", "judges_per_idea": 3, "exclude": "family", "draw": "shared"},
		"fluency":               {"protocol": "v2", "exclude": "family", "draw": "shared"},
		"liveideabench_score":   {"mapping": "v2", "flexibility": "paper", "parse": "strict"},
		"leaderboard":           {"mapping": "v2", "flexibility": "paper", "parse": "strict"},
	},
}

// Each reproduction's plan runs the authors' protocol, and each ablation
// ideaflow's choices: every stage instance of each file has the pinned
// params, final_idea is set for QwQ-32B-preview alone, and the layout has
// the expected nodes (10 keywords here).
func TestReproductionsPinTheirProtocols(t *testing.T) {
	for file, pins := range protocolPins {
		t.Run(file, func(t *testing.T) {
			published := !strings.HasPrefix(file, "leaderboard_v2")
			g := build(t, experiments+file, smallVars(t, published))
			seen := map[string]int{}
			for _, inst := range g.Exp.Stages {
				want, ok := pins[inst.Type.Name()]
				if !ok {
					continue
				}
				seen[inst.Type.Name()]++
				for name, w := range want {
					if got := inst.Params[name]; fmt.Sprint(got) != fmt.Sprint(w) {
						t.Errorf("%s: %s = %v, want %v", inst.Address, name, got, w)
					}
				}
				if inst.Type.Name() == "generate_from_keyword" {
					if got, want := inst.Params.Bool("final_idea"), inst.Key == "qwen/qwq-32b-preview"; got != want {
						t.Errorf("%s: final_idea = %v", inst.Address, got)
					}
				}
			}
			models := 20
			if !published {
				models = 41
			}
			if seen["generate_from_keyword"] != models || seen["judge_panel"] != models || seen["fluency"] != models || seen["leaderboard"] != 1 {
				t.Errorf("instances %v", seen)
			}
			p := (&engine.Engine{Store: cache.NewMemory()}).Plan(g)
			totals := planTotals(p)
			if totals["stage.generate_from_keyword.ideas"] != models*10*2 || totals["stage.judge_panel.scores"] != models*10*2*3 || totals["stage.fluency.pairs"] != models*10 {
				t.Errorf("plan %v", totals)
			}
		})
	}
}

// The defaults the reproductions rely on are the authors': a stage
// declared with no params runs their current (v2) protocol, but for what
// the aggregates read: the strict parse, the authors' read of every answer
// being kept beside it and aggregated with parse = "authors".
func TestStageDefaultsAreTheAuthors(t *testing.T) {
	for typ, want := range map[string]map[string]any{
		"generate_from_keyword": {"protocol": "v2", "max_words": 200, "max_chars": 2500, "min_chars": 101, "drop_refused": false, "reask_mode": "new_request", "final_idea_marker": "authors"},
		"judge_panel":           {"protocol": "v2", "judges_per_idea": 3, "exclude": "model", "draw": "independent"},
		"fluency":               {"protocol": "v2", "judges_per_pair": 1, "exclude": "model", "draw": "independent"},
		"liveideabench_score":   {"mapping": "v2", "flexibility": "paper", "flexibility_percentile": 30.0, "parse": "strict"},
		"leaderboard":           {"mapping": "v2", "flexibility": "paper", "flexibility_percentile": 30.0, "parse": "strict"},
	} {
		st, ok := stages.Lookup(typ)
		if !ok {
			t.Fatalf("no stage type %s", typ)
		}
		p := stages.WithDefaults(st, stages.Params{})
		for name, w := range want {
			if fmt.Sprint(p[name]) != fmt.Sprint(w) {
				t.Errorf("%s.%s defaults to %v, want %v", typ, name, p[name], w)
			}
		}
	}
}

// Flexibility on quick.hcl's mock data, the paper's composite (the
// default) against ideaflow's former per-judgement mean of the judged
// dimensions: switching re-runs only the leaderboard, with no call; the
// two formulas give other numbers (FIDELITY.md quotes the logged differences).
func TestQuickFlexibilityBothWays(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"quick.hcl", "data/quick_keywords.txt", "data/quick_categories.csv"} {
		b, err := os.ReadFile(experiments + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := &engine.Engine{Store: cache.NewMemory()}
	board := func() map[string]float64 {
		g := build(t, filepath.Join(dir, "quick.hcl"), nil)
		e.Exec = engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())
		out := t.TempDir()
		sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: out})
		if err != nil || len(sum.Failures) != 0 {
			t.Fatalf("%v %+v", err, sum.Failures)
		}
		b, err := os.ReadFile(filepath.Join(out, "leaderboard.quick.json"))
		if err != nil {
			t.Fatal(err)
		}
		var lb liveideabench.Leaderboard
		if err := json.Unmarshal(b, &lb); err != nil {
			t.Fatal(err)
		}
		flex := map[string]float64{}
		for _, m := range lb.Models {
			flex[m.Model] = m.Scores["flexibility"]
		}
		if strings.Contains(string(b), `"flexibility": "judged_mean"`) {
			if sum.LLMCalls != 0 || sum.Nodes.Ran != 1 {
				t.Errorf("switching flexibility: %d calls, %d nodes ran; want 0 and the leaderboard alone", sum.LLMCalls, sum.Nodes.Ran)
			}
		}
		return flex
	}
	paper := board()
	src, err := os.ReadFile(filepath.Join(dir, "quick.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "  fluency    = [stage.fluency.pairs]\n}", "  fluency    = [stage.fluency.pairs]\n  flexibility = \"judged_mean\"\n}", 1)
	if edited == string(src) {
		t.Fatal("quick.hcl's leaderboard block changed shape")
	}
	if err := os.WriteFile(filepath.Join(dir, "quick.hcl"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	old := board()
	var diffs []string
	differ := 0
	for m, v := range paper {
		if v != old[m] {
			differ++
		}
		diffs = append(diffs, fmt.Sprintf("%s %.3f (paper) vs %.3f (judged mean): %+.3f", m, v, old[m], v-old[m]))
	}
	if len(paper) != 3 || differ == 0 {
		t.Errorf("flexibility both ways: %v and %v", paper, old)
	}
	sort.Strings(diffs)
	t.Logf("flexibility on quick.hcl's mock data:\n%s", strings.Join(diffs, "\n"))
}

// A keyword's two ideas are two independent samples in the paper. Sent as
// identical requests, a caching gateway may answer both alike, so every
// generator of each reproduction sends a seed that differs per sample
// (sample_seed + s); -var sample_seed moves them all.
func TestKeywordSamplesAreDistinctRequests(t *testing.T) {
	for _, file := range []string{"leaderboard.hcl", "leaderboard.debiased.hcl", "leaderboard_v2.hcl", "leaderboard_v2.debiased.hcl"} {
		t.Run(file, func(t *testing.T) {
			published := !strings.HasPrefix(file, "leaderboard_v2")
			for _, tc := range []struct {
				vars []string
				seed int
			}{{nil, 2024}, {[]string{"sample_seed=7"}, 7}} {
				g := build(t, experiments+file, append(smallVars(t, published), tc.vars...))
				gens := 0
				for _, inst := range g.Exp.Stages {
					if inst.Type.Name() != "generate_from_keyword" {
						continue
					}
					gens++
					m := inst.Params.Model("model")
					msgs := []llm.Message{{Role: "user", Content: "keyword"}}
					r0, r1 := m.Request(msgs, 0, format.Spec{}), m.Request(msgs, 1, format.Spec{})
					if r0.Seed == nil || r1.Seed == nil || *r0.Seed != tc.seed || *r1.Seed != tc.seed+1 {
						t.Fatalf("%s (vars %v): samples 0 and 1 send seeds %v and %v, want %d and %d", inst.Address, tc.vars, r0.Seed, r1.Seed, tc.seed, tc.seed+1)
					}
				}
				if gens == 0 {
					t.Fatal("no generate_from_keyword instance")
				}
			}
		})
	}
}
