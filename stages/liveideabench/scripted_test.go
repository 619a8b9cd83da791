package liveideabench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages/liveideabench"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// Judges on the fake OpenAI server, through the real client: ideas of
// keyword 0 always get an answer without scores (re-asked once, then the
// judgement fails and is counted), keyword 1's first answer has none but
// the repair's does, the others answer at once with originality 8,
// feasibility 6, clarity 7. Fluency judges answer "Answer: B".
func TestScriptedJudgesRepairAndFailures(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(func(req *openai.ChatCompletionRequest) string {
		first := req.Messages[0].Content
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.HasPrefix(first, "Give one scientific idea about "):
			// The generators are seeded, so sample i arrives with seed 1+i
			// and the two samples of a keyword differ.
			return fmt.Sprintf("We propose to study %s with assay %d of %s.", strings.TrimSuffix(strings.TrimPrefix(first, "Give one scientific idea about "), "."), *req.Seed, req.Model)
		case strings.Contains(first, "demanding scientific reviewer"):
			user := req.Messages[1].Content
			repair := strings.Contains(last, "could not be used")
			if strings.Contains(user, "keyword number 0 with") || (strings.Contains(user, "keyword number 1 with") && !repair) {
				return "Looks promising, though the assay is vague."
			}
			return "The assay is vague.\n\n```json\n{\"originality\": 8, \"feasibility\": 6, \"clarity\": 7}\n```"
		case strings.Contains(first, "Good Scientific Ideas"):
			return "Answer: B"
		}
		return llmtest.DefaultResponder(req)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("LIB_TEST_KEY", "sk-liveideabench-test")
	dir := t.TempDir()
	writePipe(t, dir, 4, twoGens, fourJudge)
	hcl := strings.Replace(fmt.Sprintf(pipeHCL, twoGens, fourJudge), "  kind = \"mock\"\n  seed = 3\n",
		fmt.Sprintf("  kind = \"openai\"\n  base_url = %q\n  api_key_env = \"LIB_TEST_KEY\"\n  repair_attempts = 1\n", srv.URL), 1)
	for _, gen := range []string{"openai/gpt-4o-mini", "qwen/qwq-32b-preview"} {
		hcl = strings.Replace(hcl, "  name     = \""+gen+"\"\n", "  name     = \""+gen+"\"\n  seed     = 1\n", 1)
	}
	writeFile(t, dir, "exp.hcl", hcl)
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	out := t.TempDir()
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: out})
	if err != nil {
		t.Fatal(err)
	}
	// 16 ideas; 32 judgements: keyword 0's 8 fail after 2 calls each,
	// keyword 1's 8 take 2 calls, the other 16 one; 8 fluency pairs.
	if got := total(sum, "stage.judge_panel.main"); got != 32 {
		t.Fatalf("%d judgements", got)
	}
	if len(sum.Failures) != 8 || sum.Nodes.Failed != 8 {
		t.Errorf("%d failures (%d failed nodes), want the 8 judgements of keyword 0: %+v", len(sum.Failures), sum.Nodes.Failed, sum.Failures)
	}
	if srv.Count() != 16+8*2+8*2+16+8 {
		t.Errorf("the server saw %d requests, want 72", srv.Count())
	}
	// Every request was answered and paid for, the failed judgements' 16
	// included: llm_calls counts them all.
	if sum.LLMCalls != 72 {
		t.Errorf("llm_calls %d, want 72", sum.LLMCalls)
	}
	// The leaderboard runs over what there is (the failed judgements are
	// retried by the next run, so a plan would not show its output).
	b, err := os.ReadFile(filepath.Join(out, "leaderboard.main.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lb liveideabench.Leaderboard
	if err := json.Unmarshal(b, &lb); err != nil {
		t.Fatal(err)
	}
	for _, m := range lb.Models {
		if m.Judgements != 12 || m.Missing != 4 || m.Scores["originality"] != 8 || m.Scores["feasibility"] != 6 || m.Scores["clarity"] != 7 ||
			m.Scores["flexibility"] != 7 || m.Scores["fluency"] != 7 || m.Scores["average"] != (7+6+8+7)/4.0 {
			t.Errorf("%s: %s", m.Model, mustJSON(t, m))
		}
	}
}
