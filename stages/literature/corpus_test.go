package literature

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm"
)

const testCorpus = "testdata/corpus.jsonl"

func loadTest(t *testing.T) *Corpus {
	t.Helper()
	c, err := LoadCorpus(testCorpus)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ids(ps []*Paper) string {
	var out []string
	for _, p := range ps {
		if p == nil {
			out = append(out, "nil")
			continue
		}
		out = append(out, p.PaperID)
	}
	return strings.Join(out, ",")
}

// TestCorpusSearch: BM25 order and scores against values computed
// independently (a Python transcription of the same formula), and every
// filter.
func TestCorpusSearch(t *testing.T) {
	c := loadTest(t)
	snap := Snapshot{AsOf: "2026-12-01"}
	for _, tc := range []struct {
		name   string
		q      SearchQuery
		bulk   bool
		want   string
		total  int
		scores []float64 // of the first hits, when checked
	}{
		{name: "one term", q: SearchQuery{Query: "fingerprints", Limit: 10}, want: "p2,p1", total: 2},
		{name: "many terms", q: SearchQuery{Query: "graph neural message passing molecules", Limit: 10}, want: "p3,p1,p5,p2", total: 4},
		{name: "limit", q: SearchQuery{Query: "graph neural message passing molecules", Limit: 2}, want: "p3,p1", total: 4},
		{name: "cutoff drops later papers", q: SearchQuery{Snapshot: Snapshot{CutoffDate: "2019-04-30"}, Query: "graph neural message passing molecules", Limit: 10}, want: "p3,p2", total: 2},
		{name: "cutoff keeps the day itself", q: SearchQuery{Snapshot: Snapshot{CutoffDate: "2019-05-01"}, Query: "graph neural message passing molecules", Limit: 10}, want: "p3,p1,p2", total: 3},
		{name: "year range", q: SearchQuery{Query: "molecules", Limit: 10, Year: "2017-2019"}, want: "p1,p3", total: 2},
		{name: "open year range", q: SearchQuery{Query: "molecules", Limit: 10, Year: "2020-"}, want: "p5", total: 1},
		{name: "date range", q: SearchQuery{Query: "molecules", Limit: 10, PublicationDateOrYear: "2017-04:2019-04-30"}, want: "p3", total: 1},
		{name: "year-only paper in date range", q: SearchQuery{Query: "fingerprints", Limit: 10, PublicationDateOrYear: "2010:2010"}, want: "p2", total: 1},
		{name: "min citations", q: SearchQuery{Query: "molecules", Limit: 10, MinCitationCount: 100}, want: "p1,p3", total: 2},
		{name: "venues", q: SearchQuery{Query: "molecules", Limit: 10, Venues: []string{"neurips"}}, want: "p5,p1", total: 2},
		{name: "fields of study", q: SearchQuery{Query: "molecules", Limit: 10, FieldsOfStudy: []string{"Chemistry"}}, want: "p2,p3", total: 2},
		{name: "bulk without a query lists by file order", bulk: true, q: SearchQuery{Venues: []string{"NeurIPS"}}, want: "p1,p5", total: 2},
		{name: "bulk limit caps", bulk: true, q: SearchQuery{Limit: 3}, want: "p1,p2,p3", total: 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.AsOf = snap.AsOf
			ps, total, err := c.Search(tc.q, tc.bulk)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(ps); got != tc.want || total != tc.total {
				t.Errorf("got %s (total %d), want %s (total %d)", got, total, tc.want, tc.total)
			}
		})
	}
	// Scores: the text index's own, checked against the independent values.
	for q, want := range map[string][]float64{
		"fingerprints":                           {1.4802259821785269, 0.8486889338453665},
		"graph neural message passing molecules": {5.205960524751819, 4.12756655306771, 1.5117035806937342, 0.4717312092001773},
		"bird migration":                         {3.6413747139062544},
	} {
		hits := c.text.search(q, 0, nil)
		if len(hits) != len(want) {
			t.Fatalf("%q: %d hits, want %d", q, len(hits), len(want))
		}
		for i, h := range hits {
			if math.Abs(h.score-want[i]) > 1e-12 {
				t.Errorf("%q hit %d: score %.17g, want %.17g", q, i, h.score, want[i])
			}
		}
	}
}

func TestCorpusSearchErrors(t *testing.T) {
	c := loadTest(t)
	for _, tc := range []struct {
		q    SearchQuery
		bulk bool
		want string
	}{
		{q: SearchQuery{Query: "x", Limit: 0}, want: "limit is 0; a relevance search returns 1 to 1000 papers"},
		{q: SearchQuery{Query: "", Limit: 5}, want: "query is empty"},
		{q: SearchQuery{Query: "x", Limit: 5, Year: "19"}, want: `year "19" is not a year or range`},
		{q: SearchQuery{Query: "x", Limit: 5, Year: "2020-2010"}, want: `year "2020-2010" is not a year or range`},
		{q: SearchQuery{Query: "x", Limit: 5, PublicationDateOrYear: "2019-13-01:"}, want: "publication_date_or_year"},
		{q: SearchQuery{Snapshot: Snapshot{CutoffDate: "June 2024"}, Query: "x", Limit: 5}, want: `cutoff_date "June 2024" is not a date YYYY-MM-DD`},
		{q: SearchQuery{Query: "x", MinCitationCount: -1, Limit: 5}, want: "min_citation_count is -1"},
		{q: SearchQuery{Limit: -1}, bulk: true, want: "limit is -1"},
	} {
		if _, _, err := c.Search(tc.q, tc.bulk); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.q, err, tc.want)
		}
	}
}

func TestCorpusMatchBatchReferences(t *testing.T) {
	c := loadTest(t)
	for _, tc := range []struct {
		title, cutoff, want string
	}{
		{"Neural Message Passing for Quantum Chemistry", "", "p3"},
		{"neural message-passing for quantum chemistry.", "", "p3"},
		{"Neural message passing for chemistry", "", "p3"}, // Dice 2*5/(5+6) = 0.909
		{"Neural message passing for physics", "", "nil"},  // Dice 2*4/(5+6) = 0.727
		{"Message passing", "", "nil"},
		{"Graph transformers for molecules", "2022-12-31", "nil"},
	} {
		m, err := c.Match(MatchQuery{Title: tc.title, Snapshot: Snapshot{AsOf: "x", CutoffDate: tc.cutoff}})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids([]*Paper{m.Paper}); got != tc.want {
			t.Errorf("match %q: %s, want %s", tc.title, got, tc.want)
		}
	}
	ps, _ := c.Batch(BatchQuery{IDs: []string{"p3", "nope", "p5", "p1"}, Snapshot: Snapshot{CutoffDate: "2022-01-01"}})
	if got := ids(ps); got != "p3,nil,nil,p1" {
		t.Errorf("batch: %s", got)
	}
	refs, err := c.References(ReferencesQuery{PaperID: "p1", Snapshot: Snapshot{CutoffDate: "2022-01-01"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(refs)
	want := `[{"paper":{"paperId":"p2","title":"Molecular fingerprints for virtual screening","abstract":"Fingerprints encode molecules as bit vectors for screening.","year":2010,"venue":"Journal of Chemical Information","citationCount":40,"fieldsOfStudy":["Chemistry"]},"isInfluential":false},` +
		`{"paper":{"paperId":"p3","title":"Neural message passing for quantum chemistry","abstract":"Message passing neural networks predict quantum properties of molecules. We unify graph neural networks as message passing.","year":2017,"publicationDate":"2017-04-04","venue":"ICML","citationCount":5000,"fieldsOfStudy":["Computer Science","Chemistry"]},"intents":["methodology"],"contexts":["we follow [3]"],"isInfluential":true},` +
		`{"paper":{"paperId":"","title":"An unresolved thesis","citationCount":0},"isInfluential":false}]`
	if string(got) != want {
		t.Errorf("references:\n got %s\nwant %s", got, want)
	}
	if _, err := c.References(ReferencesQuery{PaperID: "zz"}); err == nil || !strings.Contains(err.Error(), `paper "zz" is not in the corpus`) {
		t.Errorf("unknown paper: %v", err)
	}
}

func TestCorpusSnippetsRecommend(t *testing.T) {
	c := loadTest(t)
	sn, err := c.Snippets(SnippetQuery{Query: "message passing", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sn {
		got = append(got, s.Paper.PaperID+":"+s.Text)
	}
	want := []string{
		"p3:Message passing neural networks predict quantum properties of molecules. We unify graph neural networks as message passing.",
		"p1:We train graph neural networks on molecules. Message passing improves property prediction over fingerprints.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("snippets:\n%s", strings.Join(got, "\n"))
	}
	sn, _ = c.Snippets(SnippetQuery{Query: "message passing", Limit: 5, PaperIDs: []string{"p1"}})
	if len(sn) != 1 || sn[0].Paper.PaperID != "p1" {
		t.Errorf("restricted snippets: %+v", sn)
	}
	ps, err := c.Recommend(RecommendQuery{ForPaper: "p1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(ps); got != "p3,p5" {
		t.Errorf("recommend for p1: %s", got)
	}
	ps, _ = c.Recommend(RecommendQuery{Positive: []string{"p1"}, Negative: []string{"p3"}, Limit: 2, Snapshot: Snapshot{CutoffDate: "2022-12-31"}})
	if got := ids(ps); got != "p2" {
		t.Errorf("recommend with negatives and cutoff: %s", got)
	}
}

func TestSplitPassages(t *testing.T) {
	long := strings.Repeat("word ", 60) // 300 characters a sentence
	got := splitPassages("First. " + long + "end. " + long + "more. Last one? Yes 3.5 works!")
	// 6 + 1 + 305 characters, then the second long sentence passes 500.
	if len(got) != 2 || !strings.HasSuffix(got[0], "more.") || got[1] != "Last one? Yes 3.5 works!" {
		t.Errorf("passages: %q", got)
	}
	if s := sentences("A 3.5 b. C e.g.x d? E"); strings.Join(s, "|") != "A 3.5 b.|C e.g.x d?|E" {
		t.Errorf("sentences: %q", s)
	}
}

func TestLoadCorpusErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{`{"paperId":"a","title":"t","citationcount":3}`, `c.jsonl:1: unknown member citationcount`},
		{`{"paperId":"a","title":"t"}` + "\n\n" + `{"paperId":"a","title":"u"}`, `c.jsonl:3: paper "a" is listed twice (first as paper 1)`},
		{`{"title":"t"}`, `c.jsonl:1: no paperId`},
		{`{"paperId":"a"}`, `c.jsonl:1: paper "a" has no title`},
		{`{"paperId":"a","title":"t","publicationDate":"2020/01/01"}`, `publicationDate "2020/01/01" is not YYYY-MM-DD`},
		{`{"paperId":"a","title":"t","references":[{"paperId":"b","intent":["x"]}]}`, `unknown field "intent"`},
		{`[1]`, `c.jsonl:1: not a JSON object`},
		{``, `c.jsonl: no papers`},
	} {
		p := filepath.Join(dir, "c.jsonl")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadCorpus(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

// TestCorpusKind: the kind is registered, connects through llm.New and
// serves every operation; a query without as_of is refused.
func TestCorpusKind(t *testing.T) {
	k, ok := llm.LookupKind("corpus")
	if !ok || len(k.Ops) != len(Ops) || k.Chat || k.Synthetic {
		t.Fatalf("kind: %+v", k)
	}
	p := llm.NewProvider("lit", "corpus")
	if err := p.Set("path", testCorpus); err != nil {
		t.Fatal(err)
	}
	cl, err := llm.New(p, llm.WithClock(fixedClock{}))
	if err != nil {
		t.Fatal(err)
	}
	sc := cl.(llm.ServiceClient)
	body, _ := json.Marshal(SearchQuery{Snapshot: Snapshot{AsOf: "2026-12-01"}, Query: "bird migration", Limit: 3})
	resp, err := sc.Call(context.Background(), llm.ServiceRequest{Op: OpSearch, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"papers":[{"paperId":"p4","title":"Bird migration timing under climate change","abstract":"Migration timing of birds shifts with spring temperature.","year":2021,"publicationDate":"2021-03-10","venue":"Ecology Letters","citationCount":15,"fieldsOfStudy":["Biology"]}],"total":1,"retrieved":"2026-12-01T10:00:00Z"}`; string(resp.Body) != want {
		t.Errorf("reply %s", resp.Body)
	}
	_, err = sc.Call(context.Background(), llm.ServiceRequest{Op: OpSearch, Body: []byte(`{"query":"x","limit":1}`)})
	if err == nil || !strings.Contains(err.Error(), `provider "lit": literature.search: as_of is empty`) {
		t.Errorf("no as_of: %v", err)
	}
	_, err = sc.Call(context.Background(), llm.ServiceRequest{Op: OpSearch, Body: []byte(`{"as_of":"x","query":"x","limit":1,"venue":"x"}`)})
	if err == nil || !strings.Contains(err.Error(), `unknown field "venue"`) {
		t.Errorf("misspelt member: %v", err)
	}
	_, err = sc.Call(context.Background(), llm.ServiceRequest{Op: "embeddings", Body: []byte(`{}`)})
	if err == nil || !strings.Contains(err.Error(), `kind "corpus" does not serve operation "embeddings"`) {
		t.Errorf("unserved: %v", err)
	}
	if _, err := cl.Complete(context.Background(), llm.Request{Model: "m"}); err == nil || !strings.Contains(err.Error(), "serves no chat completions") {
		t.Errorf("chat: %v", err)
	}
	bad := llm.NewProvider("lit", "corpus")
	_ = bad.Set("path", "testdata/missing.jsonl")
	if _, err := llm.New(bad); err == nil || !strings.Contains(err.Error(), `provider "lit": path corpus: open testdata/missing.jsonl`) {
		t.Errorf("missing file: %v", err)
	}
}

type fixedClock struct{}

func (fixedClock) Now() time.Time                                   { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }
func (fixedClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// TestLiteratureAnswerers: a corpus is identified by its contents, the
// Semantic Scholar kind by its endpoints.
func TestLiteratureAnswerers(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	line := `{"paperId": "p1", "title": "T", "abstract": "A."}` + "\n"
	os.WriteFile(a, []byte(line), 0o644)
	os.WriteFile(b, []byte(line), 0o644)
	corpus := func(path string) llm.Answerer {
		t.Helper()
		p := llm.NewProvider("lit", "corpus")
		if err := p.Set("path", path); err != nil {
			t.Fatal(err)
		}
		id, err := p.Identify()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	sum := sha256.Sum256([]byte(line))
	if got := corpus(a); got != (llm.Answerer{Class: llm.ClassCorpus, Identity: "sha256:" + hex.EncodeToString(sum[:])}) || corpus(b) != got {
		t.Errorf("corpus answerer %+v (the same contents under another path: %+v)", got, corpus(b))
	}
	os.WriteFile(b, []byte(line+line), 0o644)
	if corpus(b) == corpus(a) {
		t.Error("an edited corpus answers as before")
	}
	p := llm.NewProvider("lit", "corpus")
	p.Set("path", filepath.Join(dir, "missing.jsonl"))
	if _, err := p.Identify(); err == nil {
		t.Error("a missing corpus is identified")
	}

	s2 := func(set map[string]string) string {
		t.Helper()
		p := llm.NewProvider("s2", "semantic_scholar")
		for k, v := range set {
			if err := p.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		id, err := p.Identify()
		if err != nil || id.Class != llm.ClassEndpoint {
			t.Fatalf("%+v, %v", id, err)
		}
		return id.Identity
	}
	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{nil, "https://api.semanticscholar.org/graph/v1"},
		{map[string]string{"base_url": "http://127.0.0.1:9/graph/v1/"}, "http://127.0.0.1:9/graph/v1"},
		{map[string]string{"base_url": "http://m/graph/v1", "recommendations_url": "http://m/recommendations/v1"}, "http://m/graph/v1 recommendations http://m/recommendations/v1"},
		{map[string]string{"base_url": "http://m/graph/v1", "recommendations_url": "http://m/r", "endpoint_identity": "s2"}, "s2"},
	} {
		if got := s2(tc.set); got != tc.want {
			t.Errorf("semantic_scholar %v: %q, want %q", tc.set, got, tc.want)
		}
	}
}
