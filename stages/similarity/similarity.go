// Package similarity holds the text-similarity measures IdeaBench compares a
// generated idea with its target by: ROUGE-L (lexical), BERTScore (greedy
// matching of contextual token embeddings, Zhang et al. 2019) and the cosine
// of two sentence embeddings. It is pure maths over tokens and vectors: no
// model, no service, no HCL. Embeddings come from elsewhere (a stage's
// service call); this package only combines them.
package similarity

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"gonum.org/v1/gonum/floats"
)

// PRF is a precision, recall and F1 triple. Precision is measured from the
// candidate's side (how much of the candidate the reference supports),
// recall from the reference's side.
type PRF struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// F1 is the harmonic mean 2PR/(P+R), and 0 when P+R is 0 (nothing matched),
// as bert-score and rouge-score both define it.
func F1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// Tokens splits s for ROUGE-L: lower-cased maximal runs of letters and
// digits (Unicode classes L and Nd); whitespace, punctuation and symbols
// separate tokens and are dropped. "Graphene-based, 2D!" is
// [graphene based 2d]. No stemming and no stop words, so a score depends on
// the text alone.
func Tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// RougeL is ROUGE-L of candidate against reference over Tokens:
//
//	P = LCS / len(candidate),  R = LCS / len(reference),  F1 = 2PR/(P+R)
//
// where LCS is the length of their longest common token subsequence (Lin
// 2004, the balanced F-measure, beta = 1). An empty side scores 0.
func RougeL(candidate, reference string) PRF {
	return RougeLTokens(Tokens(candidate), Tokens(reference))
}

// RougeLTokens is RougeL over already split tokens.
func RougeLTokens(candidate, reference []string) PRF {
	if len(candidate) == 0 || len(reference) == 0 {
		return PRF{}
	}
	l := float64(LCS(candidate, reference))
	p, r := l/float64(len(candidate)), l/float64(len(reference))
	return PRF{Precision: p, Recall: r, F1: F1(p, r)}
}

// LCS is the length of the longest common subsequence of a and b, by the
// textbook dynamic programme in O(len(a)·len(b)) time and O(len(b)) space.
func LCS(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Cosine is a·b / (|a| |b|), and 0 when either vector is zero (no
// direction to compare). Vectors of different lengths are compared over the
// shorter one's dimensions; callers pass equal lengths.
func Cosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range min(len(a), len(b)) {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// CosineOf is Cosine for two vectors that must be comparable: it fails
// where Cosine would still give a number no comparison produced, for
// vectors of different lengths (compared over the shorter one), empty, with
// a component that is not a finite number, or all zeros (0 by definition).
// Service replies are checked so on arrival; this holds the line for
// vectors that met in a stage from different replies, cached apart.
func CosineOf(a, b []float64) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("vectors of %d and %d dimensions cannot be compared (were they made by different models?)", len(a), len(b))
	}
	if len(a) == 0 {
		return 0, errors.New("empty vectors cannot be compared")
	}
	for _, v := range [][]float64{a, b} {
		for d, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, fmt.Errorf("a vector has %v at dimension %d", x, d)
			}
		}
	}
	c := Cosine(a, b)
	if c == 0 && (dot(a, a) == 0 || dot(b, b) == 0) {
		return 0, errors.New("an all-zero vector has no direction to compare")
	}
	return c, nil
}

// BERTScore greedily matches the candidate's token vectors with the
// reference's. With S[i][j] the cosine of candidate token i and reference
// token j:
//
//	P = Σ_i w_c(i) · max_j S[i][j] / Σ_i w_c(i)
//	R = Σ_j w_r(j) · max_i S[i][j] / Σ_j w_r(j)
//	F1 = 2PR/(P+R)
//
// candW and refW weight each token (idf weights, see IDF); nil weighs every
// token 1, plain means. A side with no tokens, or whose weights sum to 0,
// scores 0 (bert-score warns and returns 0 for empty texts). Scores are
// raw; see Rescale for baseline rescaling. It is Match then Score.
func BERTScore(candidate, reference [][]float64, candW, refW []float64) PRF {
	return Match(candidate, reference).Score(candW, refW)
}

// Matching is the greedy matching of a candidate with a reference, all
// BERTScore needs of their vectors: weights can be applied afterwards, so a
// caller can store it (two numbers per token, where the vectors are hundreds)
// and choose idf weights later.
type Matching struct {
	// CandBest[i] = max_j S[i][j]: how well candidate token i is matched.
	CandBest []float64 `json:"cand_best"`
	// RefBest[j] = max_i S[i][j]: how well reference token j is matched.
	RefBest []float64 `json:"ref_best"`
}

// Match computes the matching of candidate with reference. An empty side
// gives an empty Matching, which scores 0.
func Match(candidate, reference [][]float64) Matching {
	if len(candidate) == 0 || len(reference) == 0 {
		return Matching{CandBest: []float64{}, RefBest: []float64{}}
	}
	m := Matching{CandBest: make([]float64, len(candidate)), RefBest: make([]float64, len(reference))}
	for i := range m.CandBest {
		m.CandBest[i] = math.Inf(-1)
	}
	for j := range m.RefBest {
		m.RefBest[j] = math.Inf(-1)
	}
	cos := cosines(candidate, reference)
	for i, c := range candidate {
		for j, r := range reference {
			s := cos(i, j, c, r)
			m.CandBest[i] = max(m.CandBest[i], s)
			m.RefBest[j] = max(m.RefBest[j], s)
		}
	}
	return m
}

// cosines returns a function computing Cosine(a[i], b[j]) faster: when every
// vector has one length it reuses each vector's norm instead of summing it
// again for every pair, and takes dot products with gonum's floats.Dot
// (assembly on amd64). The matching of a 200-token abstract with 300 idea
// tokens is 60,000 pairs of 256 or more dimensions, most of a BERTScore
// run's time: 17 ms with Cosine, 3.6 ms here (BenchmarkMatch). floats.Dot
// adds in another order than Cosine, so the two can differ in the last bits
// (a relative 1e-15; the test allows 1e-12); each is deterministic.
func cosines(a, b [][]float64) func(i, j int, x, y []float64) float64 {
	d := -1
	for _, vs := range [][][]float64{a, b} {
		for _, v := range vs {
			if d == -1 {
				d = len(v)
			} else if len(v) != d {
				return func(_, _ int, x, y []float64) float64 { return Cosine(x, y) }
			}
		}
	}
	norm := func(vs [][]float64) []float64 {
		out := make([]float64, len(vs))
		for k, v := range vs {
			out[k] = math.Sqrt(dot(v, v))
		}
		return out
	}
	na, nb := norm(a), norm(b)
	return func(i, j int, x, y []float64) float64 {
		if na[i] == 0 || nb[j] == 0 {
			return 0
		}
		return dot(x, y) / (na[i] * nb[j])
	}
}

// dot is x·y over len(x) dimensions (y at least as long).
func dot(x, y []float64) float64 {
	return floats.Dot(x, y[:len(x)])
}

// Score is the BERTScore of the matching under token weights candW and refW
// (nil: every token weighs 1); see BERTScore.
func (m Matching) Score(candW, refW []float64) PRF {
	if len(m.CandBest) == 0 || len(m.RefBest) == 0 {
		return PRF{}
	}
	p, r := weightedMean(m.CandBest, candW), weightedMean(m.RefBest, refW)
	return PRF{Precision: p, Recall: r, F1: F1(p, r)}
}

// weightedMean is Σ w_i x_i / Σ w_i (w nil: the plain mean), 0 when the
// weights sum to 0.
func weightedMean(x, w []float64) float64 {
	var sum, total float64
	for i, v := range x {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		sum += wi * v
		total += wi
	}
	if total == 0 {
		return 0
	}
	return sum / total
}

// IDF holds inverse document frequencies computed from a corpus of
// reference texts, as bert-score computes them:
//
//	idf(w) = log((M + 1) / (df(w) + 1))
//
// with M the number of reference texts and df(w) the number of them that
// contain token w at least once. A token no reference contains gets
// log(M + 1), bert-score's default for unseen tokens. A token in every
// reference weighs log(1) = 0: it tells texts apart no better than a
// special token does.
type IDF struct {
	M  int
	DF map[string]int
}

// NewIDF counts document frequencies over refs, each a reference text's tokens.
func NewIDF(refs [][]string) *IDF {
	f := &IDF{M: len(refs), DF: map[string]int{}}
	for _, doc := range refs {
		seen := make(map[string]bool, len(doc))
		for _, w := range doc {
			if !seen[w] {
				seen[w] = true
				f.DF[w]++
			}
		}
	}
	return f
}

// Of is idf(w).
func (f *IDF) Of(w string) float64 {
	return math.Log(float64(f.M+1) / float64(f.DF[w]+1))
}

// Weights returns idf(w) for each of tokens, in order.
func (f *IDF) Weights(tokens []string) []float64 {
	out := make([]float64, len(tokens))
	for i, w := range tokens {
		out[i] = f.Of(w)
	}
	return out
}

// Rescale maps a score s onto a baseline b, as bert-score's
// rescale_with_baseline does:
//
//	s' = (s - b) / (1 - b)
//
// so that b, the score two unrelated texts typically get, becomes 0 and 1
// stays 1: raw BERTScores crowd into a narrow band above b, and rescaling
// spreads them without changing their order. b = 0 leaves s unchanged; the
// caller must keep b < 1.
func Rescale(s, b float64) float64 {
	return (s - b) / (1 - b)
}

// ScoreSpecial is Score as bert_score weighs its tokenizer's special tokens
// ([CLS] and [SEP], RoBERTa's <s> and </s>), flagged in candSpecial and
// refSpecial (nil: none): they stay in the matching, as tokens another
// token may match best, but weigh 0 on their own side, with or without idf
// weights (bert_score sets their weight to 0; under idf it is 0 anyway, as
// they are in every text). A side with no token but special ones scores 0,
// as bert_score scores an empty text.
func (m Matching) ScoreSpecial(candW, refW []float64, candSpecial, refSpecial []bool) PRF {
	cw, cOK := zeroSpecial(candW, candSpecial, len(m.CandBest))
	rw, rOK := zeroSpecial(refW, refSpecial, len(m.RefBest))
	if !cOK || !rOK {
		return PRF{}
	}
	return m.Score(cw, rw)
}

// zeroSpecial returns w (nil: every weight 1) with the special tokens'
// weights set to 0, and whether any token is not special.
func zeroSpecial(w []float64, special []bool, n int) ([]float64, bool) {
	if special == nil {
		return w, n > 0
	}
	out := make([]float64, n)
	ordinary := false
	for i := range out {
		switch {
		case i < len(special) && special[i]:
		case w != nil:
			out[i], ordinary = w[i], true
		default:
			out[i], ordinary = 1, true
		}
	}
	return out, ordinary
}
