package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The wirings issue 18 found validate passing and run failing on every
// item, through the real CLI: validate refuses them at the attribute, with
// what feeds it and the fix; where only some items lack a field, validate
// warns, plan counts them before any call and the run fails exactly those.

const wiringPreamble = `
provider "mock" {
  kind = "mock"
  seed = 3
}
model "gen" {
  provider = provider.mock
  name     = "mock-gen"
  family   = "fam-gen"
}
model "j1" {
  provider = provider.mock
  name     = "mock-j1"
  family   = "fam-1"
}
model "j2" {
  provider = provider.mock
  name     = "mock-j2"
  family   = "fam-2"
}
model "j3" {
  provider = provider.mock
  name     = "mock-j3"
  family   = "fam-3"
}
quality "novelty" {
  definition = "how new the idea is"
}
dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}
stage "filter_references" "f" {
  dataset = dataset.targets
}
stage "generate_ideas" "g" {
  references = stage.filter_references.f
  model      = model.gen
  n          = 3
  mode       = var.mode
}
variable "mode" {
  default = "batch"
}
`

// wiringTargets writes n targets with three references each; the first
// withIdea of them have an idea text.
func wiringTargets(t *testing.T, dir string, n, withIdea int) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		rec := map[string]any{"id": fmt.Sprintf("t%d", i), "title": fmt.Sprintf("Target %d", i),
			"abstract": fmt.Sprintf("We measure effect %d of soil microbes on drought tolerance in wheat.", i)}
		if i < withIdea {
			rec["idea"] = fmt.Sprintf("Soil microbes raise drought tolerance %d.", i)
		}
		var refs []map[string]any
		for r := 0; r < 3; r++ {
			refs = append(refs, map[string]any{"id": fmt.Sprintf("r%d-%d", i, r), "title": fmt.Sprintf("Reference %d of target %d", r, i),
				"abstract":  fmt.Sprintf("Reference %d of target %d reports trial %d of microbe strain %d.", r, i, r*7+i, i*3+r),
				"citations": 50, "types": []string{"JournalArticle"}, "intents": []string{"background"}})
		}
		rec["references"] = refs
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "targets.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeWiring(t *testing.T, dir, stages string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(wiringPreamble+stages), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A judge_panel fed from rankings has no idea text to judge: validate
// refuses it at ideas, naming the types that give one. Fed from IdeaBench's
// generate_ideas it judges each idea (3 a node in batch mode, 1 a node in
// independent mode), never by the generator.
func TestJudgePanelWiring(t *testing.T) {
	dir := t.TempDir()
	wiringTargets(t, dir, 4, 4)
	cacheDir := filepath.Join(dir, "cache")
	writeWiring(t, dir, `
stage "rank_ideas" "r" {
  ideas   = stage.generate_ideas.g
  judge   = model.j1
  quality = quality.novelty
}
stage "judge_panel" "p" {
  ideas           = stage.rank_ideas.r
  panel           = [model.j1, model.j2, model.j3, model.gen]
  judges_per_idea = 2
}
`)
	code, stdout, stderr := cli(t, "validate", dir)
	want := filepath.Join(dir, "main.hcl") + ":52:21: error: stage.judge_panel.p cannot read what stage.rank_ideas.r gives"
	if code != 2 || !strings.Contains(stderr, want) ||
		!strings.Contains(stderr, `judge_panel reads "idea" or "ideas" (the text to judge) from each node of ideas; stage.rank_ideas.r (rank_ideas) gives dropped, order, labels, target_letter, target_rank, n, authors_parse.`) ||
		!strings.Contains(stderr, "Feed ideas from a stage of type ") || !strings.Contains(stderr, "generate_from_keyword") || !strings.Contains(stderr, "generate_ideas") {
		t.Fatalf("validate: exit %d\n%s\n%s\nwant %s", code, stdout, stderr, want)
	}

	for _, tc := range []struct {
		mode      string
		judgments int // 4 targets x 3 ideas x 2 judges
	}{{"batch", 24}, {"independent", 24}} {
		writeWiring(t, dir, `
stage "judge_panel" "p" {
  ideas           = stage.generate_ideas.g
  panel           = [model.j1, model.j2, model.j3, model.gen]
  judges_per_idea = 2
}
`)
		if code, stdout, stderr := cli(t, "validate", dir, "-var", "mode="+tc.mode); code != 0 || stderr != "" {
			t.Fatalf("%s: validate: exit %d\n%s\n%s", tc.mode, code, stdout, stderr)
		}
		sumPath := filepath.Join(dir, "summary-"+tc.mode+".json")
		code, _, stderr = cli(t, "run", dir, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "out"), "--summary-json", sumPath, "-var", "mode="+tc.mode)
		sum := readSummary(t, sumPath)
		c := sum.Stages["stage.judge_panel.p"]
		// Every judgement is asked: the ideas of the two modes differ.
		if code != 0 || c.Total != tc.judgments || c.Ran != tc.judgments || c.LLMCalls != tc.judgments || len(sum.Failures) != 0 {
			t.Fatalf("%s: run: exit %d, judge_panel %+v, failures %v\n%s", tc.mode, code, c, sum.Failures, stderr)
		}
		if n := sum.Models["mock-gen"].Calls; n != map[string]int{"batch": 4, "independent": 12}[tc.mode] {
			t.Errorf("%s: the generator made %d calls: it must only generate, never judge", tc.mode, n)
		}
		code, stdout, _ = cli(t, "export", "stage.judge_panel.p", dir, "--cache-dir", cacheDir, "--format", "jsonl", "-var", "mode="+tc.mode)
		if code != 0 || strings.Contains(stdout, `"model":"mock-gen"`) || strings.Count(stdout, "\n") != tc.judgments {
			t.Fatalf("%s: export: exit %d, %d rows (want %d), or a judgement by the generator:\n%s", tc.mode, code, strings.Count(stdout, "\n"), tc.judgments, stdout)
		}
		if !strings.Contains(stdout, `"generator":"mock-gen"`) {
			t.Errorf("%s: export does not name the generator of the ideas judged:\n%.400s", tc.mode, stdout)
		}
	}
}

// main.hcl's upper limit compares each target's abstract with its idea:
// on targets without one, validate refuses it, naming extract_idea; with
// some targets lacking one it warns, plan counts them before any call,
// and the run fails exactly those; with target = extract_idea it runs.
func TestUpperLimitWiring(t *testing.T) {
	upper := `
stage "similarity" "upper_limit" {
  ideas       = stage.generate_ideas.g
  upper_limit = true
}
`
	dir := t.TempDir()
	writeWiring(t, dir, upper)

	wiringTargets(t, dir, 5, 0)
	code, stdout, stderr := cli(t, "validate", dir)
	if code != 2 || !strings.Contains(stderr, filepath.Join(dir, "main.hcl")+":47:17: error: stage.similarity.upper_limit cannot read what dataset.targets gives") ||
		!strings.Contains(stderr, `similarity reads "idea" (the target's idea, compared with its abstract (upper_limit)) from the dataset record of each item of ideas (stage.generate_ideas.g); no record of dataset.targets (format ideabench) has one.`) ||
		!strings.Contains(stderr, "Add an extract_idea stage over the targets") || !strings.Contains(stderr, "target = stage.extract_idea.targets") {
		t.Fatalf("validate without ideas: exit %d\n%s\n%s", code, stdout, stderr)
	}

	wiringTargets(t, dir, 5, 3)
	code, stdout, stderr = cli(t, "validate", dir)
	if code != 0 || !strings.Contains(stderr, "warning: Some items of stage.similarity.upper_limit will fail") ||
		!strings.Contains(stderr, `2 of 5 record(s) of dataset.targets (format ideabench) have no "idea"`) {
		t.Fatalf("validate with some ideas: exit %d\n%s\n%s", code, stdout, stderr)
	}
	cacheDir := filepath.Join(dir, "cache")
	openTestCache(t, cacheDir).Close() // plan reads an existing cache
	code, stdout, stderr = cli(t, "plan", dir, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, `     2  item(s) will fail: dataset.targets has no "idea" for them (the target's idea, compared with its abstract (upper_limit))`) ||
		!strings.Contains(stdout, `     2  prepare: missing field "idea" in dataset.targets (the target text to compare with)`) {
		t.Fatalf("plan: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sumPath := filepath.Join(dir, "summary.json")
	code, _, stderr = cli(t, "run", dir, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "out"), "--summary-json", sumPath)
	sum := readSummary(t, sumPath)
	if c := sum.Stages["stage.similarity.upper_limit"]; code != 1 || c.Failed != 2 || c.Ran != 3 {
		t.Fatalf("run: exit %d, upper limit %+v\n%s", code, c, stderr)
	}
	for _, f := range sum.Failures {
		if f.Error != `prepare: missing field "idea" in dataset.targets (the target text to compare with)` {
			t.Errorf("failure %s: %s", f.Address, f.Error)
		}
	}

	// The fix validate names: the idea from extract_idea (the dataset's
	// where a target has one, else extracted from the abstract).
	writeWiring(t, dir, `
stage "extract_idea" "targets" {
  targets = dataset.targets
  model   = model.j1
}
stage "similarity" "upper_limit" {
  ideas       = stage.generate_ideas.g
  upper_limit = true
  target      = stage.extract_idea.targets
}
`)
	code, stdout, stderr = cli(t, "validate", dir)
	if code != 0 || stderr != "" {
		t.Fatalf("validate with extract_idea: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = cli(t, "run", dir, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "out"), "--summary-json", sumPath)
	sum = readSummary(t, sumPath)
	if c := sum.Stages["stage.similarity.upper_limit"]; code != 0 || c.Ran != 5 || c.Failed != 0 || sum.Stages["stage.extract_idea.targets"].LLMCalls != 2 {
		t.Fatalf("run with extract_idea: exit %d, upper limit %+v, extract %+v\n%s", code, c, sum.Stages["stage.extract_idea.targets"], stderr)
	}
}

// IdeaBench's generated ideas reviewed by ScholarEval's reviewer: the
// review rows name whose ideas were reviewed (the generator, from
// upstream) and who reviewed them (the model that answered, from the
// records), never the reviewer as the ideas' generator.
func TestReviewsOfGeneratedIdeasNameTheirGenerator(t *testing.T) {
	dir := t.TempDir()
	wiringTargets(t, dir, 4, 0)
	cacheDir := filepath.Join(dir, "cache")
	writeWiring(t, dir, `
stage "llm_review" "b" {
  ideas = stage.generate_ideas.g
  model = model.j1
}
`)
	// One idea an item: a review reads one idea (n = 3 is refused at ideas).
	src, err := os.ReadFile(filepath.Join(dir, "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(strings.Replace(string(src), "n          = 3", "n          = 1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	sumPath := filepath.Join(dir, "summary.json")
	code, _, stderr := cli(t, "run", dir, "--cache-dir", cacheDir, "--out", filepath.Join(dir, "out"), "--summary-json", sumPath, "-var", "mode=independent")
	sum := readSummary(t, sumPath)
	if c := sum.Stages["stage.llm_review.b"]; code != 0 || c.Total != 4 || c.LLMCalls != 4 {
		t.Fatalf("run: exit %d, llm_review %+v\n%s", code, c, stderr)
	}
	code, stdout, stderr := cli(t, "export", "stage.llm_review.b", dir, "--cache-dir", cacheDir, "--format", "jsonl", "-var", "mode=independent")
	if code != 0 || strings.Count(stdout, "\n") != 4 {
		t.Fatalf("export: exit %d, %d rows (want 4)\n%s\n%s", code, strings.Count(stdout, "\n"), stdout, stderr)
	}
	for _, row := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(row), &r); err != nil {
			t.Fatal(err)
		}
		if r["generator"] != "mock-gen" || r["model"] != "mock-j1" {
			t.Errorf("review row names generator %v and model %v; want the ideas' generator mock-gen and the reviewer mock-j1:\n%s", r["generator"], r["model"], row)
		}
	}
	code, stdout, _ = cli(t, "show", "stage.llm_review.b", dir, "--cache-dir", cacheDir, "-var", "mode=independent")
	if code != 0 || !strings.Contains(stdout, "mock-gen") {
		t.Errorf("show: exit %d; want the ideas' generator named:\n%s", code, stdout)
	}
}

// A soundness review of generated ideas over targets that carry an idea of
// their own (an IdeaBench target's): the meta-review shows the generated
// idea its methods were extracted from, never the target's (it did until
// the review read its idea from the methods rather than the dataset
// record).
func TestSoundnessReviewOfGeneratedIdeasShowsThem(t *testing.T) {
	dir := t.TempDir()
	wiringTargets(t, dir, 3, 3) // every target has an idea: "Soil microbes raise drought tolerance N."
	corpus, err := filepath.Abs("../../experiments/scholareval/data/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(dir, "cache")
	writeWiring(t, dir, fmt.Sprintf(`
provider "papers" {
  kind = "corpus"
  path = %q
}
model "literature" {
  provider = provider.papers
  name     = "corpus"
}
stage "soundness_methods" "se" {
  ideas       = stage.generate_ideas.g
  model       = model.j1
  max_methods = 2
}
stage "literature_search" "snippets" {
  queries    = stage.soundness_methods.se
  literature = model.literature
  op         = "snippets"
  as_of      = "2026-12-01"
  limit      = 2
}
stage "soundness_evidence" "se" {
  methods = stage.soundness_methods.se
  search  = stage.literature_search.snippets
  model   = model.j1
}
stage "soundness_synthesis" "se" {
  methods  = stage.soundness_methods.se
  evidence = stage.soundness_evidence.se
  model    = model.j1
}
stage "soundness_review" "se" {
  synthesis = stage.soundness_synthesis.se
  methods   = stage.soundness_methods.se
  model     = model.j2
}
`, corpus))
	src, err := os.ReadFile(filepath.Join(dir, "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(strings.Replace(string(src), "n          = 3", "n          = 1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := []string{"-var", "mode=independent", "--cache-dir", cacheDir}
	sumPath := filepath.Join(dir, "summary.json")
	code, _, stderr := cli(t, append([]string{"run", dir, "--out", filepath.Join(dir, "out"), "--summary-json", sumPath}, vars...)...)
	sum := readSummary(t, sumPath)
	if c := sum.Stages["stage.soundness_review.se"]; code != 0 || c.Total != 3 || c.LLMCalls != 3 {
		t.Fatalf("run: exit %d, soundness_review %+v, failures %v\n%s", code, c, sum.Failures, stderr)
	}
	code, gens, _ := cli(t, append([]string{"export", "stage.generate_ideas.g", dir, "--format", "jsonl"}, vars...)...)
	if code != 0 || strings.Count(gens, "\n") != 3 {
		t.Fatalf("export of the ideas: exit %d\n%s", code, gens)
	}
	ideaOf := map[string]string{}
	for _, row := range strings.Split(strings.TrimSpace(gens), "\n") {
		var r struct{ Item, Idea string }
		if err := json.Unmarshal([]byte(row), &r); err != nil {
			t.Fatal(err)
		}
		ideaOf[r.Item] = r.Idea
	}
	for i := 0; i < 3; i++ {
		item := fmt.Sprintf("t%d", i)
		code, out, stderr := cli(t, append([]string{"show", "stage.soundness_review.se/" + item, dir, "--json"}, vars...)...)
		if code != 0 {
			t.Fatalf("show %s: exit %d\n%s", item, code, stderr)
		}
		if ideaOf[item] == "" || !strings.Contains(out, jsonString(ideaOf[item])[1:40]) {
			t.Errorf("%s: the meta-review's request does not show the generated idea %q", item, ideaOf[item])
		}
		if strings.Contains(out, "Soil microbes raise drought tolerance") {
			t.Errorf("%s: the meta-review's request shows the target's own idea", item)
		}
	}
}
