package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

const batchKeyEnv = "BATCH_TEST_KEY"

// batchExperiment is the quickstart pipeline with a third model stage:
// extract_idea states each target's idea with the judge (depth 1, beside
// generate_ideas), and rank_ideas ranks the generated ideas against it
// (depth 2). So 3 model stages, 2 batch rounds.
func batchExperiment(t *testing.T, dir, url string, batch bool, settings ...string) {
	t.Helper()
	hcl := fmt.Sprintf(`
provider "fake" {
  kind               = "openai"
  base_url           = %q
  api_key_env        = %q
  max_retries        = 2
  batch              = %v
  batch_poll_seconds = 0.001
  %s
}

model "gen" {
  provider    = provider.fake
  name        = "gen-a"
  temperature = 0.8
  max_tokens  = 300
  price {
    input_per_mtok              = 2
    output_per_mtok             = 8
    batch_input_per_mtok        = 1
    batch_output_per_mtok       = 4
    cached_input_per_mtok       = 0.5
    batch_cached_input_per_mtok = 0.25
  }
}

model "judge" {
  provider    = provider.fake
  name        = "judge-model"
  temperature = 0
  max_tokens  = 200
  price {
    input_per_mtok  = 1
    output_per_mtok = 2
  }
}

dataset "targets" {
  format = "ideabench"
  path   = "data/targets.jsonl"
}

quality "novelty" {
  definition = "developing new methodologies, techniques, or instruments"
}

stage "filter_references" "low" {
  dataset = dataset.targets
  limit   = 5
}

stage "extract_idea" "stated" {
  targets      = stage.filter_references.low
  model        = model.judge
  dataset_idea = false
}

stage "generate_ideas" "main" {
  model      = model.gen
  references = stage.filter_references.low
  n          = 2
  prompt     = file("prompts/generate.tmpl")
}

stage "rank_ideas" "novelty" {
  ideas   = stage.generate_ideas.main
  judge   = model.judge
  quality = quality.novelty
  target  = stage.extract_idea.stated
}

stage "insight_score" "novelty" {
  ranks = stage.rank_ideas.novelty
}
`, url, batchKeyEnv, batch, strings.Join(settings, "\n  "))
	writeExperiment(t, dir, scenario{})
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
}

// batchResponder answers the extraction prompt with a hypothesis (the
// quickstart responder's idea text would do as well, but this reads as
// one), everything else as responder does.
func batchResponder(req *openai.ChatCompletionRequest) string {
	if strings.Contains(req.Messages[len(req.Messages)-1].Content, "Summary:") {
		return "Hypothesis: " + responder(req)
	}
	return responder(req)
}

// outputs reads every record of a cache: key -> output.
func outputs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	st, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string][]byte{}
	if err := st.List(func(e cache.Entry) error {
		rec, err := st.Get(e.Key)
		if err != nil {
			return err
		}
		out[e.Key] = rec.Output
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBatchPipelineMatchesSync: the pipeline run through batches (the real
// client, the in-process fake of the Batch API) stores, key for key, the
// bytes the synchronous run stores, with as many distinct requests, each
// submitted once, in one batch per stage depth (2 rounds).
func TestBatchPipelineMatchesSync(t *testing.T) {
	srv := llmtest.NewBatch(llmtest.New(llmtest.WithResponder(batchResponder)))
	defer srv.Close()
	t.Setenv(batchKeyEnv, "sk-batch-test")
	dir := t.TempDir()

	syncExp, syncCache := filepath.Join(dir, "sync"), filepath.Join(dir, "sync-cache")
	batchExperiment(t, syncExp, srv.URL, false)
	if code, out, errOut := cli(t, "run", syncExp, "--cache-dir", syncCache); code != 0 {
		t.Fatalf("sync run: exit %d\n%s\n%s", code, out, errOut)
	}
	syncRequests := srv.Chat.Count()

	batchExp, batchCache := filepath.Join(dir, "batch"), filepath.Join(dir, "batch-cache")
	batchExperiment(t, batchExp, srv.URL, true)
	sumPath := filepath.Join(dir, "batch.json")
	code, out, errOut := cli(t, "run", batchExp, "--cache-dir", batchCache, "--summary-json", sumPath)
	if code != 0 {
		t.Fatalf("batch run: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := srv.Chat.Count(); n != syncRequests {
		t.Errorf("the batch run sent %d synchronous requests", n-syncRequests)
	}
	submitted := srv.Submitted()
	if len(submitted) != syncRequests {
		t.Errorf("%d distinct requests in batches, %d synchronous", len(submitted), syncRequests)
	}
	for id, n := range submitted {
		if n != 1 {
			t.Errorf("%s submitted %d times", id, n)
		}
	}
	// Round 1: generate_ideas' 8 requests (gen-a) and extract_idea's 4
	// (judge-model), one input file per model; round 2: the 4 rankings.
	var rounds []string
	for _, b := range srv.Batches() {
		rounds = append(rounds, fmt.Sprintf("%d:%d", b.RetrievesBefore, len(b.CustomIDs)))
	}
	if len(rounds) == 3 {
		slices.Sort(rounds[:2]) // the two files of round 1 go in the order their first tasks came
	}
	if c := srv.Counts(); c.Creates != 3 || c.Uploads != 3 || len(rounds) != 3 || rounds[0] != "0:4" || rounds[1] != "0:8" ||
		strings.HasPrefix(rounds[2], "0:") || !strings.HasSuffix(rounds[2], ":4") {
		t.Errorf("counts %+v, batches (polls before:lines) %v; want 8 and 4 lines before any poll, then 4", c, rounds)
	}
	want, got := outputs(t, syncCache), outputs(t, batchCache)
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("the batch run stored %d records, the sync run %d, under other keys", len(got), len(want))
	}
	for k, w := range want {
		if !bytes.Equal(got[k], w) {
			t.Errorf("%s: batch output %s\n      sync output %s", k, got[k], w)
		}
	}
	sum := readSummary(t, sumPath)
	if sum.Nodes.Failed != 0 || sum.Nodes.Skipped != 0 || sum.LLMCalls != syncRequests {
		t.Errorf("summary: %+v", sum.Nodes)
	}
	// A run after it finds everything cached and opens no batch.
	before := srv.Counts()
	if code, out, errOut := cli(t, "run", batchExp, "--cache-dir", batchCache); code != 0 || srv.Counts() != before {
		t.Fatalf("warm run: exit %d, counts %+v then %+v\n%s\n%s", code, before, srv.Counts(), out, errOut)
	}
	t.Logf("%d requests; sync and batch outputs equal for %d records", syncRequests, len(want))
}

// TestBatchCostAtBatchAndCachedRates: every line of every batch reports
// 100 prompt tokens, 40 of them from the prompt cache, and 10 completion
// tokens. gen-a's price block gives batch and cached batch rates ($1,
// $0.25 and $4 per million): (60*1 + 40*0.25 + 10*4)/1e6 = $0.000110 a
// call. The judge's gives only sync rates ($1, $2), which a batch falls
// back to, and cached input falls back to the input rate: $0.000120. 8
// calls of each: $0.001840, where the sync price would be 8*(100*2 +
// 10*8)/1e6 + 8*(100*1 + 10*2)/1e6 = $0.003200. The records keep the
// cached tokens, and show says which batch answered.
func TestBatchCostAtBatchAndCachedRates(t *testing.T) {
	usage := &openai.Usage{PromptTokens: 100, CompletionTokens: 10, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 40}}
	srv := llmtest.NewBatch(llmtest.New(llmtest.WithResponder(batchResponder)), llmtest.WithBatchPlan(func(n int, ids []string) llmtest.BatchPlan {
		lines := map[string]llmtest.LineScript{}
		for _, id := range ids {
			lines[id] = llmtest.LineScript{Fault: llmtest.Fault{Usage: usage}}
		}
		return llmtest.BatchPlan{Lines: lines}
	}))
	defer srv.Close()
	t.Setenv(batchKeyEnv, "sk-batch-test")
	dir := t.TempDir()
	exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
	batchExperiment(t, exp, srv.URL, true)
	sumPath := filepath.Join(dir, "sum.json")
	code, out, errOut := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath, "--max-cost", "1")
	if code != 0 || !strings.Contains(out, ". 16 model calls, 1600+160 tokens (640 input from prompt caches), $0.0018, ") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	sum := readSummary(t, sumPath)
	const want = 8*110e-6 + 8*120e-6
	if d := sum.CostUSD - want; d > 1e-12 || d < -1e-12 || sum.LLMCalls != 16 || sum.Tokens.Input != 1600 || sum.Tokens.Output != 160 || sum.Tokens.Cached != 640 {
		t.Errorf("cost $%.9f, %d calls, %+v tokens; want $%.9f, 16 calls, 1600 (640 cached) + 160 tokens", sum.CostUSD, sum.LLMCalls, sum.Tokens, want)
	}
	const gen0 = `stage.generate_ideas.main/qs-membrane/sample 0`
	code, out, errOut = cli(t, "show", gen0, exp, "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("show: exit %d\n%s", code, errOut)
	}
	var batchID string
	for _, b := range srv.Batches() {
		for _, id := range b.CustomIDs {
			if len(b.CustomIDs) == 8 && batchID == "" && id != "" {
				batchID = b.ID
			}
		}
	}
	for _, line := range []string{
		"  usage:       100 input + 10 output tokens (40 input from the provider's prompt cache), $0.000110, ",
		"  obtained:    by batch " + batchID + " of provider fake\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("show lacks %q:\n%s", line, out)
		}
	}
}

// syncOutputs runs the batch experiment synchronously against srv in a
// cache of its own and returns its records' outputs and how many requests
// it sent.
func syncOutputs(t *testing.T, srv *llmtest.BatchServer, dir string) (map[string][]byte, int) {
	t.Helper()
	exp, cacheDir := filepath.Join(dir, "sync"), filepath.Join(dir, "sync-cache")
	batchExperiment(t, exp, srv.URL, false)
	before := srv.Chat.Count()
	if code, out, errOut := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("sync run: exit %d\n%s\n%s", code, out, errOut)
	}
	return outputs(t, cacheDir), srv.Chat.Count() - before
}

// checkSameAsSync asserts a batch cache holds the sync run's outputs and
// that the fake saw each of its requests submitted exactly once.
func checkSameAsSync(t *testing.T, srv *llmtest.BatchServer, cacheDir string, want map[string][]byte, requests int) {
	t.Helper()
	submitted := srv.Submitted()
	if len(submitted) != requests {
		t.Errorf("%d distinct requests submitted, want %d", len(submitted), requests)
	}
	for id, n := range submitted {
		if n != 1 {
			t.Errorf("%s submitted %d times", id, n)
		}
	}
	got := outputs(t, cacheDir)
	if len(got) < len(want) {
		t.Errorf("%d records, want %d", len(got), len(want))
	}
	// An interrupted (or detached) run also stores the aggregates it
	// computed over the items it had (under keys that say so); the final
	// run's are the sync run's.
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Logf("also stored %s: %.200s", k, v)
		}
	}
	for k, w := range want {
		if !bytes.Equal(got[k], w) {
			t.Errorf("%s: output %s, want %s", k, got[k], w)
		}
	}
}

// TestBatchDetachAndResume: run --detach submits what is ready, polls
// once and exits 0 with the batches in flight (ideaflow batches lists
// them); each later run --detach polls again, collects what ended and
// submits the next round; the runs end with the sync run's outputs, each
// request submitted once.
func TestBatchDetachAndResume(t *testing.T) {
	srv := llmtest.NewBatch(llmtest.New(llmtest.WithResponder(batchResponder)))
	defer srv.Close()
	t.Setenv(batchKeyEnv, "sk-batch-test")
	dir := t.TempDir()
	want, requests := syncOutputs(t, srv, dir)
	exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
	batchExperiment(t, exp, srv.URL, true)

	runs := 0
	for ; runs < 20; runs++ {
		code, out, errOut := cli(t, "run", exp, "--cache-dir", cacheDir, "--detach")
		if code != 0 {
			t.Fatalf("run %d --detach: exit %d\n%s\n%s", runs+1, code, out, errOut)
		}
		if !strings.Contains(out, "detached: ") {
			break
		}
		if runs == 0 {
			if !strings.Contains(out, "detached: 12 request(s) in 2 batch(es) of provider fake in flight; run again") {
				t.Errorf("first run's output:\n%s", out)
			}
			code, list, errOut := cli(t, "batches", exp, "--cache-dir", cacheDir)
			if code != 0 || !strings.Contains(list, "provider fake: 2 submission(s) in flight") || strings.Count(list, "  submitted  ") != 2 {
				t.Errorf("batches: exit %d\n%s\n%s", code, list, errOut)
			}
		}
	}
	// One status per poll (validating, in_progress, finalizing,
	// completed): each round takes several detached runs.
	if runs < 4 || runs == 20 {
		t.Fatalf("%d detached runs", runs)
	}
	t.Logf("%d runs --detach left batches in flight; the next one finished the run", runs)
	checkSameAsSync(t, srv, cacheDir, want, requests)
	code, list, _ := cli(t, "batches", exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(list, "provider fake: no batch in flight") {
		t.Errorf("batches after the last run: exit %d\n%s", code, list)
	}
}

// TestBatchKilledRunSubmitsNothingTwice SIGKILLs a batch run at each step
// a crash could lose (the server holds that request unanswered until the
// child is gone, so the kill lands exactly there), then resumes it in a
// new process: every request is submitted once across both, and the
// outputs are the sync run's.
//
//   - during the first upload: the intent is recorded, nothing uploaded;
//   - at the first poll: the first round's batches are created and
//     recorded;
//   - during the first download: a batch has ended, nothing handed over;
//   - during the second round's upload: round 1's answers were handed over
//     (and maybe stored), its submissions still open in the journal.
func TestBatchKilledRunSubmitsNothingTwice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		route string
		nth   int // 0: the first request of the route
	}{
		{"during upload", llmtest.RouteUpload, 0},
		{"after submit", llmtest.RouteRetrieve, 0},
		{"during download", llmtest.RouteDownload, 0},
		{"during the second round's upload", llmtest.RouteUpload, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewBatch(llmtest.New(llmtest.WithResponder(batchResponder)))
			defer srv.Close()
			t.Setenv(batchKeyEnv, "sk-batch-test")
			dir := t.TempDir()
			want, requests := syncOutputs(t, srv, dir)
			exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
			batchExperiment(t, exp, srv.URL, true)

			held := make(chan struct{})
			var mu sync.Mutex
			seen := 0
			srv.SetHook(func(route string, r *http.Request) bool {
				if route != tc.route {
					return false
				}
				mu.Lock()
				defer mu.Unlock()
				seen++
				if seen == tc.nth+1 {
					close(held)
					return true
				}
				return seen > tc.nth+1 // nothing else of the route gets through either
			})
			child := exec.Command(os.Args[0], "-test.run=^$")
			child.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1",
				"IDEAFLOW_TEST_ARGS="+strings.Join([]string{"run", exp, "--cache-dir", cacheDir, "--log-level", "warn"}, "\x1f"))
			var childOut strings.Builder
			child.Stdout, child.Stderr = &childOut, &childOut
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- child.Wait() }()
			select {
			case <-held:
			case err := <-exited:
				t.Fatalf("the child ended (%v) before the held request:\n%s", err, childOut.String())
			}
			if err := child.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-exited
			srv.SetHook(nil)
			before := srv.Submitted()

			code, out, errOut := cli(t, "run", exp, "--cache-dir", cacheDir)
			if code != 0 {
				t.Fatalf("resumed run: exit %d\n%s\n%s", code, out, errOut)
			}
			checkSameAsSync(t, srv, cacheDir, want, requests)
			if n := srv.Chat.Count(); n != requests {
				t.Errorf("%d synchronous requests besides the sync run's", n-requests)
			}
			t.Logf("%d of %d requests were submitted before the kill", len(before), requests)
		})
	}
}

// TestBatchPlanRoundsAndCost: plan states the calls that go in batches,
// their rounds (2: generate_ideas and extract_idea, then rank_ideas) and
// their cost at batch prices beside the synchronous estimate: gen-a's
// tokens at $1 and $4 per million instead of $2 and $8, the judge's at
// its synchronous prices (its block gives no batch price). After the
// run, nothing is left to batch and plan says nothing of batches.
func TestBatchPlanRoundsAndCost(t *testing.T) {
	srv := llmtest.NewBatch(llmtest.New(llmtest.WithResponder(batchResponder)))
	defer srv.Close()
	t.Setenv(batchKeyEnv, "sk-batch-test")
	dir := t.TempDir()
	exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
	batchExperiment(t, exp, srv.URL, true)

	code, out, errOut := cli(t, "plan", exp, "--cache-dir", cacheDir, "--json")
	if code != 0 {
		t.Fatalf("plan --json: exit %d\n%s", code, errOut)
	}
	var p engine.PlanSummary
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	gen := p.Stages["stage.generate_ideas.main"].Estimate
	ext := p.Stages["stage.extract_idea.stated"].Estimate
	rank := p.Stages["stage.rank_ideas.novelty"].Estimate
	if gen == nil || ext == nil || rank == nil || p.Batch == nil {
		t.Fatalf("plan: %s", out)
	}
	wantBatch := float64(gen.TokensInput)/1e6*1 + float64(gen.TokensOutput)/1e6*4 + ext.CostUSD + rank.CostUSD
	b := p.Batch
	if b.Rounds != 2 || b.Calls != 16 || !slices.Equal(b.Providers, []string{"fake"}) || math.Abs(b.CostUSD-wantBatch) > 1e-12 ||
		math.Abs(b.SyncCostUSD-p.Estimate.CostUSD) > 1e-12 || gen.LLMCalls != 8 || ext.LLMCalls != 4 || rank.LLMCalls != 4 {
		t.Errorf("batch plan %+v; want 2 rounds, 16 calls, $%.9f at batch prices, $%.9f sync", *b, wantBatch, p.Estimate.CostUSD)
	}
	_, text, _ := cli(t, "plan", exp, "--cache-dir", cacheDir)
	line := fmt.Sprintf("Batches (provider fake): 16 of the 16 model calls in 2 batch rounds (one per stage depth), ~$%.4f at batch prices against ~$%.4f synchronously.\n",
		wantBatch, p.Estimate.CostUSD)
	if !strings.Contains(text, line) {
		t.Errorf("plan lacks %q:\n%s", line, text)
	}
	t.Logf("plan: %s", strings.TrimSpace(line))

	if code, out, errOut := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, text, _ := cli(t, "plan", exp, "--cache-dir", cacheDir); strings.Contains(text, "Batches") {
		t.Errorf("plan of a cached run speaks of batches:\n%s", text)
	}
}

// TestBatchFailedLinesRetriedByPolicy: the first batch's first line comes
// back with a request_timeout error object, and the second batch expires
// with none of its lines run. batch_retry = "batch" asks them again in
// the next round (each of those requests is submitted twice, no other
// more than once); "sync" asks them synchronously at once;
// "none" fails their nodes. Either retry policy ends with the sync run's
// outputs.
func TestBatchFailedLinesRetriedByPolicy(t *testing.T) {
	// The requests asked again: the failed line and every line of the
	// expired batch (4 or 8: the round's two files go in the order their
	// first tasks came).
	for _, tc := range []struct {
		policy      string
		sync, twice bool // the retried requests go synchronously / in a later batch
		wantFailed  bool
	}{
		{"batch", false, true, false},
		{"sync", true, false, false},
		{"none", false, false, true},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			var failedFirst string
			var expiredN int
			srv := llmtest.NewBatch(llmtest.New(llmtest.WithResponder(batchResponder)), llmtest.WithBatchPlan(func(n int, ids []string) llmtest.BatchPlan {
				switch n {
				case 1:
					failedFirst = ids[0]
					return llmtest.BatchPlan{Lines: map[string]llmtest.LineScript{ids[0]: {Error: "request_timeout"}}}
				case 2:
					expiredN = len(ids)
					return llmtest.BatchPlan{End: llmtest.BatchExpired}
				}
				return llmtest.BatchPlan{}
			}))
			defer srv.Close()
			t.Setenv(batchKeyEnv, "sk-batch-test")
			dir := t.TempDir()
			want, requests := syncOutputs(t, srv, dir)
			exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
			batchExperiment(t, exp, srv.URL, true, fmt.Sprintf("batch_retry = %q", tc.policy))
			code, out, errOut := cli(t, "run", exp, "--cache-dir", cacheDir)
			if tc.wantFailed {
				if code != exitFailedNodes || !strings.Contains(out, "line_error request_timeout") || !strings.Contains(out, "expired") {
					t.Fatalf("exit %d, want %d with the line's error:\n%s\n%s", code, exitFailedNodes, out, errOut)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			retried := expiredN + 1
			if failedFirst == "" || (expiredN != 4 && expiredN != 8) {
				t.Fatalf("failed line %q, %d expired lines", failedFirst, expiredN)
			}
			wantSync, wantTwice := 0, 0
			if tc.sync {
				wantSync = retried
			}
			if tc.twice {
				wantTwice = retried
			}
			if n := srv.Chat.Count() - requests; n != wantSync {
				t.Errorf("%d synchronous requests, want %d", n, wantSync)
			}
			twice := 0
			for id, n := range srv.Submitted() {
				switch {
				case n == 2:
					twice++
				case n != 1:
					t.Errorf("%s submitted %d times", id, n)
				}
			}
			if twice != wantTwice || srv.Submitted()[failedFirst] != 1+min(wantTwice, 1) {
				t.Errorf("%d requests submitted twice, want %d", twice, wantTwice)
			}
			t.Logf("%d requests asked again (%s)", retried, tc.policy)
			got := outputs(t, cacheDir)
			for k, w := range want {
				if !bytes.Equal(got[k], w) {
					t.Errorf("%s: output %s, want %s", k, got[k], w)
				}
			}
		})
	}
}

// TestBatchBudgetAtBatchPrices: --max-cost reserves a batch call's
// estimate at its batch price before the round is submitted. A budget of
// $0.0205 covers the plan's batch estimate ($0.020378: see
// TestBatchPlanRoundsAndCost) but not its synchronous one ($0.0326): the
// batch run completes. Whether the same experiment run synchronously stops
// at the budget depends on how many calls are in flight when the answers'
// real cost (below the estimates) settles, so that half checks the plan's
// synchronous estimate only: over the budget.
func TestBatchBudgetAtBatchPrices(t *testing.T) {
	srv := llmtest.NewBatch(llmtest.New(llmtest.WithResponder(batchResponder)))
	defer srv.Close()
	t.Setenv(batchKeyEnv, "sk-batch-test")
	dir := t.TempDir()
	for _, batch := range []bool{true, false} {
		exp, cacheDir := filepath.Join(dir, fmt.Sprint("exp-", batch)), filepath.Join(dir, fmt.Sprint("cache-", batch))
		batchExperiment(t, exp, srv.URL, batch)
		_, plan, _ := cli(t, "plan", exp, "--cache-dir", cacheDir)
		code, out, errOut := cli(t, "run", exp, "--cache-dir", cacheDir, "--max-cost", "0.0205")
		switch {
		case batch && code != 0:
			t.Errorf("batch run: exit %d\n%s\n%s\n%s", code, plan, out, errOut)
		case !batch && !strings.Contains(plan, "~$0.0326"):
			t.Errorf("sync plan: want the estimate ~$0.0326, over the budget\n%s", plan)
		}
	}
}

// TestBatchCancel: `ideaflow batches --cancel ID` cancels one of a
// detached run's submissions at the provider. The next run collects the
// batch as cancelled (no line of it ran) and fails those nodes, saying
// so: a cancel means "stop paying for these", so the run does not ask them
// again by itself (batch.Failure.Retryable). The run after that asks them
// again and ends with the sync run's outputs. Every request is answered
// once: the cancelled lines were never executed. An id the journal does
// not hold is refused (exit 2), and nothing is cancelled.
func TestBatchCancel(t *testing.T) {
	srv := llmtest.NewBatch(llmtest.New(llmtest.WithResponder(batchResponder)))
	defer srv.Close()
	t.Setenv(batchKeyEnv, "sk-batch-test")
	dir := t.TempDir()
	want, requests := syncOutputs(t, srv, dir)
	exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
	batchExperiment(t, exp, srv.URL, true)
	if code, out, errOut := cli(t, "run", exp, "--cache-dir", cacheDir, "--detach"); code != 0 || !strings.Contains(out, "detached: ") {
		t.Fatalf("run --detach: exit %d\n%s\n%s", code, out, errOut)
	}
	code, list, errOut := cli(t, "batches", exp, "--cache-dir", cacheDir)
	subs := regexp.MustCompile(`(?m)^  (\S+)  batch (\S+)  submitted  (\d+) request\(s\)`).FindAllStringSubmatch(list, -1)
	if code != 0 || len(subs) != 2 {
		t.Fatalf("batches: exit %d, %d submissions listed\n%s\n%s", code, len(subs), list, errOut)
	}
	subID, batchID := subs[0][1], subs[0][2]
	lines, _ := strconv.Atoi(subs[0][3])

	if code, _, errOut := cli(t, "batches", exp, "--cache-dir", cacheDir, "--cancel", "sub-none"); code != exitBadInput ||
		!strings.Contains(errOut, `no open submission "sub-none"; `+"`ideaflow batches`"+` lists them`) || srv.Counts().Cancels != 0 {
		t.Fatalf("cancel of an unknown id: exit %d, %d cancels\n%s", code, srv.Counts().Cancels, errOut)
	}
	code, out, errOut := cli(t, "batches", exp, "--cache-dir", cacheDir, "--cancel", subID)
	if code != 0 || !strings.Contains(out, "asked provider fake to cancel "+subID+"; the next run collects what ran") || srv.Counts().Cancels != 1 {
		t.Fatalf("cancel: exit %d, %d cancels\n%s\n%s", code, srv.Counts().Cancels, out, errOut)
	}

	code, out, errOut = cli(t, "run", exp, "--cache-dir", cacheDir)
	if code != exitFailedNodes || strings.Count(out, "This request was not executed because the batch was cancelled.") != lines ||
		!strings.Contains(errOut, fmt.Sprintf("%d node(s) failed; run again to retry them", lines)) {
		t.Fatalf("run after the cancel: exit %d, want %d with the %d cancelled nodes failed\n%s\n%s", code, exitFailedNodes, lines, out, errOut)
	}
	if code, out, errOut := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("the run after that: exit %d\n%s\n%s", code, out, errOut)
	}
	var cancelled []llmtest.BatchInfo
	for _, b := range srv.Batches() {
		if b.Status == llmtest.BatchCancelled {
			cancelled = append(cancelled, b)
		}
	}
	if len(cancelled) != 1 || cancelled[0].ID != batchID || len(cancelled[0].CustomIDs) != lines {
		t.Fatalf("cancelled batches %+v; want only %s, with its %d lines", cancelled, batchID, lines)
	}
	// The cancelled lines ran nowhere: every request ran once, and only
	// the cancelled ones were submitted twice (the later run's batch asks
	// them under the same custom_ids).
	executed, submitted := srv.Executed(), srv.Submitted()
	again := map[string]bool{}
	for _, id := range cancelled[0].CustomIDs {
		again[id] = true
	}
	if len(executed) != requests || len(submitted) != requests {
		t.Errorf("%d requests executed and %d submitted; want %d", len(executed), len(submitted), requests)
	}
	for id, n := range submitted {
		if want := map[bool]int{true: 2, false: 1}[again[id]]; n != want || executed[id] != 1 {
			t.Errorf("%s submitted %d times (want %d), executed %d (want 1)", id, n, want, executed[id])
		}
	}
	got := outputs(t, cacheDir)
	for k, w := range want {
		if !bytes.Equal(got[k], w) {
			t.Errorf("%s: output %s, want %s", k, got[k], w)
		}
	}
	if code, list, _ := cli(t, "batches", exp, "--cache-dir", cacheDir); code != 0 || !strings.Contains(list, "provider fake: no batch in flight") {
		t.Errorf("batches after the run: exit %d\n%s", code, list)
	}
}
