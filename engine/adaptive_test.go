package engine

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// adaptiveHCL is a small LiveIdeaBench on the fake server: 3 generators,
// 4 judges (2 per idea), 2 ideas per keyword, 200 keywords taken 20 at a
// time. %s is the stop_when block's conditions.
const adaptiveHCL = `
provider "fake" {
  kind        = "openai"
  base_url    = %q
  api_key_env = "ADAPTIVE_TEST_KEY"
}
model "gen_a" {
  provider = provider.fake
  name     = "openai/gpt-4o-mini"
  family   = "openai"
  seed     = 1
}
model "gen_b" {
  provider = provider.fake
  name     = "qwen/qwq-32b-preview"
  family   = "qwen"
  seed     = 1
}
model "gen_c" {
  provider = provider.fake
  name     = "x-ai/grok-2-1212"
  family   = "xai"
  seed     = 1
}
model "j_openai" {
  provider = provider.fake
  name     = "openai/gpt-4o"
  family   = "openai"
}
model "j_anthropic" {
  provider = provider.fake
  name     = "anthropic/claude-3.5-sonnet"
  family   = "anthropic"
}
model "j_google" {
  provider = provider.fake
  name     = "google/gemini-pro-1.5"
  family   = "google"
}
model "j_meta" {
  provider = provider.fake
  name     = "meta-llama/llama-3.1-405b-instruct"
  family   = "meta"
}
dataset "kw" {
  format = "jsonl"
  path   = "kw.jsonl"
}
stage "generate_from_keyword" "gen" {
  for_each          = { for m in [model.gen_a, model.gen_b, model.gen_c] : m.name => m }
  keywords          = dataset.kw
  model             = each.value
  ideas_per_keyword = 2
  prompt            = "Give one scientific idea about {{.Keyword}}."
  refusal_phrases   = []
  min_chars         = 0
}
stage "judge_panel" "main" {
  ideas           = stage.generate_from_keyword.gen
  panel           = [model.j_openai, model.j_anthropic, model.j_google, model.j_meta]
  judges_per_idea = 2
  seed            = 1
}
stop_when {
  items  = dataset.kw
  scores = stage.judge_panel.main
  round  = 20
  seed   = 7
  method = "betting"
  %s
}
`

// quality is each generator's true mean score under the scripted judges.
var quality = map[string]int{"openai/gpt-4o-mini": 8, "qwen/qwq-32b-preview": 5, "x-ai/grok-2-1212": 6}

// scriptedJudges answers generation with an idea naming its model and
// judging with the generator's quality plus noise in -1..1 drawn from a
// digest of the request (the same request, the same score: seeded).
func scriptedJudges(req *openai.ChatCompletionRequest) string {
	first := req.Messages[0].Content
	switch {
	case strings.HasPrefix(first, "Give one scientific idea about "):
		kw := strings.TrimSuffix(strings.TrimPrefix(first, "Give one scientific idea about "), ".")
		return fmt.Sprintf("We propose to study %s with assay %d of %s.", kw, *req.Seed, req.Model)
	case strings.Contains(first, "demanding scientific reviewer"):
		user := req.Messages[1].Content
		q := 0
		for gen, v := range quality {
			if strings.Contains(user, " of "+gen+".") {
				q = v
			}
		}
		h := sha256.Sum256([]byte(req.Model + "\x00" + user))
		s := min(10, max(1, q+int(h[0]%3)-1))
		return fmt.Sprintf("Fine.\n\n```json\n{\"originality\": %d, \"feasibility\": %d, \"clarity\": %d}\n```", s, s, s)
	}
	return llmtest.DefaultResponder(req)
}

func writeAdaptive(t *testing.T, dir, url, conditions string, keywords int) {
	t.Helper()
	var kw strings.Builder
	for i := 0; i < keywords; i++ {
		fmt.Fprintf(&kw, `{"id": "k%03d", "keyword": "keyword number %d", "domain": "Physics"}`+"\n", i, i)
	}
	for name, text := range map[string]string{"exp.hcl": fmt.Sprintf(adaptiveHCL, url, conditions), "kw.jsonl": kw.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runAdaptive(t *testing.T, e *Engine, dir string) *AdaptiveSummary {
	t.Helper()
	exp, diags := config.Load(dir, config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	e.Exec = NewLocalExecutor(exp.LLMProviders(), zerolog.Nop())
	sum, err := e.RunAdaptive(context.Background(), exp, RunOptions{ReportDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestAdaptiveRoundsStopAndContinue: under scripted judges the stopping
// round and the board are fixed for the seed; each round sends only its
// new keywords' calls (20 keywords x 3 models x (2 ideas + 4
// judgements) = 360); and raising the target continues from the cache:
// the rounds already run send no request, the fake server counts only the
// new rounds' calls.
func TestAdaptiveRoundsStopAndContinue(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(scriptedJudges))
	t.Cleanup(srv.Close)
	t.Setenv("ADAPTIVE_TEST_KEY", "sk-adaptive-test")
	dir := t.TempDir()
	writeAdaptive(t, dir, srv.URL, "separated = 0.95", 200)
	e := &Engine{Store: cache.NewMemory()}

	sum := runAdaptive(t, e, dir)
	const perRound = 20 * 3 * (2 + 4)
	last := sum.Last()
	t.Logf("stopped after %d rounds (%s), %d calls; board %v", len(sum.Rounds), sum.Reason, sum.Calls, last.Decision.Intervals)
	if sum.Reason != "separated" || len(sum.Rounds) != wantStopRound || sum.Calls != wantStopRound*perRound || srv.Count() != sum.Calls {
		t.Fatalf("stopped by %q after %d rounds, %d calls (server %d); want separated after %d rounds, %d calls",
			sum.Reason, len(sum.Rounds), sum.Calls, srv.Count(), wantStopRound, wantStopRound*perRound)
	}
	for i, r := range sum.Rounds {
		if r.Calls != perRound || r.Items != 20*(i+1) || r.Scored != 20*(i+1) {
			t.Errorf("round %d: %d calls, %d items, %d scored; want %d, %d, %d", r.Round, r.Calls, r.Items, r.Scored, perRound, 20*(i+1), 20*(i+1))
		}
	}
	// The board: gen_a (8) above gen_c (6) above gen_b (5), every pair
	// separated. Models are in the instances' order.
	if fmt.Sprint(sum.Models) != "[openai/gpt-4o-mini qwen/qwq-32b-preview x-ai/grok-2-1212]" ||
		fmt.Sprint(last.Decision.Separated) != "[{0 1} {0 2} {2 1}]" || last.Decision.Open != 0 {
		t.Errorf("board %v: separated %v, open %d", sum.Models, last.Decision.Separated, last.Decision.Open)
	}

	// The same rule again: every round from the cache, no request.
	before := srv.Count()
	again := runAdaptive(t, e, dir)
	if again.Calls != 0 || srv.Count() != before || len(again.Rounds) != wantStopRound || fmt.Sprint(again.Last().Decision) != fmt.Sprint(last.Decision) {
		t.Errorf("re-run: %d calls (server +%d), %d rounds; want 0, 0, %d, the same board", again.Calls, srv.Count()-before, len(again.Rounds), wantStopRound)
	}

	// A raised target (every half-width under 0.3): the earlier rounds
	// come from the cache, only the rounds past them call.
	writeAdaptive(t, dir, srv.URL, "half_width = 0.3", 200)
	raised := runAdaptive(t, e, dir)
	for _, r := range raised.Rounds[:wantStopRound] {
		if r.Calls != 0 {
			t.Errorf("raised target, round %d (run before): %d calls; want 0", r.Round, r.Calls)
		}
	}
	newRounds := len(raised.Rounds) - wantStopRound
	t.Logf("raised target: %d rounds (%s), %d new calls", len(raised.Rounds), raised.Reason, raised.Calls)
	if newRounds <= 0 || raised.Calls != newRounds*perRound || srv.Count()-before != raised.Calls || raised.Reason != "half_width" || len(raised.Rounds) != wantRaisedRound {
		t.Errorf("raised target: %d rounds (%s), %d calls, server +%d; want %d rounds by half_width, %d calls",
			len(raised.Rounds), raised.Reason, raised.Calls, srv.Count()-before, wantRaisedRound, (wantRaisedRound-wantStopRound)*perRound)
	}
}

const (
	wantStopRound   = 6
	wantRaisedRound = 8
)
