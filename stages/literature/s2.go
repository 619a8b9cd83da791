package literature

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ideaflow/ideaflow/stages/internal/httpcall"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Semantic Scholar's limits, as its API documents them: the page sizes the
// client asks for, and the id count of one batch request.
const (
	s2SearchPage  = 100  // /paper/search: limit <= 100, offset + limit < 1,000
	s2SearchMax   = 1000 // /paper/search: no result past offset 1,000
	s2BulkPage    = 1000 // /paper/search/bulk: up to 1,000 a page (the server decides)
	s2RefsPage    = 1000 // /paper/{id}/references: limit <= 1,000
	s2BatchIDs    = 500  // /paper/batch: <= 500 ids a request
	s2RecommendMx = 500  // recommendations: limit <= 500
)

// Bounds on following a server's pages. A buggy or hostile server that
// never stops paging (the same continuation token again, a next offset that
// creeps, pages of papers already received) costs a bounded number of
// requests, and the call fails saying why: never a silently short answer,
// never a loop.
const (
	// s2BulkMaxPages bounds a bulk search: 1,000 pages of up to 1,000
	// papers is ten times the most targets a query may ask for
	// (MaxTargetsPerQuery), room for what the cutoff and excluded venues
	// drop client-side.
	s2BulkMaxPages = 1000
	// s2RefsMax and s2RefsMaxPages bound a references list: the longest
	// bibliographies (review articles) run to a few thousand entries, and
	// 10,000 in pages of at least 100 (the API's default page) is 100 pages.
	s2RefsMax      = 10000
	s2RefsMaxPages = 100
	// s2StalledPages is how many pages in a row may bring nothing not
	// received already while naming a next page.
	s2StalledPages = 3
)

// Defaults of the semantic_scholar kind.
const (
	// S2GraphURL and S2RecommendationsURL are the public API's bases.
	S2GraphURL           = "https://api.semanticscholar.org/graph/v1"
	S2RecommendationsURL = "https://api.semanticscholar.org/recommendations/v1"
	// S2RequestsPerSecond is the introductory rate of an API key: 1
	// request a second, across every endpoint.
	S2RequestsPerSecond = 1.0
	// S2SharedRequestsPerSecond is the default without a key. Requests
	// without a key draw on one pool shared by every unauthenticated user
	// (reported as 100 requests per 5 minutes): a third of a request a
	// second keeps a long run inside it, and 429s, which come whenever
	// others use the pool, are retried with back-off.
	S2SharedRequestsPerSecond = 1.0 / 3
	// S2Concurrency is the default max_concurrency: the rate bounds the
	// starts; a few in flight keep a slow reply from idling the budget.
	S2Concurrency = 4
)

// s2PaperFields are the paper fields every request asks for: exactly what
// Paper holds (corpusId to resolve snippet papers). Asked for explicitly,
// because the API's default is paperId and title only.
const s2PaperFields = "paperId,corpusId,title,abstract,year,publicationDate,venue,citationCount,publicationTypes,fieldsOfStudy"

// s2RefFields are the fields of a references page: how the citing paper
// cites, then the cited paper's fields.
const s2RefFields = "contexts,intents,contextsWithIntent,isInfluential,paperId,title,abstract,year,publicationDate,venue,citationCount,publicationTypes,fieldsOfStudy"

func init() {
	rate := llm.Setting{Name: "requests_per_second", Type: llm.TypeNumber, Default: S2RequestsPerSecond,
		Doc: fmt.Sprintf("requests per second across every endpoint, spaced evenly (0: the default, an API key's introductory rate; "+
			"without api_key_env the default is %.2f, because unauthenticated requests share one pool with every other user)", S2SharedRequestsPerSecond),
		Range: &llm.Range{Min: 0.01, Max: 10_000, Zero: "the default"}}
	key := llm.Setting{Name: "api_key_env", Type: llm.TypeString, SecretEnv: true, Holds: "the API key",
		Doc: "environment variable holding a Semantic Scholar API key, sent as x-api-key; unset: the unauthenticated shared pool"}
	base := llm.Setting{Name: "base_url", Type: llm.TypeString, Default: S2GraphURL, Check: llm.CheckURL,
		Doc: "base URL of the Graph API (paper search, match, batch, references, snippets)"}
	recs := llm.Setting{Name: "recommendations_url", Type: llm.TypeString, Default: S2RecommendationsURL, Check: llm.CheckURL,
		Doc: "base URL of the Recommendations API"}
	settings := llm.WithSettings(llm.Without(llm.HTTPSettings(S2Concurrency), "requests_per_minute", "tokens_per_minute"),
		base, key, recs, rate)
	llm.RegisterKind(llm.KindInfo{
		Name: "semantic_scholar",
		Doc: "The Semantic Scholar Graph and Recommendations APIs: relevance and bulk search (every page), title match, " +
			"batch look-up (500 ids a request), references with intents and contexts (every page), snippet search, recommendations. " +
			"Papers published after a query's cutoff_date are dropped (by the server's date filter where it has one, and checked on every paper returned).",
		Ops:                append([]string(nil), Ops...),
		DefaultConcurrency: S2Concurrency,
		Settings:           settings,
		Identify:           s2Answerer,
		AnswererDoc:        "the class endpoint and endpoint_identity, by default the normalised base_url (with recommendations_url when it is not the public one)",
		Open:               openS2,
	})
}

// s2Answerer identifies a semantic_scholar provider by its Graph API's
// base URL, with the Recommendations API's when it is not the public one
// (a mirror of one and not the other is another answerer); endpoint_identity
// overrides both.
func s2Answerer(p llm.Provider) (llm.Answerer, error) {
	a, err := llm.EndpointAnswerer(p, S2GraphURL)
	if err != nil {
		return a, err
	}
	if v, _ := p.Get("endpoint_identity"); v != nil && v.(string) != "" {
		return a, nil
	}
	recs, _ := p.Get("recommendations_url")
	r, _ := recs.(string)
	if r == "" || r == S2RecommendationsURL {
		return a, nil
	}
	n, err := llm.NormalizeURL(r)
	if err != nil {
		return a, fmt.Errorf("recommendations_url: %w", err)
	}
	a.Identity += " recommendations " + n
	return a, nil
}

func openS2(p llm.Provider, o llm.Opener) (llm.Client, error) {
	k, _ := llm.LookupKind("semantic_scholar")
	rps := S2RequestsPerSecond
	if p.APIKeyEnv == "" {
		rps = S2SharedRequestsPerSecond
	}
	if v, _ := p.Settings["requests_per_second"].(float64); v > 0 {
		rps = v
	}
	p.RequestsPerMinute = rps * 60 // the shared limiter's unit
	conn, err := o.Connect(k, p)
	if err != nil {
		return nil, err
	}
	graph := p.BaseURL
	if graph == "" {
		graph = S2GraphURL
	}
	recs, _ := p.Get("recommendations_url")
	c := &S2Client{ServiceOnly: llm.NewServiceOnly(p.Name, p.Kind), Conn: conn, clock: o.Clock(),
		graph: strings.TrimRight(graph, "/"), recs: strings.TrimRight(recs.(string), "/"), header: http.Header{}}
	if key := conn.APIKey(); key != "" {
		c.header.Set("x-api-key", key)
	}
	return c, nil
}

// S2Client is the semantic_scholar kind's client.
type S2Client struct {
	llm.ServiceOnly
	*llm.Conn
	clock       llm.Clock
	graph, recs string
	header      http.Header // x-api-key when a key is configured
}

// Synthetic: the answers are real.
func (c *S2Client) Synthetic() bool { return false }

// call is one service call's running totals.
type call struct {
	op               string
	attempts, status int
}

func (c *S2Client) Call(ctx context.Context, req llm.ServiceRequest) (*llm.ServiceResponse, error) {
	cl := &call{op: req.Op}
	body, err := c.serve(ctx, req, cl)
	if err != nil {
		var api *llm.APIError
		if errors.As(err, &api) {
			return nil, err
		}
		var unserved *unservedError
		if errors.As(err, &unserved) {
			return nil, llm.UnservedOp(c.Provider().Name, c.Provider().Kind, req.Op)
		}
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return nil, err
		}
		var un *httpcall.UnavailableError
		if errors.As(err, &un) {
			return nil, err
		}
		// A paging error may quote what the server sent (a token).
		return nil, &llm.APIError{Provider: c.Provider().Name, Message: c.Scrubber().Scrub(err.Error()), Attempts: cl.attempts}
	}
	// The transport masked the replies' bytes; the body is what they
	// decoded to, encoded again: masked again, whatever decoding made of them.
	return &llm.ServiceResponse{Body: c.Scrubber().ScrubBytes(body), Status: cl.status, Attempts: cl.attempts}, nil
}

func (c *S2Client) serve(ctx context.Context, req llm.ServiceRequest, cl *call) (json.RawMessage, error) {
	if k, _ := llm.LookupKind("semantic_scholar"); !k.Serves(req.Op) {
		return nil, &unservedError{req.Op}
	}
	var snap Snapshot
	if err := json.Unmarshal(req.Body, &snap); err != nil {
		return nil, fmt.Errorf("%s request body does not decode: %v", req.Op, err)
	}
	if err := checkAsOf(snap); err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	cutoff, hasCutoff, err := ParseCutoff(snap.CutoffDate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	keep := func(p *Paper) bool { return p != nil && (!hasCutoff || !p.After(cutoff)) }
	strict := func(v any) error {
		dec := json.NewDecoder(bytes.NewReader(req.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return fmt.Errorf("%s request body does not decode: %v", req.Op, err)
		}
		return nil
	}
	switch req.Op {
	case OpSearch, OpBulkSearch:
		var q SearchQuery
		if err := strict(&q); err != nil {
			return nil, err
		}
		f, err := newFilter(q) // the same checks as the corpus, before any request
		if err != nil {
			return nil, fmt.Errorf("%s: %w", req.Op, err)
		}
		searchKeep := func(p *Paper) bool { return keep(p) && !f.exclude[strings.ToLower(p.Venue)] }
		var ps []*Paper
		var total int
		if req.Op == OpSearch {
			ps, total, err = c.search(ctx, cl, q, searchKeep)
		} else {
			ps, total, err = c.bulk(ctx, cl, q, searchKeep)
		}
		if err != nil {
			return nil, err
		}
		return encode(Papers{Papers: nonNil(ps), Total: total, Retrieved: c.now()}), nil
	case OpMatch:
		var q MatchQuery
		if err := strict(&q); err != nil {
			return nil, err
		}
		m, err := c.match(ctx, cl, q, keep)
		if err != nil {
			return nil, err
		}
		m.Retrieved = c.now()
		return encode(m), nil
	case OpBatch:
		var q BatchQuery
		if err := strict(&q); err != nil {
			return nil, err
		}
		ps, err := c.batch(ctx, cl, q.IDs)
		if err != nil {
			return nil, err
		}
		for i, p := range ps {
			if !keep(p) {
				ps[i] = nil
			}
		}
		return encode(Papers{Papers: ps, Retrieved: c.now()}), nil
	case OpReferences:
		var q ReferencesQuery
		if err := strict(&q); err != nil {
			return nil, err
		}
		refs, err := c.references(ctx, cl, q, keep)
		if err != nil {
			return nil, err
		}
		return encode(References{References: refs, Retrieved: c.now()}), nil
	case OpSnippets:
		var q SnippetQuery
		if err := strict(&q); err != nil {
			return nil, err
		}
		sn, err := c.snippets(ctx, cl, q, keep)
		if err != nil {
			return nil, err
		}
		return encode(Snippets{Snippets: sn, Retrieved: c.now()}), nil
	case OpRecommend:
		var q RecommendQuery
		if err := strict(&q); err != nil {
			return nil, err
		}
		ps, err := c.recommend(ctx, cl, q, keep)
		if err != nil {
			return nil, err
		}
		return encode(Papers{Papers: nonNil(ps), Retrieved: c.now()}), nil
	}
	return nil, &unservedError{req.Op}
}

func (c *S2Client) now() string { return c.clock.Now().UTC().Format(time.RFC3339) }

// s2Paper is a paper as the API sends it: Paper's fields (null where
// unknown, which decodes to the zero value) and the corpus id.
type s2Paper struct {
	Paper
	CorpusID json.Number `json:"corpusId"`
}

// identity tells papers apart for the paging checks: the paper id, else
// (an unresolved reference) its title and year; "" for none.
func (p *s2Paper) identity() string {
	switch {
	case p == nil:
		return ""
	case p.PaperID != "":
		return p.PaperID
	case p.Title != "":
		return fmt.Sprintf("title %q %d", p.Title, p.Year)
	}
	return ""
}

func (p *s2Paper) paper() *Paper {
	if p == nil {
		return nil
	}
	out := p.Paper
	return &out
}

// s2Total is the total of a search reply: a number, or (bulk search) a
// string holding one.
type s2Total int

func (t *s2Total) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*t = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("total %s is not a number", b)
	}
	*t = s2Total(n)
	return nil
}

// searchParams are the filters of a search, for relevance, bulk and
// snippet search alike: the cutoff becomes the upper bound of
// publicationDateOrYear (intersected with the query's own range).
func searchParams(q SearchQuery) (url.Values, error) {
	v := url.Values{}
	v.Set("query", q.Query)
	if q.Year != "" {
		v.Set("year", q.Year)
	}
	dates, err := cutoffRange(q.PublicationDateOrYear, q.CutoffDate)
	if err != nil {
		return nil, err
	}
	if dates != "" {
		v.Set("publicationDateOrYear", dates)
	}
	if len(q.FieldsOfStudy) > 0 {
		v.Set("fieldsOfStudy", strings.Join(q.FieldsOfStudy, ","))
	}
	if q.MinCitationCount > 0 {
		v.Set("minCitationCount", strconv.Itoa(q.MinCitationCount))
	}
	if len(q.Venues) > 0 {
		v.Set("venue", strings.Join(q.Venues, ","))
	}
	return v, nil
}

// cutoffRange is the publicationDateOrYear filter of a query's own range
// and its cutoff: the range with its upper end no later than the cutoff.
func cutoffRange(dates, cutoff string) (string, error) {
	if cutoff == "" {
		return dates, nil
	}
	if dates == "" {
		return ":" + cutoff, nil
	}
	r, err := parseDateRange(dates)
	if err != nil {
		return "", err
	}
	if r.hi == "" || r.hi > cutoff {
		r.hi = cutoff
	}
	return r.lo + ":" + r.hi, nil
}

type s2SearchReply struct {
	Total s2Total    `json:"total"`
	Next  *int       `json:"next"`
	Data  []*s2Paper `json:"data"`
}

// search pages /paper/search by offset, 100 at a time, until q.Limit
// papers passed the cutoff, the server has no next page, or offset 1,000.
func (c *S2Client) search(ctx context.Context, cl *call, q SearchQuery, keep func(*Paper) bool) ([]*Paper, int, error) {
	if q.Limit < 1 || q.Limit > MaxSearchLimit {
		return nil, 0, fmt.Errorf("%s: limit is %d; a relevance search returns 1 to %d papers (use bulk search for more)", cl.op, q.Limit, MaxSearchLimit)
	}
	if strings.TrimSpace(q.Query) == "" {
		return nil, 0, fmt.Errorf("%s: query is empty; a relevance search needs words to rank by", cl.op)
	}
	params, err := searchParams(q)
	if err != nil {
		return nil, 0, err
	}
	params.Set("fields", s2PaperFields)
	var out []*Paper
	total := 0
	seen := map[string]bool{} // paper ids received
	var stalled stall
	for offset, page := 0, 1; len(out) < q.Limit && offset < s2SearchMax; page++ {
		limit := min(s2SearchPage, q.Limit-len(out), s2SearchMax-offset)
		params.Set("offset", strconv.Itoa(offset))
		params.Set("limit", strconv.Itoa(limit))
		var r s2SearchReply
		if err := c.get(ctx, cl, c.graph+"/paper/search", params, &r); err != nil {
			return nil, 0, err
		}
		total = int(r.Total)
		fresh := false
		for _, p := range r.Data {
			if id := p.identity(); id == "" || !seen[id] {
				seen[id], fresh = true, true
			}
			if pp := p.paper(); keep(pp) && len(out) < q.Limit {
				out = append(out, pp)
			}
		}
		if r.Next == nil || *r.Next <= offset || len(r.Data) == 0 {
			break
		}
		if err := pageStep(cl.op, offset, *r.Next, len(r.Data)); err != nil {
			return nil, 0, err
		}
		if err := stalled.page(cl.op, page, fresh); err != nil {
			return nil, 0, err
		}
		offset = *r.Next // the API serves no offset past s2SearchMax: the loop's own bound
	}
	return out, total, nil
}

// pageStep checks an offset-paged reply's next offset: a next page that
// starts inside the page just received would send its entries again, and a
// server that does so pages forever (one entry further each time).
func pageStep(op string, offset, next, entries int) error {
	if next < offset+entries {
		return fmt.Errorf("%s: the server's next page (offset %d) starts inside the page it just sent (offset %d, %d entries): its paging repeats entries; stopped", op, next, offset, entries)
	}
	return nil
}

// stall counts pages in a row that bring nothing new while naming a next
// page, and fails the call once there are s2StalledPages of them.
type stall struct{ n int }

func (s *stall) page(op string, page int, fresh bool) error {
	if fresh {
		s.n = 0
		return nil
	}
	if s.n++; s.n >= s2StalledPages {
		return fmt.Errorf("%s: pages %d to %d brought nothing not received already, yet each named a next page: the server's paging does not advance; stopped", op, page-s.n+1, page)
	}
	return nil
}

type s2BulkReply struct {
	Total s2Total    `json:"total"`
	Token *string    `json:"token"`
	Data  []*s2Paper `json:"data"`
}

// bulk follows /paper/search/bulk's continuation token until it is absent
// or q.Limit papers (0: no cap) passed the cutoff.
func (c *S2Client) bulk(ctx context.Context, cl *call, q SearchQuery, keep func(*Paper) bool) ([]*Paper, int, error) {
	if q.Limit < 0 {
		return nil, 0, fmt.Errorf("%s: limit is %d; it must be 0 (every match) or more", cl.op, q.Limit)
	}
	params, err := searchParams(q)
	if err != nil {
		return nil, 0, err
	}
	params.Set("fields", s2PaperFields)
	var out []*Paper
	total := 0
	tokens := map[string]int{} // token -> the page that sent it
	seen := map[string]bool{}  // paper ids received
	var stalled stall
	for page := 1; ; page++ {
		var r s2BulkReply
		if err := c.get(ctx, cl, c.graph+"/paper/search/bulk", params, &r); err != nil {
			return nil, 0, err
		}
		total = int(r.Total)
		fresh := false
		for _, p := range r.Data {
			if id := p.identity(); id == "" || !seen[id] {
				seen[id], fresh = true, true
			}
			if pp := p.paper(); keep(pp) && (q.Limit == 0 || len(out) < q.Limit) {
				out = append(out, pp)
			}
		}
		if r.Token == nil || *r.Token == "" || (q.Limit > 0 && len(out) >= q.Limit) {
			return out, total, nil
		}
		if first, ok := tokens[*r.Token]; ok {
			return nil, 0, fmt.Errorf("%s: page %d named continuation token %q, which page %d named already: the server's pages loop; stopped", cl.op, page, httpcall.Excerpt(*r.Token, 40), first)
		}
		if err := stalled.page(cl.op, page, fresh); err != nil {
			return nil, 0, err
		}
		if page == s2BulkMaxPages {
			return nil, 0, fmt.Errorf("%s: %d pages (%d papers kept) and the server names another: more than a bulk search is followed for (%d pages); narrow the query or give it a limit", cl.op, page, len(out), s2BulkMaxPages)
		}
		tokens[*r.Token] = page
		params.Set("token", *r.Token)
	}
}

type s2MatchReply struct {
	Data []struct {
		s2Paper
		MatchScore float64 `json:"matchScore"`
	} `json:"data"`
}

// match asks /paper/search/match; its 404 ("Title match not found") is the
// answer "no paper", not a failure.
func (c *S2Client) match(ctx context.Context, cl *call, q MatchQuery, keep func(*Paper) bool) (Match, error) {
	if strings.TrimSpace(q.Title) == "" {
		return Match{}, fmt.Errorf("%s: title is empty", cl.op)
	}
	params := url.Values{"query": {q.Title}, "fields": {s2PaperFields}}
	if q.CutoffDate != "" {
		params.Set("publicationDateOrYear", ":"+q.CutoffDate)
	}
	var r s2MatchReply
	found, err := c.getOptional(ctx, cl, c.graph+"/paper/search/match", params, &r)
	if err != nil || !found || len(r.Data) == 0 {
		return Match{}, err
	}
	best := r.Data[0]
	p := best.paper()
	if !keep(p) {
		return Match{}, nil
	}
	return Match{Paper: p, Score: best.MatchScore}, nil
}

// batch posts /paper/batch in requests of 500 ids; an unknown id's entry
// is null, and nil here.
func (c *S2Client) batch(ctx context.Context, cl *call, ids []string) ([]*Paper, error) {
	out := make([]*Paper, 0, len(ids))
	for start := 0; start < len(ids); start += s2BatchIDs {
		chunk := ids[start:min(start+s2BatchIDs, len(ids))]
		var r []*s2Paper
		u := c.graph + "/paper/batch?" + url.Values{"fields": {s2PaperFields}}.Encode()
		if err := c.do(ctx, cl, http.MethodPost, u, map[string][]string{"ids": chunk}, &r, nil); err != nil {
			return nil, err
		}
		if len(r) != len(chunk) {
			return nil, &llm.APIError{Provider: c.Provider().Name, Status: cl.status,
				Message: fmt.Sprintf("%s: /paper/batch answered %d entries for %d ids", cl.op, len(r), len(chunk))}
		}
		for _, p := range r {
			out = append(out, p.paper())
		}
	}
	return out, nil
}

type s2RefReply struct {
	Next *int `json:"next"`
	Data []struct {
		Contexts           []string `json:"contexts"`
		Intents            []string `json:"intents"`
		ContextsWithIntent []struct {
			Context string   `json:"context"`
			Intents []string `json:"intents"`
		} `json:"contextsWithIntent"`
		IsInfluential bool     `json:"isInfluential"`
		CitedPaper    *s2Paper `json:"citedPaper"`
	} `json:"data"`
}

// references pages /paper/{id}/references by offset until the reply has
// no next (the original IdeaBench code stopped after its first 300), or
// q.Limit references passed the cutoff.
func (c *S2Client) references(ctx context.Context, cl *call, q ReferencesQuery, keep func(*Paper) bool) ([]Reference, error) {
	if strings.TrimSpace(q.PaperID) == "" {
		return nil, fmt.Errorf("%s: paper_id is empty", cl.op)
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("%s: limit is %d; it must be 0 (every reference) or more", cl.op, q.Limit)
	}
	params := url.Values{"fields": {s2RefFields}}
	u := c.graph + "/paper/" + url.PathEscape(q.PaperID) + "/references"
	out := []Reference{}
	seen := map[string]bool{} // cited paper ids received
	var stalled stall
	for offset, page := 0, 1; ; page++ {
		params.Set("offset", strconv.Itoa(offset))
		params.Set("limit", strconv.Itoa(s2RefsPage))
		var r s2RefReply
		if err := c.get(ctx, cl, u, params, &r); err != nil {
			return nil, err
		}
		fresh := false
		for _, d := range r.Data {
			if id := d.CitedPaper.identity(); id == "" || !seen[id] {
				seen[id], fresh = true, true
			}
		}
		for _, d := range r.Data {
			ref := Reference{Contexts: d.Contexts, Intents: d.Intents, IsInfluential: d.IsInfluential}
			if p := d.CitedPaper.paper(); p != nil {
				ref.Paper = *p
			}
			// Intents given only per context: their union, in first-seen order.
			if len(ref.Intents) == 0 {
				seen := map[string]bool{}
				for _, cw := range d.ContextsWithIntent {
					for _, in := range cw.Intents {
						if !seen[in] {
							seen[in] = true
							ref.Intents = append(ref.Intents, in)
						}
					}
				}
			}
			if len(ref.Contexts) == 0 {
				ref.Contexts = nil // [] and null alike: no context
			}
			if !keep(&ref.Paper) {
				continue
			}
			out = append(out, ref)
			if q.Limit > 0 && len(out) == q.Limit {
				return out, nil
			}
		}
		if r.Next == nil || *r.Next <= offset || len(r.Data) == 0 {
			return out, nil
		}
		if err := pageStep(cl.op, offset, *r.Next, len(r.Data)); err != nil {
			return nil, err
		}
		if err := stalled.page(cl.op, page, fresh); err != nil {
			return nil, err
		}
		if *r.Next >= s2RefsMax || page == s2RefsMaxPages {
			return nil, fmt.Errorf("%s: paper %s: the server names a next page (offset %d) after %d pages and %d references kept: past what a reference list is followed for (%d references, %d pages); give the query a limit",
				cl.op, q.PaperID, *r.Next, page, len(out), s2RefsMax, s2RefsMaxPages)
		}
		offset = *r.Next
	}
}

type s2SnippetReply struct {
	Data []struct {
		Snippet struct {
			Text    string `json:"text"`
			Section string `json:"section"`
		} `json:"snippet"`
		Score float64 `json:"score"`
		Paper struct {
			CorpusID json.Number `json:"corpusId"`
			Title    string      `json:"title"`
		} `json:"paper"`
	} `json:"data"`
}

// snippets asks /snippet/search (the cutoff as its publicationDateOrYear
// filter), then resolves the papers it names by corpus id in one batch, so
// that every snippet carries a paperId like the other operations' papers
// and the cutoff is checked on its publication date.
func (c *S2Client) snippets(ctx context.Context, cl *call, q SnippetQuery, keep func(*Paper) bool) ([]Snippet, error) {
	if q.Limit < 1 || q.Limit > 1000 {
		return nil, fmt.Errorf("%s: limit is %d; a snippet search returns 1 to 1000 snippets", cl.op, q.Limit)
	}
	if strings.TrimSpace(q.Query) == "" {
		return nil, fmt.Errorf("%s: query is empty", cl.op)
	}
	params := url.Values{"query": {q.Query}, "limit": {strconv.Itoa(q.Limit)}}
	if q.CutoffDate != "" {
		params.Set("publicationDateOrYear", ":"+q.CutoffDate)
	}
	if len(q.PaperIDs) > 0 {
		params.Set("paperIds", strings.Join(q.PaperIDs, ","))
	}
	var r s2SnippetReply
	if err := c.get(ctx, cl, c.graph+"/snippet/search", params, &r); err != nil {
		return nil, err
	}
	var ids []string
	seen := map[string]bool{}
	for _, d := range r.Data {
		if id := d.Paper.CorpusID.String(); id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, "CorpusId:"+id)
		}
	}
	papers := map[string]*Paper{}
	if len(ids) > 0 {
		ps, err := c.batch(ctx, cl, ids)
		if err != nil {
			return nil, err
		}
		for i, p := range ps {
			if p != nil {
				papers[ids[i]] = p
			}
		}
	}
	out := []Snippet{}
	for _, d := range r.Data {
		p := papers["CorpusId:"+d.Paper.CorpusID.String()]
		if p == nil { // not resolvable: its date is unknown, so the cutoff cannot be checked
			if q.CutoffDate != "" {
				continue
			}
			p = &Paper{PaperID: "CorpusId:" + d.Paper.CorpusID.String(), Title: d.Paper.Title}
		}
		if !keep(p) {
			continue
		}
		out = append(out, Snippet{Text: d.Snippet.Text, Section: d.Snippet.Section, Score: d.Score, Paper: *p})
	}
	return out, nil
}

type s2RecReply struct {
	RecommendedPapers []*s2Paper `json:"recommendedPapers"`
}

// recommend asks the Recommendations API: for one paper (GET forpaper) or
// from positive and negative examples (POST papers). It has no date
// filter, so papers after the cutoff are dropped here and fewer than limit
// may come back.
func (c *S2Client) recommend(ctx context.Context, cl *call, q RecommendQuery, keep func(*Paper) bool) ([]*Paper, error) {
	if q.Limit < 1 || q.Limit > s2RecommendMx {
		return nil, fmt.Errorf("%s: limit is %d; recommendations return 1 to %d papers", cl.op, q.Limit, s2RecommendMx)
	}
	params := url.Values{"fields": {s2PaperFields}, "limit": {strconv.Itoa(q.Limit)}}
	var r s2RecReply
	switch {
	case q.ForPaper != "" && (len(q.Positive) > 0 || len(q.Negative) > 0):
		return nil, fmt.Errorf("%s: give for_paper or positive (and negative) ids, not both", cl.op)
	case q.ForPaper != "":
		if err := c.get(ctx, cl, c.recs+"/papers/forpaper/"+url.PathEscape(q.ForPaper), params, &r); err != nil {
			return nil, err
		}
	case len(q.Positive) > 0:
		body := map[string][]string{"positivePaperIds": q.Positive, "negativePaperIds": q.Negative}
		if body["negativePaperIds"] == nil {
			body["negativePaperIds"] = []string{}
		}
		if err := c.do(ctx, cl, http.MethodPost, c.recs+"/papers?"+params.Encode(), body, &r, nil); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: no paper to recommend from: give for_paper or positive ids", cl.op)
	}
	var out []*Paper
	for _, p := range r.RecommendedPapers {
		if pp := p.paper(); keep(pp) {
			out = append(out, pp)
		}
	}
	return out, nil
}

func (c *S2Client) get(ctx context.Context, cl *call, u string, params url.Values, out any) error {
	return c.do(ctx, cl, http.MethodGet, u+"?"+params.Encode(), nil, out, nil)
}

// getOptional is get for an endpoint whose 404 means "none": found false.
func (c *S2Client) getOptional(ctx context.Context, cl *call, u string, params url.Values, out any) (bool, error) {
	notFound := false
	err := c.do(ctx, cl, http.MethodGet, u+"?"+params.Encode(), nil, out, &notFound)
	return !notFound, err
}

// do makes one retried request under the provider's limits. notFound, when
// given, turns a 404 into success with *notFound set.
func (c *S2Client) do(ctx context.Context, cl *call, method, u string, in, out any, notFound *bool) error {
	endpoint := u
	if i := strings.IndexByte(endpoint, '?'); i >= 0 {
		endpoint = endpoint[:i]
	}
	attempts, status, err := c.Caller().Do(ctx, cl.op, endpoint, 0, false, func(ctx context.Context, _ *httpcall.Capture) (httpcall.Tokens, error) {
		err := httpcall.DoJSON(ctx, c.HTTP(), method, u, c.header, in, out)
		var se *httpcall.StatusError
		if notFound != nil && errors.As(err, &se) && se.Status == http.StatusNotFound {
			*notFound = true
			return httpcall.Tokens{}, nil
		}
		return httpcall.Tokens{}, err
	}, c.classify)
	cl.attempts += attempts
	cl.status = status
	return err
}

// classify reads Semantic Scholar's errors, {"message": "..."} or
// {"error": "..."}: 429 is its rate limit (retried, after Retry-After when
// sent), 5xx an overloaded or failing backend (retried), 400 a bad
// parameter, 403 a refused key, 404 an unknown paper id.
func (c *S2Client) classify(err error, cp *httpcall.Capture) *httpcall.Error {
	var se *httpcall.StatusError
	if !errors.As(err, &se) {
		return nil
	}
	msg, code := httpcall.ErrorMessage(se.Body)
	if msg == "" {
		msg = http.StatusText(se.Status)
	}
	e := &httpcall.Error{Status: se.Status, Code: code, Retryable: httpcall.RetryableStatus(se.Status)}
	switch se.Status {
	case http.StatusTooManyRequests:
		e.Message = "rate limited by Semantic Scholar: " + msg + "; lower requests_per_second, or set api_key_env to a key's variable for a dedicated rate"
	case http.StatusForbidden, http.StatusUnauthorized:
		e.Message = "key refused: " + msg + "; check the key in the variable api_key_env names"
	case http.StatusNotFound:
		e.Message = "not found: " + msg + " (an unknown paper id?)"
	case http.StatusBadRequest:
		e.Message = "request refused: " + msg
	default:
		e.Message = msg
	}
	return e
}
