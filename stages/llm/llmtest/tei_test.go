package llmtest

import (
	"net/http"
	"strings"
	"testing"
)

// TestTEIShapes pins the fake's replies to text-embeddings-inference's
// shapes: /tokenize a list of tokens per input (special ones with null
// offsets), /embed_all input x token x hidden, errors {"error", "error_type"}.
func TestTEIShapes(t *testing.T) {
	s := NewTEI(WithTEIMaxBatch(2))
	defer s.Close()
	s.Enqueue(TEIFault{Path: TEIEmbedAllPath, Status: 429, RetryAfter: "2", Message: "model is overloaded"})
	tests := []struct {
		path, body string
		status     int
		want       string
		header     string
	}{
		{TEITokenizePath, `{"inputs":["hi there"],"add_special_tokens":true}`, 200,
			`[[{"id":101,"text":"[CLS]","special":true,"start":null,"stop":null},{"id":`, ""},
		{TEIEmbedAllPath, `{"inputs":["hi"]}`, 429, `{"error":"model is overloaded","error_type":"overloaded"}`, "2"},
		{TEIEmbedAllPath, `{"inputs":["hi"]}`, 200, `[[[`, ""},
		{TEIEmbedAllPath, `{"inputs":["a","b","c"]}`, 413, `{"error":"batch size 3 \u003e maximum allowed batch size 2","error_type":"validation"}`, ""},
		{"/embed", `{"inputs":["a"]}`, 404, `"error_type":"not_found"`, ""},
	}
	for _, tt := range tests {
		resp, body, err := post(t, s.Client(), s.URL+tt.path, tt.body, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) || resp.Header.Get("Retry-After") != tt.header {
			t.Errorf("%s %s: %d %s (Retry-After %q); want %d containing %s", tt.path, tt.body, resp.StatusCode, body, resp.Header.Get("Retry-After"), tt.status, tt.want)
		}
	}
	if s.Count(TEIEmbedAllPath) != 3 || s.Count("") != 5 || s.BodyCounts()[TEIEmbedAllPath+` {"inputs":["hi"]}`] != 2 {
		t.Errorf("counts: embed_all %d, all %d, bodies %v", s.Count(TEIEmbedAllPath), s.Count(""), s.BodyCounts())
	}
	if got := s.Requests()[1].Status; got != http.StatusTooManyRequests {
		t.Errorf("recorded status %d", got)
	}
}
