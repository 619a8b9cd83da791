package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
)

// scenario describes the experiment file the CLI tests write: the quickstart
// pipeline pointed at the fake OpenAI-compatible server.
type scenario struct {
	BaseURL          string
	KeyEnv           string
	Generators       []string
	N                int
	Limit            int
	JudgeTemperature float64
	MaxConcurrency   int
	JudgePriced      bool // give the judge a price block (it has none by default)
}

func (s scenario) hcl() string {
	var b strings.Builder
	fmt.Fprintf(&b, `
variable "n" { default = %d }

provider "fake" {
  kind            = "openai"
  base_url        = %q
  api_key_env     = %q
  max_concurrency = %d
  max_retries     = 2
}
`, s.N, s.BaseURL, s.KeyEnv, max(s.MaxConcurrency, 4))
	var refs []string
	for _, g := range s.Generators {
		fmt.Fprintf(&b, `
model %q {
  provider    = provider.fake
  name        = %q
  temperature = 0.8
  max_tokens  = 300
  price {
    input_per_mtok  = 1
    output_per_mtok = 2
  }
}
`, g, g)
		refs = append(refs, "model."+g)
	}
	fmt.Fprintf(&b, `
model "judge" {
  provider    = provider.fake
  name        = "judge-model"
  temperature = %g
  max_tokens  = 200
%s}

dataset "targets" {
  format = "ideabench"
  path   = "data/targets.jsonl"
}

quality "novelty" {
  definition = "developing new methodologies, techniques, or instruments"
}

stage "filter_references" "low" {
  dataset = dataset.targets
  limit   = %d
}

stage "generate_ideas" "main" {
  for_each   = { for m in [%s] : m.name => m }
  model      = each.value
  references = stage.filter_references.low
  n          = var.n
  prompt     = file("prompts/generate.tmpl")
}

stage "rank_ideas" "novelty" {
  ideas   = stage.generate_ideas.main
  judge   = model.judge
  quality = quality.novelty
}

stage "insight_score" "novelty" {
  ranks = stage.rank_ideas.novelty
}

report "table1" {
  rows    = stage.generate_ideas.main
  columns = [stage.insight_score.novelty]
}
`, s.JudgeTemperature, judgePrice(s.JudgePriced), s.Limit, strings.Join(refs, ", "))
	return b.String()
}

func judgePrice(priced bool) string {
	if !priced {
		return ""
	}
	return "  price {\n    input_per_mtok  = 1\n    output_per_mtok = 2\n  }\n"
}

// writeExperiment lays out an experiment folder with the quickstart's data and prompt.
func writeExperiment(t *testing.T, dir string, s scenario) {
	t.Helper()
	for _, sub := range []string{"data", "prompts"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, "../../experiments/quickstart/data/targets.jsonl", filepath.Join(dir, "data/targets.jsonl"))
	copyFile(t, "../../experiments/quickstart/prompts/generate.tmpl", filepath.Join(dir, "prompts/generate.tmpl"))
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(s.hcl()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

var rankInstruction = regexp.MustCompile(`Rank the \d+ ideas \(([A-Z](?:, [A-Z])*(?:,? and [A-Z])?)\)`)
var letterRe = regexp.MustCompile(`[A-Z]`)

// responder answers like a cooperative model: a ranking when asked to rank
// (an order drawn from a hash of the whole request, temperature included),
// otherwise one idea derived from the request. Same request, same answer.
func responder(req *openai.ChatCompletionRequest) string {
	body, _ := json.Marshal(req)
	sum := sha256.Sum256(body)
	last := req.Messages[len(req.Messages)-1].Content
	if m := rankInstruction.FindStringSubmatch(last); m != nil {
		letters := letterRe.FindAllString(m[1], -1)
		seed := binary.BigEndian.Uint64(sum[:8])
		for i := len(letters) - 1; i > 0; i-- {
			j := int(seed % uint64(i+1))
			seed = seed/uint64(i+1) + 0x9e3779b97f4a7c15
			letters[i], letters[j] = letters[j], letters[i]
		}
		return "The ideas differ mainly in how new their methods are.\nRanking: " + strings.Join(letters, " > ")
	}
	return fmt.Sprintf("Combine the cited methods into a new assay whose readout is calibrated against simulations (variant %x).", sum[:6])
}

// cli runs the CLI in-process and returns its exit code and output.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func readSummary(t testing.TB, path string) engine.Summary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s engine.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var nopLog = zerolog.Nop()

func openTestCache(t *testing.T, dir string) *cache.Badger {
	t.Helper()
	st, err := cache.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
