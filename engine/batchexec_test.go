package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/batchexec"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// TestBatchRoundsThroughGrowth: batch calls whose stage is laid out only
// once the graph grows (test_each's children, one per element of the
// lists test_list's batch answered) go in later rounds. The run starts
// with 2 calls to make, so a cap on workers by the calls known at the
// start would give the provider 3: 3 of the 8 children held, the other 5
// waiting for a worker, the round (of at most 10) never full nor quiet.
// The run completes: 1 round of 2 lists, then the 8 children in one
// round, each request submitted once.
func TestBatchRoundsThroughGrowth(t *testing.T) {
	srv := llmtest.NewBatch(llmtest.New(llmtest.WithResponder(func(r *openai.ChatCompletionRequest) string {
		p := r.Messages[len(r.Messages)-1].Content
		switch p {
		case "List the methods of a":
			return "alpha\nbeta\ngamma\ndelta\nepsilon"
		case "List the methods of b":
			return "zeta\neta\ntheta"
		}
		return "about " + p
	})))
	defer srv.Close()
	dir := t.TempDir()
	hcl := strings.Replace(expandHCL, `provider "fake" {
  kind = "mock"
}`, fmt.Sprintf(`provider "fake" {
  kind               = "openai"
  base_url           = %q
  api_key_env        = "GROWTH_KEY"
  batch              = true
  batch_max_requests = 10
  batch_poll_seconds = 0.001
}`, srv.URL), 1)
	for name, text := range map[string]string{"exp.hcl": hcl, "items.jsonl": "{\"id\":\"a\"}\n{\"id\":\"b\"}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GROWTH_KEY", "sk-growth")
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	bx := batchexec.New(exp.LLMProviders(), zerolog.Nop(), batchexec.Options{Dir: filepath.Join(dir, "batches"),
		LLM: []llm.Option{llm.WithHTTPClient(srv.HTTPClient())}})
	e := &Engine{Store: cache.NewMemory(), Log: zerolog.Nop(), Exec: bx}
	sum, err := e.Run(context.Background(), g, RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := bx.Close(true); err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, b := range srv.Batches() {
		lines = append(lines, len(b.CustomIDs))
	}
	if c := stageCounts(sum, eachAddr); c.Ran != 8 || c.Failed != 0 || sum.Nodes.Failed != 0 || sum.Nodes.Skipped != 0 ||
		fmt.Sprint(lines) != "[2 8]" || len(srv.Submitted()) != 10 || srv.Chat.Count() != 0 {
		t.Errorf("each %+v, nodes %+v, batches of %v lines, %d submitted, %d sync", c, sum.Nodes, lines, len(srv.Submitted()), srv.Chat.Count())
	}
	for id, n := range srv.Submitted() {
		if n != 1 {
			t.Errorf("%s submitted %d times", id, n)
		}
	}
}
