package scholareval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	_ "github.com/ideaflow/ideaflow/stages/all"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
	"github.com/ideaflow/ideaflow/stages/scholareval"
)

const sample = "../../experiments/scholareval/data/"

// pipelineHCL is coverage.hcl's pipeline on the sample ideas with a real
// OpenAI-compatible provider (the fake server) and the sample corpus.
// Snippet and paper searches return at most 2 results, so counts stay
// small enough to check by hand.
const pipelineHCL = `
provider "p" {
  kind        = "openai"
  base_url    = %q
  api_key_env = "SCHOLAREVAL_TEST_KEY"
}
provider "papers" {
  kind = "corpus"
  path = "corpus.jsonl"
}
model "reviewer" {
  provider    = provider.p
  name        = "reviewer"
  temperature = 0
}
model "judge" {
  provider    = provider.p
  name        = "judge"
  temperature = 0
}
model "literature" {
  provider = provider.papers
  name     = "corpus"
}
dataset "ideas" {
  format = "scholarideas"
  path   = "ideas"
}
stage "soundness_methods" "se" {
  ideas = dataset.ideas
  model = model.reviewer
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
  model   = model.reviewer
}
stage "soundness_synthesis" "se" {
  methods  = stage.soundness_methods.se
  evidence = stage.soundness_evidence.se
  model    = model.reviewer
}
stage "soundness_review" "se" {
  synthesis = stage.soundness_synthesis.se
  methods   = stage.soundness_methods.se
  model     = model.reviewer
}
stage "contribution_dimensions" "se" {
  ideas = dataset.ideas
  model = model.reviewer
}
stage "literature_search" "papers" {
  queries    = stage.contribution_dimensions.se
  literature = model.literature
  op         = "search"
  as_of      = "2026-12-01"
  limit      = 2
}
stage "contribution_relevance" "se" {
  dimensions = stage.contribution_dimensions.se
  search     = stage.literature_search.papers
  model      = model.reviewer
}
stage "contribution_compare" "se" {
  dimensions = stage.contribution_dimensions.se
  relevance  = stage.contribution_relevance.se
  model      = model.reviewer
}
stage "contribution_review" "se" {
  dimensions = stage.contribution_dimensions.se
  compare    = stage.contribution_compare.se
  model      = model.reviewer
}
stage "llm_review" "baseline" {
  ideas = dataset.ideas
  model = model.reviewer
}
stage "resolve_references" "baseline" {
  reviews    = stage.llm_review.baseline
  literature = model.literature
  as_of      = "2026-12-01"
}
stage "reference_validity" "baseline" {
  resolved = stage.resolve_references.baseline
}
stage "citation_check" "scholareval" {
  reviews = [stage.soundness_review.se, stage.contribution_review.se]
}
stage "citation_check" "baseline" {
  reviews = [stage.llm_review.baseline]
}
stage "coverage" "scholareval" {
  ideas   = dataset.ideas
  reviews = [stage.soundness_review.se, stage.contribution_review.se]
  judge   = model.judge
}
stage "coverage" "baseline" {
  ideas   = dataset.ideas
  reviews = [stage.llm_review.baseline]
  judge   = model.judge
}
stage "coverage_score" "scholareval" {
  coverage = stage.coverage.scholareval
}
stage "coverage_score" "baseline" {
  coverage = stage.coverage.baseline
}
stage "reference_invalidity" "scholareval" {
  reviews  = [stage.soundness_review.se, stage.contribution_review.se]
  resolved = []
}
stage "reference_invalidity" "baseline" {
  reviews  = [stage.llm_review.baseline]
  resolved = [stage.resolve_references.baseline]
}
stage "pairwise_preference" "pairs" {
  ideas = dataset.ideas
  a     = [stage.soundness_review.se, stage.contribution_review.se]
  b     = [stage.llm_review.baseline]
  judge = model.judge
}
stage "preference_score" "pairs" {
  preferences = stage.pairwise_preference.pairs
}
`

// The scripted methods: three for ai_1, two for ai_2 (three once its plan
// mentions annotators' agreement: the changed extraction), one for eco_1.
var methods = map[string][]string{
	"Curriculum Ordering": {
		"Order training programs from simple to complex by length and cyclomatic complexity. Query: curriculum ordering easy to hard training",
		"Train a transformer language model with the ordered curriculum. Query: curricula language model pretraining ordering",
		"Evaluate pass@1 on exercises with unit tests. Query: pass@k unit tests programming problems",
	},
	"Hallucinated Citations": {
		"Retrieve abstracts with BM25 over a local corpus. Query: BM25 lexical retrieval scientific search",
		"Flag citations to papers that were not retrieved. Query: fabricated references invent titles",
	},
	"Pollinator": {
		"Detect bee flights from wing-beat sounds with a classifier. Query: acoustic detection wing-beat bees",
	},
}

var extraMethod = "Ground generation in retrieved passages. Query: retrieval augmented generation hallucinated facts"

var (
	firstCited = regexp.MustCompile(`(?m)^\[(c\d+)\]`)
	dimLine    = regexp.MustCompile(`(?m)^- dimension_(\d+):`)
	paperLine  = regexp.MustCompile(`(?m)^Paper: .*$`)
	statement  = regexp.MustCompile(`(?s)###Reference Answer \(Score 5\):\n(.*?)\n\n###Score Rubrics`)
)

// rubricOf finds a judged statement's rubric line in the sample ideas: the
// authors' prompt names the statement, not its type, axis or severity.
func rubricOf(prompt string) datasets.RubricLine {
	m := statement.FindStringSubmatch(prompt)
	if m == nil {
		panic("no reference statement in the coverage prompt")
	}
	items, err := datasets.Load("scholarideas", sample+"ideas", datasets.Options{})
	if err != nil {
		panic(err)
	}
	for _, it := range items {
		var rec datasets.ScholarIdea
		if err := json.Unmarshal(it.Record, &rec); err != nil {
			panic(err)
		}
		for _, l := range rec.Rubric {
			if l.Statement == m[1] {
				return l
			}
		}
	}
	panic("statement not in the sample: " + m[1])
}

// responder scripts every prompt of the pipeline by what it asks.
func responder(req *openai.ChatCompletionRequest) string {
	p := req.Messages[len(req.Messages)-1].Content
	switch {
	case strings.Contains(p, "Extract the methods it proposes"):
		for key, ms := range methods {
			if strings.Contains(p, key) {
				if key == "Hallucinated Citations" && strings.Contains(p, "agreement") {
					ms = append(ms[:len(ms):len(ms)], extraMethod)
				}
				var b strings.Builder
				for i, m := range ms {
					fmt.Fprintf(&b, "Idea %d: %s\n", i+1, m)
				}
				return b.String()
			}
		}
		return "Idea 1: an unscripted method"
	case strings.Contains(p, "You extract evidence about a method"):
		return "Method: a related method.\nResult: it worked.\nConditions: small data."
	case strings.Contains(p, "You review the soundness of one method"):
		cite := "[none]"
		if m := firstCited.FindStringSubmatch(p); m != nil {
			cite = "[" + m[1] + "]"
		}
		if strings.Contains(p, "wing-beat sounds") {
			cite += " and [zz99]" // a paper that was never retrieved
		}
		return "Rating: 6\nExplanation:\nSupport:\n- supported by " + cite + "\nContradictions:\n- none found\nSuggested action:\n- validate on more data"
	case strings.Contains(p, "soundness meta-review"):
		return "## Strengths\n- sound methods\n## Weaknesses\n- small evaluation\n## Suggestions\n- add baselines"
	case strings.Contains(p, "Extract the contributions it claims"):
		return "Idea 1: Method: a curriculum for small code models Queries: curriculum learning | code models unit tests\nIdea 2: Evaluation: steps to reach the baseline loss Queries: curricula language model pretraining"
	case strings.Contains(p, "Rate how similar the contributions"):
		if title := paperLine.FindString(p); strings.Contains(title, "urricul") {
			return "Rating: 4\nExplanation: close."
		}
		return "Rating: 1\nExplanation: far."
	case strings.Contains(p, "Compare the novelty of a research idea"):
		var parts []string
		for _, m := range dimLine.FindAllStringSubmatch(p, -1) {
			parts = append(parts, fmt.Sprintf(`"dimension_%s": 1`, m[1]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case strings.Contains(p, "contribution review of a research idea"):
		return "## Strengths\n- novel curriculum\n## Weaknesses\n- prior curricula exist\n## Suggestions\n- compare with prior curricula"
	case strings.Contains(p, "Review the following research idea"):
		return "## Strengths\n- clear plan\n## Weaknesses\n- limited novelty\n## Suggestions\n- scale up\n## References\n1. Curriculum learning\n2. \"A survey of imaginary results on everything\" (2021)"
	case strings.Contains(p, "Judge the responses based on the criteria"):
		// ScholarEval's report (the one with a soundness review) has the
		// evidence; actionability ties; depth is "B (marginally)", which
		// the strict parse leaves unread and the authors' code reads as A.
		evidence := "B"
		if a, _, _ := strings.Cut(p, "Report B:"); strings.Contains(a, "# Soundness review") {
			evidence = "A"
		}
		return "```json\n" + fmt.Sprintf(`{"Evidence-based-rationale": "cites papers", "Evidence-based-winner": %q, "Actionability-rationale": "both suggest", "Actionability-winner": "Tie", "Depth-rationale": "close", "Depth-winner": "B (marginally)"}`, evidence) + "\n```"
	case strings.Contains(p, "###Task Description"):
		l := rubricOf(p)
		score := 1
		if strings.Contains(p, "# Soundness review") {
			switch {
			case l.Type == "strength":
				score = 5
			case l.Severity == "major":
				score = 3
			default:
				score = 2
			}
		} else if l.Type == "strength" {
			score = 2
		}
		return fmt.Sprintf("The review is scripted.\n[RESULT] %d", score)
	}
	return "unscripted prompt"
}

type pipeline struct {
	dir string
	srv *llmtest.Server
	e   *engine.Engine
}

func newPipeline(t *testing.T) *pipeline {
	t.Helper()
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("SCHOLAREVAL_TEST_KEY", "sk-scholareval-test")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "ideas"), os.DirFS(sample+"ideas")); err != nil {
		t.Fatal(err)
	}
	corpus, err := os.ReadFile(sample + "corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"exp.hcl": []byte(fmt.Sprintf(pipelineHCL, srv.URL)), "corpus.jsonl": corpus} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &pipeline{dir: dir, srv: srv, e: &engine.Engine{Store: cache.NewMemory()}}
}

func (p *pipeline) run(t *testing.T) (*engine.Graph, *engine.Summary) {
	t.Helper()
	exp, diags := config.Load(p.dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	p.e.Exec = engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())
	sum, err := p.e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %+v", sum.Failures)
	}
	return g, sum
}

func (p *pipeline) outputs(t *testing.T, g *engine.Graph, address string) []engine.NodeView {
	t.Helper()
	views, err := p.e.Inspect(p.e.Plan(g), address, engine.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return views
}

func decode[T any](t *testing.T, v engine.NodeView) T {
	t.Helper()
	var x T
	if err := json.Unmarshal(v.Result.Output, &x); err != nil {
		t.Fatalf("%s: %v", v.Item, err)
	}
	return x
}

// perItem counts an address's nodes by item.
func (p *pipeline) perItem(t *testing.T, g *engine.Graph, address string) map[string]int {
	out := map[string]int{}
	for _, v := range p.outputs(t, g, address) {
		out[v.Item]++
	}
	return out
}

func TestPipelineOnTheFakeServer(t *testing.T) {
	p := newPipeline(t)
	g, sum := p.run(t)

	// 3 + 2 + 1 scripted methods, one query each, all distinct: 6 snippet
	// searches and 6 syntheses; evidence, relevance and comparisons as
	// counted at wantEvidence.
	want := map[string]int{
		"stage.soundness_methods.se":             3,
		"stage.literature_search.snippets":       6,
		"stage.soundness_evidence.se":            wantEvidence,
		"stage.soundness_synthesis.se":           6,
		"stage.soundness_review.se":              3,
		"stage.contribution_dimensions.se":       3,
		"stage.literature_search.papers":         9, // 3 queries per idea
		"stage.contribution_relevance.se":        wantRelevance,
		"stage.contribution_compare.se":          wantCompare,
		"stage.contribution_review.se":           3,
		"stage.llm_review.baseline":              3,
		"stage.resolve_references.baseline":      6, // 2 references per review
		"stage.reference_validity.baseline":      1,
		"stage.citation_check.scholareval":       1,
		"stage.citation_check.baseline":          1,
		"stage.coverage.scholareval":             10, // the sample's rubric lines
		"stage.coverage.baseline":                10,
		"stage.coverage_score.scholareval":       9, // overall, 2 domains, 2 axes, 2 types, 2 severities
		"stage.coverage_score.baseline":          9,
		"stage.reference_invalidity.scholareval": 1,
		"stage.reference_invalidity.baseline":    1,
		"stage.pairwise_preference.pairs":        3,
		"stage.preference_score.pairs":           9, // 3 criteria x 3 outcomes
	}
	total := 0
	for addr, n := range want {
		total += n
		if got := sum.Stages[addr].Total; got != n {
			t.Errorf("%s: %d nodes, want %d", addr, got, n)
		}
	}
	if sum.Nodes.Ran != total {
		t.Errorf("%d nodes ran, want %d", sum.Nodes.Ran, total)
	}
	if sum.LLMCalls != p.srv.Count() {
		t.Errorf("%d model calls, the server saw %d", sum.LLMCalls, p.srv.Count())
	}

	// Every (method, paper) evidence pair is a paper one of the method's
	// searches retrieved.
	retrieved := map[string]map[string]bool{}
	for _, v := range p.outputs(t, g, "stage.literature_search.snippets") {
		s := decode[scholareval.SearchOutput](t, v)
		for _, pp := range s.Papers {
			if retrieved[v.Item] == nil {
				retrieved[v.Item] = map[string]bool{}
			}
			retrieved[v.Item][pp.ID] = true
		}
	}
	for _, v := range p.outputs(t, g, "stage.soundness_evidence.se") {
		e := decode[scholareval.EvidenceOutput](t, v)
		if !retrieved[v.Item][e.Paper.ID] {
			t.Errorf("%s: evidence from %s, which no search of the idea retrieved", v.Item, e.Paper.ID)
		}
	}

	// Citations: only eco_1's scripted [zz99] is unretrieved.
	for _, v := range p.outputs(t, g, "stage.soundness_review.se") {
		r := decode[scholareval.Review](t, v)
		want := "[]"
		if v.Item == "eco_1" {
			want = `["zz99"]`
		}
		if got, _ := json.Marshal(r.Citations.Unretrieved); string(got) != want {
			t.Errorf("%s: unretrieved %s, want %s (cited %v)", v.Item, got, want, r.Citations.Cited)
		}
		if len(r.Citations.Cited) == 0 || r.Score == nil || *r.Score != 6 {
			t.Errorf("%s: cited %v, score %v", v.Item, r.Citations.Cited, r.Score)
		}
		if strings.Join(r.Strengths, "|") != "sound methods" || strings.Join(r.Suggestions, "|") != "add baselines" {
			t.Errorf("%s: sections %q %q", v.Item, r.Strengths, r.Suggestions)
		}
	}

	// Cited: ai_1's syntheses c01 c03 c05, ai_2's c08 c07, eco_1's c09 and
	// the unretrieved zz99; the contribution reviews cite none.
	cc := scoreOf(t, p.outputs(t, g, "stage.citation_check.scholareval")[0])
	if cc.Value != 1.0/7 || cc.Count != 6 || cc.Extra["cited"] != 7 || cc.PerItem["eco_1"] != 1 || cc.PerItem["ai_1"] != 0 {
		t.Errorf("citation check %+v", cc)
	}

	// The baseline's references: "Curriculum learning" is in the corpus,
	// the imaginary survey is not: half resolve to no paper.
	validity := scoreOf(t, p.outputs(t, g, "stage.reference_validity.baseline")[0])
	if validity.Value != 0.5 || validity.Count != 6 || validity.Extra["unresolved"] != 3 {
		t.Errorf("reference validity %+v", validity)
	}

	// Coverage means from the scripted judge (strength 5, major weakness
	// 3, minor weakness 2 for ScholarEval; strength 2, else 1 for the
	// baseline), by hand over the sample's ten rubric lines.
	wantSE := map[string]float64{
		"overall": 33.0 / 10, "domain=ai": 23.0 / 7, "domain=eco": 10.0 / 3,
		"axis=soundness": 20.0 / 7, "axis=contribution": 13.0 / 3,
		"type=strength": 5, "type=weakness": 18.0 / 7,
		"severity=major": 22.0 / 6, "severity=minor": 11.0 / 4,
	}
	wantBase := map[string]float64{
		"overall": 13.0 / 10, "domain=ai": 9.0 / 7, "domain=eco": 4.0 / 3,
		"axis=soundness": 8.0 / 7, "axis=contribution": 5.0 / 3,
		"type=strength": 2, "type=weakness": 1,
		"severity=major": 8.0 / 6, "severity=minor": 5.0 / 4,
	}
	for addr, want := range map[string]map[string]float64{"stage.coverage_score.scholareval": wantSE, "stage.coverage_score.baseline": wantBase} {
		views := p.outputs(t, g, addr)
		if len(views) != len(want) {
			t.Fatalf("%s: %d scores", addr, len(views))
		}
		for _, v := range views {
			s := scoreOf(t, v)
			if w, ok := want[v.Label]; !ok || s.Value != w {
				t.Errorf("%s %s: %v, want %v", addr, v.Label, s.Value, w)
			}
			if v.Label == "overall" && (s.Count != 10 || len(s.PerItem) != 10 || s.PerItem["ai_1#0"] != map[bool]float64{true: 5, false: 2}[addr == "stage.coverage_score.scholareval"]) {
				t.Errorf("%s overall: %+v", addr, s)
			}
		}
	}

	// Reference invalidity: ScholarEval's cited ids are c01 c03 c05 (ai_1),
	// c08 c07 (ai_2), c09 and the unretrieved zz99 (eco_1): 1 of 7, and
	// (0 + 0 + 50) / 3 per review; the baseline's titles as above, 3 of 6.
	inv := scoreOf(t, p.outputs(t, g, "stage.reference_invalidity.scholareval")[0])
	if inv.Value != 100.0/7 || inv.Count != 7 || inv.PerItem["eco_1"] != 50 || inv.Extra["mean_per_review"] != 50.0/3 {
		t.Errorf("ScholarEval's reference invalidity %+v", inv)
	}
	if inv := scoreOf(t, p.outputs(t, g, "stage.reference_invalidity.baseline")[0]); inv.Value != 50 || inv.Count != 6 {
		t.Errorf("the baseline's reference invalidity %+v", inv)
	}
	// Pairwise preference: ScholarEval wins evidence wherever it was shown
	// (the swap undone), actionability ties; depth's "B (marginally)" is
	// unread by the strict parse, and the authors' code gives it to Report
	// A, whichever system that was.
	shownFirst := 0 // pairs with ScholarEval as Report A
	for _, v := range p.outputs(t, g, "stage.pairwise_preference.pairs") {
		pr := decode[scholareval.PreferenceOutput](t, v)
		if !pr.Swapped {
			shownFirst++
		}
		if pr.Winners["Evidence-based"] != "a" || pr.Winners["Actionability"] != "tie" || pr.Winners["Depth"] != "" ||
			pr.AuthorsParse.Winners["Depth"] != map[bool]string{false: "a", true: "b"}[pr.Swapped] || pr.Rationales["Evidence-based"] != "cites papers" {
			t.Errorf("%s: %+v", v.Item, pr)
		}
	}
	for _, v := range p.outputs(t, g, "stage.preference_score.pairs") {
		s := scoreOf(t, v)
		want, authors, count := 0.0, 0.0, 3
		switch v.Label {
		case "evidence-based=a", "actionability=tie":
			want, authors = 100, 100
		case "depth=a", "depth=b", "depth=tie":
			count = 0
			authors = map[string]float64{"depth=a": 100 * float64(shownFirst) / 3, "depth=b": 100 * float64(3-shownFirst) / 3}[v.Label]
		}
		if s.Value != want || s.Count != count || s.Extra["authors"] != authors {
			t.Errorf("preference %s: %+v; want %v over %d, authors %v", v.Label, s, want, count, authors)
		}
	}

	// The scripted judge answers "[RESULT] N" last: the authors' parser
	// reads the same score, and says whose parser it is.
	for _, addr := range []string{"stage.coverage.scholareval", "stage.coverage.baseline"} {
		for _, v := range p.outputs(t, g, addr) {
			c := decode[scholareval.CoverageOutput](t, v)
			if a := c.AuthorsParse; a == nil || a.Score == nil || *a.Score != c.Score || a.Parser != format.CompatPrometheusParser || a.Feedback != fmt.Sprintf("The review is scripted.\n[RESULT] %d", c.Score) {
				t.Errorf("%s %s: authors_parse %+v beside score %d", addr, v.Label, a, c.Score)
			}
		}
	}

	// A re-run sends nothing.
	calls := p.srv.Count()
	_, sum = p.run(t)
	if sum.Nodes.Ran != 0 || p.srv.Count() != calls {
		t.Errorf("re-run: %+v, %d new calls", sum.Nodes, p.srv.Count()-calls)
	}
}

func scoreOf(t *testing.T, v engine.NodeView) stages.Score {
	t.Helper()
	return decode[stages.Score](t, v)
}

// Changing one idea's extraction answer (its plan now mentions agreement,
// and the scripted extraction gains a method) re-runs only that idea's
// nodes: its unchanged methods' searches and evidence stay cached.
func TestChangedExtractionRerunsOnlyThatIdea(t *testing.T) {
	p := newPipeline(t)
	p.run(t)
	plan := filepath.Join(p.dir, "ideas", "ai_2", "ai_2.txt")
	b, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plan, append(b, []byte("\nWe will also report the annotators' agreement.\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	g, sum := p.run(t)
	for addr, want := range map[string]int{
		"stage.soundness_methods.se":       1, // ai_2's
		"stage.literature_search.snippets": 1, // the new method's query; the two others are cached
		"stage.soundness_evidence.se":      1, // the new method's one paper (c06)
		"stage.soundness_synthesis.se":     3, // ai_2's methods: their prompt holds the plan
		"stage.soundness_review.se":        1,
		"stage.contribution_dimensions.se": 1,
		"stage.literature_search.papers":   0, // the same queries, the same cutoff
		"stage.contribution_relevance.se":  0, // relevance prompts hold the statements, not the plan
		"stage.contribution_compare.se":    wantCompareAI2,
		"stage.contribution_review.se":     1,
		"stage.llm_review.baseline":        1,
		"stage.coverage.scholareval":       3, // ai_2's rubric lines
		// The scripted baseline review does not depend on the plan, but
		// the authors' judge prompt holds the plan: ai_2's lines again.
		"stage.coverage.baseline": 3,
	} {
		if got := sum.Stages[addr].Ran; got != want {
			t.Errorf("%s: %d ran, want %d", addr, got, want)
		}
	}
	// ai_2 now has three methods; the others keep theirs.
	if got := p.perItem(t, g, "stage.soundness_synthesis.se"); got["ai_1"] != 3 || got["ai_2"] != 3 || got["eco_1"] != 1 {
		t.Errorf("syntheses per idea %v, want ai_1 3, ai_2 3, eco_1 1", got)
	}
}

// Counts that follow from the sample corpus (BM25 with limit 2; a query
// whose terms only one paper has gets one passage):
//   - evidence: ai_1's methods retrieve {c01 c02}, {c03 c05}, {c05}; ai_2's
//     {c08}, {c07}; eco_1's {c09}: 5 + 2 + 1 = 8 (method, paper) pairs;
//   - relevance: each idea's 3 paper queries find c01 c02 / c05 c04 /
//     c03 c07: 6 distinct papers per idea;
//   - compare: the scripted relevance keeps the curriculum papers (c01 c02
//     c03, scored 4; the others 1): 3 per idea, below the sample of 25.
const (
	wantEvidence   = 8
	wantRelevance  = 18
	wantCompare    = 9
	wantCompareAI2 = 3 // the comparison prompt holds the plan
)
