// Package s2fake is a fake Semantic Scholar API for tests: the Graph API's
// paper search (relevance and bulk), title match, batch, references and
// snippet search, and the Recommendations API, answering with the
// documented response shapes from papers a test gives it. It pages as the
// real API does (offset/next, continuation tokens), returns only the fields
// asked for, answers null for unknown batch ids and 404 for an unmatched
// title, and can be told to fail the next requests (429 with or without
// Retry-After, 5xx), to page as a buggy or hostile server does (Paging),
// and to echo the API key in its replies (EchoKey). Every request is
// recorded with the time of the clock it was given, so a test can measure
// the request rate at the server.
package s2fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// Paths of the two APIs on the fake server: give the client
// URL()+GraphPath and URL()+RecommendationsPath.
const (
	GraphPath           = "/graph/v1"
	RecommendationsPath = "/recommendations/v1"
)

// Paper is a paper in the API's wire shape: a nil pointer is sent as null
// (an unresolved reference's paperId, a missing abstract).
type Paper struct {
	PaperID          *string  `json:"paperId"`
	CorpusID         int      `json:"corpusId"`
	Title            string   `json:"title"`
	Abstract         *string  `json:"abstract"`
	Year             *int     `json:"year"`
	PublicationDate  *string  `json:"publicationDate"`
	Venue            string   `json:"venue"`
	CitationCount    *int     `json:"citationCount"`
	PublicationTypes []string `json:"publicationTypes"`
	FieldsOfStudy    []string `json:"fieldsOfStudy"`
}

// ID is p's paperId, "" when null.
func (p Paper) ID() string {
	if p.PaperID == nil {
		return ""
	}
	return *p.PaperID
}

// ContextWithIntent is one citation context with its intents.
type ContextWithIntent struct {
	Context string   `json:"context"`
	Intents []string `json:"intents"`
}

// Reference is one entry of a references page.
type Reference struct {
	Contexts           []string            `json:"contexts"`
	Intents            []string            `json:"intents"`
	ContextsWithIntent []ContextWithIntent `json:"contextsWithIntent"`
	IsInfluential      bool                `json:"isInfluential"`
	CitedPaper         Paper               `json:"citedPaper"`
}

// Snippet is a passage the snippet search can return, of the paper with
// that corpus id.
type Snippet struct {
	Text     string
	Section  string
	CorpusID int
}

// Paging makes the server page as a buggy or hostile one does, for the
// tests that a client's paging loops end.
type Paging int

const (
	// PagingNormal pages as the API documents.
	PagingNormal Paging = iota
	// BulkSameToken: bulk search names the same continuation token on
	// every page, with no papers.
	BulkSameToken
	// BulkEmptyPages: bulk search names a fresh token on every page, with
	// no papers.
	BulkEmptyPages
	// BulkRepeatPages: bulk search names a fresh token on every page, with
	// the first page's papers again.
	BulkRepeatPages
	// BulkEndless: bulk search names a fresh token on every page, with a
	// paper never sent before.
	BulkEndless
	// RefsCreep: references name next = offset + 1 after a full page.
	RefsCreep
	// RefsRepeatPages: references name a next page after every page, with
	// the first page's entries again.
	RefsRepeatPages
	// RefsEndless: references name a next page after every page, each with
	// an entry never sent before.
	RefsEndless
	// SearchCreep: relevance search names next = offset + 1.
	SearchCreep
)

// Failure is an answer forced on one upcoming request.
type Failure struct {
	Status     int
	RetryAfter string // sent as Retry-After when not ""
	Body       string // default {"message": "<status text>"}
	// EchoKey makes the default body's message repeat the x-api-key the
	// request carried, spelled as the server's EchoSpelling says.
	EchoKey bool
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string // below the API's base, e.g. /paper/search
	Query  url.Values
	Body   []byte
	APIKey string // the x-api-key header
	At     time.Time
	Status int
}

// Server is the fake API.
type Server struct {
	srv *httptest.Server

	// Limits as the real API enforces them, lowerable to force paging.
	SearchMax     int // relevance search: largest limit (100)
	RefPageMax    int // references: largest page the server returns, whatever limit asks (1,000)
	BulkPage      int // bulk search: papers a page (1,000)
	BatchMax      int // batch: most ids a request (500)
	APIKey        string
	Now           func() time.Time
	TotalAsString bool // bulk search sends total as a string ("1234")
	Paging        Paging
	// EchoKey makes every paper title a reply carries start with the
	// x-api-key the request carried, written in EchoSpelling (a server
	// that logs into its data, or a proxy that rewrites it): clients must
	// mask the key in every spelling a JSON encoder can give it.
	EchoKey      bool
	EchoSpelling llmtest.Spelling

	mu         sync.Mutex
	papers     []Paper
	byID       map[string]int
	byCorpus   map[int]int
	references map[string][]Reference
	snippets   []Snippet
	failures   []Failure
	requests   []Request
}

// New starts a fake server holding papers (search order is their order).
func New(papers []Paper) *Server {
	s := &Server{SearchMax: 100, RefPageMax: 1000, BulkPage: 1000, BatchMax: 500, Now: time.Now,
		byID: map[string]int{}, byCorpus: map[int]int{}, references: map[string][]Reference{}}
	for _, p := range papers {
		s.AddPaper(p)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's root; the APIs are at GraphPath and RecommendationsPath.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// AddPaper adds a paper (with a non-nil id) to the server's data.
func (s *Server) AddPaper(p Paper) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id := p.ID(); id != "" {
		s.byID[id] = len(s.papers)
	}
	if p.CorpusID != 0 {
		s.byCorpus[p.CorpusID] = len(s.papers)
	}
	s.papers = append(s.papers, p)
}

// SetReferences sets a paper's references.
func (s *Server) SetReferences(id string, refs []Reference) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.references[id] = refs
}

// AddSnippets adds passages to the snippet search.
func (s *Server) AddSnippets(sn ...Snippet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snippets = append(s.snippets, sn...)
}

// FailNext forces the next len(fs) requests' answers, in order.
func (s *Server) FailNext(fs ...Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, fs...)
}

// Requests returns every request received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Reset forgets the recorded requests.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: body, APIKey: r.Header.Get("x-api-key"), At: s.Now()}
	status, reply := s.answer(w, r, &rec)
	if s.EchoKey && status == http.StatusOK {
		reply = bytes.ReplaceAll(reply, []byte(`"title":"`), []byte(`"title":"`+llmtest.Spell(rec.APIKey, s.EchoSpelling)+` `))
	}
	rec.Status = status
	s.requests = append(s.requests, rec)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(reply)
}

// echoMarker stands where an echo is spliced into an encoded body: a JSON
// encoder would escape a spelling again.
const echoMarker = "@@ECHO@@"

func errBody(msg string) []byte {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return b
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, rec *Request) (int, []byte) {
	if len(s.failures) > 0 {
		f := s.failures[0]
		s.failures = s.failures[1:]
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		if f.Body == "" {
			msg := http.StatusText(f.Status)
			if f.EchoKey {
				msg += " for key " + echoMarker
			}
			b, _ := json.Marshal(map[string]string{"message": msg})
			f.Body = strings.ReplaceAll(string(b), echoMarker, llmtest.Spell(rec.APIKey, s.EchoSpelling))
		}
		return f.Status, []byte(f.Body)
	}
	if s.APIKey != "" && rec.APIKey != s.APIKey {
		return http.StatusForbidden, []byte(`{"message":"Forbidden"}`)
	}
	q := rec.Query
	path := r.URL.Path
	switch {
	case strings.HasPrefix(path, GraphPath+"/"):
		path = strings.TrimPrefix(path, GraphPath)
		rec.Path = path
		switch {
		case path == "/paper/search" && r.Method == http.MethodGet:
			return s.search(q)
		case path == "/paper/search/bulk" && r.Method == http.MethodGet:
			return s.bulk(q)
		case path == "/paper/search/match" && r.Method == http.MethodGet:
			return s.match(q)
		case path == "/paper/batch" && r.Method == http.MethodPost:
			return s.batch(q, rec.Body)
		case strings.HasPrefix(path, "/paper/") && strings.HasSuffix(path, "/references") && r.Method == http.MethodGet:
			id, _ := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(path, "/paper/"), "/references"))
			return s.refs(id, q)
		case path == "/snippet/search" && r.Method == http.MethodGet:
			return s.snippetSearch(q)
		}
	case strings.HasPrefix(path, RecommendationsPath+"/"):
		path = strings.TrimPrefix(path, RecommendationsPath)
		rec.Path = path
		switch {
		case path == "/papers" && r.Method == http.MethodPost:
			var b struct {
				Positive []string `json:"positivePaperIds"`
				Negative []string `json:"negativePaperIds"`
			}
			if err := json.Unmarshal(rec.Body, &b); err != nil || len(b.Positive) == 0 {
				return http.StatusBadRequest, errBody("positivePaperIds required")
			}
			return s.recommend(q, append(b.Positive, b.Negative...))
		case strings.HasPrefix(path, "/papers/forpaper/") && r.Method == http.MethodGet:
			id := strings.TrimPrefix(path, "/papers/forpaper/")
			if _, ok := s.byID[id]; !ok {
				return http.StatusNotFound, errBody("Paper with id " + id + " not found")
			}
			return s.recommend(q, []string{id})
		}
	}
	return http.StatusNotFound, errBody("no such endpoint: " + r.Method + " " + r.URL.Path)
}

// fields returns the paper as a JSON object holding only the fields asked
// for (paperId always), as the API does.
func fields(p Paper, want []string) map[string]any {
	var all map[string]any
	b, _ := json.Marshal(p)
	json.Unmarshal(b, &all)
	out := map[string]any{"paperId": all["paperId"]}
	for _, f := range want {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	if _, ok := out["corpusId"]; ok {
		out["corpusId"] = p.CorpusID // a number in paper objects
	}
	return out
}

func fieldList(q url.Values) []string {
	if q.Get("fields") == "" {
		return []string{"title"} // the API's default: paperId and title
	}
	return strings.Split(q.Get("fields"), ",")
}

// matches reports whether a paper holds any query word and passes the filters.
func (s *Server) matches(p Paper, q url.Values) (bool, error) {
	if words := strings.Fields(strings.ToLower(q.Get("query"))); len(words) > 0 {
		text := strings.ToLower(p.Title)
		if p.Abstract != nil {
			text += " " + strings.ToLower(*p.Abstract)
		}
		hit := false
		for _, w := range words {
			hit = hit || strings.Contains(text, strings.Trim(w, `+-|"()`))
		}
		if !hit {
			return false, nil
		}
	}
	if y := q.Get("year"); y != "" {
		lo, hi, ok := strings.Cut(y, "-")
		if !ok {
			hi = lo
		}
		if p.Year == nil || (lo != "" && strconv.Itoa(*p.Year) < lo) || (hi != "" && strconv.Itoa(*p.Year) > hi) {
			return false, nil
		}
	}
	if d := q.Get("publicationDateOrYear"); d != "" {
		lo, hi, ok := strings.Cut(d, ":")
		if !ok {
			return false, fmt.Errorf("publicationDateOrYear %q: expected a range with ':'", d)
		}
		date := ""
		switch {
		case p.PublicationDate != nil:
			date = *p.PublicationDate
		case p.Year != nil:
			date = strconv.Itoa(*p.Year)
		default:
			return false, nil
		}
		if (lo != "" && date < lo) || (hi != "" && date[:min(len(date), len(hi))] > hi) {
			return false, nil
		}
	}
	if f := q.Get("fieldsOfStudy"); f != "" {
		hit := false
		for _, want := range strings.Split(f, ",") {
			for _, have := range p.FieldsOfStudy {
				hit = hit || strings.EqualFold(want, have)
			}
		}
		if !hit {
			return false, nil
		}
	}
	if m := q.Get("minCitationCount"); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil {
			return false, fmt.Errorf("minCitationCount %q is not a number", m)
		}
		if p.CitationCount == nil || *p.CitationCount < n {
			return false, nil
		}
	}
	if v := q.Get("venue"); v != "" {
		hit := false
		for _, want := range strings.Split(v, ",") {
			hit = hit || strings.EqualFold(want, p.Venue)
		}
		if !hit {
			return false, nil
		}
	}
	return true, nil
}

func (s *Server) filtered(q url.Values) ([]Paper, error) {
	var out []Paper
	for _, p := range s.papers {
		ok, err := s.matches(p, q)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, p)
		}
	}
	return out, nil
}

func intParam(q url.Values, name string, def int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not a non-negative number", name, v)
	}
	return n, nil
}

func reply(v any) (int, []byte) {
	b, err := json.Marshal(v)
	if err != nil {
		return http.StatusInternalServerError, errBody(err.Error())
	}
	return http.StatusOK, b
}

func (s *Server) search(q url.Values) (int, []byte) {
	if q.Get("query") == "" {
		return http.StatusBadRequest, errBody("query is required")
	}
	offset, err := intParam(q, "offset", 0)
	if err != nil {
		return http.StatusBadRequest, errBody(err.Error())
	}
	limit, err := intParam(q, "limit", 10)
	if err != nil {
		return http.StatusBadRequest, errBody(err.Error())
	}
	if limit > s.SearchMax {
		return http.StatusBadRequest, errBody(fmt.Sprintf("limit must be <= %d", s.SearchMax))
	}
	if offset+limit > 1000 {
		return http.StatusBadRequest, errBody("offset + limit must be <= 1000")
	}
	ps, err := s.filtered(q)
	if err != nil {
		return http.StatusBadRequest, errBody(err.Error())
	}
	out := map[string]any{"total": len(ps), "offset": offset}
	data := []map[string]any{}
	for _, p := range ps[min(offset, len(ps)):min(offset+limit, len(ps))] {
		data = append(data, fields(p, fieldList(q)))
	}
	out["data"] = data
	if next := offset + limit; next < len(ps) && next < 1000 {
		out["next"] = next
	}
	if s.Paging == SearchCreep {
		out["next"] = offset + 1
	}
	return reply(out)
}

func (s *Server) bulk(q url.Values) (int, []byte) {
	start := 0
	if t := q.Get("token"); t != "" && s.Paging != BulkSameToken {
		n, err := strconv.Atoi(strings.TrimPrefix(t, "tok"))
		if err != nil || !strings.HasPrefix(t, "tok") {
			return http.StatusBadRequest, errBody("invalid token")
		}
		start = n
	}
	ps, err := s.filtered(q)
	if err != nil {
		return http.StatusBadRequest, errBody(err.Error())
	}
	switch s.Paging {
	case BulkSameToken:
		return reply(map[string]any{"total": len(ps), "data": []any{}, "token": "tok-same"})
	case BulkEmptyPages:
		return reply(map[string]any{"total": len(ps), "data": []any{}, "token": fmt.Sprintf("tok%d", start+1)})
	case BulkRepeatPages:
		return reply(map[string]any{"total": len(ps), "data": []any{fields(ps[0], fieldList(q))}, "token": fmt.Sprintf("tok%d", start+1)})
	case BulkEndless:
		p := ps[0]
		id := fmt.Sprintf("endless-%d", start)
		p.PaperID = &id
		return reply(map[string]any{"total": len(ps), "data": []any{fields(p, fieldList(q))}, "token": fmt.Sprintf("tok%d", start+1)})
	}
	data := []map[string]any{}
	end := min(start+s.BulkPage, len(ps))
	for _, p := range ps[min(start, len(ps)):end] {
		data = append(data, fields(p, fieldList(q)))
	}
	out := map[string]any{"total": len(ps), "data": data, "token": nil}
	if s.TotalAsString {
		out["total"] = strconv.Itoa(len(ps))
	}
	if end < len(ps) {
		out["token"] = fmt.Sprintf("tok%d", end)
	}
	return reply(out)
}

func (s *Server) match(q url.Values) (int, []byte) {
	title := strings.ToLower(strings.TrimSpace(q.Get("query")))
	ps, err := s.filtered(url.Values{"publicationDateOrYear": q["publicationDateOrYear"]})
	if err != nil {
		return http.StatusBadRequest, errBody(err.Error())
	}
	for _, p := range ps {
		if strings.ToLower(p.Title) == title {
			m := fields(p, fieldList(q))
			m["matchScore"] = 183.5
			return reply(map[string]any{"data": []any{m}})
		}
	}
	return http.StatusNotFound, errBody("Title match not found")
}

func (s *Server) lookup(id string) (Paper, bool) {
	if c, ok := strings.CutPrefix(id, "CorpusId:"); ok {
		n, err := strconv.Atoi(c)
		if i, found := s.byCorpus[n]; err == nil && found {
			return s.papers[i], true
		}
		return Paper{}, false
	}
	i, ok := s.byID[id]
	if !ok {
		return Paper{}, false
	}
	return s.papers[i], true
}

func (s *Server) batch(q url.Values, body []byte) (int, []byte) {
	var b struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return http.StatusBadRequest, errBody("body must be {\"ids\": [...]}")
	}
	if len(b.IDs) > s.BatchMax {
		return http.StatusBadRequest, errBody(fmt.Sprintf("Cannot process more than %d ids", s.BatchMax))
	}
	out := make([]any, len(b.IDs))
	for i, id := range b.IDs {
		if p, ok := s.lookup(id); ok {
			out[i] = fields(p, fieldList(q))
		}
	}
	return reply(out)
}

// refFields are the fields of a references entry itself; the others are
// the cited paper's.
var refFields = map[string]bool{"contexts": true, "intents": true, "contextsWithIntent": true, "isInfluential": true}

func (s *Server) refs(id string, q url.Values) (int, []byte) {
	if _, ok := s.byID[id]; !ok {
		return http.StatusNotFound, errBody("Paper with id " + id + " not found")
	}
	offset, err := intParam(q, "offset", 0)
	if err != nil {
		return http.StatusBadRequest, errBody(err.Error())
	}
	limit, err := intParam(q, "limit", 100)
	if err != nil {
		return http.StatusBadRequest, errBody(err.Error())
	}
	if limit > 1000 {
		return http.StatusBadRequest, errBody("limit must be <= 1000")
	}
	limit = min(limit, s.RefPageMax)
	all := s.references[id]
	var paperFields []string
	var entryFields []string
	for _, f := range fieldList(q) {
		if refFields[f] {
			entryFields = append(entryFields, f)
		} else {
			paperFields = append(paperFields, f)
		}
	}
	entries := func(from int) []map[string]any {
		data := []map[string]any{}
		for _, r := range all[min(from, len(all)):min(from+limit, len(all))] {
			var e map[string]any
			b, _ := json.Marshal(r)
			json.Unmarshal(b, &e)
			out := map[string]any{"citedPaper": fields(r.CitedPaper, paperFields)}
			for _, f := range entryFields {
				out[f] = e[f]
			}
			data = append(data, out)
		}
		return data
	}
	data := entries(offset)
	out := map[string]any{"offset": offset, "data": data}
	if offset+limit < len(all) {
		out["next"] = offset + limit
	}
	switch s.Paging {
	case RefsCreep:
		out["next"] = offset + 1
	case RefsRepeatPages:
		first := entries(0)
		out["data"], out["next"] = first, offset+len(first)
	case RefsEndless:
		e := map[string]any{"citedPaper": map[string]any{"paperId": fmt.Sprintf("endless-%d", offset), "title": "Endless reference"}}
		out["data"], out["next"] = []any{e}, offset+1
	}
	return reply(out)
}

func (s *Server) snippetSearch(q url.Values) (int, []byte) {
	if q.Get("query") == "" {
		return http.StatusBadRequest, errBody("query is required")
	}
	limit, err := intParam(q, "limit", 10)
	if err != nil || limit > 1000 {
		return http.StatusBadRequest, errBody("limit must be <= 1000")
	}
	var only map[string]bool
	if ids := q.Get("paperIds"); ids != "" {
		only = map[string]bool{}
		for _, id := range strings.Split(ids, ",") {
			only[id] = true
		}
	}
	type scored struct {
		sn    Snippet
		score float64
		p     Paper
	}
	var hits []scored
	words := strings.Fields(strings.ToLower(q.Get("query")))
	for _, sn := range s.snippets {
		i, ok := s.byCorpus[sn.CorpusID]
		if !ok {
			continue
		}
		p := s.papers[i]
		if only != nil && !only[p.ID()] {
			continue
		}
		if ok, err := s.matches(p, url.Values{"publicationDateOrYear": q["publicationDateOrYear"]}); err != nil {
			return http.StatusBadRequest, errBody(err.Error())
		} else if !ok {
			continue
		}
		n := 0
		for _, w := range words {
			n += strings.Count(strings.ToLower(sn.Text), w)
		}
		if n > 0 {
			hits = append(hits, scored{sn, float64(n) / float64(len(words)), p})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	data := []any{}
	for _, h := range hits[:min(limit, len(hits))] {
		data = append(data, map[string]any{
			"snippet": map[string]any{"text": h.sn.Text, "snippetKind": "body", "section": h.sn.Section,
				"snippetOffset": map[string]int{"start": 0, "end": len(h.sn.Text)}},
			"score": h.score,
			"paper": map[string]any{"corpusId": strconv.Itoa(h.p.CorpusID), "title": h.p.Title, "authors": []string{}},
		})
	}
	return reply(map[string]any{"data": data, "retrievalVersion": "s2fake"})
}

// recommend returns the papers not among exclude, in order, up to limit.
func (s *Server) recommend(q url.Values, exclude []string) (int, []byte) {
	limit, err := intParam(q, "limit", 100)
	if err != nil || limit > 500 {
		return http.StatusBadRequest, errBody("limit must be <= 500")
	}
	skip := map[string]bool{}
	for _, id := range exclude {
		skip[id] = true
	}
	data := []any{}
	for _, p := range s.papers {
		if len(data) == limit {
			break
		}
		if p.ID() != "" && !skip[p.ID()] {
			data = append(data, fields(p, fieldList(q)))
		}
	}
	return reply(map[string]any{"recommendedPapers": data})
}
