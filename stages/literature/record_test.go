package literature

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm"
)

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "evidence.jsonl")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var now = time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)

// A recording answers a recorded request verbatim, however the request
// orders its members; anything else is an error naming the recording,
// unless the file has papers to answer from.
func TestRecordedEvidenceReplays(t *testing.T) {
	const reply = `{"papers":[{"paperId":"s2-a","title":"A <b> & c","citationCount":3}],"retrieved":"2026-12-01T10:00:00Z"}`
	var buf bytes.Buffer
	n, err := WriteEvidence(&buf, []Exchange{
		{Op: OpSearch, Request: json.RawMessage(`{"as_of":"2026-12-01","query":"curricula","limit":20}`), Reply: json.RawMessage(reply)},
		{Op: OpSnippets, Request: json.RawMessage(`{"as_of":"2026-12-01","query":"q","limit":8}`), Reply: json.RawMessage(`{"snippets":[]}`)},
		// The same request again, members in another order: one line.
		{Op: OpSearch, Request: json.RawMessage(`{"limit":20,"query":"curricula","as_of":"2026-12-01"}`), Reply: json.RawMessage(reply)},
	})
	if err != nil || n != 2 {
		t.Fatalf("wrote %d lines: %v", n, err)
	}
	// Sorted by operation: literature.search before literature.snippets;
	// the reply's bytes as recorded ("<" is not escaped).
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"op":"literature.search","request":{"as_of":"2026-12-01","query":"curricula","limit":20},"reply":`+reply) ||
		!strings.HasPrefix(lines[1], `{"op":"literature.snippets"`) {
		t.Fatalf("file:\n%s", buf.String())
	}
	c, err := LoadCorpus(writeFile(t, buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if c.Recorded() != 2 || c.Len() != 0 {
		t.Errorf("%d exchanges, %d papers", c.Recorded(), c.Len())
	}
	body, err := c.Serve(llm.ServiceRequest{Op: OpSearch, Body: []byte(`{"query":"curricula","limit":20,"as_of":"2026-12-01"}`)}, now)
	if err != nil || string(body) != reply {
		t.Errorf("replayed %s, %v; want the recorded reply verbatim", body, err)
	}
	for _, req := range []llm.ServiceRequest{
		{Op: OpSearch, Body: []byte(`{"query":"curricula","limit":10,"as_of":"2026-12-01"}`)},   // another limit
		{Op: OpSearch, Body: []byte(`{"query":"curricula","limit":20,"as_of":"2027-01-01"}`)},   // another snapshot
		{Op: OpRecommend, Body: []byte(`{"as_of":"2026-12-01","positive":["s2-a"],"limit":8}`)}, // never recorded
	} {
		if _, err := c.Serve(req, now); err == nil || !strings.Contains(err.Error(), "is not in the recording") || !strings.Contains(err.Error(), "ideaflow evidence") {
			t.Errorf("%s %s: %v; want an error naming the recording", req.Op, req.Body, err)
		}
	}
	// With papers beside the exchanges, what was not recorded is answered
	// from the papers.
	mixed := buf.String() + `{"paperId":"p1","title":"Curricula for code","abstract":"Easy to hard.","year":2020}` + "\n"
	c, err = LoadCorpus(writeFile(t, mixed))
	if err != nil {
		t.Fatal(err)
	}
	body, err = c.Serve(llm.ServiceRequest{Op: OpSearch, Body: []byte(`{"query":"curricula","limit":10,"as_of":"2026-12-01"}`)}, now)
	if err != nil || !strings.Contains(string(body), `"paperId":"p1"`) {
		t.Errorf("from the papers: %s, %v", body, err)
	}
}

func TestRecordedEvidenceErrors(t *testing.T) {
	const x = `{"op":"literature.search","request":{"as_of":"a","query":"q","limit":1},"reply":{"papers":[]}}`
	for _, tc := range []struct {
		name, file, want string
	}{
		{"two replies", x + "\n" + strings.Replace(x, `"papers":[]`, `"papers":[null]`, 1) + "\n", "evidence.jsonl:2: the literature.search request of line 1 is recorded again with another reply"},
		{"unknown op", `{"op":"literature.find","request":{},"reply":{}}`, "evidence.jsonl:1: op \"literature.find\" is not a literature operation"},
		{"unknown member", `{"op":"literature.search","request":{},"reply":{},"when":"now"}`, "evidence.jsonl:1: unknown member when (an exchange line has op, request and reply)"},
		{"no reply", `{"op":"literature.search","request":{}}`, "evidence.jsonl:1: literature.search exchange has no reply object"},
		{"request not an object", `{"op":"literature.search","request":[1],"reply":{}}`, "evidence.jsonl:1: literature.search request body is not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadCorpus(writeFile(t, tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want %q", err, tc.want)
			}
		})
	}
	// The same line twice is one exchange.
	if c, err := LoadCorpus(writeFile(t, x+"\n"+x+"\n")); err != nil || c.Recorded() != 1 {
		t.Errorf("duplicate line: %v", err)
	}
	// A recording of two runs that got different replies is refused.
	_, err := WriteEvidence(&bytes.Buffer{}, []Exchange{
		{Op: OpMatch, Request: json.RawMessage(`{"as_of":"a","title":"T"}`), Reply: json.RawMessage(`{"paper":null}`)},
		{Op: OpMatch, Request: json.RawMessage(`{"title":"T","as_of":"a"}`), Reply: json.RawMessage(`{"paper":{"paperId":"x","title":"T","citationCount":0}}`)},
	})
	if err == nil || !strings.Contains(err.Error(), "two different replies") {
		t.Errorf("conflicting replies: %v", err)
	}
}
