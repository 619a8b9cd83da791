package similarity

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

const eps = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= eps }

func nearPRF(a, b PRF) bool {
	return near(a.Precision, b.Precision) && near(a.Recall, b.Recall) && near(a.F1, b.F1)
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Graphene-based, 2D!", []string{"graphene", "based", "2d"}},
		{"  The  CAT\tsat.\n", []string{"the", "cat", "sat"}},
		{"Ca²⁺ flux (p<0.05)", []string{"ca", "flux", "p", "0", "05"}}, // superscripts are No, not Nd
		{"Über-Schall", []string{"über", "schall"}},
		{"...", nil},
	} {
		if got := Tokens(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLCS(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"a b c d", "b d", 2},
		{"a b c b d a b", "b d c a b a", 4}, // CLRS: bcba
		{"x y", "", 0},
		{"x y z", "z y x", 1},
	} {
		if got := LCS(Tokens(tc.a), Tokens(tc.b)); got != tc.want {
			t.Errorf("LCS(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// Worked by hand: tokenise, find the LCS, P = LCS/|cand|, R = LCS/|ref|.
func TestRougeL(t *testing.T) {
	for _, tc := range []struct {
		cand, ref string
		want      PRF
	}{
		// LCS "the cat on the mat" = 5 of 6 and 6.
		{"The cat sat on the mat.", "the cat is on the mat", PRF{5.0 / 6, 5.0 / 6, 5.0 / 6}},
		// [graphene based membranes] vs [membranes based on graphene]: LCS 1;
		// P = 1/3, R = 1/4, F1 = 2(1/12)/(7/12) = 2/7.
		{"Graphene-based membranes!", "membranes based on graphene", PRF{1.0 / 3, 1.0 / 4, 2.0 / 7}},
		// LCS "b d": P = 2/4, R = 2/2, F1 = 2(1/2)/(3/2) = 2/3.
		{"a b c d", "b d", PRF{0.5, 1, 2.0 / 3}},
		{"Same text here", "same, text; HERE", PRF{1, 1, 1}},
		{"alpha beta", "gamma", PRF{}},
		{"", "gamma", PRF{}},
		{"alpha", "!!", PRF{}},
	} {
		if got := RougeL(tc.cand, tc.ref); !nearPRF(got, tc.want) {
			t.Errorf("RougeL(%q, %q) = %+v, want %+v", tc.cand, tc.ref, got, tc.want)
		}
	}
}

func TestCosine(t *testing.T) {
	for _, tc := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 2}, []float64{2, 1, 2}, 8.0 / 9}, // |a| = |b| = 3, a·b = 8
		{[]float64{3, 4}, []float64{6, 8}, 1},
		{[]float64{1, 0}, []float64{-2, 0}, -1},
		{[]float64{1, 0}, []float64{0, 5}, 0},
		{[]float64{0, 0}, []float64{1, 1}, 0},
	} {
		if got := Cosine(tc.a, tc.b); !near(got, tc.want) {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// The BERTScore example: candidate tokens c1 = (1,0), c2 = (0,1); reference
// tokens r1 = (1,0), r2 = (3,4), r3 = (-2,0) (not unit: cosine normalises).
// The cosine matrix, rows candidate, columns reference:
//
//	      r1    r2    r3
//	c1    1     0.6   -1
//	c2    0     0.8    0
//
// Row maxima 1, 0.8; column maxima 1, 0.8, 0.
var (
	candVecs = [][]float64{{1, 0}, {0, 1}}
	refVecs  = [][]float64{{1, 0}, {3, 4}, {-2, 0}}
	candToks = []string{"a", "b"}
	refToks  = []string{"a", "c", "d"}
	// The idf corpus: three reference texts, M = 3; df(a) = 2, df(c) = 2,
	// df(d) = 1, df(e) = 1, df(b) = 0.
	corpus = [][]string{{"a", "c", "d"}, {"a", "e", "a"}, {"c"}}
)

func TestBERTScore(t *testing.T) {
	l43, l2, l4 := math.Log(4.0/3), math.Log(2), math.Log(4)
	idf := NewIDF(corpus)
	for _, tc := range []struct {
		name        string
		candW, refW []float64
		cand, ref   [][]float64
		want        PRF
	}{
		{
			// P = (1 + 0.8)/2 = 0.9, R = (1 + 0.8 + 0)/3 = 0.6,
			// F1 = 2(0.9)(0.6)/1.5 = 0.72.
			name: "plain", cand: candVecs, ref: refVecs,
			want: PRF{0.9, 0.6, 0.72},
		},
		{
			// idf(a) = log(4/3), idf(b) = log(4/1) (unseen), idf(c) = log(4/3), idf(d) = log(4/2).
			// P = (log(4/3)·1 + log4·0.8) / (log(4/3) + log4)
			// R = (log(4/3)·1 + log(4/3)·0.8 + log2·0) / (2 log(4/3) + log2)
			name: "idf", cand: candVecs, ref: refVecs,
			candW: idf.Weights(candToks), refW: idf.Weights(refToks),
			want: func() PRF {
				p := (l43 + 0.8*l4) / (l43 + l4)
				r := (l43 + 0.8*l43) / (2*l43 + l2)
				return PRF{p, r, 2 * p * r / (p + r)}
			}(),
		},
		{
			// Weights that zero c1 and r3: P = 0.8, R = (1 + 0.8)/2 = 0.9,
			// F1 = 2(0.8)(0.9)/1.7 = 1.44/1.7.
			name: "weights", cand: candVecs, ref: refVecs,
			candW: []float64{0, 1}, refW: []float64{1, 1, 0},
			want: PRF{0.8, 0.9, 1.44 / 1.7},
		},
		{name: "identical", cand: refVecs, ref: refVecs, want: PRF{1, 1, 1}},
		{name: "empty candidate", cand: nil, ref: refVecs, want: PRF{}},
		{name: "zero weights", cand: candVecs, ref: refVecs, candW: []float64{0, 0}, refW: []float64{0, 0, 0}, want: PRF{}},
	} {
		if got := BERTScore(tc.cand, tc.ref, tc.candW, tc.refW); !nearPRF(got, tc.want) {
			t.Errorf("%s: BERTScore = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestIDF(t *testing.T) {
	f := NewIDF(corpus)
	for _, tc := range []struct {
		tok  string
		want float64
	}{
		{"a", math.Log(4.0 / 3)}, // in 2 of 3 (twice in one: counted once)
		{"c", math.Log(4.0 / 3)},
		{"d", math.Log(4.0 / 2)},
		{"e", math.Log(4.0 / 2)},
		{"b", math.Log(4.0 / 1)}, // unseen
	} {
		if got := f.Of(tc.tok); !near(got, tc.want) {
			t.Errorf("idf(%s) = %v, want %v", tc.tok, got, tc.want)
		}
	}
	// A token in every reference weighs 0.
	if got := NewIDF([][]string{{"x"}, {"x", "y"}}).Of("x"); got != 0 {
		t.Errorf("idf of a token in every reference = %v, want 0", got)
	}
}

func TestRescale(t *testing.T) {
	for _, tc := range []struct{ s, b, want float64 }{
		{0.72, 0.5, 0.44}, // (0.72 - 0.5) / 0.5
		{0.83, 0.83, 0},
		{1, 0.83, 1},
		{0.6, 0, 0.6},
		{0.5, 0.75, -1}, // below the baseline: negative
	} {
		if got := Rescale(tc.s, tc.b); !near(got, tc.want) {
			t.Errorf("Rescale(%v, %v) = %v, want %v", tc.s, tc.b, got, tc.want)
		}
	}
}

// Values as numpy.percentile(xs, 100*q) gives them.

// Match's faster cosines agree with Cosine: on random vectors every best
// match is the maximum of Cosine over the pairs within 1e-12 (exactly, with
// vectors of mixed lengths, where it falls back to Cosine).
func TestMatchEqualsCosine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vecs := func(n, d int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = make([]float64, d)
			for k := range out[i] {
				out[i][k] = rng.NormFloat64()
			}
		}
		return out
	}
	mixed := vecs(3, 16)
	mixed[1] = mixed[1][:9]
	zero := vecs(2, 16)
	zero[0] = make([]float64, 16)
	for _, tc := range []struct {
		name      string
		cand, ref [][]float64
	}{
		{"equal lengths", vecs(7, 16), vecs(11, 16)},
		{"mixed lengths", mixed, vecs(4, 16)},
		{"a zero vector", zero, vecs(3, 16)},
	} {
		m := Match(tc.cand, tc.ref)
		for i, c := range tc.cand {
			best := math.Inf(-1)
			for _, r := range tc.ref {
				best = max(best, Cosine(c, r))
			}
			if math.Abs(m.CandBest[i]-best) > 1e-12 || (tc.name == "mixed lengths" && m.CandBest[i] != best) {
				t.Errorf("%s: CandBest[%d] = %v, max Cosine %v", tc.name, i, m.CandBest[i], best)
			}
		}
		for j, r := range tc.ref {
			best := math.Inf(-1)
			for _, c := range tc.cand {
				best = max(best, Cosine(c, r))
			}
			if math.Abs(m.RefBest[j]-best) > 1e-12 || (tc.name == "mixed lengths" && m.RefBest[j] != best) {
				t.Errorf("%s: RefBest[%d] = %v, max Cosine %v", tc.name, j, m.RefBest[j], best)
			}
		}
	}
}

// BenchmarkMatch is one full-size matching: a 206-token abstract with three
// 100-token ideas, 256 dimensions (the mock's).
func BenchmarkMatch(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	vecs := func(n int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = make([]float64, 256)
			for k := range out[i] {
				out[i][k] = rng.NormFloat64()
			}
		}
		return out
	}
	ref, cand := vecs(206), vecs(300)
	b.ResetTimer()
	for range b.N {
		Match(cand, ref)
	}
}

// TestCosineOf: vectors that cannot be compared are an error, where Cosine
// gives a number no comparison made.
func TestCosineOf(t *testing.T) {
	tests := []struct {
		a, b []float64
		want float64
		err  string
	}{
		{[]float64{3, 4}, []float64{1, 0}, 0.6, ""},
		{[]float64{1, 0, 5}, []float64{1, 0}, 0, "vectors of 3 and 2 dimensions cannot be compared"},
		{[]float64{}, []float64{}, 0, "empty vectors"},
		{[]float64{0, 0}, []float64{1, 0}, 0, "an all-zero vector has no direction"},
		{[]float64{math.NaN(), 1}, []float64{1, 0}, 0, "a vector has NaN at dimension 0"},
		{[]float64{1, 0}, []float64{1, math.Inf(1)}, 0, "a vector has +Inf at dimension 1"},
		{[]float64{1, 0}, []float64{0, 1}, 0, ""}, // orthogonal: a real 0
	}
	for _, tt := range tests {
		got, err := CosineOf(tt.a, tt.b)
		if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("CosineOf(%v, %v) = %v, %v; want %v, %q", tt.a, tt.b, got, err, tt.want, tt.err)
		}
	}
}
