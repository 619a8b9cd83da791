package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/config"
)

// schemaTargets: t0 has an idea and references; t1 an idea and none (the
// filter drops it); t2 references and no idea; t3 neither (dropped too).
// The references pass the authors' filter, the default: typed (untyped
// ones are dropped), cited enough, cited for their background.
const schemaTargets = `{"id":"t0","abstract":"A0.","idea":"I0.","references":[{"id":"a","title":"A","abstract":"x","citations":9,"types":["JournalArticle"],"intents":["background"]}]}
{"id":"t1","abstract":"A1.","idea":"I1."}
{"id":"t2","abstract":"A2.","references":[{"id":"b","title":"B","abstract":"y","citations":9,"types":["JournalArticle"],"intents":["background"]}]}
{"id":"t3","abstract":"A3."}
`

const schemaHCL = `
provider "mock" {
  kind = "mock"
}
model "gen" {
  provider = provider.mock
  name     = "mock-gen"
}
dataset "targets" {
  format = "ideabench"
  path   = "targets.jsonl"
}
stage "filter_references" "f" {
  dataset        = dataset.targets
  min_references = 1
}
stage "generate_ideas" "g" {
  references = stage.filter_references.f
  model      = model.gen
  n          = 1
}
stage "similarity" "s" {
  ideas   = stage.generate_ideas.g
  against = var.against
}
variable "against" {
  default = "idea"
}
`

func schemaGraph(t *testing.T, dir string, vars ...string) (*Graph, hcl.Diagnostics) {
	t.Helper()
	exp, diags := config.Load(dir, config.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return Build(exp)
}

// A need some dataset records cannot meet: Build warns at the input, and
// the plan counts the items that will fail, leaving out those the filter
// drops (their nodes say dropped, and do not fail); the run fails exactly
// those, for a missing field.
func TestWillFailCountsItemsWithoutTheField(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"exp.hcl": schemaHCL, "targets.jsonl": schemaTargets} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, diags := schemaGraph(t, dir)
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "Some items of stage.similarity.s will fail" ||
		!strings.Contains(diags[0].Detail, `2 of 4 record(s) of dataset.targets (format ideabench) have no "idea"`) ||
		!strings.Contains(diags[0].Detail, "(items t2, t3)") || diags[0].Subject.Start.Line != 23 {
		t.Fatalf("diags: %v", diags)
	}
	e := &Engine{Store: cache.NewMemory(), Exec: NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	p := e.Plan(g)
	want := map[string]int{`dataset.targets has no "idea" for them (the target text the ideas are compared with)`: 1} // t2; t3 is dropped
	if got := p.Summary.Stages["stage.similarity.s"].WillFail; len(got) != 1 || got[`dataset.targets has no "idea" for them (the target text the ideas are compared with)`] != 1 {
		t.Fatalf("plan will fail %v, want %v", got, want)
	}
	g, _ = schemaGraph(t, dir)
	sum, err := e.Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if c := sum.Stages["stage.similarity.s"]; c.Failed != 1 || c.Ran != 3 || len(sum.Failures) != 1 ||
		sum.Failures[0].Address != "stage.similarity.s/t2" || sum.Failures[0].Error != `prepare: missing field "idea" in dataset.targets (the target text to compare with)` {
		t.Fatalf("run: %+v, failures %+v", c, sum.Failures)
	}
	if c := sum.Stages["stage.similarity.s"]; c.Dropped != 2 {
		t.Errorf("dropped: %d, want 2 (t1, t3)", c.Dropped)
	}

	// A need no record meets is an error at the input, before anything
	// is laid out.
	if err := os.WriteFile(filepath.Join(dir, "targets.jsonl"), []byte(strings.NewReplacer(`"idea":"I0.",`, "", `"idea":"I1."`, `"title":"T"`).Replace(schemaTargets)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags = schemaGraph(t, dir)
	if len(diags) != 1 || diags[0].Severity != hcl.DiagError || diags[0].Summary != "stage.similarity.s cannot read what dataset.targets gives" ||
		!strings.Contains(diags[0].Detail, "no record of dataset.targets (format ideabench) has one") || diags[0].Subject.Start.Line != 23 {
		t.Fatalf("diags: %v", diags)
	}
	// Against the abstract, which every record has: nothing to say.
	if _, diags = schemaGraph(t, dir, "against=abstract"); len(diags) != 0 {
		t.Fatalf("against the abstract: %v", diags)
	}
}
