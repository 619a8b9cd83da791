package llm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages/format"
)

// The baseline kind answers idea-generation requests with sanity controls
// instead of a model: what a benchmark's metrics must rank below, between or
// level with real ideas. The model block's name picks the control.
//
// A control reads everything it needs from the request as rendered, so its
// answer is a function of the node's key and nothing else (a cached answer
// equals a fresh one, and no side channel carries what the key does not):
//
//   - copy_reference reads the reference abstracts the generation prompt
//     numbers ("Abstract 1: ..." lines, as generate_ideas' default prompt
//     writes them);
//   - shuffled_words and target_oracle read the target idea, which
//     generate_ideas adds to the user message, after BaselineTargetMarker,
//     only when its target param is set. The target idea is therefore key
//     material of those requests, and a real model given target would see
//     it: set target on baseline instances only.
//
// Baseline answers are not SYNTHETIC (the label for made-up answers that say
// nothing about models): they are exact, reproducible controls. Their rows
// are told apart by their model names.

// BaselineTargetMarker starts the line of a generation prompt that carries
// the target idea to a sanity baseline.
const BaselineTargetMarker = "Target idea (for a sanity baseline):"

// The baseline generators, by model name.
const (
	BaselineCopyReference = "copy_reference"
	BaselineShuffledWords = "shuffled_words"
	BaselineTargetOracle  = "target_oracle"
)

var baselineGenerators = []string{BaselineCopyReference, BaselineShuffledWords, BaselineTargetOracle}

func init() {
	register(KindInfo{
		Name: "baseline",
		Doc: "Sanity controls, offline: a model named copy_reference answers with reference abstracts, shuffled_words with the target idea's words shuffled (seeded), " +
			"target_oracle with the target idea itself (generate_ideas' target param hands it the target idea). Generation requests only.",
		Chat: true, DefaultConcurrency: MockConcurrency,
		Identify:    seededAnswerer(ClassBaseline, false),
		AnswererDoc: "the class baseline and the seed",
		Settings:    []Setting{settingSeed, maxConcurrency(MockConcurrency)},
		open:        func(p Provider, _ options) (Client, error) { return &baselineClient{p: p}, nil },
	})
}

type baselineClient struct{ p Provider }

func (b *baselineClient) Synthetic() bool    { return false }
func (b *baselineClient) Unavailable() error { return nil } // makes no request, so never unavailable
func (b *baselineClient) Embed(context.Context, string, []string) ([][]float32, Usage, error) {
	return nil, Usage{}, fmt.Errorf("provider %q: kind \"baseline\" serves idea generation only, no embeddings", b.p.Name)
}

func (b *baselineClient) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("provider %q: chat call to %q: %w", b.p.Name, req.Model, err)
	}
	ideas, err := BaselineIdeas(req, b.p.Seed)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", b.p.Name, err)
	}
	text, err := json.Marshal(ideas)
	if err != nil {
		return nil, fmt.Errorf("provider %q: encode answer: %w", b.p.Name, err)
	}
	var in int64
	for _, m := range req.Messages {
		in += textTokens(m.Content)
	}
	return &Response{Text: string(text), Model: req.Model, SystemFingerprint: "baseline",
		Usage: Usage{InputTokens: in, OutputTokens: textTokens(string(text))}, UsageEstimated: true, Attempts: 1}, nil
}

var abstractLine = regexp.MustCompile(`(?m)^Abstract (\d+): (.+)$`)

// BaselineIdeas is what generator req.Model answers to req: Format.N ideas
// (one when N is 0). Sample s of an independent generator copies reference
// s (cycling); idea j of a batch answer copies reference s*N+j. Shuffles are
// drawn from SHA-256 of the seed, the sample, the idea's position and the
// target idea.
func BaselineIdeas(req Request, seed int64) ([]string, error) {
	if req.Format.Kind != format.Ideas {
		return nil, fmt.Errorf("model %q: kind \"baseline\" only generates ideas; it cannot answer a %q request (judge with another provider)", req.Model, req.Format.Kind)
	}
	n := max(req.Format.N, 1)
	user := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			user = m.Content
		}
	}
	out := make([]string, n)
	switch req.Model {
	case BaselineCopyReference:
		refs := referenceAbstracts(user)
		if len(refs) == 0 {
			return nil, fmt.Errorf("model %q found no \"Abstract N: ...\" line in the prompt; it copies the numbered abstracts of generate_ideas' default prompt", req.Model)
		}
		for j := range out {
			out[j] = refs[(req.Sample*n+j)%len(refs)]
		}
	case BaselineShuffledWords, BaselineTargetOracle:
		target := baselineTarget(user)
		if target == "" {
			return nil, fmt.Errorf("model %q found no target idea in the prompt: set generate_ideas' target (e.g. target = stage.extract_idea.main) on the instance that uses it", req.Model)
		}
		for j := range out {
			out[j] = target
			if req.Model == BaselineShuffledWords {
				out[j] = shuffleWords(target, seed, req.Sample, j)
			}
		}
	default:
		return nil, fmt.Errorf("model %q is no baseline generator; name the model one of %s", req.Model, strings.Join(baselineGenerators, ", "))
	}
	return out, nil
}

// referenceAbstracts returns the prompt's numbered abstracts in number order.
func referenceAbstracts(prompt string) []string {
	type ref struct {
		n    int
		text string
	}
	var refs []ref
	for _, m := range abstractLine.FindAllStringSubmatch(prompt, -1) {
		var n int
		fmt.Sscan(m[1], &n)
		if t := strings.TrimSpace(m[2]); t != "" {
			refs = append(refs, ref{n, t})
		}
	}
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].n < refs[j].n })
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.text
	}
	return out
}

// baselineTarget is the text after BaselineTargetMarker, up to the next
// blank line.
func baselineTarget(prompt string) string {
	_, rest, ok := strings.Cut(prompt, BaselineTargetMarker)
	if !ok {
		return ""
	}
	text, _, _ := strings.Cut(rest, "\n\n")
	return strings.TrimSpace(text)
}

func shuffleWords(text string, seed int64, sample, idea int) string {
	words := strings.Fields(text)
	key := fmt.Sprintf("%d\x00%d\x00%d\x00%s", seed, sample, idea, text)
	sum := sha256.Sum256([]byte(key))
	r := rand.New(rand.NewSource(int64(binary.LittleEndian.Uint64(sum[:8]))))
	r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	return strings.Join(words, " ")
}
