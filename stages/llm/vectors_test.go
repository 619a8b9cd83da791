package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// badVectorMessage is what the error of each fault says, whichever kind
// met it; for the null faults, what the embeddings kind says (the tei kind
// reads the whole reply: "the reply holds null"). The short vector is met
// by a client whose earlier good reply told it the model's length.
var badVectorMessage = map[llmtest.VectorFault]string{
	llmtest.ShortVector:   "has 7 dimensions, where the model's earlier replies had 8 (did the server change models?)",
	llmtest.ZeroVector:    "is all zeros, a vector with no direction",
	llmtest.EmptyVector:   "is empty",
	llmtest.NullVector:    "holds null where a number belongs",
	llmtest.NullComponent: "holds null where a number belongs",
	llmtest.NaNComponent:  "it holds NaN or Infinity, which JSON cannot carry",
	llmtest.InfComponent:  "it holds NaN or Infinity, which JSON cannot carry",
	llmtest.HugeComponent: "cannot unmarshal number 1e39",
}

func teiMessage(f llmtest.VectorFault) string {
	if f == llmtest.NullVector || f == llmtest.NullComponent {
		return "the reply holds null where a vector or a number belongs"
	}
	return badVectorMessage[f]
}

// TestEmbeddingVectorsChecked: every bad vector an embeddings endpoint can
// send (a component short, all zeros, empty, null, a null, NaN or Infinity
// component, one beyond float32) fails the attempt with a message saying
// which vector and why, and is retried: once, then the good reply is the
// answer; every time, then the call fails after its retries. Never a
// vector that a score would be computed from.
func TestEmbeddingVectorsChecked(t *testing.T) {
	inputs := []string{"graph", "neural", "networks"}
	want := make([][]float32, len(inputs))
	for i, in := range inputs {
		want[i] = llmtest.Vector("e", in)
	}
	for _, f := range llmtest.VectorFaults {
		t.Run(f.String(), func(t *testing.T) {
			srv := llmtest.New()
			defer srv.Close()
			srv.Enqueue(llmtest.Fault{Vectors: f})
			c := serviceClient(t, provider(t, "emb", "embeddings", srv.URL, map[string]any{"max_retries": 2}),
				WithHTTPClient(srv.HTTPClient(1)), WithClock(llmtest.NewFakeClock(time.Time{})))
			resp, err := c.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf(inputs...)})
			if err != nil {
				t.Fatalf("a bad reply, then a good one: %v", err)
			}
			var got vectorsBody
			if err := json.Unmarshal(resp.Body, &got); err != nil || fmt.Sprint(got.Vectors) != fmt.Sprint(want) || resp.Attempts != 2 || srv.Count() != 2 {
				t.Fatalf("got %v after %d attempts (%d requests), want the good reply's vectors after 2", got.Vectors, resp.Attempts, srv.Count())
			}

			srv.SetHook(func(*llmtest.Request) (llmtest.Fault, bool) { return llmtest.Fault{Vectors: f}, true })
			_, err = c.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: "e", Body: inputBodyOf(inputs...)})
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Attempts != 3 || !apiErr.Retryable || !strings.Contains(err.Error(), badVectorMessage[f]) {
				t.Fatalf("always bad: %v; want a retried failure saying %q", err, badVectorMessage[f])
			}
			if srv.Count() != 5 {
				t.Errorf("%d requests, want 5", srv.Count())
			}
		})
	}
}

// TestTEIVectorsChecked: the same for a TEI server's token vectors, through
// token_matching (BERTScore's operation): a bad embed_all reply is retried
// (the tokenization is not asked again), and the matching is the good
// reply's, exactly; a server that always sends it fails the call.
func TestTEIVectorsChecked(t *testing.T) {
	body, _ := json.Marshal(map[string]any{"reference": "graph neural networks", "candidates": []string{"neural graph", "networks of graph"}})
	req := ServiceRequest{Op: OpTokenMatching, Model: "bert", Body: body}
	clean := llmtest.NewTEI()
	defer clean.Close()
	want, err := serviceClient(t, teiProvider(t, clean, 0), WithHTTPClient(clean.Client())).Call(bg, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range llmtest.VectorFaults {
		t.Run(f.String(), func(t *testing.T) {
			srv := llmtest.NewTEI()
			defer srv.Close()
			srv.Enqueue(llmtest.TEIFault{Path: llmtest.TEIEmbedAllPath, Vectors: f})
			p := teiProvider(t, srv, 0)
			p.MaxRetries = 2
			c := serviceClient(t, p, WithHTTPClient(srv.Client()), WithClock(llmtest.NewFakeClock(time.Time{})))
			resp, err := c.Call(bg, req)
			if err != nil {
				t.Fatalf("a bad reply, then a good one: %v", err)
			}
			if string(resp.Body) != string(want.Body) || srv.Count(llmtest.TEITokenizePath) != 1 || srv.Count(llmtest.TEIEmbedAllPath) != 2 {
				t.Fatalf("matching %s after %d tokenize and %d embed_all requests; want the clean server's after 1 and 2",
					resp.Body, srv.Count(llmtest.TEITokenizePath), srv.Count(llmtest.TEIEmbedAllPath))
			}
			for i := 0; i < 3; i++ {
				srv.Enqueue(llmtest.TEIFault{Path: llmtest.TEIEmbedAllPath, Vectors: f})
			}
			_, err = c.Call(bg, req)
			var apiErr *APIError
			if !errors.As(err, &apiErr) || !apiErr.Retryable || !strings.Contains(err.Error(), teiMessage(f)) {
				t.Fatalf("always bad: %v; want a retried failure saying %q", err, teiMessage(f))
			}
			if n := srv.Count(llmtest.TEIEmbedAllPath); n != 5 {
				t.Errorf("%d embed_all requests, want 5", n)
			}
		})
	}
}

// TestVectorLengthKeptPerModel: a one-input reply has no other vector to
// be compared with, so its length is checked against the model's earlier
// replies: a server that changed models under the same name is refused
// (and retried), for embeddings and token vectors alike; another model
// may have another length.
func TestVectorLengthKeptPerModel(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	c := serviceClient(t, provider(t, "emb", "embeddings", srv.URL, map[string]any{"max_retries": 0}), WithHTTPClient(srv.HTTPClient(1)))
	call := func(model string) error {
		_, err := c.Call(bg, ServiceRequest{Op: OpEmbeddings, Model: model, Body: inputBodyOf("graph")})
		return err
	}
	if err := call("e"); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(llmtest.Fault{Vectors: llmtest.ShortVector}, llmtest.Fault{Vectors: llmtest.ShortVector})
	if err := call("e"); err == nil || !strings.Contains(err.Error(), "the vector of input 0 has 7 dimensions, where the model's earlier replies had 8 (did the server change models?)") {
		t.Fatalf("a 7-dimension reply after 8: %v", err)
	}
	if err := call("other"); err != nil {
		t.Errorf("another model's first reply, of 7 dimensions: %v", err)
	}

	tei := llmtest.NewTEI()
	defer tei.Close()
	p := teiProvider(t, tei, 0)
	p.MaxRetries = 0
	tc := serviceClient(t, p, WithHTTPClient(tei.Client()))
	if _, _, err := tokenCall(t, tc, "graph"); err != nil {
		t.Fatal(err)
	}
	// One token and its [CLS] and [SEP]: the short vector is the last of three.
	tei.Enqueue(llmtest.TEIFault{Path: llmtest.TEIEmbedAllPath, Vectors: llmtest.ShortVector})
	if _, _, err := tokenCall(t, tc, "graph"); err == nil || !strings.Contains(err.Error(), "input 0, token 2 has 7 dimensions, where the model's earlier replies had 8") {
		t.Fatalf("tei: %v", err)
	}
}

// TestVectorShape: the checks themselves, the mock's vectors among them
// (the mock runs them too).
func TestVectorShape(t *testing.T) {
	tests := []struct {
		vs   [][]float32
		want string // "" for none
	}{
		{[][]float32{{1, 0}, {0, 1}}, ""},
		{[][]float32{{1, 0}, {0, 1, 0}}, "v1 has 3 dimensions, where the vectors before it have 2"},
		{[][]float32{{1, 0}, {}}, "v1 is empty"},
		{[][]float32{{1, 0}, {0, 0}}, "v1 is all zeros"},
		{[][]float32{{float32(math.NaN()), 1}}, "v0 has NaN at dimension 0"},
		{[][]float32{{1, float32(math.Inf(-1))}}, "v0 has -Inf at dimension 1"},
		{[][]float32{mockVector("m", "graph"), mockVector("m", "..."), mockVector("m", "")}, ""},
	}
	for _, tt := range tests {
		var s vectorShape
		err := s.checkAll(tt.vs, func(i int) string { return fmt.Sprintf("v%d", i) })
		if (err == nil) != (tt.want == "") || (err != nil && (!errors.Is(err, errBadVectors) || !strings.Contains(err.Error(), tt.want))) {
			t.Errorf("%v: %v, want %q", tt.vs, err, tt.want)
		}
	}
	known := vectorShape{dim: 3, known: true}
	if err := known.check([]float32{1, 2}, "v"); err == nil || !strings.Contains(err.Error(), "where the model's earlier replies had 3") {
		t.Errorf("a known length: %v", err)
	}
	for _, raw := range []string{"null", "[1,null]", "[null]"} {
		if _, err := decodeVector(json.RawMessage(raw), "v"); err == nil || !strings.Contains(err.Error(), "v holds null where a number belongs") {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
