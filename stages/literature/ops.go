// Package literature is ideaflow's literature layer: the service operations
// a literature provider serves (this file: the request and reply shapes every
// kind normalises to), the Semantic Scholar Graph API client, a local corpus
// indexed for offline runs, and a fake Semantic Scholar server for tests.
//
// A literature request is a stages.Service node like an embedding request:
// keyed on its operation and body (never on the provider, its address or its
// key), cached, rate-limited, retried, budgeted and refused by --offline.
// Retrieved evidence is therefore frozen in the cache; refreshing it is a
// visible key change, through the AsOf field every query carries.
package literature

// Service operations (llm.ServiceRequest.Op) of literature provider kinds.
// Bodies and replies are the JSON of the types named; every kind returns
// the reply shape documented here, whatever its server sends.
const (
	// OpSearch: relevance search. Body SearchQuery; reply Papers.
	OpSearch = "literature.search"
	// OpBulkSearch: bulk search, every page followed. Body SearchQuery
	// (Limit caps the total); reply Papers.
	OpBulkSearch = "literature.search_bulk"
	// OpMatch: best title match. Body MatchQuery; reply Match (Paper nil
	// when nothing matches; not an error).
	OpMatch = "literature.match"
	// OpBatch: papers by id. Body BatchQuery; reply Papers, one entry per
	// id in order, nil for an unknown id.
	OpBatch = "literature.batch"
	// OpReferences: a paper's references with citation intents and
	// contexts, every page followed. Body ReferencesQuery; reply References.
	OpReferences = "literature.references"
	// OpSnippets: text snippets matching a query. Body SnippetQuery; reply
	// Snippets.
	OpSnippets = "literature.snippets"
	// OpRecommend: papers recommended from positive (and negative)
	// examples, or for one paper. Body RecommendQuery; reply Papers.
	OpRecommend = "literature.recommend"
)

// Ops lists every literature operation.
var Ops = []string{OpSearch, OpBulkSearch, OpMatch, OpBatch, OpReferences, OpSnippets, OpRecommend}

// Snapshot fields every query carries. Both are key material.
//
//   - AsOf names the snapshot of the literature a query reads ("2026-12-01"):
//     the same query with the same AsOf is answered from the cache; a new
//     AsOf is a new key, so refreshing evidence is a visible change.
//   - CutoffDate ("YYYY-MM-DD", "" for none) excludes every paper published
//     after it (ScholarIdeas' cutoff.txt; IdeaBench's knowledge cutoff).
type Snapshot struct {
	AsOf       string `json:"as_of"`
	CutoffDate string `json:"cutoff_date,omitempty"`
}

// SearchQuery is the body of OpSearch and OpBulkSearch.
type SearchQuery struct {
	Snapshot
	Query                 string   `json:"query"`
	Limit                 int      `json:"limit"`                              // papers wanted (search: <= 100 per page, paged by offset)
	Year                  string   `json:"year,omitempty"`                     // "2019", "2016-2020", "2010-", "-2015"
	PublicationDateOrYear string   `json:"publication_date_or_year,omitempty"` // "2019-03-05:2020-06-06"
	FieldsOfStudy         []string `json:"fields_of_study,omitempty"`
	MinCitationCount      int      `json:"min_citation_count,omitempty"`
	Venues                []string `json:"venues,omitempty"`
	// ExcludeVenues drops papers of these venues (compared case-blind),
	// client-side: IdeaBench's "other venues" arm, which the API cannot
	// express. The server pages through them all the same.
	ExcludeVenues []string `json:"exclude_venues,omitempty"`
}

// MatchQuery is the body of OpMatch.
type MatchQuery struct {
	Snapshot
	Title string `json:"title"`
}

// BatchQuery is the body of OpBatch.
type BatchQuery struct {
	Snapshot
	IDs []string `json:"ids"` // Semantic Scholar ids or prefixed ids ("DOI:...", "CorpusId:...")
}

// ReferencesQuery is the body of OpReferences.
type ReferencesQuery struct {
	Snapshot
	PaperID string `json:"paper_id"`
	Limit   int    `json:"limit,omitempty"` // 0: every reference
}

// SnippetQuery is the body of OpSnippets.
type SnippetQuery struct {
	Snapshot
	Query    string   `json:"query"`
	Limit    int      `json:"limit"`               // snippets wanted (ScholarEval: 20)
	PaperIDs []string `json:"paper_ids,omitempty"` // restrict to these papers
}

// RecommendQuery is the body of OpRecommend: either ForPaper, or Positive
// (and optionally Negative) paper ids.
type RecommendQuery struct {
	Snapshot
	ForPaper string   `json:"for_paper,omitempty"`
	Positive []string `json:"positive,omitempty"`
	Negative []string `json:"negative,omitempty"`
	Limit    int      `json:"limit"`
}

// Paper is one paper as every literature kind reports it.
type Paper struct {
	PaperID          string   `json:"paperId"`
	Title            string   `json:"title"`
	Abstract         string   `json:"abstract,omitempty"` // "" when the source has none
	Year             int      `json:"year,omitempty"`
	PublicationDate  string   `json:"publicationDate,omitempty"` // "YYYY-MM-DD" when known
	Venue            string   `json:"venue,omitempty"`
	CitationCount    int      `json:"citationCount"`
	PublicationTypes []string `json:"publicationTypes,omitempty"`
	FieldsOfStudy    []string `json:"fieldsOfStudy,omitempty"`
}

// Papers is the reply of OpSearch, OpBulkSearch, OpBatch and OpRecommend.
// For OpBatch an entry is nil where the id is unknown.
type Papers struct {
	Papers    []*Paper `json:"papers"`
	Total     int      `json:"total,omitempty"`     // matches the source reports (search only)
	Retrieved string   `json:"retrieved,omitempty"` // RFC 3339 time the reply was fetched: recorded, not key material
}

// Match is the reply of OpMatch.
type Match struct {
	Paper     *Paper  `json:"paper"` // nil: no paper has that title
	Score     float64 `json:"score,omitempty"`
	Retrieved string  `json:"retrieved,omitempty"`
}

// Reference is one reference of a paper: the cited paper (its PaperID may be
// "" when Semantic Scholar does not know it) and how the citing paper cites it.
type Reference struct {
	Paper         Paper    `json:"paper"`
	Intents       []string `json:"intents,omitempty"` // "background", "methodology", "result"
	Contexts      []string `json:"contexts,omitempty"`
	IsInfluential bool     `json:"isInfluential"`
}

// References is the reply of OpReferences.
type References struct {
	References []Reference `json:"references"`
	Retrieved  string      `json:"retrieved,omitempty"`
}

// Snippet is one passage of a paper matching a snippet query.
type Snippet struct {
	Text    string  `json:"text"`
	Section string  `json:"section,omitempty"`
	Score   float64 `json:"score"`
	Paper   Paper   `json:"paper"` // at least PaperID and Title
}

// Snippets is the reply of OpSnippets.
type Snippets struct {
	Snippets  []Snippet `json:"snippets"`
	Retrieved string    `json:"retrieved,omitempty"`
}
