package literature

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// BM25 parameters: Lucene's and Elasticsearch's defaults, the values the
// retrieval literature reports BM25 baselines with.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// bm25 is an in-memory inverted index scored with Okapi BM25 (Robertson and
// Zaragoza 2009; the idf of Lucene, ln(1 + (N - df + 0.5)/(df + 0.5)), which
// is never negative). It is small on purpose: tokens are lower-cased runs
// of letters and digits, English stopwords dropped, no stemming; the score
// of a document is the sum over the distinct query terms, summed in sorted
// term order so that it is the same float on every run, and ties rank by
// document order. The corpus kind's answers are cached as node outputs, so
// determinism matters more than ranking finesse; see BenchmarkBM25 for why
// no search library is used.
type bm25 struct {
	postings map[string][]posting
	lengths  []float64
	avgLen   float64
}

type posting struct {
	doc int32
	tf  int32
}

// newBM25 indexes docs; document i is docs[i].
func newBM25(docs []string) *bm25 {
	ix := &bm25{postings: map[string][]posting{}, lengths: make([]float64, len(docs))}
	var total float64
	for i, d := range docs {
		toks := tokens(d)
		ix.lengths[i] = float64(len(toks))
		total += float64(len(toks))
		// Term frequencies as runs of the sorted tokens: one postings
		// look-up per distinct term, and no map per document.
		sort.Strings(toks)
		for j := 0; j < len(toks); {
			k := j + 1
			for k < len(toks) && toks[k] == toks[j] {
				k++
			}
			ix.postings[toks[j]] = append(ix.postings[toks[j]], posting{doc: int32(i), tf: int32(k - j)})
			j = k
		}
	}
	if len(docs) > 0 {
		ix.avgLen = total / float64(len(docs))
	}
	return ix
}

// hit is one scored document.
type hit struct {
	doc   int
	score float64
}

// search scores every document containing a query term and returns those
// keep accepts, best first, at most limit (0: all).
func (ix *bm25) search(query string, limit int, keep func(doc int) bool) []hit {
	terms := uniqueSorted(tokens(query))
	n := float64(len(ix.lengths))
	scores := map[int32]float64{}
	for _, t := range terms {
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*ix.lengths[p.doc]/ix.avgLen)
			scores[p.doc] += idf * tf * (bm25K1 + 1) / (tf + norm)
		}
	}
	hits := make([]hit, 0, len(scores))
	for d, s := range scores {
		if keep == nil || keep(int(d)) {
			hits = append(hits, hit{int(d), s})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].doc < hits[j].doc
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

func uniqueSorted(ts []string) []string {
	sort.Strings(ts)
	out := ts[:0]
	for i, t := range ts {
		if i == 0 || t != ts[i-1] {
			out = append(out, t)
		}
	}
	return out
}

// tokens are the index terms of a text: lower-cased runs of letters and
// digits of two or more characters that are not stopwords.
func tokens(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= 2 && !stopword[w] {
			out = append(out, w)
		}
	}
	return out
}

// stopword is a short English list (Lucene's English analyzer's, plus a
// few words every abstract uses): words that would match most documents
// and only add noise and time to a query.
var stopword = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on or such that the
		their then there these they this to was will with we our from which has have been can its also than
		were between using based paper`) {
		stopword[w] = true
	}
}
