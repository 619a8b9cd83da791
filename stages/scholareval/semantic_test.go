package scholareval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
