package ideabench_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/ideabench"
)

// best_idea names the idea overlap_rating's own pick rates, and an
// overlap_rating that reads it rates the same idea with the same answer.
func TestBestIdeaFeedsOverlap(t *testing.T) {
	dir := writeOverlap(t, mockProvider)
	extra := `
stage "best_idea" "rouge" {
  ideas      = stage.generate_ideas.main
  similarity = stage.similarity.rouge
}
stage "overlap_rating" "picked" {
  ideas      = stage.generate_ideas.main
  judge      = model.judge
  similarity = stage.best_idea.rouge
}
`
	f, err := os.OpenFile(filepath.Join(dir, "exp.hcl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, extra)
	f.Close()
	e := &engine.Engine{Store: cache.NewMemory()}
	g, sum := runOverlap(t, e, dir)
	if got := sum.Stages["stage.best_idea.rouge"].Total; got != 5 {
		t.Errorf("best_idea: %d nodes, want 5 (one per target)", got)
	}
	if got := sum.Stages["stage.best_idea.rouge"].LLMCalls; got != 0 {
		t.Errorf("best_idea made %d calls", got)
	}
	best := map[string]ideabench.BestIdeaOutput{}
	for _, v := range outputs(t, e, g, "stage.best_idea.rouge") {
		var b ideabench.BestIdeaOutput
		if err := json.Unmarshal(v.Result.Output, &b); err != nil {
			t.Fatal(err)
		}
		best[v.Item] = b
	}
	if !best["qs-codegen"].Dropped || len(best) != 5 {
		t.Fatalf("best ideas: %+v", best)
	}
	rated := map[string]string{}
	for _, v := range outputs(t, e, g, "stage.overlap_rating.best") {
		rated[v.Item] = string(v.Result.Output)
	}
	for _, v := range outputs(t, e, g, "stage.overlap_rating.picked") {
		if rated[v.Item] != string(v.Result.Output) {
			t.Errorf("%s: rating through best_idea %s, overlap_rating's own pick %s", v.Item, v.Result.Output, rated[v.Item])
		}
		var o ideabench.OverlapOutput
		if err := json.Unmarshal(v.Result.Output, &o); err != nil {
			t.Fatal(err)
		}
		if b := best[v.Item]; !b.Dropped && (o.IdeaIndex != b.IdeaIndex || b.Idea == "" || b.Score <= 0) {
			t.Errorf("%s: rated idea %d, best_idea %+v", v.Item, o.IdeaIndex, b)
		}
	}
	// The same request as overlap_rating.best's, but keyed on other inputs
	// (the best_idea node, not the ideas and similarity): 4 calls of its own.
	if got := sum.Stages["stage.overlap_rating.picked"].LLMCalls; got != 4 || sum.LLMCalls != 29+4 {
		t.Errorf("picked: %d calls, %d in all; want 4 and 33", got, sum.LLMCalls)
	}
}
