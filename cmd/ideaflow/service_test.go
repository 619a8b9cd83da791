package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

const serviceExperiment = `
provider "emb" {
  kind        = "embeddings"
  base_url    = %q
  api_key_env = "SERVICE_API_KEY"
  max_batch   = 8
}
provider "tei" {
  kind     = "tei"
  base_url = %q
}
model "e5" {
  provider = provider.emb
  name     = "e5-small"
}
model "bert" {
  provider = provider.tei
  name     = "bert-base"
}
dataset "ideas" {
  format = "jsonl"
  path   = "items.jsonl"
}
stage "test_embed" "sentences" {
  items = dataset.ideas
  model = model.e5
}
stage "test_embed" "tokens" {
  items = dataset.ideas
  model = model.bert
  op    = "token_embeddings"
}
`

// Service calls are cached, counted and refused offline exactly like model
// calls: an experiment on an embeddings endpoint and a TEI server.
func TestServiceCallsThroughTheCLI(t *testing.T) {
	emb := llmtest.New()
	defer emb.Close()
	tei := llmtest.NewTEI()
	defer tei.Close()
	t.Setenv("SERVICE_API_KEY", "sk-service-test-key")
	dir, exp := writeServiceExperiment(t, emb.URL, tei.URL)
	cacheDir := filepath.Join(dir, "cache")
	sumPath := filepath.Join(dir, "summary.json")

	// Offline on an empty cache: refused before any request.
	empty, err := cache.Create(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	empty.Close()
	code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--offline")
	if code != exitBadInput || emb.Count() != 0 || len(tei.Requests()) != 0 || !strings.Contains(stderr, "6 service node(s) are not in the cache") {
		t.Fatalf("offline: exit %d, %d+%d requests\n%s", code, emb.Count(), len(tei.Requests()), stderr)
	}

	code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "Estimate: 0 model calls, 6 service calls") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, stdout, stderr)
	}

	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sum := readSummary(t, sumPath)
	// One embeddings request per item; TEI: /tokenize and /embed_all per item.
	if emb.Count() != 3 || tei.Count("/tokenize") != 3 || tei.Count("/embed_all") != 3 {
		t.Fatalf("requests: embeddings %d, tokenize %d, embed_all %d", emb.Count(), tei.Count("/tokenize"), tei.Count("/embed_all"))
	}
	if sum.ServiceCalls != 6 || sum.LLMCalls != 0 || sum.Services["emb"].Calls != 3 || sum.Services["tei"].Calls != 3 || sum.Nodes.Ran != 6 {
		t.Fatalf("summary: %d service calls, %+v, nodes %+v", sum.ServiceCalls, sum.Services, sum.Nodes)
	}
	if !strings.Contains(stdout, "0 model calls, 6 service calls") {
		t.Fatalf("run output does not count service calls:\n%s", stdout)
	}

	// Every request is cached: a re-run, and an offline run, send none.
	for _, extra := range [][]string{nil, {"--offline"}} {
		args := append([]string{"run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath}, extra...)
		if code, stdout, stderr := cli(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", extra, code, stdout, stderr)
		}
		if sum := readSummary(t, sumPath); sum.ServiceCalls != 0 || sum.Nodes.Cached != 6 || emb.Count() != 3 || tei.Count("/embed_all") != 3 {
			t.Fatalf("%v re-run: %+v, %d service calls", extra, sum.Nodes, sum.ServiceCalls)
		}
	}

	// The key never reaches the cache.
	store, err := cache.OpenReadOnly(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	err = store.List(func(e cache.Entry) error {
		rec, err := store.Get(e.Key)
		if err != nil {
			return err
		}
		if strings.Contains(string(rec.Output)+rec.Raw, "sk-service-test-key") {
			t.Errorf("the API key is in record %s", e.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A service model on a provider whose kind does not serve the operation the
// stage asks of it is an error at validate, at the param's line, naming the
// kinds that do; nothing is sent. Here IdeaBench's bertscore similarity
// (token_matching) on an embeddings endpoint, and token embeddings asked of
// one, side by side with a correct stage.
func TestServiceOpCheckedAtValidate(t *testing.T) {
	exp := filepath.Join(t.TempDir(), "exp")
	if err := os.MkdirAll(exp, 0o755); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(serviceExperiment, "http://127.0.0.1:9/v1", "http://127.0.0.1:9") + `
stage "test_embed" "wrong" {
  items = dataset.ideas
  model = model.e5
  op    = "token_embeddings"
}
`
	if err := os.WriteFile(filepath.Join(exp, "exp.hcl"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(exp, "items.jsonl"), []byte("{\"id\":\"a\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SERVICE_API_KEY", "sk-service-test-key")
	code, _, stderr := cli(t, "validate", exp)
	line := strings.Count(text[:strings.Index(text, `stage "test_embed" "wrong"`)], "\n") + 3
	want := fmt.Sprintf(`exp.hcl:%d:11: error: Cannot ask model.e5 for token_embeddings`, line)
	if code != exitBadInput || !strings.Contains(stderr, want) ||
		!strings.Contains(stderr, `model is model.e5, on provider "emb" of kind "embeddings", which does not serve "token_embeddings", an operation this stage asks of it; kinds that serve it: mock, tei. Give model a model on a provider of one of those kinds.`) {
		t.Errorf("validate: exit %d, want %q in\n%s", code, want, stderr)
	}
	if strings.Contains(stderr, "stage.test_embed.tokens") || strings.Count(stderr, "error:") != 1 {
		t.Errorf("only the wrong stage is an error:\n%s", stderr)
	}
}

// writeServiceExperiment writes serviceExperiment against the embedding
// and TEI fakes, with three items: the test's folder and the experiment's.
func writeServiceExperiment(t *testing.T, embURL, teiURL string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	if err := os.MkdirAll(exp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(exp, "exp.hcl"), []byte(fmt.Sprintf(serviceExperiment, embURL, teiURL)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(exp, "items.jsonl"), []byte("{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, exp
}
