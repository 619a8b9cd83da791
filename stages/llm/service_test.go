package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
	"github.com/ideaflow/ideaflow/stages/similarity"
)

// serviceClient builds a client of p through New and asserts it serves operations.
func serviceClient(t *testing.T, p Provider, opts ...Option) ServiceClient {
	t.Helper()
	base := []Option{WithJitter(identity), testEnv(map[string]string{"TEST_KEY": testKey})}
	c, err := New(p, append(base, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sc, ok := c.(ServiceClient)
	if !ok {
		t.Fatalf("kind %s: %T does not implement ServiceClient", p.Kind, c)
	}
	return sc
}

func inputBodyOf(inputs ...string) json.RawMessage {
	b, _ := json.Marshal(inputBody{Input: inputs})
	return b
}

func provider(t *testing.T, name, kind, baseURL string, settings map[string]any) Provider {
	t.Helper()
	p := NewProvider(name, kind)
	p.BaseURL = baseURL
	for k, v := range settings {
		if err := p.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestEmbeddingsBatching: inputs go out in batches of max_batch, each batch
// exactly once, and come back in input order whatever order the server
// lists them in.
func TestEmbeddingsBatching(t *testing.T) {
	inputs := []string{"alpha", "beta gamma", "delta", "epsilon zeta eta", "theta"}
	tests := []struct {
		name         string
		maxBatch     int
		reversed     bool
		wantRequests int
	}{
		{"one per request", 1, false, 5},
		{"pairs", 2, false, 3},
		{"pairs, reversed replies", 2, true, 3},
		{"three", 3, true, 2},
		{"all in one", 64, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []llmtest.Option
			if tt.reversed {
				opts = append(opts, llmtest.WithReversedEmbeddings())
			}
			srv := llmtest.New(opts...)
			defer srv.Close()
			c := serviceClient(t, provider(t, "emb", "embeddings", srv.URL, map[string]any{"max_batch": tt.maxBatch}),
				WithHTTPClient(srv.HTTPClient(1)), WithClock(llmtest.NewFakeClock(time.Time{})))
			resp, err := c.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "emb-1", Body: inputBodyOf(inputs...)})
			if err != nil {
				t.Fatal(err)
			}
			if srv.Count() != tt.wantRequests || resp.Attempts != tt.wantRequests || resp.Status != 200 {
				t.Errorf("requests %d, attempts %d, status %d; want %d, %d, 200", srv.Count(), resp.Attempts, resp.Status, tt.wantRequests, tt.wantRequests)
			}
			for body, n := range srv.BodyCounts() {
				if n != 1 {
					t.Errorf("body %s sent %d times", body, n)
				}
			}
			var got vectorsBody
			if err := json.Unmarshal(resp.Body, &got); err != nil {
				t.Fatal(err)
			}
			var tokens int64
			for i, in := range inputs {
				tokens += int64(llmtest.Tokens(in))
				if i >= len(got.Vectors) || fmt.Sprint(got.Vectors[i]) != fmt.Sprint(llmtest.Vector("emb-1", in)) {
					t.Fatalf("vector %d is not the embedding of %q", i, in)
				}
			}
			if resp.Usage.InputTokens != tokens || resp.Model != "emb-1" {
				t.Errorf("usage %+v model %q; want %d input tokens, emb-1", resp.Usage, resp.Model, tokens)
			}
		})
	}
}

// TestOpenAIKindServesEmbeddings: the openai kind answers OpEmbeddings on
// the same endpoint, with its key, batched by its max_batch.
func TestOpenAIKindServesEmbeddings(t *testing.T) {
	srv := llmtest.New(llmtest.WithAPIKey(testKey), llmtest.WithReversedEmbeddings())
	defer srv.Close()
	p := testProvider(srv)
	if err := p.Set("max_batch", 2); err != nil {
		t.Fatal(err)
	}
	c := serviceClient(t, p, WithHTTPClient(srv.HTTPClient(1)))
	resp, err := c.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf("a", "b", "c")})
	if err != nil {
		t.Fatal(err)
	}
	var got vectorsBody
	_ = json.Unmarshal(resp.Body, &got)
	if srv.Count() != 2 || len(got.Vectors) != 3 || fmt.Sprint(got.Vectors[2]) != fmt.Sprint(llmtest.Vector("e", "c")) {
		t.Fatalf("requests %d, vectors %d", srv.Count(), len(got.Vectors))
	}
	if _, err := c.Call(bg, ServiceRequest{Op: OpTokenEmbeddings, Body: inputBodyOf("a")}); err == nil ||
		!strings.Contains(err.Error(), `kind "openai" does not serve operation "token_embeddings" (it serves embeddings); kinds serving it: mock, tei`) {
		t.Fatalf("unserved operation: %v", err)
	}
}

func teiProvider(t *testing.T, srv *llmtest.TEIServer, maxBatch int) Provider {
	t.Helper()
	settings := map[string]any{}
	if maxBatch > 0 {
		settings["max_batch"] = maxBatch
	}
	return provider(t, "tei", "tei", srv.URL, settings)
}

func tokenCall(t *testing.T, c ServiceClient, inputs ...string) (*ServiceResponse, tokenVectorsBody, error) {
	t.Helper()
	resp, err := c.Call(bg, ServiceRequest{Op: OpTokenEmbeddings, Model: "bert", Body: inputBodyOf(inputs...)})
	var body tokenVectorsBody
	if err == nil {
		if err := json.Unmarshal(resp.Body, &body); err != nil {
			t.Fatal(err)
		}
	}
	return resp, body, err
}

// TestTEITokenEmbeddings: special tokens are dropped; each kept token keeps
// its own contextual vector; usage is the server's token count.
func TestTEITokenEmbeddings(t *testing.T) {
	srv := llmtest.NewTEI()
	defer srv.Close()
	c := serviceClient(t, teiProvider(t, srv, 0), WithHTTPClient(srv.Client()))
	inputs := []string{"graph neural networks", "a  spaced   text", ""}
	resp, body, err := tokenCall(t, c, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count(llmtest.TEITokenizePath) != 1 || srv.Count(llmtest.TEIEmbedAllPath) != 1 || resp.Attempts != 2 {
		t.Errorf("tokenize %d, embed_all %d, attempts %d; want 1, 1, 2", srv.Count(llmtest.TEITokenizePath), srv.Count(llmtest.TEIEmbedAllPath), resp.Attempts)
	}
	if tok := srv.Requests()[0]; string(tok.Body) != `{"inputs":["graph neural networks","a  spaced   text",""],"add_special_tokens":true}` {
		t.Errorf("tokenize body = %s", tok.Body)
	}
	var tokens int64
	for i, in := range inputs {
		words := strings.Fields(in)
		tokens += int64(len(words) + 2) // [CLS] and [SEP]
		got := body.Inputs[i]
		if strings.Join(got.Tokens, "|") != strings.Join(words, "|") || len(got.Vectors) != len(words) {
			t.Fatalf("input %d: tokens %q, %d vectors; want %q", i, got.Tokens, len(got.Vectors), words)
		}
		for j := range words {
			if fmt.Sprint(got.Vectors[j]) != fmt.Sprint(llmtest.TEIVector(in, j+1)) {
				t.Errorf("input %d token %d: not the vector of position %d", i, j, j+1)
			}
		}
	}
	if resp.Usage.InputTokens != tokens {
		t.Errorf("usage = %d tokens, want %d", resp.Usage.InputTokens, tokens)
	}
}

// TestTEITokenMatching: token_matching embeds the reference and the
// candidates in one batch and replies with their greedy matching, computed
// from the vectors the server sent for the kept tokens; the vectors
// themselves are not in the reply.
func TestTEITokenMatching(t *testing.T) {
	srv := llmtest.NewTEI()
	defer srv.Close()
	c := serviceClient(t, teiProvider(t, srv, 0), WithHTTPClient(srv.Client()))
	ref, cands := "graph neural networks", []string{"neural graph", "", "networks of graph"}
	body, _ := json.Marshal(map[string]any{"reference": ref, "candidates": cands})
	resp, err := c.Call(bg, ServiceRequest{Op: OpTokenMatching, Model: "bert", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count(llmtest.TEITokenizePath) != 1 || srv.Count(llmtest.TEIEmbedAllPath) != 1 {
		t.Errorf("tokenize %d, embed_all %d; want 1 and 1 (one batch)", srv.Count(llmtest.TEITokenizePath), srv.Count(llmtest.TEIEmbedAllPath))
	}
	if tok := srv.Requests()[0]; string(tok.Body) != `{"inputs":["graph neural networks","neural graph","","networks of graph"],"add_special_tokens":true}` {
		t.Errorf("tokenize body = %s", tok.Body)
	}
	// The kept tokens of text are at positions 1..len (0 is [CLS]).
	vectors := func(text string) [][]float64 {
		var out [][]float64
		for j := range strings.Fields(text) {
			v := llmtest.TEIVector(text, j+1)
			w := make([]float64, len(v))
			for d, x := range v {
				w[d] = float64(x)
			}
			out = append(out, w)
		}
		return out
	}
	want := tokenMatchingBody{ReferenceTokens: strings.Fields(ref)}
	for _, c := range cands {
		want.Matches = append(want.Matches, tokenMatch{Tokens: nonNil(strings.Fields(c)), Matching: similarity.Match(vectors(c), vectors(ref))})
	}
	if string(resp.Body) != string(encodeBody(want)) {
		t.Errorf("reply:\n got %s\nwant %s", resp.Body, encodeBody(want))
	}
	if strings.Contains(string(resp.Body), "vectors") {
		t.Error("the reply carries vectors")
	}
	if _, err := c.Call(bg, ServiceRequest{Op: OpTokenMatching, Model: "bert", Body: inputBodyOf("a")}); err != nil {
		t.Errorf("an {\"input\"} body: %v", err) // unknown fields are ignored: reference "" and no candidates
	}
	if _, err := c.Call(bg, ServiceRequest{Op: OpTokenMatching, Model: "bert", Body: json.RawMessage(`["a"]`)}); err == nil ||
		!strings.Contains(err.Error(), `token_matching request body is not {"reference": "text", "candidates": ["text", ...]}`) {
		t.Errorf("a malformed body: %v", err)
	}
}

// TestTEIBatchSplit: a 413 halves the batch, and later batches start from
// the accepted size, so the exact number of requests is known.
func TestTEIBatchSplit(t *testing.T) {
	tests := []struct {
		name                  string
		serverMax, clientMax  int
		inputs                int
		wantTokenize, wantAll int
	}{
		{"fits", 8, 8, 8, 1, 1},
		{"8 to 4", 4, 8, 8, 1 + 2, 2},                     // 413 at 8, then 4 + 4
		{"8 to 2", 2, 8, 8, 2 + 4, 4},                     // 413 at 8 and 4, then 2 + 2 + 2 + 2
		{"odd: 5 to 3 to 2", 2, 5, 5, 2 + 3, 3},           // 413 at 5 and 3, then 2 + 1 + 2
		{"later batches start small", 3, 4, 10, 1 + 5, 5}, // 413 at 4, then 2 + 2, then 2 + 2 + 2 under the learned max
		{"one at a time", 1, 2, 3, 1 + 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewTEI(llmtest.WithTEIMaxBatch(tt.serverMax))
			defer srv.Close()
			c := serviceClient(t, teiProvider(t, srv, tt.clientMax), WithHTTPClient(srv.Client()))
			inputs := make([]string, tt.inputs)
			for i := range inputs {
				inputs[i] = fmt.Sprintf("input number %d", i)
			}
			resp, body, err := tokenCall(t, c, inputs...)
			if err != nil {
				t.Fatal(err)
			}
			tok, all := srv.Count(llmtest.TEITokenizePath), srv.Count(llmtest.TEIEmbedAllPath)
			if tok != tt.wantTokenize || all != tt.wantAll || resp.Attempts != tok+all {
				t.Errorf("tokenize %d, embed_all %d, attempts %d; want %d, %d, %d", tok, all, resp.Attempts, tt.wantTokenize, tt.wantAll, tt.wantTokenize+tt.wantAll)
			}
			for i, in := range inputs {
				if fmt.Sprint(body.Inputs[i].Vectors[0]) != fmt.Sprint(llmtest.TEIVector(in, 1)) {
					t.Fatalf("input %d out of order after the splits", i)
				}
			}
		})
	}
}

// TestTEIErrors: 424 fails at once with a message saying what it means; a
// single input over the limits fails with the server's message; 429 waits
// for Retry-After and tries again.
func TestTEIErrors(t *testing.T) {
	tests := []struct {
		name                  string
		serverMax             int
		faults                []llmtest.TEIFault
		wantErr               []string
		wantTokenize, wantAll int
		wantSleeps            string
	}{
		{name: "424", faults: []llmtest.TEIFault{{Path: llmtest.TEIEmbedAllPath, Status: 424, Message: "model is not an embedding model"}},
			wantErr:      []string{`provider "tei": HTTP 424: model error (not retried): model is not an embedding model`, "not an embedding model"},
			wantTokenize: 1, wantAll: 1, wantSleeps: "[]"},
		{name: "413 on one input", serverMax: 0, faults: []llmtest.TEIFault{{Status: 413, Message: "inputs must have less than 512 tokens"}},
			wantErr:      []string{"HTTP 413: batch or input over the server's limits: inputs must have less than 512 tokens", "--auto-truncate"},
			wantTokenize: 1, wantAll: 0, wantSleeps: "[]"},
		{name: "429 Retry-After", faults: []llmtest.TEIFault{{Path: llmtest.TEITokenizePath, Status: 429, RetryAfter: "3"}},
			wantTokenize: 2, wantAll: 1, wantSleeps: "[3s]"},
		{name: "503 backs off", faults: []llmtest.TEIFault{{Path: llmtest.TEIEmbedAllPath, Status: 503}, {Path: llmtest.TEIEmbedAllPath, Status: 503}},
			wantTokenize: 1, wantAll: 3, wantSleeps: "[1s 2s]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewTEI()
			defer srv.Close()
			srv.Enqueue(tt.faults...)
			clock := llmtest.NewFakeClock(time.Time{})
			c := serviceClient(t, teiProvider(t, srv, 0), WithHTTPClient(srv.Client()), WithClock(clock))
			_, _, err := tokenCall(t, c, "one input")
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v lacks %q", err, w)
				}
			}
			var apiErr *APIError
			if len(tt.wantErr) > 0 && (!errors.As(err, &apiErr) || apiErr.Retryable) {
				t.Errorf("error %#v: want a non-retryable *APIError", err)
			}
			tok, all := srv.Count(llmtest.TEITokenizePath), srv.Count(llmtest.TEIEmbedAllPath)
			if tok != tt.wantTokenize || all != tt.wantAll || fmt.Sprint(clock.Sleeps()) != tt.wantSleeps {
				t.Errorf("tokenize %d, embed_all %d, sleeps %v; want %d, %d, %s", tok, all, clock.Sleeps(), tt.wantTokenize, tt.wantAll, tt.wantSleeps)
			}
		})
	}
}

// TestMockOperations: the mock serves both operations deterministically:
// OpEmbeddings is Embed, OpTokenEmbeddings one vector per whitespace token.
func TestMockOperations(t *testing.T) {
	c := serviceClient(t, NewProvider("mock", "mock"))
	if !c.Synthetic() {
		t.Error("mock is not Synthetic")
	}
	resp, err := c.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "m", Body: inputBodyOf("graph networks", "x")})
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := newMock(Provider{}).Embed(bg, "m", []string{"graph networks", "x"})
	if string(resp.Body) != string(encodeBody(vectorsBody{Vectors: want})) || resp.Usage.InputTokens != 4+1 {
		t.Errorf("embeddings body or usage differ from Embed: usage %+v", resp.Usage)
	}
	_, body, err := tokenCall(t, c, "graph  neural nets", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := body.Inputs[0]; strings.Join(got.Tokens, "|") != "graph|neural|nets" || len(got.Vectors) != 3 ||
		fmt.Sprint(got.Vectors[1]) != fmt.Sprint(mockVector("bert", "neural")) {
		t.Errorf("tokens %q, %d vectors", got.Tokens, len(got.Vectors))
	}
	if got := body.Inputs[1]; len(got.Tokens) != 0 || len(got.Vectors) != 0 {
		t.Errorf("empty input: %+v", got)
	}
	again, _ := c.Call(bg, ServiceRequest{Op: OpTokenEmbeddings, Model: "bert", Body: inputBodyOf("graph  neural nets", "")})
	if first, _ := json.Marshal(body); string(again.Body) != string(first) {
		t.Error("token embeddings differ between identical calls")
	}
	// token_matching: the matching of the mock's token vectors.
	mb, _ := json.Marshal(map[string]any{"reference": "graph neural nets", "candidates": []string{"neural graph"}})
	match, err := c.Call(bg, ServiceRequest{Op: OpTokenMatching, Model: "bert", Body: mb})
	if err != nil {
		t.Fatal(err)
	}
	widen := func(words ...string) [][]float64 {
		var out [][]float64
		for _, w := range words {
			var v []float64
			for _, x := range mockVector("bert", w) {
				v = append(v, float64(x))
			}
			out = append(out, v)
		}
		return out
	}
	wantMatch := tokenMatchingBody{ReferenceTokens: []string{"graph", "neural", "nets"},
		Matches: []tokenMatch{{Tokens: []string{"neural", "graph"}, Matching: similarity.Match(widen("neural", "graph"), widen("graph", "neural", "nets"))}}}
	if string(match.Body) != string(encodeBody(wantMatch)) {
		t.Errorf("mock token_matching:\n got %s\nwant %s", match.Body, encodeBody(wantMatch))
	}
	if _, err := c.Call(bg, ServiceRequest{Op: "rerank", Body: inputBodyOf("a")}); err == nil ||
		!strings.Contains(err.Error(), `kind "mock" does not serve operation "rerank"`) {
		t.Errorf("unknown operation: %v", err)
	}
}

// TestTEIReplyCapSplits: token vectors over max_reply_bytes halve the batch
// like a 413; a single input still over the cap fails, naming the setting.
func TestTEIReplyCapSplits(t *testing.T) {
	srv := llmtest.NewTEI()
	defer srv.Close()
	// An input of 3 words: its tokenization is about 300 bytes, its 5 token
	// vectors of 8 floats about 465; two inputs are over 520 either way.
	p := teiProvider(t, srv, 4)
	if err := p.Set("max_reply_bytes", 520); err != nil {
		t.Fatal(err)
	}
	c := serviceClient(t, p, WithHTTPClient(srv.Client()))
	_, body, err := tokenCall(t, c, "a b c", "d e f", "g h i", "j k l")
	if err != nil {
		t.Fatal(err)
	}
	// tokenize: 4 (over), 2 (over), then four of 1; embed_all: four of 1.
	if tok, all := srv.Count(llmtest.TEITokenizePath), srv.Count(llmtest.TEIEmbedAllPath); tok != 6 || all != 4 || len(body.Inputs) != 4 {
		t.Errorf("tokenize %d, embed_all %d, inputs %d; want 6, 4, 4", tok, all, len(body.Inputs))
	}
	_, _, err = tokenCall(t, c, strings.Repeat("long ", 20))
	if err == nil || !strings.Contains(err.Error(), "max_reply_bytes") {
		t.Errorf("one input over the cap: %v", err)
	}
}

func TestEmptyInputs(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	c := serviceClient(t, provider(t, "emb", "embeddings", srv.URL, nil), WithHTTPClient(srv.HTTPClient(1)))
	resp, err := c.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf()})
	if err != nil || string(resp.Body) != `{"vectors":[]}` || srv.Count() != 0 {
		t.Fatalf("empty input: %v %s after %d requests", err, resp.Body, srv.Count())
	}
}
