package llm

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
	"github.com/ideaflow/ideaflow/stages/similarity"
)

func matchingBody(t *testing.T, layer *int, keep bool, ref string, cands ...string) json.RawMessage {
	t.Helper()
	b := matchingRequest{Reference: ref, Candidates: cands, Layer: layer}
	if keep {
		b.SpecialTokens = SpecialTokensKeep
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeMatchingReply(t *testing.T, resp *ServiceResponse) tokenMatchingBody {
	t.Helper()
	var body tokenMatchingBody
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func widen32(vs [][]float32) [][]float64 {
	out := make([][]float64, len(vs))
	for i, v := range vs {
		for _, x := range v {
			out[i] = append(out[i], float64(x))
		}
	}
	return out
}

func layerVectors(text string, layer int) [][]float32 {
	var out [][]float32
	for j := range llmtest.TransformersTokens(text) {
		out = append(out, llmtest.TransformersVector(text, layer, j))
	}
	return out
}

// The transformers kind asks the sidecar for one layer's token vectors and
// reduces them to the matching: with special tokens kept they are tokens
// to match, flagged; dropped, they are gone before matching. One request
// carries the reference and every candidate; usage is the server's tokens.
func TestTransformersLayerMatching(t *testing.T) {
	const model = "microsoft/deberta-xlarge-mnli"
	srv := llmtest.NewTransformers(model)
	defer srv.Close()
	c := serviceClient(t, provider(t, "bert", "transformers", srv.URL, nil), WithHTTPClient(srv.Client()))
	layer := 40
	ref, cand := "tau clearance by astrocytes", "astrocytes clear tau"
	resp, err := c.Call(bg, ServiceRequest{Op: OpLayerTokenMatching, Model: model, Body: matchingBody(t, &layer, true, ref, cand)})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != model || reqs[0].Layer == nil || *reqs[0].Layer != 40 || !reflect.DeepEqual(reqs[0].Inputs, []string{ref, cand}) {
		t.Fatalf("requests %+v", reqs)
	}
	body := decodeMatchingReply(t, resp)
	wantRef := llmtest.TransformersTokens(ref)
	if !reflect.DeepEqual(body.ReferenceTokens, wantRef) || !reflect.DeepEqual(body.ReferenceSpecial, []bool{true, false, false, false, false, true}) {
		t.Errorf("reference %q %v", body.ReferenceTokens, body.ReferenceSpecial)
	}
	m := body.Matches[0]
	want := similarity.Match(widen32(layerVectors(cand, 40)), widen32(layerVectors(ref, 40)))
	if !reflect.DeepEqual(m.Matching, want) || !reflect.DeepEqual(m.Special, []bool{true, false, false, false, true}) {
		t.Errorf("match %+v, want %+v", m, want)
	}
	if resp.Usage.InputTokens != 6+5 {
		t.Errorf("usage %+v, want the server's 11 tokens", resp.Usage)
	}

	// Dropped: the same vectors without the special tokens' rows.
	resp, err = c.Call(bg, ServiceRequest{Op: OpLayerTokenMatching, Model: model, Body: matchingBody(t, &layer, false, ref, cand)})
	if err != nil {
		t.Fatal(err)
	}
	body = decodeMatchingReply(t, resp)
	rv, cv := layerVectors(ref, 40), layerVectors(cand, 40)
	want = similarity.Match(widen32(cv[1:len(cv)-1]), widen32(rv[1:len(rv)-1]))
	if !reflect.DeepEqual(body.ReferenceTokens, strings.Fields(ref)) || body.ReferenceSpecial != nil || !reflect.DeepEqual(body.Matches[0].Matching, want) || body.Matches[0].Special != nil {
		t.Errorf("dropped: %+v", body)
	}

	// token_matching is the final layer: no layer is sent.
	if _, err := c.Call(bg, ServiceRequest{Op: OpTokenMatching, Model: model, Body: matchingBody(t, nil, true, ref, cand)}); err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests()[2]; r.Layer != nil || strings.Contains(string(r.Body), "layer") {
		t.Errorf("final-layer request %s", r.Body)
	}
}

// The sidecar's refusals: a layer past the model's is a 400, not retried;
// a server running another model is refused before its vectors are
// cached; 5xx are retried; a 413 halves the batches.
func TestTransformersErrors(t *testing.T) {
	const model = "microsoft/deberta-xlarge-mnli"
	layer := 60
	srv := llmtest.NewTransformers(model)
	defer srv.Close()
	c := serviceClient(t, provider(t, "bert", "transformers", srv.URL, map[string]any{"max_retries": 2}), WithHTTPClient(srv.Client()))
	_, err := c.Call(bg, ServiceRequest{Op: OpLayerTokenMatching, Model: model, Body: matchingBody(t, &layer, true, "a b", "c")})
	if err == nil || !strings.Contains(err.Error(), "layer 60 is out of range: microsoft/deberta-xlarge-mnli has 48 layers") || len(srv.Requests()) != 1 {
		t.Errorf("layer 60: %v after %d requests", err, len(srv.Requests()))
	}
	layer = 17
	_, err = c.Call(bg, ServiceRequest{Op: OpLayerTokenMatching, Model: "roberta-large", Body: matchingBody(t, &layer, true, "a b", "c")})
	if err == nil || !strings.Contains(err.Error(), `runs model "microsoft/deberta-xlarge-mnli", not "roberta-large": start it with --model roberta-large`) {
		t.Errorf("model mismatch: %v", err)
	}
	n := len(srv.Requests())
	srv.Fail(http.StatusInternalServerError)
	if _, err := c.Call(bg, ServiceRequest{Op: OpLayerTokenMatching, Model: model, Body: matchingBody(t, &layer, true, "a b", "c")}); err != nil || len(srv.Requests()) != n+2 {
		t.Errorf("500 then 200: %v, %d requests", err, len(srv.Requests())-n)
	}
	srv.MaxBatch = 2
	n = len(srv.Requests())
	resp, err := c.Call(bg, ServiceRequest{Op: OpLayerTokenMatching, Model: model, Body: matchingBody(t, &layer, true, "r", "c1", "c2", "c3")})
	if err != nil {
		t.Fatal(err)
	}
	// 4 texts: refused at 4, then 2 + 2.
	if got := len(srv.Requests()) - n; got != 3 || len(decodeMatchingReply(t, resp).Matches) != 3 {
		t.Errorf("%d requests after a 413, want 3", got)
	}
	for _, bad := range []struct {
		op   string
		body string
		want string
	}{
		{OpLayerTokenMatching, `{"reference": "a", "candidates": ["b"]}`, `layer_token_matching request body has no "layer"`},
		{OpTokenMatching, `{"reference": "a", "candidates": ["b"], "layer": 3}`, "token_matching is the final layer"},
		{OpLayerTokenMatching, `{"reference": "a", "candidates": ["b"], "layer": -1}`, "layer -1 is negative"},
		{OpLayerTokenMatching, `{"reference": "a", "candidates": ["b"], "layer": 3, "special_tokens": "drop"}`, `special_tokens "drop" is not "keep"`},
		{OpEmbeddings, `{"input": ["a"]}`, `kind "transformers" does not serve operation "embeddings"`},
	} {
		if _, err := c.Call(bg, ServiceRequest{Op: bad.op, Model: model, Body: json.RawMessage(bad.body)}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s %s: %v, want %q", bad.op, bad.body, err, bad.want)
		}
	}
}

// TEI keeps its special tokens, flagged, when a token_matching request says
// so, and drops them otherwise (the reply of a request without the field
// is unchanged).
func TestTEIKeepsSpecialTokens(t *testing.T) {
	srv := llmtest.NewTEI()
	defer srv.Close()
	c := serviceClient(t, teiProvider(t, srv, 0), WithHTTPClient(srv.Client()))
	ref, cand := "alpha beta", "beta gamma delta"
	for _, keep := range []bool{true, false} {
		resp, err := c.Call(bg, ServiceRequest{Op: OpTokenMatching, Model: "bert", Body: matchingBody(t, nil, keep, ref, cand)})
		if err != nil {
			t.Fatal(err)
		}
		body := decodeMatchingReply(t, resp)
		vec := func(text string) [][]float32 {
			var out [][]float32
			for j := range llmtest.TEITokenize(text) {
				out = append(out, llmtest.TEIVector(text, j))
			}
			return out
		}
		rv, cv := vec(ref), vec(cand)
		wantTokens, wantSpecial := []string{"[CLS]", "alpha", "beta", "[SEP]"}, []bool{true, false, false, true}
		if !keep {
			rv, cv = rv[1:len(rv)-1], cv[1:len(cv)-1]
			wantTokens, wantSpecial = []string{"alpha", "beta"}, nil
		}
		if !reflect.DeepEqual(body.ReferenceTokens, wantTokens) || !reflect.DeepEqual(body.ReferenceSpecial, wantSpecial) ||
			!reflect.DeepEqual(body.Matches[0].Matching, similarity.Match(widen32(cv), widen32(rv))) {
			t.Errorf("keep %v: %+v", keep, body)
		}
	}
}

// The mock serves the layered matching offline: special tokens as [CLS]
// and [SEP], vectors that differ by layer, and the token_matching of a
// request without special_tokens exactly as before.
func TestMockLayerMatching(t *testing.T) {
	c, err := New(Provider{Name: "demo", Kind: "mock"})
	if err != nil {
		t.Fatal(err)
	}
	sc := c.(ServiceClient)
	call := func(op string, layer *int, keep bool) tokenMatchingBody {
		resp, err := sc.Call(bg, ServiceRequest{Op: op, Model: "m", Body: matchingBody(t, layer, keep, "alpha beta", "beta gamma")})
		if err != nil {
			t.Fatal(err)
		}
		return decodeMatchingReply(t, resp)
	}
	l40, l17 := 40, 17
	a, b := call(OpLayerTokenMatching, &l40, true), call(OpLayerTokenMatching, &l17, true)
	if !reflect.DeepEqual(a.ReferenceTokens, []string{"[CLS]", "alpha", "beta", "[SEP]"}) || !reflect.DeepEqual(a.Matches[0].Special, []bool{true, false, false, true}) {
		t.Errorf("layer 40: %+v", a)
	}
	if !reflect.DeepEqual(b.ReferenceTokens, a.ReferenceTokens) {
		t.Errorf("layer 17: %+v", b)
	}
	// The mock's words are context-free one-hot vectors, so matchings of
	// two layers can coincide; the vectors themselves differ.
	if e40, e17 := mockEntries("m", &l40, []string{"alpha"}, false), mockEntries("m", &l17, []string{"alpha"}, false); reflect.DeepEqual(e40, e17) {
		t.Error("layers 40 and 17 embed alike")
	}
	plain := call(OpTokenMatching, nil, false)
	want := matchTokens([]tokenEntry{
		{Tokens: []string{"alpha", "beta"}, Vectors: [][]float32{mockVector("m", "alpha"), mockVector("m", "beta")}},
		{Tokens: []string{"beta", "gamma"}, Vectors: [][]float32{mockVector("m", "beta"), mockVector("m", "gamma")}},
	})
	if !reflect.DeepEqual(plain, want) {
		t.Errorf("token_matching changed: %+v, want %+v", plain, want)
	}
	if k, _ := LookupKind("mock"); !k.Serves(OpLayerTokenMatching) {
		t.Error("the mock does not list layer_token_matching")
	}
}
