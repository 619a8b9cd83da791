package ideabench_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/ideabench"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// authorsParams are the settings of the authors' protocol
// (amir-hassan25/IdeaBench @ 9dbd125) that every reproduction's instances
// of a stage type must have, whatever the file sets; the source of each is
// in FIDELITY.md. A default that drifts, or a file that overrides one,
// fails here.
var authorsParams = map[string]stages.Params{
	// filter_references.py: abstract and publicationTypes present,
	// citationCount >= 5, excluded types as substrings, the intent rule;
	// generate_hypotheses.py: random.sample of the references.
	"filter_references": {
		"min_citations": 5, "exclude_types": []string{"Review", "Dataset", "Editorial", "LettersAndComments", "News", "Book"},
		"type_match": "substring", "drop_untyped": true, "intent_rule": "authors", "require_intent": "", "pick": "random",
	},
	// generate_hypotheses.py: the authors' prompt, one call per idea.
	"generate_ideas": {"prompt_style": "authors", "mode": "independent", "prompt": ideabench.DefaultGeneratePrompt, "domain": "biomedical"},
	// evaluate_hypotheses.py: BERTScorer("microsoft/deberta-xlarge-mnli"):
	// its default layer, [CLS] and [SEP] as bert_score keeps them, the
	// candidates against the abstract.
	"similarity": {"method": "bertscore", "layer": -1, "final_layer": false, "special_tokens": "bert_score", "against": "abstract"},
	// ... no idf, no baseline rescaling, F1.
	"similarity_score": {"idf": false, "baseline": 0.0, "score": "f1"},
	// the best idea by F1, rated with the authors' 1-10 prompt.
	"overlap_rating": {"prompt_style": "authors", "scale": "1-10", "prompt": ideabench.DefaultOverlapPrompt, "score": "f1"},
	// llm_ranking_eval.py: the target first, one ranking, the authors' prompt.
	"rank_ideas": {"prompt_style": "authors", "order": "target_first", "permutations": 1, "prompt": ideabench.DefaultRankPrompt},
}

// The reproductions' own settings, instance by instance.
var reproductionParams = map[string]map[string]stages.Params{
	"main.hcl": {
		// low resource: 5 filtered references; high: every reference of the
		// targets keeping at least 3 filtered.
		`stage.filter_references.scenario["low"]`:          {"mode": "filtered", "limit": 5, "min_references": 3, "min_filtered": 0, "max_filtered": 0},
		`stage.filter_references.scenario["high"]`:         {"mode": "all", "limit": 0, "min_references": 3, "min_filtered": 3, "max_filtered": 0},
		`stage.generate_ideas.table1["openai/gpt-4o low"]`: {"n": 3},
		// Table 1: 80th percentiles; the upper limit: a mean (0.718).
		"stage.similarity_score.semantic_similarity":    {"summary": "p80"},
		"stage.similarity.upper_limit":                  {"upper_limit": true},
		"stage.similarity_score.upper_limit":            {"summary": "mean"},
		"stage.overlap_score.idea_overlap":              {"summary": "p80", "parse": "authors"},
		"stage.insight_score.novelty_insight_score":     {"summary": "insight", "parse": "authors"},
		"stage.insight_score.feasibility_insight_score": {"summary": "insight", "parse": "authors"},
	},
	"ablation_refs.hcl": {
		// the published subset: at least 15 references passing the filter.
		`stage.filter_references.arms["filtered 5"]`:    {"mode": "filtered", "limit": 5, "min_filtered": 15, "max_filtered": 0},
		`stage.filter_references.arms["unfiltered 5"]`:  {"mode": "all", "limit": 5, "min_filtered": 15, "max_filtered": 0},
		`stage.filter_references.arms["filtered all"]`:  {"mode": "filtered", "limit": 0, "min_filtered": 15},
		`stage.generate_ideas.arms`:                     {"n": 3},
		"stage.similarity_score.similarity":             {"summary": "mean"},
		"stage.overlap_score.idea_overlap":              {"summary": "mean", "parse": "authors"},
		"stage.insight_score.novelty_insight_score":     {"parse": "authors"},
		"stage.insight_score.feasibility_insight_score": {"parse": "authors"},
	},
	"ablation_n.hcl": {
		`stage.filter_references.refs["filtered"]`:              {"mode": "filtered", "limit": 0, "min_filtered": 15},
		`stage.filter_references.refs["unfiltered"]`:            {"mode": "all", "limit": 0, "min_filtered": 15},
		`stage.generate_ideas.n["10 filtered"]`:                 {"n": 10},
		"stage.insight_score.novelty_average_absolute_rank":     {"summary": "mean_rank", "parse": "authors"},
		"stage.insight_score.feasibility_average_absolute_rank": {"summary": "mean_rank", "parse": "authors"},
	},
}

func TestReproductionsRunTheAuthorsProtocol(t *testing.T) {
	for file, pinned := range reproductionParams {
		t.Run(file, func(t *testing.T) {
			g := loadExperiment(t, ibExperiments+file)
			byAddr := map[string][]*engine.Instance{} // by address, and by block for fanned-out instances
			types := map[string]int{}
			for _, inst := range g.Instances {
				byAddr[inst.Address] = append(byAddr[inst.Address], inst)
				if inst.Block != inst.Address {
					byAddr[inst.Block] = append(byAddr[inst.Block], inst)
				}
				want, ok := authorsParams[inst.Type]
				if !ok {
					continue
				}
				types[inst.Type]++
				checkParams(t, inst, want)
				if inst.Type == "similarity" {
					checkBERT(t, inst)
				}
				for _, m := range []string{"model", "judge"} {
					checkSampling(t, inst, m)
				}
			}
			for _, typ := range []string{"filter_references", "generate_ideas", "rank_ideas"} {
				if types[typ] == 0 {
					t.Errorf("no %s instance", typ)
				}
			}
			for addr, want := range pinned {
				if len(byAddr[addr]) == 0 {
					t.Errorf("no instance %s", addr)
				}
				for _, inst := range byAddr[addr] {
					checkParams(t, inst, want)
				}
			}
		})
	}
}

// The debiased files are the reproductions with ideaflow's improvements in
// place of exactly the authors' order, prompts, scale, parse and judge
// temperature.
func TestDebiasedFilesChangeOnlyTheProtocol(t *testing.T) {
	changed := map[string]stages.Params{
		"generate_ideas": {"prompt_style": "ideaflow"},
		"rank_ideas":     {"prompt_style": "ideaflow", "order": "shuffle"},
		"overlap_rating": {"prompt_style": "ideaflow", "scale": "0-10"},
		"insight_score":  {"parse": "strict"},
		"overlap_score":  {"parse": "strict"},
	}
	for _, file := range []string{"main", "ablation_refs", "ablation_n"} {
		t.Run(file, func(t *testing.T) {
			authors := loadExperiment(t, ibExperiments+file+".hcl")
			debiased := loadExperiment(t, ibExperiments+file+".debiased.hcl")
			byAddr := map[string]*engine.Instance{}
			for _, inst := range authors.Instances {
				byAddr[inst.Address] = inst
			}
			for _, d := range debiased.Instances {
				a := byAddr[d.Address]
				if a == nil {
					t.Errorf("%s is not in %s.hcl", d.Address, file)
					continue
				}
				want := changed[d.Type]
				checkParams(t, d, want)
				for name, v := range a.Params {
					if _, isChanged := want[name]; isChanged || name == "seed" && d.Type == "rank_ideas" || name == "title" {
						continue
					}
					if _, ok := v.(*stages.Upstream); ok {
						continue
					}
					if m, ok := v.(*stages.Model); ok {
						dm, _ := d.Params[name].(*stages.Model)
						if dm == nil || dm.Name != m.Name || !sameTemp(dm.Temperature, m.Temperature) && name != "judge" {
							t.Errorf("%s.%s: model %+v, %s.hcl has %+v", d.Address, name, dm, file, m)
						}
						if name == "judge" && (dm.Temperature == nil || *dm.Temperature != 0) {
							t.Errorf("%s: judge temperature %v, want 0", d.Address, dm.Temperature)
						}
						continue
					}
					if _, ok := v.(*stages.Quality); ok {
						continue
					}
					if !reflect.DeepEqual(d.Params[name], v) {
						t.Errorf("%s.%s = %v, %s.hcl has %v", d.Address, name, d.Params[name], file, v)
					}
				}
			}
		})
	}
}

func sameTemp(a, b *float64) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func checkParams(t *testing.T, inst *engine.Instance, want stages.Params) {
	t.Helper()
	for name, v := range want {
		if got := inst.Params[name]; !reflect.DeepEqual(got, v) {
			t.Errorf("%s: %s = %#v, want the authors' %#v", inst.Address, name, got, v)
		}
	}
}

// checkBERT: the BERTScore model is the authors' at bert_score's layer for it.
func checkBERT(t *testing.T, inst *engine.Instance) {
	t.Helper()
	m := inst.Params.Model("model")
	if m == nil || m.Name != "microsoft/deberta-xlarge-mnli" {
		t.Errorf("%s: BERTScore model %+v, want microsoft/deberta-xlarge-mnli", inst.Address, m)
	}
	if ops := (ideabenchSimilarity(t)).ServiceOps(inst.Params); !reflect.DeepEqual(ops["model"], []string{llm.OpLayerTokenMatching}) {
		t.Errorf("%s: asks %v, want the layered matching", inst.Address, ops)
	}
}

// checkSampling: a judge at ChatOpenAI's default temperature 0.7 with no
// maximum length; a generator at its library's default (0.7 for OpenAI and
// Gemini, none sent for the Llama models) with no maximum length.
func checkSampling(t *testing.T, inst *engine.Instance, param string) {
	t.Helper()
	m := inst.Params.Model(param)
	if m == nil || m.Provider == "bert" || strings.HasPrefix(m.Address, "model.bert") {
		return
	}
	want := 0.7
	if strings.HasPrefix(m.Name, "meta-llama/") {
		if m.Temperature != nil {
			t.Errorf("%s: %s temperature %v, want none sent (the authors' DeepInfra wrapper sends none)", inst.Address, m.Name, *m.Temperature)
		}
	} else if m.Temperature == nil || *m.Temperature != want {
		t.Errorf("%s: %s (%s) temperature %v, want %v", inst.Address, param, m.Name, m.Temperature, want)
	}
	if m.MaxTokens != 0 || m.TopP != nil || m.Seed != nil {
		t.Errorf("%s: %s sends max_tokens %d, top_p %v, seed %v; the authors send none", inst.Address, m.Name, m.MaxTokens, m.TopP, m.Seed)
	}
}

func ideabenchSimilarity(t *testing.T) stages.ServiceUser {
	t.Helper()
	typ, ok := stages.Lookup("similarity")
	if !ok {
		t.Fatal("no similarity stage type")
	}
	su, ok := typ.(stages.ServiceUser)
	if !ok {
		t.Fatal("similarity is no ServiceUser")
	}
	return su
}

// A tei provider serves the final layer only: bert_score's default layer is
// refused when the experiment is built, at the model, naming the kinds
// that serve it, and final_layer = true is the way to keep tei.
func TestTEIServesTheFinalLayerOnly(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(ibExperiments + "data/targets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "targets.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	const hcl = `
provider "mock" {
  kind = "mock"
}
provider "tei" {
  kind     = "tei"
  base_url = "http://localhost:8080"
}
model "gen" {
  provider = provider.mock
  name     = "g"
}
model "bert" {
  provider = provider.tei
  name     = "roberta-large"
}
dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}
stage "filter_references" "f" { dataset = dataset.targets }
stage "generate_ideas" "g" {
  model      = model.gen
  references = stage.filter_references.f
}
stage "similarity" "s" {
  ideas  = stage.generate_ideas.g
  method = "bertscore"
  model  = model.bert
  %s
}
`
	for _, tc := range []struct{ extra, want string }{
		{"", `exp.hcl:29,12-22: Cannot ask model.bert for layer_token_matching; model is model.bert, on provider "tei" of kind "tei", which does not serve "layer_token_matching", an operation this stage asks of it; kinds that serve it: mock, transformers.`},
		{"final_layer = true", ""},
	} {
		if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(fmt.Sprintf(hcl, tc.extra)), 0o644); err != nil {
			t.Fatal(err)
		}
		exp, diags := config.Load(dir, config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		_, diags = engine.Build(exp)
		switch {
		case tc.want == "" && diags.HasErrors():
			t.Errorf("final_layer: %s", diags.Error())
		case tc.want != "" && !strings.Contains(diags.Error(), tc.want):
			t.Errorf("got %s\nwant %s", diags.Error(), tc.want)
		}
	}
}
