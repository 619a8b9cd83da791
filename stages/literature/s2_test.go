package literature

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
	"github.com/ideaflow/ideaflow/stages/literature/s2fake"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

func sp(s string) *string { return &s }
func ip(n int) *int       { return &n }

// fakePapers are n papers about "graph" (every third also about
// "ecology"), ids f0..f(n-1), corpus ids 1000+i, one a day from 2015-01-01;
// every tenth has no abstract.
func fakePapers(n int) []s2fake.Paper {
	out := make([]s2fake.Paper, n)
	start := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		d := start.AddDate(0, 0, i)
		p := s2fake.Paper{PaperID: sp(fmt.Sprintf("f%d", i)), CorpusID: 1000 + i, Title: fmt.Sprintf("Graph paper %d", i),
			Year: ip(d.Year()), PublicationDate: sp(d.Format("2006-01-02")), Venue: "ICML", CitationCount: ip(i),
			PublicationTypes: []string{"Conference"}, FieldsOfStudy: []string{"Computer Science"}}
		if i%3 == 0 {
			p.Title += " ecology"
		}
		if i%10 != 9 {
			p.Abstract = sp(fmt.Sprintf("Abstract of graph paper %d.", i))
		}
		out[i] = p
	}
	return out
}

type s2Env struct {
	srv   *s2fake.Server
	clock *llmtest.FakeClock
	c     llm.ServiceClient
}

// newS2 connects a semantic_scholar client to a fake server; the fake
// clock drives both the client's limiter and the server's timestamps.
func newS2(t *testing.T, papers []s2fake.Paper, key string, set func(p *llm.Provider)) *s2Env {
	t.Helper()
	clock := llmtest.NewFakeClock(time.Time{})
	srv := s2fake.New(papers)
	srv.Now = clock.Now
	t.Cleanup(srv.Close)
	p := llm.NewProvider("s2", "semantic_scholar")
	p.BaseURL = srv.URL() + s2fake.GraphPath
	if err := p.Set("recommendations_url", srv.URL()+s2fake.RecommendationsPath); err != nil {
		t.Fatal(err)
	}
	p.MaxConcurrency = 1 // one sleeper at a time: the fake clock then stands for wall time
	env := map[string]string{}
	if key != "" {
		srv.APIKey = key
		p.APIKeyEnv = "S2_KEY"
		env["S2_KEY"] = key
	}
	if set != nil {
		set(&p)
	}
	c, err := llm.New(p, llm.WithClock(clock), llm.WithJitter(func(d time.Duration) time.Duration { return d }),
		llm.WithEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	if err != nil {
		t.Fatal(err)
	}
	return &s2Env{srv: srv, clock: clock, c: c.(llm.ServiceClient)}
}

func (e *s2Env) call(t *testing.T, op string, body any, out any) *llm.ServiceResponse {
	t.Helper()
	resp, err := e.try(op, body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			t.Fatal(err)
		}
	}
	return resp
}

func (e *s2Env) try(op string, body any) (*llm.ServiceResponse, error) {
	b, _ := json.Marshal(body)
	return e.c.Call(context.Background(), llm.ServiceRequest{Op: op, Body: b})
}

// pages summarises the requests: path?param=value for the named params.
func pages(reqs []s2fake.Request, params ...string) []string {
	var out []string
	for _, r := range reqs {
		s := r.Path
		for _, p := range params {
			s += " " + p + "=" + r.Query.Get(p)
		}
		out = append(out, s)
	}
	return out
}

var snap0 = Snapshot{AsOf: "2026-12-01"}

func TestS2SearchPaging(t *testing.T) {
	e := newS2(t, fakePapers(400), "", nil)
	var ps Papers
	resp := e.call(t, OpSearch, SearchQuery{Snapshot: snap0, Query: "graph", Limit: 250}, &ps)
	if len(ps.Papers) != 250 || ps.Total != 400 || ps.Papers[249].PaperID != "f249" || resp.Attempts != 3 {
		t.Fatalf("%d papers, total %d, attempts %d", len(ps.Papers), ps.Total, resp.Attempts)
	}
	want := []string{"/paper/search offset=0 limit=100", "/paper/search offset=100 limit=100", "/paper/search offset=200 limit=50"}
	if got := pages(e.srv.Requests(), "offset", "limit"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("requests %q", got)
	}
	// Fields asked explicitly: the abstract comes back, and is empty where the API has null.
	if ps.Papers[0].Abstract != "Abstract of graph paper 0." || ps.Papers[9].Abstract != "" || ps.Papers[0].PublicationDate != "2015-01-01" {
		t.Errorf("papers %+v %+v", ps.Papers[0], ps.Papers[9])
	}
	if f := e.srv.Requests()[0].Query.Get("fields"); f != s2PaperFields {
		t.Errorf("fields %q", f)
	}
	// Fewer matches than asked: paging stops where the server has no next.
	e.srv.Reset()
	e.call(t, OpSearch, SearchQuery{Snapshot: snap0, Query: "ecology", Limit: 1000}, &ps)
	if len(ps.Papers) != 134 || len(e.srv.Requests()) != 2 {
		t.Errorf("ecology: %d papers in %d requests", len(ps.Papers), len(e.srv.Requests()))
	}
}

func TestS2SearchFiltersAndCutoff(t *testing.T) {
	e := newS2(t, fakePapers(400), "", nil)
	var ps Papers
	e.call(t, OpSearch, SearchQuery{Snapshot: Snapshot{AsOf: "x", CutoffDate: "2015-01-10"}, Query: "graph", Limit: 50,
		Year: "2014-2016", FieldsOfStudy: []string{"Computer Science", "Biology"}, MinCitationCount: 3, Venues: []string{"ICML", "NeurIPS"}}, &ps)
	if ids(ps.Papers) != "f3,f4,f5,f6,f7,f8,f9" {
		t.Errorf("papers %s", ids(ps.Papers))
	}
	q := e.srv.Requests()[0].Query
	for k, want := range map[string]string{"year": "2014-2016", "publicationDateOrYear": ":2015-01-10", "fieldsOfStudy": "Computer Science,Biology",
		"minCitationCount": "3", "venue": "ICML,NeurIPS", "query": "graph"} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, q.Get(k), want)
		}
	}
	// The query's own range, intersected with the cutoff.
	e.srv.Reset()
	e.call(t, OpSearch, SearchQuery{Snapshot: Snapshot{AsOf: "x", CutoffDate: "2015-01-10"}, Query: "graph", Limit: 50, PublicationDateOrYear: "2015-01-08:2016"}, &ps)
	if got := e.srv.Requests()[0].Query.Get("publicationDateOrYear"); got != "2015-01-08:2015-01-10" || ids(ps.Papers) != "f7,f8,f9" {
		t.Errorf("range %q, papers %s", got, ids(ps.Papers))
	}
	// Client-side: recommendations have no date filter; later papers are dropped here.
	e.call(t, OpRecommend, RecommendQuery{Snapshot: Snapshot{AsOf: "x", CutoffDate: "2015-01-05"}, ForPaper: "f0", Limit: 10}, &ps)
	if ids(ps.Papers) != "f1,f2,f3,f4" {
		t.Errorf("recommend after cutoff: %s", ids(ps.Papers))
	}
}

func TestS2BulkPaging(t *testing.T) {
	e := newS2(t, fakePapers(2500), "", nil)
	e.srv.TotalAsString = true
	var ps Papers
	resp := e.call(t, OpBulkSearch, SearchQuery{Snapshot: snap0, Query: "graph"}, &ps)
	if len(ps.Papers) != 2500 || ps.Total != 2500 || ps.Papers[2499].PaperID != "f2499" || resp.Attempts != 3 {
		t.Fatalf("%d papers, total %d, attempts %d", len(ps.Papers), ps.Total, resp.Attempts)
	}
	if got := pages(e.srv.Requests(), "token"); strings.Join(got, "|") != "/paper/search/bulk token=|/paper/search/bulk token=tok1000|/paper/search/bulk token=tok2000" {
		t.Errorf("requests %q", got)
	}
	e.srv.Reset()
	e.call(t, OpBulkSearch, SearchQuery{Snapshot: snap0, Query: "graph", Limit: 1200}, &ps)
	if len(ps.Papers) != 1200 || len(e.srv.Requests()) != 2 {
		t.Errorf("limited bulk: %d papers in %d requests", len(ps.Papers), len(e.srv.Requests()))
	}
}

func TestS2References(t *testing.T) {
	papers := fakePapers(3)
	e := newS2(t, papers, "", nil)
	refs := make([]s2fake.Reference, 1234)
	for i := range refs {
		r := s2fake.Reference{CitedPaper: s2fake.Paper{PaperID: sp(fmt.Sprintf("r%d", i)), Title: fmt.Sprintf("Ref %d", i), Year: ip(2010), CitationCount: ip(i)},
			Contexts: []string{fmt.Sprintf("context %d", i)}, Intents: []string{"background"}, IsInfluential: i%2 == 0}
		switch i % 5 {
		case 1:
			r.CitedPaper.PaperID = nil // unresolved
		case 2:
			r.Contexts = []string{} // no context
			r.Intents = nil
			r.ContextsWithIntent = []s2fake.ContextWithIntent{{Context: "a", Intents: []string{"methodology"}}, {Context: "b", Intents: []string{"result", "methodology"}}}
		case 3:
			r.CitedPaper.Year = ip(2030) // after the cutoff below
		}
		refs[i] = r
	}
	e.srv.SetReferences("f0", refs)
	for _, tc := range []struct {
		pageMax  int
		requests int
	}{{1000, 2}, {300, 5}} {
		e.srv.RefPageMax = tc.pageMax
		e.srv.Reset()
		var got References
		e.call(t, OpReferences, ReferencesQuery{Snapshot: snap0, PaperID: "f0"}, &got)
		if len(got.References) != 1234 || len(e.srv.Requests()) != tc.requests {
			t.Fatalf("page max %d: %d references in %d requests", tc.pageMax, len(got.References), len(e.srv.Requests()))
		}
		if r := got.References[1233]; r.Paper.PaperID != "r1233" || r.Paper.CitationCount != 1233 {
			t.Errorf("last reference %+v", r)
		}
	}
	var got References
	e.call(t, OpReferences, ReferencesQuery{Snapshot: Snapshot{AsOf: "x", CutoffDate: "2020-01-01"}, PaperID: "f0", Limit: 4}, &got)
	b, _ := json.Marshal(got.References)
	want := `[{"paper":{"paperId":"r0","title":"Ref 0","year":2010,"citationCount":0},"intents":["background"],"contexts":["context 0"],"isInfluential":true},` +
		`{"paper":{"paperId":"","title":"Ref 1","year":2010,"citationCount":1},"intents":["background"],"contexts":["context 1"],"isInfluential":false},` +
		`{"paper":{"paperId":"r2","title":"Ref 2","year":2010,"citationCount":2},"intents":["methodology","result"],"isInfluential":true},` +
		`{"paper":{"paperId":"r4","title":"Ref 4","year":2010,"citationCount":4},"intents":["background"],"contexts":["context 4"],"isInfluential":true}]`
	if string(b) != want {
		t.Errorf("references\n got %s\nwant %s", b, want)
	}
	if f := e.srv.Requests()[0].Query.Get("fields"); !strings.HasPrefix(f, "contexts,intents,contextsWithIntent,isInfluential,") {
		t.Errorf("fields %q", f)
	}
	if _, err := e.try(OpReferences, ReferencesQuery{Snapshot: snap0, PaperID: "nope"}); err == nil || !strings.Contains(err.Error(), "HTTP 404: not found: Paper with id nope not found") {
		t.Errorf("unknown paper: %v", err)
	}
}

func TestS2BatchAndMatch(t *testing.T) {
	e := newS2(t, fakePapers(1300), "", nil)
	var idsIn []string
	for i := 0; i < 1201; i++ {
		idsIn = append(idsIn, fmt.Sprintf("f%d", i))
	}
	idsIn[7] = "unknown"
	var ps Papers
	e.call(t, OpBatch, BatchQuery{Snapshot: Snapshot{AsOf: "x", CutoffDate: "2018-01-01"}, IDs: idsIn}, &ps)
	var sizes []int
	for _, r := range e.srv.Requests() {
		var b struct{ IDs []string }
		json.Unmarshal(r.Body, &b)
		sizes = append(sizes, len(b.IDs))
	}
	if fmt.Sprint(sizes) != "[500 500 201]" || len(ps.Papers) != 1201 || ps.Papers[7] != nil || ps.Papers[8].PaperID != "f8" {
		t.Fatalf("batch sizes %v, %d papers", sizes, len(ps.Papers))
	}
	// 2018-01-01 is day 1096 from 2015-01-01: f1097 on is after the cutoff.
	if ps.Papers[1096] == nil || ps.Papers[1097] != nil {
		t.Errorf("cutoff: %v %v", ps.Papers[1096], ps.Papers[1097])
	}
	var m Match
	e.call(t, OpMatch, MatchQuery{Snapshot: snap0, Title: "graph paper 12 ecology"}, &m)
	if m.Paper == nil || m.Paper.PaperID != "f12" || m.Score != 183.5 {
		t.Errorf("match %+v", m)
	}
	resp := e.call(t, OpMatch, MatchQuery{Snapshot: snap0, Title: "No such paper"}, &m)
	if m.Paper != nil || resp.Attempts != 1 {
		t.Errorf("no match: %+v after %d attempts", m, resp.Attempts)
	}
	e.call(t, OpMatch, MatchQuery{Snapshot: Snapshot{AsOf: "x", CutoffDate: "2015-01-05"}, Title: "graph paper 12 ecology"}, &m)
	if m.Paper != nil {
		t.Errorf("match after the cutoff: %+v", m)
	}
}

func TestS2Snippets(t *testing.T) {
	e := newS2(t, fakePapers(10), "", nil)
	e.srv.AddSnippets(s2fake.Snippet{Text: "graph neural nets help", Section: "Results", CorpusID: 1002},
		s2fake.Snippet{Text: "graph graph graph", Section: "Intro", CorpusID: 1008},
		s2fake.Snippet{Text: "unrelated", CorpusID: 1003})
	var sn Snippets
	e.call(t, OpSnippets, SnippetQuery{Snapshot: snap0, Query: "graph", Limit: 20}, &sn)
	if len(sn.Snippets) != 2 || sn.Snippets[0].Paper.PaperID != "f8" || sn.Snippets[0].Section != "Intro" || sn.Snippets[1].Paper.Title != "Graph paper 2" {
		t.Fatalf("snippets %+v", sn.Snippets)
	}
	if got := pages(e.srv.Requests()); strings.Join(got, "|") != "/snippet/search|/paper/batch" {
		t.Errorf("requests %v", got)
	}
	e.call(t, OpSnippets, SnippetQuery{Snapshot: Snapshot{AsOf: "x", CutoffDate: "2015-01-05"}, Query: "graph", Limit: 20, PaperIDs: []string{"f2", "f8"}}, &sn)
	if len(sn.Snippets) != 1 || sn.Snippets[0].Paper.PaperID != "f2" {
		t.Errorf("cutoff snippets %+v", sn.Snippets)
	}
}

// TestS2RateLimit: requests start exactly 1/requests_per_second apart as
// the server sees them, the default 1 s with a key and 3 s without.
func TestS2RateLimit(t *testing.T) {
	for _, tc := range []struct {
		key  string
		rps  float64
		want time.Duration
	}{{"k-123", 0, time.Second}, {"", 0, 3 * time.Second}, {"k-123", 4, 250 * time.Millisecond}} {
		e := newS2(t, fakePapers(5), tc.key, func(p *llm.Provider) {
			if tc.rps > 0 {
				p.Set("requests_per_second", tc.rps)
			}
		})
		for i := 0; i < 12; i++ {
			e.call(t, OpBatch, BatchQuery{Snapshot: snap0, IDs: []string{"f1"}}, nil)
		}
		reqs := e.srv.Requests()
		for i, r := range reqs {
			if want := llmtest.Epoch.Add(time.Duration(i) * tc.want); !r.At.Equal(want) {
				t.Fatalf("key %q rps %v: request %d at %v, want %v", tc.key, tc.rps, i, r.At.Sub(llmtest.Epoch), want.Sub(llmtest.Epoch))
			}
			if r.APIKey != tc.key {
				t.Errorf("x-api-key %q, want %q", r.APIKey, tc.key)
			}
		}
		if len(reqs) != 12 {
			t.Errorf("%d requests", len(reqs))
		}
	}
}

// TestS2Retries: 429 with Retry-After waits what it says, without it the
// back-off; 5xx is retried; a refused key is not.
func TestS2Retries(t *testing.T) {
	e := newS2(t, fakePapers(5), "k-123", func(p *llm.Provider) { p.Set("requests_per_second", 1000.0) })
	e.srv.FailNext(s2fake.Failure{Status: 429, RetryAfter: "7"}, s2fake.Failure{Status: 429}, s2fake.Failure{Status: 503}, s2fake.Failure{Status: 500, Body: "oops"})
	var ps Papers
	resp := e.call(t, OpBatch, BatchQuery{Snapshot: snap0, IDs: []string{"f1"}}, &ps)
	if resp.Attempts != 5 || ids(ps.Papers) != "f1" {
		t.Fatalf("attempts %d, papers %s", resp.Attempts, ids(ps.Papers))
	}
	// The retry waits: 7 s (Retry-After), then back-off 2 s, 4 s, 8 s (attempts 2-4, no jitter);
	// the rate's own 1 ms spacing is folded into them.
	var waits []time.Duration
	for _, d := range e.clock.Sleeps() {
		if d >= time.Second {
			waits = append(waits, d)
		}
	}
	if fmt.Sprint(waits) != "[7s 2s 4s 8s]" {
		t.Errorf("waits %v", waits)
	}
	e.srv.FailNext(s2fake.Failure{Status: 400, Body: `{"error":"Unrecognized or unsupported fields: [bogus]"}`})
	_, err := e.try(OpBatch, BatchQuery{Snapshot: snap0, IDs: []string{"f1"}})
	if err == nil || !strings.Contains(err.Error(), `provider "s2": HTTP 400: request refused: Unrecognized or unsupported fields: [bogus]`) {
		t.Errorf("400: %v", err)
	}
	e.srv.APIKey = "other"
	_, err = e.try(OpBatch, BatchQuery{Snapshot: snap0, IDs: []string{"f1"}})
	if err == nil || !strings.Contains(err.Error(), "key refused") || strings.Contains(err.Error(), "k-123") {
		t.Errorf("refused key: %v", err)
	}
}

func TestS2RequestErrors(t *testing.T) {
	e := newS2(t, fakePapers(5), "", nil)
	for _, tc := range []struct {
		op   string
		body any
		want string
	}{
		{OpSearch, SearchQuery{Query: "x", Limit: 5}, "as_of is empty"},
		{OpSearch, SearchQuery{Snapshot: snap0, Query: "x", Limit: 0}, "limit is 0"},
		{OpSearch, SearchQuery{Snapshot: Snapshot{AsOf: "x", CutoffDate: "2020"}, Query: "x", Limit: 1}, `cutoff_date "2020" is not a date`},
		{OpSearch, map[string]any{"as_of": "x", "query": "x", "limit": 1, "venue": "ICML"}, `unknown field "venue"`},
		{OpRecommend, RecommendQuery{Snapshot: snap0, Limit: 5}, "no paper to recommend from"},
		{"embeddings", map[string]any{}, `kind "semantic_scholar" does not serve operation "embeddings"`},
	} {
		if _, err := e.try(tc.op, tc.body); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: %v, want %q", tc.op, tc.body, err, tc.want)
		}
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d requests made for refused queries", n)
	}
}

// TestS2EscapedKeyEchoes: a server that repeats the x-api-key in every
// paper title, and in an error message, in each spelling a JSON encoder
// can give it: the client's replies and errors hold no 8 bytes of the key
// and show the mask where it was.
func TestS2EscapedKeyEchoes(t *testing.T) {
	const key = "s2-b64/Zm9v+YmFy='x<y"
	for _, sp := range llmtest.Spellings {
		t.Run(sp.String(), func(t *testing.T) {
			e := newS2(t, fakePapers(3), key, func(p *llm.Provider) { p.Set("requests_per_second", 1000.0) })
			e.srv.EchoKey, e.srv.EchoSpelling = true, sp
			var texts []string
			var ps Papers
			resp := e.call(t, OpSearch, SearchQuery{Snapshot: snap0, Query: "graph", Limit: 3}, &ps)
			texts = append(texts, string(resp.Body))
			for _, p := range ps.Papers {
				texts = append(texts, p.Title)
				if !strings.HasPrefix(p.Title, httpcall.Redacted+" Graph paper") {
					t.Errorf("title %q: the echo should read %s", p.Title, httpcall.Redacted)
				}
			}
			e.srv.FailNext(s2fake.Failure{Status: 400, EchoKey: true})
			_, err := e.try(OpBatch, BatchQuery{Snapshot: snap0, IDs: []string{"f1"}})
			if err == nil || !strings.Contains(err.Error(), "for key "+httpcall.Redacted) {
				t.Fatalf("echoing 400: %v", err)
			}
			texts = append(texts, err.Error())
			for _, s := range texts {
				for i := 0; i+8 <= len(key); i++ {
					if strings.Contains(s, key[i:i+8]) {
						t.Fatalf("text holds %q of the key: %s", key[i:i+8], s)
					}
				}
			}
		})
	}
}

// TestS2HostilePaging: a server whose paging never ends (the same
// continuation token again, pages with nothing new, a next offset that
// creeps, fresh pages forever) costs a bounded, exact number of requests,
// and the call fails saying why.
func TestS2HostilePaging(t *testing.T) {
	refs := make([]s2fake.Reference, 25)
	for i := range refs {
		refs[i] = s2fake.Reference{CitedPaper: s2fake.Paper{PaperID: sp(fmt.Sprintf("r%d", i)), Title: fmt.Sprintf("Ref %d", i)}}
	}
	bulk := SearchQuery{Snapshot: snap0, Query: "graph", Limit: 500}
	for _, tc := range []struct {
		mode     s2fake.Paging
		op       string
		body     any
		requests int
		want     string
	}{
		{s2fake.BulkSameToken, OpBulkSearch, bulk, 2, `page 2 named continuation token "tok-same", which page 1 named already: the server's pages loop; stopped`},
		{s2fake.BulkEmptyPages, OpBulkSearch, bulk, s2StalledPages, "pages 1 to 3 brought nothing not received already, yet each named a next page"},
		{s2fake.BulkRepeatPages, OpBulkSearch, bulk, 1 + s2StalledPages, "pages 2 to 4 brought nothing not received already"},
		{s2fake.BulkEndless, OpBulkSearch, SearchQuery{Snapshot: snap0, Query: "graph"}, s2BulkMaxPages,
			"1000 pages (1000 papers kept) and the server names another: more than a bulk search is followed for (1000 pages)"},
		{s2fake.RefsCreep, OpReferences, ReferencesQuery{Snapshot: snap0, PaperID: "f0"}, 1,
			"the server's next page (offset 1) starts inside the page it just sent (offset 0, 10 entries): its paging repeats entries; stopped"},
		{s2fake.RefsRepeatPages, OpReferences, ReferencesQuery{Snapshot: snap0, PaperID: "f0"}, 1 + s2StalledPages, "pages 2 to 4 brought nothing not received already"},
		{s2fake.RefsEndless, OpReferences, ReferencesQuery{Snapshot: snap0, PaperID: "f0"}, s2RefsMaxPages,
			"paper f0: the server names a next page (offset 100) after 100 pages and 100 references kept: past what a reference list is followed for (10000 references, 100 pages)"},
		{s2fake.SearchCreep, OpSearch, SearchQuery{Snapshot: snap0, Query: "graph", Limit: 250}, 1,
			"the server's next page (offset 1) starts inside the page it just sent (offset 0, 100 entries)"},
	} {
		e := newS2(t, fakePapers(300), "", func(p *llm.Provider) { p.Set("requests_per_second", 1000.0) })
		e.srv.SetReferences("f0", refs)
		e.srv.RefPageMax = 10
		e.srv.Paging = tc.mode
		_, err := e.try(tc.op, tc.body)
		var api *llm.APIError
		if !errors.As(err, &api) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("mode %d: %v, want an error saying %q", tc.mode, err, tc.want)
		}
		if n := len(e.srv.Requests()); n != tc.requests || api == nil || api.Attempts != tc.requests {
			t.Errorf("mode %d: %d requests (error counts %v), want %d", tc.mode, n, api, tc.requests)
		}
	}
}

// TestS2RateLimitOnly: a Semantic Scholar endpoint answering only 429 (the
// shared pool taken by others for good, a key's quota spent) is declared
// unavailable after RateLimitRefusals requests; later calls make none.
func TestS2RateLimitOnly(t *testing.T) {
	e := newS2(t, fakePapers(5), "k-123", nil)
	fs := make([]s2fake.Failure, 3*llm.RateLimitRefusals)
	for i := range fs {
		fs[i] = s2fake.Failure{Status: 429}
	}
	e.srv.FailNext(fs...)
	for i := 0; i < 3; i++ {
		_, err := e.try(OpBatch, BatchQuery{Snapshot: snap0, IDs: []string{"f1"}})
		if !errors.Is(err, llm.ErrProviderUnavailable) {
			t.Fatalf("call %d: %v, want the provider unavailable", i+1, err)
		}
	}
	if n := len(e.srv.Requests()); n != llm.RateLimitRefusals {
		t.Errorf("%d requests, want %d", n, llm.RateLimitRefusals)
	}
}
