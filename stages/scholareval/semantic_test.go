package scholareval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages/literature/s2fake"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
	"github.com/ideaflow/ideaflow/stages/scholareval"
)

// The baseline's references and the contribution search through the
// semantic_scholar kind, on the fake API: a listed title that the title
// match answers with 404 counts as unresolved; the paper search honours
// each idea's cutoff.
const semanticHCL = `
provider "p" {
  kind        = "openai"
  base_url    = %q
  api_key_env = "SCHOLAREVAL_TEST_KEY"
}
provider "s2" {
  kind                = "semantic_scholar"
  base_url            = %q
  recommendations_url = %q
  requests_per_second = 1000
}
model "reviewer" {
  provider = provider.p
  name     = "reviewer"
}
model "literature" {
  provider = provider.s2
  name     = "s2"
}
dataset "ideas" {
  format = "scholarideas"
  path   = "ideas"
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
`

func TestSemanticScholarBaselineAndSearch(t *testing.T) {
	str := func(s string) *string { return &s }
	year := func(y int) *int { return &y }
	api := s2fake.New([]s2fake.Paper{
		{PaperID: str("s2-curriculum"), CorpusID: 1, Title: "Curriculum learning", Abstract: str("Easy to hard ordering of examples."), Year: year(2009), PublicationDate: str("2009-06-14")},
		{PaperID: str("s2-late"), CorpusID: 2, Title: "Curricula for code models revisited", Abstract: str("A curriculum for code models."), Year: year(2025), PublicationDate: str("2025-03-01")},
	})
	t.Cleanup(api.Close)
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("SCHOLAREVAL_TEST_KEY", "sk-scholareval-test")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "ideas"), os.DirFS(sample+"ideas")); err != nil {
		t.Fatal(err)
	}
	hcl := fmt.Sprintf(semanticHCL, srv.URL, api.URL()+s2fake.GraphPath, api.URL()+s2fake.RecommendationsPath)
	if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
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
		t.Fatalf("failures: %+v", sum.Failures)
	}
	p := &pipeline{e: e}
	// Each review lists "Curriculum learning" (found) and an imaginary
	// survey (404): half of the six references resolve to nothing.
	v := scoreOf(t, p.outputs(t, g, "stage.reference_validity.baseline")[0])
	if v.Value != 0.5 || v.Count != 6 {
		t.Errorf("reference validity %+v", v)
	}
	// "curriculum learning" finds both papers, but the 2025 one is past
	// every sample idea's cutoff (the latest is 2025-01-15).
	views := p.outputs(t, g, "stage.literature_search.papers")
	if len(views) != 9 {
		t.Errorf("%d searches, want 3 per idea", len(views))
	}
	for _, view := range views {
		s := decode[scholareval.SearchOutput](t, view)
		for _, pp := range s.Papers {
			if pp.ID == "s2-late" {
				t.Errorf("%s %q: a paper past the cutoff was retrieved", view.Item, s.Query)
			}
		}
		if s.Query == "curriculum learning" && (len(s.Papers) != 1 || s.Papers[0].ID != "s2-curriculum" || s.Retrieved == "") {
			t.Errorf("%s: %+v", view.Item, s)
		}
	}
}

// Paper augmentation through the semantic_scholar kind on the fake API.
// Every sample idea's queries find one paper, "Curriculum learning" (the
// scripted relevance rates it 4): the seed either way. Recommendations
// from it (the fake's library order, positives excluded) are rec-a, rec-b,
// then ref-x. Its references, as listed, are ref-x (700 citations) and
// ref-y (2,000).
//
// The authors' code (seed_from = "relevance", the default): the seed's 2
// recommendations (rec-a, rec-b) and its first 2 references as listed
// (ref-x, ref-y), the second relevance pass scoring those 4 alone.
// ideaflow's earlier choice (seed_from = "search", reference_order =
// "most_cited"): the first 3 search results seed one recommendation, 2
// kept; their references, most cited first (ref-y, ref-x), 2 kept; one
// relevance pass scores the seed and those 4.
const augmentRelevanceHCL = `
stage "contribution_relevance" "search" {
  dimensions = stage.contribution_dimensions.se
  search     = stage.literature_search.papers
  model      = model.reviewer
}
stage "paper_augment" "se" {
  queries         = stage.contribution_dimensions.se
  relevance       = stage.contribution_relevance.search
  literature      = model.literature
  as_of           = "2026-12-01"
  recommendations = 2
  references      = 2
}
stage "contribution_relevance" "augmented" {
  dimensions = stage.contribution_dimensions.se
  augment    = stage.paper_augment.se
  model      = model.reviewer
}
`

const augmentSearchHCL = `
stage "paper_augment" "se" {
  queries         = stage.contribution_dimensions.se
  search          = stage.literature_search.papers
  literature      = model.literature
  as_of           = "2026-12-01"
  seed_from       = "search"
  reference_order = "most_cited"
  seeds           = 3
  recommendations = 2
  references      = 2
}
stage "contribution_relevance" "augmented" {
  dimensions = stage.contribution_dimensions.se
  search     = stage.literature_search.papers
  augment    = stage.paper_augment.se
  model      = model.reviewer
}
stage "contribution_relevance" "seeds_only" {
  dimensions = stage.contribution_dimensions.se
  search     = stage.literature_search.papers
  model      = model.reviewer
}
`

func TestPaperAugmentOnTheFakeServer(t *testing.T) {
	for _, tc := range []struct {
		name, hcl               string
		recommended, referenced string
		relevance               map[string]int // nodes per relevance instance
		recommendBody           string
	}{
		{"authors", augmentRelevanceHCL, "rec-a,rec-b", "ref-x,ref-y",
			map[string]int{"stage.contribution_relevance.search": 3 * 1, "stage.contribution_relevance.augmented": 3 * 4},
			`"positivePaperIds":["s2-curriculum"]`},
		{"ideaflow", augmentSearchHCL, "rec-a,rec-b", "ref-y,ref-x",
			map[string]int{"stage.contribution_relevance.augmented": 3 * 5, "stage.contribution_relevance.seeds_only": 3 * 1},
			`"positivePaperIds":["s2-curriculum"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testPaperAugment(t, tc.hcl, tc.recommended, tc.referenced, tc.relevance, tc.recommendBody)
		})
	}
}

func testPaperAugment(t *testing.T, augmentHCL, recommended, referenced string, relevance map[string]int, recommendBody string) {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	paper := func(id, title, abstract string, year, cites int) s2fake.Paper {
		return s2fake.Paper{PaperID: str(id), CorpusID: len(id) * year, Title: title, Abstract: str(abstract), Year: num(year), CitationCount: num(cites)}
	}
	api := s2fake.New([]s2fake.Paper{
		paper("s2-curriculum", "Curriculum learning", "Easy to hard ordering of examples.", 2009, 5000),
		paper("rec-a", "Self-paced regimes", "Harder examples later.", 2010, 900),
		paper("rec-b", "Anti-ordering", "Random order wins.", 2015, 40),
		paper("ref-x", "Annealing schedules", "Slowly cooling.", 2001, 700),
		paper("ref-y", "Shaping in animals", "Skinner boxes.", 1950, 2000),
	})
	t.Cleanup(api.Close)
	api.SetReferences("s2-curriculum", []s2fake.Reference{
		{CitedPaper: paper("ref-x", "Annealing schedules", "Slowly cooling.", 2001, 700)},
		{CitedPaper: paper("ref-y", "Shaping in animals", "Skinner boxes.", 1950, 2000)},
	})
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("SCHOLAREVAL_TEST_KEY", "sk-scholareval-test")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "ideas"), os.DirFS(sample+"ideas")); err != nil {
		t.Fatal(err)
	}
	hcl := fmt.Sprintf(semanticHCL, srv.URL, api.URL()+s2fake.GraphPath, api.URL()+s2fake.RecommendationsPath) + augmentHCL
	if err := os.WriteFile(filepath.Join(dir, "exp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func() *engine.Graph {
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
	g := build()
	e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %+v", sum.Failures)
	}
	p := &pipeline{e: e}
	ideas := 0
	for _, v := range p.outputs(t, g, "stage.paper_augment.se") {
		if !strings.HasPrefix(v.Label, "augmented-") {
			continue
		}
		ideas++
		a := decode[scholareval.AugmentOutput](t, v)
		ids := func(ps []scholareval.Paper) string {
			var out []string
			for _, pp := range ps {
				out = append(out, pp.ID)
			}
			return strings.Join(out, ",")
		}
		if strings.Join(a.Seeds, ",") != "s2-curriculum" || ids(a.Recommended) != recommended || ids(a.Referenced) != referenced ||
			ids(a.Added) != recommended+","+referenced {
			t.Errorf("%s: seeds %v, recommended %s, referenced %s, added %s", v.Item, a.Seeds, ids(a.Recommended), ids(a.Referenced), ids(a.Added))
		}
	}
	if ideas != 3 {
		t.Fatalf("%d ideas augmented, want the sample's 3", ideas)
	}
	// Per idea: the recommendation, the seed's references, the selection.
	if st := sum.Stages["stage.paper_augment.se"]; st.Total != 3*3 || st.ServiceCalls != 3*2 {
		t.Errorf("paper_augment: %+v", st)
	}
	for addr, want := range relevance {
		if got := sum.Stages[addr].Total; got != want {
			t.Errorf("%s: %d nodes, want %d", addr, got, want)
		}
	}
	// What the API was asked: per idea one recommendation from the seed,
	// and the seed's references.
	recs, refs := 0, 0
	for _, r := range api.Requests() {
		switch {
		case r.Path == "/papers" && r.Method == "POST":
			recs++
			if !strings.Contains(string(r.Body), recommendBody) {
				t.Errorf("recommendation body %s", r.Body)
			}
		case strings.HasSuffix(r.Path, "/references"):
			refs++
			if r.Path != "/paper/s2-curriculum/references" {
				t.Errorf("references of %s", r.Path)
			}
		}
	}
	if recs != 3 || refs != 3 {
		t.Errorf("%d recommendation and %d references requests, want 3 and 3", recs, refs)
	}
	// A second run asks nothing.
	before := len(api.Requests())
	if sum, err := e.Run(context.Background(), build(), engine.RunOptions{ReportDir: t.TempDir()}); err != nil || sum.ServiceCalls != 0 || sum.LLMCalls != 0 || len(api.Requests()) != before {
		t.Errorf("re-run: %v, %d service calls, %d model calls", err, sum.ServiceCalls, sum.LLMCalls)
	}
}
