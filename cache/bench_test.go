package cache

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// benchVocab is 2000 pseudo-words; benchText draws from it with a Zipf law so
// that text compresses like model prose: s2 stores it at ~0.61 of its size,
// as it does IdeaBench abstracts and their summaries.
var benchVocab = func() []string {
	rng := rand.New(rand.NewPCG(1, 1))
	vocab := make([]string, 2000)
	for i := range vocab {
		word := make([]byte, 2+rng.IntN(9))
		for j := range word {
			word[j] = byte('a' + rng.IntN(26))
		}
		vocab[i] = string(word)
	}
	return vocab
}()

// benchText is n bytes of seeded word salad.
func benchText(seed uint64, n int) string {
	rng := rand.New(rand.NewPCG(seed, 7))
	zipf := rand.NewZipf(rng, 1.2, 2, uint64(len(benchVocab)-1))
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(benchVocab[zipf.Uint64()])
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// benchRecord is sized like a generated idea: ~1.5 KiB output, ~1.5 KiB raw
// answer, a usage line and six key parts.
func benchRecord(i int) *Record {
	idea := benchText(uint64(i), 1500)
	output, _ := json.Marshal(map[string]any{"ideas": []string{idea}, "sample": i % 3})
	parts := make([]Part, 6)
	for p := range parts {
		parts[p] = Part{Name: fmt.Sprintf("part.%d", p), Digest: fmt.Sprintf("%064x", i*10+p), Display: "value"}
	}
	return &Record{
		Key:         fmt.Sprintf("%064x", i),
		Stage:       `stage.generate_ideas.main["gpt-4o"]`,
		Address:     fmt.Sprintf(`stage.generate_ideas.main["gpt-4o"].item[%d].sample[%d]`, i/3, i%3),
		Output:      output,
		Usage:       Usage{InputTokens: 900, OutputTokens: 400, CostUSD: 0.0062, LatencyMS: 2400, Attempts: 1},
		Parts:       parts,
		Model:       "gpt-4o-2024-08-06",
		ServedModel: "gpt-4o-2024-08-06",
		Raw:         idea,
		Attempts:    []Attempt{{Status: 200, Duration: 2400}},
		CreatedAt:   time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// fill stores n bench records in large groups, as many finished runs would.
func fill(b *testing.B, s *Badger, n int) {
	b.Helper()
	const group = 1000
	for start := 0; start < n; start += group {
		var units [][]op
		for i := start; i < min(start+group, n); i++ {
			rec := benchRecord(i)
			rec.OutputDigest = DigestOutput(rec.Output)
			units = append(units, recordOps(rec))
		}
		if err := s.b.apply(units...); err != nil {
			b.Fatal(err)
		}
	}
}

func reportRate(b *testing.B, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}

// BenchmarkGet reads records a previous run wrote: the store is reopened
// after filling, so lookups go through the on-disk tables and value log, as
// in a re-run, not through the memtable.
func BenchmarkGet(b *testing.B) {
	const n = 20000
	dir := b.TempDir()
	s, err := Create(dir)
	if err != nil {
		b.Fatal(err)
	}
	fill(b, s, n)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if s, err = Open(dir); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = benchRecord(i).Key
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Warm the block cache and page cache as a re-run's plan phase would.
	for _, k := range keys {
		if _, err := s.Get(k); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Get(keys[rng.IntN(n)]); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, "gets/s")
}

func BenchmarkGetMemory(b *testing.B) {
	const n = 20000
	s := NewMemory()
	keys := make([]string, n)
	for i := range keys {
		rec := benchRecord(i)
		keys[i] = rec.Key
		if err := s.Put(rec); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Get(keys[rng.IntN(n)]); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, "gets/s")
}

// benchRecords pre-builds n records so benchmarks time the store, not the
// text generator.
func benchRecords(n int) []*Record {
	recs := make([]*Record, n)
	for i := range recs {
		recs[i] = benchRecord(i)
	}
	return recs
}

// BenchmarkPut is one writer: every Put waits for its own sync.
func BenchmarkPut(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	recs := benchRecords(b.N)
	b.ResetTimer()
	for _, rec := range recs {
		if err := s.Put(rec); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, "puts/s")
}

// BenchmarkPutParallel is a run's worker pool: 32 writers share syncs
// through group commit.
func BenchmarkPutParallel(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	recs := benchRecords(b.N)
	var next atomic.Int64
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Put(recs[next.Add(1)-1]); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b, "puts/s")
}

// BenchmarkCodec compares the stored binary encoding with JSON, the
// alternative considered for record values.
func BenchmarkCodec(b *testing.B) {
	rec := withoutParts(benchRecord(1))
	rec.OutputDigest = DigestOutput(rec.Output)
	bin := encodeRecord(rec)
	js, _ := json.Marshal(rec)
	b.Run("binary/encode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			encodeRecord(rec)
		}
		b.ReportMetric(float64(len(bin)), "bytes/record")
	})
	b.Run("binary/decode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := decodeRecord(bin); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json/encode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := json.Marshal(rec); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(js)), "bytes/record")
	})
	b.Run("json/decode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var r Record
			if err := json.Unmarshal(js, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRerun measures what a re-run of a fully cached experiment costs
// the cache: reopen, then Get every node. The node count comes from
// IDEAFLOW_CACHE_BENCH_NODES (default 20000; the target is 200000 in under
// 1 GiB). peak-rss-MiB is the process high-water mark during the re-run,
// reset after filling (Linux only; absent elsewhere).
func BenchmarkRerun(b *testing.B) {
	n := 20000
	if v := os.Getenv("IDEAFLOW_CACHE_BENCH_NODES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("IDEAFLOW_CACHE_BENCH_NODES=%q: %v", v, err)
		}
	}
	dir := b.TempDir()
	s, err := Create(dir)
	if err != nil {
		b.Fatal(err)
	}
	fill(b, s, n)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%064x", i)
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakRSS()
		b.StartTimer()
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range keys {
			if _, err := s.Get(k); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "gets/s")
	if peak, ok := peakRSS(); ok {
		b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
	}
	if st, err := diskUsage(dir); err == nil {
		b.ReportMetric(float64(st)/(1<<20), "disk-MiB")
	}
}

func diskUsage(dir string) (int64, error) {
	return (&badgerBackend{dir: dir}).diskBytes()
}

// resetPeakRSS resets VmHWM so peakRSS covers only what follows.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func peakRSS() (int64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
