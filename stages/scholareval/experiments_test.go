package scholareval_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
)

const experiments = "../../experiments/scholareval/"

func build(t *testing.T, file string, vars ...string) *engine.Graph {
	t.Helper()
	exp, diags := config.Load(experiments+file, config.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return g
}

func realIdeas(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../shared/data/scholareval/ScholarIdeas")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real ScholarIdeas not present: %v", err)
	}
	return p
}

// What a plan on an empty cache lays out: one extraction or review per
// idea, and the baseline's coverage (its review is a plain per-idea node,
// so its rubric lines are known); everything behind a search is pending.
func TestExperimentPlans(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		real       bool
		ideas      int
		rubric     int
		groups     int // coverage_score nodes: overall, domains, 2 axes, 2 types, 2 severities
	}{
		{"sample", "coverage.hcl", false, 3, 10, 9},
		{"quick", "quick.hcl", false, 2, 7, 8}, // the first two ideas are both ai
		{"real", "coverage.hcl", true, 118, 1076, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vars []string
			if tc.real {
				vars = []string{"ideas=" + realIdeas(t)}
			}
			g := build(t, tc.file, vars...)
			e := &engine.Engine{Store: cache.NewMemory()}
			plan := e.Plan(g).Summary
			want := map[string]int{
				"stage.soundness_methods.se":              tc.ideas,
				"stage.contribution_dimensions.se":        tc.ideas,
				"stage.llm_review.baseline":               tc.ideas,
				`stage.coverage.review["baseline"]`:       tc.rubric,
				`stage.coverage_score.review["baseline"]`: tc.groups,
				"stage.citation_check.baseline":           1,
			}
			total := 0
			for addr, n := range plan.Stages {
				total += n.Total
				if n.Total != want[addr] {
					t.Errorf("%s: %d nodes planned, want %d", addr, n.Total, want[addr])
				}
			}
			if plan.Nodes.Total != total || plan.Nodes.ToRun != 3*tc.ideas+tc.rubric+tc.groups+1 {
				t.Errorf("plan: %+v", plan.Nodes)
			}
		})
	}
}

// quick.hcl runs on the mock and the sample corpus; a second run is free.
// The counts are the seeded mock's (its extraction lists 2 to 4 methods).
func TestQuickRunsOnTheMock(t *testing.T) {
	g := build(t, "quick.hcl")
	e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 || sum.Nodes.Ran != quickNodes || sum.Stages[`stage.coverage.review["scholareval"]`].Ran != 7 {
		t.Errorf("quick: %+v, failures %v", sum.Nodes, sum.Failures)
	}
	// Paper augmentation: per idea a recommendation from the first 5
	// search results, their 5 references requests (the sample corpus lists
	// none) and the selection; the recommended papers add 7 relevance
	// ratings (14 -> 21) and 4 comparisons (6 -> 10).
	for addr, want := range map[string]int{"stage.paper_augment.se": 2 * (1 + 5 + 1), "stage.contribution_relevance.se": 21, "stage.contribution_compare.se": 10} {
		if got := sum.Stages[addr].Total; got != want {
			t.Errorf("%s: %d nodes, want %d", addr, got, want)
		}
	}
	if got := sum.Stages["stage.paper_augment.se"].ServiceCalls; got != 2*(1+5) {
		t.Errorf("paper_augment: %d service calls, want 12", got)
	}
	g = build(t, "quick.hcl")
	sum, err = e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil || sum.Nodes.Ran != 0 || sum.Nodes.Total != quickNodes {
		t.Errorf("re-run: %+v, %v", sum.Nodes, err)
	}
}

const quickNodes = 131 // the pipeline (106 without paper augmentation: 14 + 7 + 4 more with it), and the coverage report

// coverage.hcl over the real ScholarIdeas on the mock: every one of the
// 1,076 rubric lines judged once per system.
func TestCoverageOnTheRealIdeas(t *testing.T) {
	if testing.Short() {
		t.Skip("7,821 nodes")
	}
	g := build(t, "coverage.hcl", "ideas="+realIdeas(t))
	e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %v", sum.Failures)
	}
	for addr, n := range map[string]int{
		`stage.coverage.review["scholareval"]`: 1076, `stage.coverage.review["baseline"]`: 1076,
		`stage.coverage_score.review["scholareval"]`: 11, `stage.coverage_score.review["baseline"]`: 11,
		"stage.soundness_review.se": 118, "stage.contribution_review.se": 118, "stage.llm_review.baseline": 118,
		"stage.paper_augment.se": 817,
	} {
		if got := sum.Stages[addr].Total; got != n {
			t.Errorf("%s: %d nodes, want %d", addr, got, n)
		}
	}
	// 6,333 without paper augmentation: its 817 nodes, and the relevance
	// ratings and comparisons of the papers it adds (672).
	if sum.Nodes.Total != 7822 {
		t.Errorf("%d nodes, want 7822 (the seeded mock's, and the report)", sum.Nodes.Total)
	}
}
