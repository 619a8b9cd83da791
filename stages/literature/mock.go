package literature

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// The mock kind answers every literature operation offline with synthetic
// papers made up from the request: the same request (and provider seed)
// always gets the same reply, papers talk about the query's words, ids are
// 40 hex digits like Semantic Scholar's, and the cutoff holds. What the
// mock does, so that tests downstream can count on it:
//
//   - search returns exactly limit papers (Total 10 x limit); bulk search
//     with limit 0 returns 25; min_citation_count, venues and
//     fields_of_study hold on them (year ranges are not applied);
//   - match finds a paper with the title asked for, except for about one
//     title in four (by its hash), so a baseline's share of unresolved
//     references is exercised;
//   - batch knows every id;
//   - references: 5 to 24 per paper, the last with no paperId (an
//     unresolved reference) and every third without contexts;
//   - snippets: exactly limit, recommendations exactly limit.
//
// The retrieval time is a fixed instant (MockRetrieved), so mock replies
// are byte-identical across runs.
func init() {
	for _, op := range Ops {
		llm.RegisterMockOp(op, mockServe)
	}
}

// MockRetrieved is the Retrieved time of every mock reply.
const MockRetrieved = "2026-01-01T00:00:00Z"

// mockBulkDefault is the number of papers a mock bulk search without a
// limit returns.
const mockBulkDefault = 25

func mockServe(_ context.Context, p llm.Provider, req llm.ServiceRequest) (*llm.ServiceResponse, error) {
	m := mockSource{seed: p.Seed}
	body, err := m.serve(req)
	if err != nil {
		return nil, &llm.APIError{Provider: p.Name, Message: err.Error()}
	}
	return &llm.ServiceResponse{Body: body, Model: req.Model, Attempts: 1}, nil
}

type mockSource struct{ seed int64 }

// rng is a source seeded by the provider seed and the parts given.
func (m mockSource) rng(parts ...string) *rand.Rand {
	h := sha256.New()
	fmt.Fprintf(h, "%d", m.seed)
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	sum := h.Sum(nil)
	return rand.New(rand.NewSource(int64(binary.LittleEndian.Uint64(sum[:8]))))
}

func mockID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:20])
}

var mockNouns = []string{"framework", "analysis", "benchmark", "model", "method", "study", "survey", "approach"}
var mockVenues = []string{"NeurIPS", "ICML", "Nature", "Science", "PLoS ONE", "Journal of Neuroscience", "Ecology Letters", "Nucleic Acids Research"}
var mockIntents = [][]string{{"background"}, {"methodology"}, {"result"}, {"background", "methodology"}, {}}

// paper makes the paper of that id about topic, published no later than
// cutoff (when set).
func (m mockSource) paper(id, topic string, cutoff time.Time, hasCutoff bool) *Paper {
	r := m.rng("paper", id)
	t := strings.Join(strings.Fields(topic), " ")
	if t == "" {
		t = "paper " + id[:min(8, len(id))]
	}
	latest := time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
	if hasCutoff && cutoff.Before(latest) {
		latest = cutoff
	}
	date := latest.AddDate(0, 0, -r.Intn(15*365))
	noun := mockNouns[r.Intn(len(mockNouns))]
	return &Paper{
		PaperID:          id,
		Title:            fmt.Sprintf("A %s of %s", noun, t),
		Abstract:         fmt.Sprintf("We present a %s of %s. Our results on %s show a consistent effect under the conditions studied. This abstract is synthetic (mock provider).", noun, t, t),
		Year:             date.Year(),
		PublicationDate:  date.Format(dateLayout),
		Venue:            mockVenues[r.Intn(len(mockVenues))],
		CitationCount:    r.Intn(500),
		PublicationTypes: []string{"JournalArticle"},
		FieldsOfStudy:    []string{"Computer Science"},
	}
}

func (m mockSource) serve(req llm.ServiceRequest) (json.RawMessage, error) {
	var snap Snapshot
	if err := json.Unmarshal(req.Body, &snap); err != nil {
		return nil, fmt.Errorf("%s request body does not decode: %v", req.Op, err)
	}
	if err := checkAsOf(snap); err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	cutoff, has, err := ParseCutoff(snap.CutoffDate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	papers := func(n int, topic string, parts ...string) []*Paper {
		out := make([]*Paper, n)
		for i := range out {
			out[i] = m.paper(mockID(append(parts, topic, fmt.Sprint(i))...), topic, cutoff, has)
		}
		return out
	}
	switch req.Op {
	case OpSearch, OpBulkSearch:
		var q SearchQuery
		if err := json.Unmarshal(req.Body, &q); err != nil {
			return nil, fmt.Errorf("%s request body does not decode: %v", req.Op, err)
		}
		if _, err := newFilter(q); err != nil {
			return nil, fmt.Errorf("%s: %w", req.Op, err)
		}
		n := q.Limit
		if req.Op == OpBulkSearch && n == 0 {
			n = mockBulkDefault
		}
		if n < 1 || (req.Op == OpSearch && n > MaxSearchLimit) {
			return nil, fmt.Errorf("%s: limit is %d; a relevance search returns 1 to %d papers", req.Op, q.Limit, MaxSearchLimit)
		}
		ps := papers(n, q.Query, req.Op)
		for _, p := range ps { // the filters hold on every paper returned
			if q.MinCitationCount > p.CitationCount {
				p.CitationCount = q.MinCitationCount
			}
			if len(q.Venues) > 0 {
				p.Venue = q.Venues[0]
			}
			for _, v := range q.ExcludeVenues {
				if strings.EqualFold(p.Venue, v) {
					p.Venue = "Synthetic Letters"
				}
			}
			if len(q.FieldsOfStudy) > 0 {
				p.FieldsOfStudy = []string{q.FieldsOfStudy[0]}
			}
		}
		return encode(Papers{Papers: ps, Total: 10 * n, Retrieved: MockRetrieved}), nil
	case OpMatch:
		var q MatchQuery
		if err := json.Unmarshal(req.Body, &q); err != nil {
			return nil, fmt.Errorf("%s request body does not decode: %v", req.Op, err)
		}
		if m.rng("match", q.Title).Intn(4) == 0 {
			return encode(Match{Retrieved: MockRetrieved}), nil
		}
		p := m.paper(mockID("match", q.Title), q.Title, cutoff, has)
		p.Title = q.Title
		return encode(Match{Paper: p, Score: 1, Retrieved: MockRetrieved}), nil
	case OpBatch:
		var q BatchQuery
		if err := json.Unmarshal(req.Body, &q); err != nil {
			return nil, fmt.Errorf("%s request body does not decode: %v", req.Op, err)
		}
		out := make([]*Paper, len(q.IDs))
		for i, id := range q.IDs {
			out[i] = m.paper(id, "", cutoff, has)
		}
		return encode(Papers{Papers: out, Retrieved: MockRetrieved}), nil
	case OpReferences:
		var q ReferencesQuery
		if err := json.Unmarshal(req.Body, &q); err != nil {
			return nil, fmt.Errorf("%s request body does not decode: %v", req.Op, err)
		}
		n := 5 + m.rng("references", q.PaperID).Intn(20)
		if q.Limit > 0 {
			n = min(n, q.Limit)
		}
		refs := make([]Reference, n)
		for i := range refs {
			id := mockID("reference", q.PaperID, fmt.Sprint(i))
			p := m.paper(id, "work cited by "+q.PaperID[:min(8, len(q.PaperID))], cutoff, has)
			refs[i] = Reference{Paper: *p, Intents: mockIntents[i%len(mockIntents)], IsInfluential: i%4 == 0}
			if i%3 != 2 {
				refs[i].Contexts = []string{fmt.Sprintf("As shown in prior work [%d], %s.", i+1, strings.ToLower(p.Title))}
			}
		}
		if q.Limit == 0 || n < q.Limit {
			refs[n-1].Paper.PaperID = "" // Semantic Scholar could not resolve it
		}
		return encode(References{References: refs, Retrieved: MockRetrieved}), nil
	case OpSnippets:
		var q SnippetQuery
		if err := json.Unmarshal(req.Body, &q); err != nil {
			return nil, fmt.Errorf("%s request body does not decode: %v", req.Op, err)
		}
		if q.Limit < 1 {
			return nil, fmt.Errorf("%s: limit is %d; it must be 1 or more", req.Op, q.Limit)
		}
		out := make([]Snippet, q.Limit)
		for i, p := range papers(q.Limit, q.Query, req.Op, strings.Join(q.PaperIDs, ",")) {
			if len(q.PaperIDs) > 0 {
				p.PaperID = q.PaperIDs[i%len(q.PaperIDs)]
			}
			out[i] = Snippet{Text: p.Abstract, Section: "abstract", Score: float64(q.Limit-i) / float64(q.Limit), Paper: *p}
		}
		return encode(Snippets{Snippets: out, Retrieved: MockRetrieved}), nil
	case OpRecommend:
		var q RecommendQuery
		if err := json.Unmarshal(req.Body, &q); err != nil {
			return nil, fmt.Errorf("%s request body does not decode: %v", req.Op, err)
		}
		if q.Limit < 1 {
			return nil, fmt.Errorf("%s: limit is %d; it must be 1 or more", req.Op, q.Limit)
		}
		seed := q.ForPaper + "|" + strings.Join(q.Positive, ",") + "|" + strings.Join(q.Negative, ",")
		return encode(Papers{Papers: papers(q.Limit, "related work", req.Op, seed), Retrieved: MockRetrieved}), nil
	}
	return nil, fmt.Errorf("operation %q is not a literature operation", req.Op)
}
