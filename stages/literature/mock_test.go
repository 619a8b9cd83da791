package literature

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm"
)

func mockCall(t *testing.T, op string, body any) []byte {
	t.Helper()
	p := llm.NewProvider("m", "mock")
	p.Seed = 3
	c, err := llm.New(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(body)
	resp, err := c.(llm.ServiceClient).Call(context.Background(), llm.ServiceRequest{Op: op, Body: b})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Body
}

// TestMockLiterature: the mock serves every literature operation with the
// counts its doc promises, the same bytes every time, and the cutoff held.
func TestMockLiterature(t *testing.T) {
	k, _ := llm.LookupKind("mock")
	for _, op := range Ops {
		if !k.Serves(op) {
			t.Errorf("mock does not serve %s", op)
		}
	}
	snap := Snapshot{AsOf: "2026-12-01", CutoffDate: "2020-06-30"}
	var ps Papers
	body := mockCall(t, OpSearch, SearchQuery{Snapshot: snap, Query: "coral reef bleaching", Limit: 7, MinCitationCount: 600, Venues: []string{"Nature"}})
	if string(body) != string(mockCall(t, OpSearch, SearchQuery{Snapshot: snap, Query: "coral reef bleaching", Limit: 7, MinCitationCount: 600, Venues: []string{"Nature"}})) {
		t.Error("mock search is not deterministic")
	}
	json.Unmarshal(body, &ps)
	if len(ps.Papers) != 7 || ps.Total != 70 || ps.Retrieved != MockRetrieved {
		t.Fatalf("search: %d papers, total %d", len(ps.Papers), ps.Total)
	}
	for _, p := range ps.Papers {
		if p.PublicationDate > "2020-06-30" || p.CitationCount < 600 || p.Venue != "Nature" || len(p.PaperID) != 40 || !strings.Contains(p.Title, "coral reef bleaching") {
			t.Errorf("search paper breaks the query: %+v", p)
		}
	}
	json.Unmarshal(mockCall(t, OpBulkSearch, SearchQuery{Snapshot: snap}), &ps)
	if len(ps.Papers) != mockBulkDefault {
		t.Errorf("bulk: %d papers", len(ps.Papers))
	}
	var refs References
	json.Unmarshal(mockCall(t, OpReferences, ReferencesQuery{Snapshot: snap, PaperID: ps.Papers[0].PaperID}), &refs)
	n := len(refs.References)
	if n < 5 || n > 24 || refs.References[n-1].Paper.PaperID != "" || refs.References[2].Contexts != nil || refs.References[0].Contexts == nil {
		t.Errorf("references: %d, last %+v", n, refs.References[n-1])
	}
	var sn Snippets
	json.Unmarshal(mockCall(t, OpSnippets, SnippetQuery{Snapshot: snap, Query: "q", Limit: 20}), &sn)
	if len(sn.Snippets) != 20 || sn.Snippets[0].Score != 1 {
		t.Errorf("snippets: %d", len(sn.Snippets))
	}
	json.Unmarshal(mockCall(t, OpBatch, BatchQuery{Snapshot: snap, IDs: []string{"a", "b"}}), &ps)
	if ids(ps.Papers) != "a,b" {
		t.Errorf("batch: %s", ids(ps.Papers))
	}
	json.Unmarshal(mockCall(t, OpRecommend, RecommendQuery{Snapshot: snap, ForPaper: "a", Limit: 4}), &ps)
	if len(ps.Papers) != 4 {
		t.Errorf("recommend: %d", len(ps.Papers))
	}
	// Match: about one title in four finds nothing.
	found := 0
	for i := 0; i < 40; i++ {
		var m Match
		json.Unmarshal(mockCall(t, OpMatch, MatchQuery{Snapshot: snap, Title: "Title " + string(rune('A'+i))}), &m)
		if m.Paper != nil {
			found++
		}
	}
	if found != 35 { // seed 3: fixed by the titles' hashes
		t.Errorf("matches found: %d of 40", found)
	}
}
