package literature

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// syntheticAbstracts makes n abstract-length texts (about 180 words) over a
// Zipf-distributed vocabulary of 20,000 words, as a stand-in for a
// corpus of real abstracts.
func syntheticAbstracts(n int) []string {
	r := rand.New(rand.NewSource(1))
	z := rand.NewZipf(r, 1.1, 1, 19999)
	docs := make([]string, n)
	var b strings.Builder
	for i := range docs {
		b.Reset()
		for w := 0; w < 180; w++ {
			fmt.Fprintf(&b, "w%d ", z.Uint64())
		}
		docs[i] = b.String()
	}
	return docs
}

// BenchmarkBM25Index: indexing 10,000 abstracts, what opening a corpus of
// that size costs once per run.
func BenchmarkBM25Index(b *testing.B) {
	docs := syntheticAbstracts(10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		newBM25(docs)
	}
}

// BenchmarkBM25Query: one 8-word query (a method description's length)
// over 10,000 abstracts, top 20.
func BenchmarkBM25Query(b *testing.B) {
	docs := syntheticAbstracts(10000)
	ix := newBM25(docs)
	queries := syntheticAbstracts(200)
	for i := range queries {
		queries[i] = strings.Join(strings.Fields(queries[i])[:8], " ")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.search(queries[i%len(queries)], 20, nil)
	}
}
