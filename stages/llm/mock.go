package llm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/ideaflow/ideaflow/stages/format"
)

// MockEmbeddingDim is the length of the mock provider's embedding vectors.
const MockEmbeddingDim = 256

// MockConcurrency is the mock's default max_concurrency: it makes no
// network call, so only the engine's goroutines bound it.
const MockConcurrency = 64

func init() {
	register(KindInfo{
		Name: "mock",
		Doc: "Offline and deterministic: well-formed synthetic answers, bag-of-words embeddings, one vector per whitespace token; " +
			"operations other packages declare (literature search) answered by their registered mock (RegisterMockOp).",
		Chat:      true,
		Ops:       []string{OpEmbeddings, OpTokenEmbeddings, OpTokenMatching},
		Synthetic: true, DefaultConcurrency: MockConcurrency,
		Identify:    seededAnswerer(ClassMock, true),
		AnswererDoc: "the class mock and the seed: another seed's answers never serve these nodes, nor does the mock serve a real endpoint's",
		Settings:    []Setting{settingSeed, maxConcurrency(MockConcurrency), settingRepairs, settingNChoices},
		open:        func(p Provider, _ options) (Client, error) { return newMock(p), nil },
	})
}

// mockClient answers offline: well-formed synthetic answers drawn from a
// random source seeded by the request, so a run is reproducible and a cached
// answer equals a fresh one.
type mockClient struct{ p Provider }

func newMock(p Provider) *mockClient { return &mockClient{p: p} }

func (m *mockClient) Synthetic() bool { return true }

// CompleteChoices answers each sample as Complete would for it alone, so a
// sample's answer does not depend on how it was fetched; the input counts
// once, as it would on an endpoint that takes n.
func (m *mockClient) CompleteChoices(ctx context.Context, req Request, samples []int) ([]*Response, error) {
	out := make([]*Response, 0, len(samples))
	for i, s := range samples {
		r := req
		r.Sample = s
		resp, err := m.Complete(ctx, r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			resp.Usage.InputTokens = 0
		}
		out = append(out, resp)
	}
	return out, nil
}

func (m *mockClient) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("provider %q: chat call to %q: %w", m.p.Name, req.Model, err)
	}
	text := format.Synthesize(req.Format, m.rand(req), topic(req.Messages))
	var in int64
	for _, msg := range req.Messages {
		in += textTokens(msg.Content)
	}
	return &Response{
		Text: text, Model: req.Model, SystemFingerprint: fmt.Sprintf("mock-seed-%d", m.p.Seed),
		Usage: Usage{InputTokens: in, OutputTokens: textTokens(text)}, UsageEstimated: true, Attempts: 1,
	}, nil
}

// rand seeds a source from SHA-256 of everything that should change the
// answer: the provider's seed, the model, the messages, the sample index and
// the request's own seed.
func (m *mockClient) rand(req Request) *rand.Rand {
	key, err := json.Marshal(struct {
		ProviderSeed int64
		Model        string
		Messages     []Message
		Sample       int
		Seed         *int
	}{m.p.Seed, req.Model, req.Messages, req.Sample, req.Seed})
	if err != nil { // cannot happen: every field is a plain value
		panic(fmt.Sprintf("mock: encode request key: %v", err))
	}
	sum := sha256.Sum256(key)
	return rand.New(rand.NewSource(int64(binary.LittleEndian.Uint64(sum[:8]))))
}

var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about above after again against also among and answer any are based
		because been before being below between both but can could does doing during each either
		every from further given have having here into its itself just least like make many more
		most much must need only other others over paper please provide research same should
		some such than that the their them then there these they this those through under until
		using very what when where which while will with within without would write your you`) {
		stopwords[w] = true
	}
}

// quotedKeyword finds a keyword a prompt names in quotes ("Your assigned
// keyword is: "meteorology"", LiveIdeaBench's prompt), which says what the
// answer is about better than the prompt's most frequent words do.
var quotedKeyword = regexp.MustCompile(`(?i)\bkeywords?\b[^"\n]{0,20}"([^"\n]{1,80})"`)

// topic picks the keyword the first user message names in quotes, if any;
// else up to five content words of the last user message, most frequent
// first (ties: first seen), for the synthetic answer to talk about. The
// first message, so a re-ask after a refusal stays on the keyword.
func topic(msgs []Message) string {
	for _, m := range msgs {
		if m.Role == "user" {
			if k := quotedKeyword.FindStringSubmatch(m.Content); k != nil {
				return k[1]
			}
			break
		}
	}
	text := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			text = msgs[i].Content
			break
		}
	}
	count := map[string]int{}
	var order []string
	for _, w := range words(text) {
		if len(w) < 4 || stopwords[w] {
			continue
		}
		if count[w] == 0 {
			order = append(order, w)
		}
		count[w]++
	}
	sort.SliceStable(order, func(i, j int) bool { return count[order[i]] > count[order[j]] })
	return strings.Join(order[:min(5, len(order))], " ")
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Embed hashes each word into one of MockEmbeddingDim signed buckets and
// normalises: identical texts get identical unit vectors, texts sharing words
// point in similar directions, and no network is needed.
func (m *mockClient) Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error) {
	if err := ctx.Err(); err != nil {
		return nil, Usage{}, fmt.Errorf("provider %q: embeddings call to %q: %w", m.p.Name, model, err)
	}
	out := make([][]float32, len(inputs))
	var usage Usage
	for i, in := range inputs {
		out[i] = mockVector(model, in)
		usage.InputTokens += textTokens(in)
	}
	var shape vectorShape // the same checks as a server's vectors meet
	if err := shape.checkAll(out, func(i int) string { return fmt.Sprintf("the vector of input %d", i) }); err != nil {
		return nil, Usage{}, &APIError{Provider: m.p.Name, Message: err.Error()}
	}
	return out, usage, nil
}

// Call serves OpEmbeddings with Embed's vectors, OpTokenEmbeddings with
// one vector per whitespace-separated token (the vector of the token's text:
// the mock has no context) and OpTokenMatching with the matching of those
// vectors, with the estimated usage of a real server.
func (m *mockClient) Call(ctx context.Context, req ServiceRequest) (*ServiceResponse, error) {
	k, _ := LookupKind("mock")
	if !k.Serves(req.Op) {
		return nil, unservedOp(m.p.Name, k, req.Op)
	}
	if serve, ok := mockOps[req.Op]; ok { // an operation declared outside this package
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("provider %q: %s call to %q: %w", m.p.Name, req.Op, req.Model, err)
		}
		return serve(ctx, m.p, req)
	}
	decode := decodeInput
	if req.Op == OpTokenMatching {
		decode = decodeMatching
	}
	inputs, err := decode(m.p.Name, req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("provider %q: %s call to %q: %w", m.p.Name, req.Op, req.Model, err)
	}
	resp := &ServiceResponse{Model: req.Model, Attempts: 1}
	for _, in := range inputs {
		resp.Usage.InputTokens += textTokens(in)
	}
	if req.Op == OpEmbeddings {
		vecs, _, err := m.Embed(ctx, req.Model, inputs)
		if err != nil {
			return nil, err
		}
		resp.Body = encodeBody(vectorsBody{Vectors: vecs})
		return resp, nil
	}
	body := tokenVectorsBody{Inputs: mockEntries(req.Model, nil, inputs, req.Op == OpTokenMatching && keepsSpecial(req))}
	var shape vectorShape // the same checks as a server's vectors meet
	for i, e := range body.Inputs {
		if err := shape.checkAll(e.Vectors, func(j int) string { return fmt.Sprintf("input %d, token %d", i, j) }); err != nil {
			return nil, &APIError{Provider: m.p.Name, Message: err.Error()}
		}
	}
	if req.Op == OpTokenMatching {
		resp.Body = encodeBody(matchTokens(body.Inputs))
		return resp, nil
	}
	resp.Body = encodeBody(body)
	return resp, nil
}

func mockVector(model, text string) []float32 {
	acc := make([]float64, MockEmbeddingDim)
	for _, w := range words(text) {
		h := fnv.New64a()
		h.Write([]byte(model))
		h.Write([]byte{0})
		h.Write([]byte(w))
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		acc[x%MockEmbeddingDim] += sign
	}
	var norm float64
	for _, a := range acc {
		norm += a * a
	}
	v := make([]float32, MockEmbeddingDim)
	if norm == 0 { // no words: a fixed unit vector keeps cosine defined
		v[0] = 1
		return v
	}
	norm = math.Sqrt(norm)
	for i, a := range acc {
		v[i] = float32(a / norm)
	}
	return v
}
