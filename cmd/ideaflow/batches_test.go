package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

const batchKeyEnv = "BATCH_TEST_KEY"

// batchExperiment is the quickstart pipeline with a third model stage:
// extract_idea states each target's idea with the judge (depth 1, beside
// generate_ideas), and rank_ideas ranks the generated ideas against it
// (depth 2). So 3 model stages, 2 batch rounds.
func batchExperiment(t *testing.T, dir, url string, batch bool) {
	t.Helper()
	hcl := fmt.Sprintf(`
provider "fake" {
  kind               = "openai"
  base_url           = %q
  api_key_env        = %q
  max_retries        = 2
  batch              = %v
  batch_poll_seconds = 0.001
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
`, url, batchKeyEnv, batch)
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
