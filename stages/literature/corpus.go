package literature

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// CorpusConcurrency is the corpus kind's default max_concurrency: queries
// are in-memory index look-ups, bounded by the CPUs, not by a server.
const CorpusConcurrency = 16

func init() {
	llm.RegisterKind(llm.KindInfo{
		Name: "corpus",
		Doc: "A local JSONL file of papers (one Semantic Scholar paper object a line: paperId, title, abstract, year, " +
			"publicationDate, venue, citationCount, publicationTypes, fieldsOfStudy, references) indexed in memory for BM25, " +
			"serving every literature operation offline; or the evidence of a run, its recorded requests and replies (`ideaflow evidence` writes them), " +
			"replayed verbatim. Its answers are keyed on the digest of the file's contents: after editing the file, its queries are answered afresh.",
		Ops:                append([]string(nil), Ops...),
		DefaultConcurrency: CorpusConcurrency,
		Settings: []llm.Setting{
			{Name: "path", Type: llm.TypeString, Required: true, Path: true,
				Doc: "the JSONL file of papers, relative to the experiment file; references are ids of papers in the file, or objects {paperId, title, intents, contexts, isInfluential}; lines {op, request, reply} are recorded exchanges, answered first",
				// validate reads every line, so a broken corpus fails
				// before the run pays for the calls upstream of the first
				// literature node.
				Check: func(v any) error {
					path, _ := v.(string)
					_, err := checkedCorpus(path, false)
					return err
				}},
			func() llm.Setting {
				s := llm.MaxConcurrency(CorpusConcurrency)
				s.Doc = "queries answered at once (0: the default)"
				return s
			}(),
		},
		Identify:    corpusAnswerer,
		AnswererDoc: "the class corpus and the SHA-256 of the file's contents (not its path): an edited file answers afresh",
		Open: func(p llm.Provider, o llm.Opener) (llm.Client, error) {
			path, _ := p.Get("path")
			c, err := LoadCorpus(path.(string))
			if err != nil {
				return nil, fmt.Errorf("provider %q: %w", p.Name, err)
			}
			return &corpusClient{ServiceOnly: llm.NewServiceOnly(p.Name, p.Kind), provider: p.Name, kind: p.Kind, c: c, clock: o.Clock()}, nil
		},
	})
}

// corpusAnswerer identifies a corpus provider by the SHA-256 of its file's
// bytes, so a reply says which corpus answered it: an edited file (or
// another file) answers its queries afresh, and the same file under another
// path or provider name shares them.
func corpusAnswerer(p llm.Provider) (llm.Answerer, error) {
	path, _ := p.Get("path")
	f, err := os.Open(path.(string))
	if err != nil {
		return llm.Answerer{}, fmt.Errorf("corpus: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return llm.Answerer{}, fmt.Errorf("corpus: read %s: %w", path, err)
	}
	return llm.Answerer{Class: llm.ClassCorpus, Identity: "sha256:" + hex.EncodeToString(h.Sum(nil))}, nil
}

// corpusMembers are the members a corpus line may have: Paper's, the
// references, and members of Semantic Scholar paper objects that are read
// and ignored, so that a file saved from the API loads. Any other member is
// an error: a misspelt "citationcount" would otherwise zero every count.
var corpusMembers = map[string]bool{
	"paperId": true, "title": true, "abstract": true, "year": true, "publicationDate": true, "venue": true,
	"citationCount": true, "publicationTypes": true, "fieldsOfStudy": true, "references": true,
	// ignored
	"externalIds": true, "authors": true, "url": true, "corpusId": true, "referenceCount": true,
	"influentialCitationCount": true, "isOpenAccess": true, "openAccessPdf": true, "s2FieldsOfStudy": true,
	"journal": true, "publicationVenue": true, "tldr": true,
}

// corpusRef is one reference of a corpus paper.
type corpusRef struct {
	PaperID       *string  `json:"paperId"`
	Title         string   `json:"title"`
	Intents       []string `json:"intents"`
	Contexts      []string `json:"contexts"`
	IsInfluential bool     `json:"isInfluential"`
}

func (r *corpusRef) UnmarshalJSON(b []byte) error {
	var id string
	if json.Unmarshal(b, &id) == nil { // a bare id
		r.PaperID = &id
		return nil
	}
	type plain corpusRef
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode((*plain)(r))
}

type corpusLine struct {
	Paper
	References []corpusRef `json:"references"`
}

// Corpus is a loaded corpus: the papers in file order and their indexes.
type Corpus struct {
	Path   string
	Digest string // sha256 of the file, hex
	papers []*Paper
	refs   [][]corpusRef
	byID   map[string]int
	text   *bm25 // title + abstract of each paper
	titles *bm25
	// passages are the snippet units: sentences of abstracts grouped up to
	// passageChars, with the paper they come from.
	passages  []passage
	passageIx *bm25
	recorded  recorded // recorded exchanges (record.go), answered first
}

type passage struct {
	paper int
	text  string
}

// passageChars is the length a snippet grows to, in characters, before the
// next sentence starts a new one: about the 500-character snippets
// Semantic Scholar's snippet search returns.
const passageChars = 500

// LoadCorpus reads and indexes a corpus file. Errors name the file and line.
func LoadCorpus(path string) (*Corpus, error) {
	c, err := checkedCorpus(path, true)
	if err != nil {
		return nil, err
	}
	c.index()
	return c, nil
}

// checked holds the corpora the path setting's check read, by path, so
// that the load of the same unchanged file in the same process (a run after
// its validation) indexes what was read instead of reading it a second
// and third time (a 10,000-paper corpus takes most of a second to decode).
var checked struct {
	sync.Mutex
	m map[string]checkedFile
}

type checkedFile struct {
	size int64
	mod  time.Time
	c    *Corpus
	err  error
}

// checkedCorpus reads path, or returns what a check of the same unchanged
// file read; take removes it (the caller indexes it, so it is not shared).
func checkedCorpus(path string, take bool) (*Corpus, error) {
	checked.Lock()
	defer checked.Unlock()
	st, err := os.Stat(path)
	if err != nil {
		return readCorpus(path) // says what is wrong, as a read
	}
	if f, ok := checked.m[path]; ok && f.size == st.Size() && f.mod.Equal(st.ModTime()) {
		if take {
			delete(checked.m, path)
		}
		return f.c, f.err
	}
	c, err := readCorpus(path)
	if !take {
		if checked.m == nil {
			checked.m = map[string]checkedFile{}
		}
		checked.m[path] = checkedFile{size: st.Size(), mod: st.ModTime(), c: c, err: err}
	}
	return c, err
}

// readCorpus reads and checks a corpus file's papers, without indexing them.
func readCorpus(path string) (*Corpus, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	sum := sha256.Sum256(raw)
	c := &Corpus{Path: path, Digest: hex.EncodeToString(sum[:]), byID: map[string]int{}}
	r := bufio.NewReader(bytes.NewReader(raw))
	for line := 1; ; line++ {
		text, err := r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if t := bytes.TrimSpace(text); len(t) > 0 {
			if err := c.add(line, t); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if len(c.papers) == 0 && c.Recorded() == 0 {
		return nil, fmt.Errorf("%s: no papers; a corpus has one JSON paper object a line (or recorded exchanges, see record.go)", path)
	}
	return c, nil
}

// index builds the corpus's BM25 indexes.
func (c *Corpus) index() {
	docs := make([]string, len(c.papers))
	titles := make([]string, len(c.papers))
	for i, p := range c.papers {
		docs[i] = p.Title + "\n" + p.Abstract
		titles[i] = p.Title
		for _, s := range splitPassages(p.Abstract) {
			c.passages = append(c.passages, passage{paper: i, text: s})
		}
	}
	c.text, c.titles = newBM25(docs), newBM25(titles)
	ptexts := make([]string, len(c.passages))
	for i, s := range c.passages {
		ptexts[i] = s.text
	}
	c.passageIx = newBM25(ptexts)
}

func (c *Corpus) add(line int, text []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(text, &members); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if _, ok := members["op"]; ok {
		return c.addExchange(line, members) // a recorded request and its reply
	}
	var unknown []string
	for m := range members {
		if !corpusMembers[m] {
			unknown = append(unknown, m)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("unknown member %s (a corpus line has paperId, title, abstract, year, publicationDate, venue, citationCount, publicationTypes, fieldsOfStudy, references)", strings.Join(unknown, ", "))
	}
	var l corpusLine
	if err := json.Unmarshal(text, &l); err != nil {
		return err
	}
	if l.PaperID == "" {
		return fmt.Errorf("no paperId: every corpus paper needs an id")
	}
	if l.Title == "" {
		return fmt.Errorf("paper %q has no title", l.PaperID)
	}
	if l.CitationCount < 0 {
		return fmt.Errorf("paper %q: citationCount %d is negative; a citation count is 0 or more", l.PaperID, l.CitationCount)
	}
	if l.PublicationDate != "" {
		if _, err := time.Parse(dateLayout, l.PublicationDate); err != nil {
			return fmt.Errorf("paper %q: publicationDate %q is not YYYY-MM-DD", l.PaperID, l.PublicationDate)
		}
	}
	if prev, dup := c.byID[l.PaperID]; dup {
		return fmt.Errorf("paper %q is listed twice (first as paper %d); remove one line", l.PaperID, prev+1)
	}
	p := l.Paper
	c.byID[p.PaperID] = len(c.papers)
	c.papers = append(c.papers, &p)
	c.refs = append(c.refs, l.References)
	return nil
}

// Len is the number of papers.
func (c *Corpus) Len() int { return len(c.papers) }

// splitPassages cuts an abstract into passages of whole sentences, each
// grown until it reaches passageChars.
func splitPassages(abstract string) []string {
	var out []string
	var cur strings.Builder
	for _, s := range sentences(abstract) {
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(s)
		if cur.Len() >= passageChars {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// sentences splits at ". ", "? ", "! " (the punctuation kept).
func sentences(s string) []string {
	var out []string
	s = strings.Join(strings.Fields(s), " ")
	for len(s) > 0 {
		i := strings.IndexAny(s, ".?!")
		for i >= 0 && i+1 < len(s) && s[i+1] != ' ' { // "3.5", "e.g.x": not an end
			j := strings.IndexAny(s[i+1:], ".?!")
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = strings.TrimSpace(s[i+1:])
	}
	return out
}

// corpusClient is the corpus kind.
type corpusClient struct {
	llm.ServiceOnly
	provider, kind string
	c              *Corpus
	clock          llm.Clock
}

func (cc *corpusClient) Synthetic() bool { return false }

func (cc *corpusClient) Call(ctx context.Context, req llm.ServiceRequest) (*llm.ServiceResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("provider %q: %s: %w", cc.provider, req.Op, err)
	}
	body, err := cc.c.Serve(req, cc.clock.Now())
	if err != nil {
		var unserved *unservedError
		if errors.As(err, &unserved) {
			return nil, llm.UnservedOp(cc.provider, cc.kind, req.Op)
		}
		return nil, &llm.APIError{Provider: cc.provider, Message: err.Error()}
	}
	return &llm.ServiceResponse{Body: body, Attempts: 1}, nil
}

// unservedError is Serve's answer to an operation it does not know.
type unservedError struct{ op string }

func (e *unservedError) Error() string { return "unserved operation " + e.op }

// Serve answers one literature request from the corpus; now is recorded as
// the reply's retrieval time.
func (c *Corpus) Serve(req llm.ServiceRequest, now time.Time) (json.RawMessage, error) {
	if reply, ok, err := c.replay(req); err != nil || ok {
		return reply, err
	}
	retrieved := now.UTC().Format(time.RFC3339)
	var snap Snapshot
	_ = json.Unmarshal(req.Body, &snap) // a malformed body fails below, per operation
	switch req.Op {
	case OpSearch, OpBulkSearch:
		var q SearchQuery
		if err := c.decode(req, &q); err != nil {
			return nil, err
		}
		ps, total, err := c.Search(q, req.Op == OpBulkSearch)
		if err != nil {
			return nil, err
		}
		return encode(Papers{Papers: ps, Total: total, Retrieved: retrieved}), nil
	case OpMatch:
		var q MatchQuery
		if err := c.decode(req, &q); err != nil {
			return nil, err
		}
		m, err := c.Match(q)
		if err != nil {
			return nil, err
		}
		m.Retrieved = retrieved
		return encode(m), nil
	case OpBatch:
		var q BatchQuery
		if err := c.decode(req, &q); err != nil {
			return nil, err
		}
		ps, err := c.Batch(q)
		if err != nil {
			return nil, err
		}
		return encode(Papers{Papers: ps, Retrieved: retrieved}), nil
	case OpReferences:
		var q ReferencesQuery
		if err := c.decode(req, &q); err != nil {
			return nil, err
		}
		refs, err := c.References(q)
		if err != nil {
			return nil, err
		}
		return encode(References{References: refs, Retrieved: retrieved}), nil
	case OpSnippets:
		var q SnippetQuery
		if err := c.decode(req, &q); err != nil {
			return nil, err
		}
		sn, err := c.Snippets(q)
		if err != nil {
			return nil, err
		}
		return encode(Snippets{Snippets: sn, Retrieved: retrieved}), nil
	case OpRecommend:
		var q RecommendQuery
		if err := c.decode(req, &q); err != nil {
			return nil, err
		}
		ps, err := c.Recommend(q)
		if err != nil {
			return nil, err
		}
		return encode(Papers{Papers: ps, Retrieved: retrieved}), nil
	}
	return nil, &unservedError{req.Op}
}

// decode reads the body strictly (a misspelt member is an error, not a
// dropped filter) and checks the snapshot.
func (c *Corpus) decode(req llm.ServiceRequest, v any) error {
	dec := json.NewDecoder(bytes.NewReader(req.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s request body does not decode: %v", req.Op, err)
	}
	var s Snapshot
	_ = json.Unmarshal(req.Body, &s)
	if err := checkAsOf(s); err != nil {
		return fmt.Errorf("%s: %w", req.Op, err)
	}
	if _, _, err := ParseCutoff(s.CutoffDate); err != nil {
		return fmt.Errorf("%s: %w", req.Op, err)
	}
	return nil
}

// MaxSearchLimit is the most papers one relevance search returns, as on
// Semantic Scholar (offset + limit < 1,000 there): a larger set is what
// bulk search is for.
const MaxSearchLimit = 1000

// Search is OpSearch (bulk false) and OpBulkSearch: the papers passing q's
// filters that share a term with q.Query, by BM25 score (ties: file
// order), and how many there are. An empty query in a bulk search lists
// every paper passing the filters in file order (targets by venue and year).
// Bulk search treats Semantic Scholar's boolean syntax (+ | - quotes) as
// plain words.
func (c *Corpus) Search(q SearchQuery, bulk bool) ([]*Paper, int, error) {
	f, err := newFilter(q)
	if err != nil {
		return nil, 0, err
	}
	switch {
	case !bulk && (q.Limit < 1 || q.Limit > MaxSearchLimit):
		return nil, 0, fmt.Errorf("limit is %d; a relevance search returns 1 to %d papers (use bulk search for more)", q.Limit, MaxSearchLimit)
	case bulk && q.Limit < 0:
		return nil, 0, fmt.Errorf("limit is %d; it must be 0 (every match) or more", q.Limit)
	case !bulk && strings.TrimSpace(q.Query) == "":
		return nil, 0, fmt.Errorf("query is empty; a relevance search needs words to rank by")
	}
	keep := func(i int) bool { return f.holds(c.papers[i]) }
	var out []*Paper
	total := 0
	if strings.TrimSpace(q.Query) == "" {
		for i, p := range c.papers {
			if keep(i) {
				total++
				if q.Limit == 0 || len(out) < q.Limit {
					out = append(out, p)
				}
			}
		}
		return nonNil(out), total, nil
	}
	hits := c.text.search(q.Query, 0, keep)
	total = len(hits)
	if q.Limit > 0 && len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	for _, h := range hits {
		out = append(out, c.papers[h.doc])
	}
	return nonNil(out), total, nil
}

func nonNil(ps []*Paper) []*Paper {
	if ps == nil {
		return []*Paper{}
	}
	return ps
}

// MatchThreshold is the least Dice coefficient between the words of a
// title and a corpus title for Match to call them the same paper: high,
// because a false match hides an invented reference, while casing,
// punctuation and a word's difference still match.
const MatchThreshold = 0.9

// Match is OpMatch: the corpus paper whose title is closest to q.Title, if
// its Dice coefficient over lower-cased words reaches MatchThreshold and it
// passes the cutoff; Paper nil otherwise.
func (c *Corpus) Match(q MatchQuery) (Match, error) {
	if strings.TrimSpace(q.Title) == "" {
		return Match{}, fmt.Errorf("title is empty")
	}
	cutoff, has, _ := ParseCutoff(q.CutoffDate)
	want := words(q.Title)
	best, bestScore := -1, 0.0
	// Candidates: the BM25 hits of the title (every title sharing a term),
	// scored by Dice; ties keep the earlier hit.
	for _, h := range c.titles.search(q.Title, 50, func(i int) bool { return !has || !c.papers[i].After(cutoff) }) {
		if d := dice(want, words(c.papers[h.doc].Title)); d > bestScore {
			best, bestScore = h.doc, d
		}
	}
	if best < 0 || bestScore < MatchThreshold {
		return Match{}, nil
	}
	return Match{Paper: c.papers[best], Score: bestScore}, nil
}

// words are a title's lower-cased runs of letters and digits, stopwords kept.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// dice is 2|A∩B| / (|A| + |B|) over word multisets.
func dice(a, b []string) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	count := map[string]int{}
	for _, w := range a {
		count[w]++
	}
	common := 0
	for _, w := range b {
		if count[w] > 0 {
			count[w]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

// Batch is OpBatch: the papers of q.IDs in order, nil for an id the corpus
// does not hold or one published after the cutoff.
func (c *Corpus) Batch(q BatchQuery) ([]*Paper, error) {
	cutoff, has, _ := ParseCutoff(q.CutoffDate)
	out := make([]*Paper, len(q.IDs))
	for i, id := range q.IDs {
		if j, ok := c.byID[id]; ok && (!has || !c.papers[j].After(cutoff)) {
			out[i] = c.papers[j]
		}
	}
	return out, nil
}

// References is OpReferences: the paper's references in file order, each
// cited paper as the corpus has it (else as the reference names it), those
// published after the cutoff dropped.
func (c *Corpus) References(q ReferencesQuery) ([]Reference, error) {
	i, ok := c.byID[q.PaperID]
	if !ok {
		return nil, fmt.Errorf("paper %q is not in the corpus %s", q.PaperID, c.Path)
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("limit is %d; it must be 0 (every reference) or more", q.Limit)
	}
	cutoff, has, _ := ParseCutoff(q.CutoffDate)
	out := []Reference{}
	for _, r := range c.refs[i] {
		ref := Reference{Intents: r.Intents, Contexts: r.Contexts, IsInfluential: r.IsInfluential}
		if r.PaperID != nil {
			if j, ok := c.byID[*r.PaperID]; ok {
				ref.Paper = *c.papers[j]
			} else {
				ref.Paper = Paper{PaperID: *r.PaperID, Title: r.Title}
			}
		} else {
			ref.Paper = Paper{Title: r.Title}
		}
		if has && ref.Paper.After(cutoff) {
			continue
		}
		out = append(out, ref)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// Snippets is OpSnippets: passages of abstracts by BM25 score, at most
// q.Limit, from q.PaperIDs when given, none from papers after the cutoff.
func (c *Corpus) Snippets(q SnippetQuery) ([]Snippet, error) {
	if q.Limit < 1 || q.Limit > 1000 {
		return nil, fmt.Errorf("limit is %d; a snippet search returns 1 to 1000 snippets", q.Limit)
	}
	if strings.TrimSpace(q.Query) == "" {
		return nil, fmt.Errorf("query is empty")
	}
	cutoff, has, _ := ParseCutoff(q.CutoffDate)
	var only map[int]bool
	if len(q.PaperIDs) > 0 {
		only = map[int]bool{}
		for _, id := range q.PaperIDs {
			if j, ok := c.byID[id]; ok {
				only[j] = true
			}
		}
	}
	keep := func(i int) bool {
		p := c.passages[i].paper
		return (only == nil || only[p]) && (!has || !c.papers[p].After(cutoff))
	}
	out := []Snippet{}
	for _, h := range c.passageIx.search(q.Query, q.Limit, keep) {
		s := c.passages[h.doc]
		out = append(out, Snippet{Text: s.text, Section: "abstract", Score: h.score, Paper: *c.papers[s.paper]})
	}
	return out, nil
}

// Recommend is OpRecommend: papers similar to the given ones by BM25 of
// their titles and abstracts (a lexical stand-in for Semantic Scholar's
// embedding recommender), the given papers and the negative ones excluded.
func (c *Corpus) Recommend(q RecommendQuery) ([]*Paper, error) {
	if q.Limit < 1 || q.Limit > 500 {
		return nil, fmt.Errorf("limit is %d; recommendations return 1 to 500 papers", q.Limit)
	}
	pos := q.Positive
	if q.ForPaper != "" {
		if len(q.Positive) > 0 {
			return nil, fmt.Errorf("give for_paper or positive, not both")
		}
		pos = []string{q.ForPaper}
	}
	if len(pos) == 0 {
		return nil, fmt.Errorf("no paper to recommend from: give for_paper or positive ids")
	}
	exclude := map[int]bool{}
	var text strings.Builder
	for _, id := range pos {
		j, ok := c.byID[id]
		if !ok {
			return nil, fmt.Errorf("paper %q is not in the corpus %s", id, c.Path)
		}
		exclude[j] = true
		text.WriteString(c.papers[j].Title + "\n" + c.papers[j].Abstract + "\n")
	}
	for _, id := range q.Negative {
		if j, ok := c.byID[id]; ok {
			exclude[j] = true
		}
	}
	cutoff, has, _ := ParseCutoff(q.CutoffDate)
	keep := func(i int) bool { return !exclude[i] && (!has || !c.papers[i].After(cutoff)) }
	out := []*Paper{}
	for _, h := range c.text.search(text.String(), q.Limit, keep) {
		out = append(out, c.papers[h.doc])
	}
	return out, nil
}
