package batch

import (
	"path/filepath"
	"testing"
)

// BenchmarkBatchVsSync measures, in one run against the same in-process
// fake, the client-side cost of answering n requests through one batch
// (encode, upload, create, poll, download, decode) and through n
// synchronous calls: the ratio says what batching costs or saves this
// process, apart from the provider's price and queueing.
func BenchmarkBatchVsSync(b *testing.B) {
	const n = 2000
	f := newFixture(b)
	its := items("m", n, "a")
	sc := f.llmClient(nil)
	var batchNs, syncNs int64
	for i := 0; i < b.N; i++ {
		f.journal = filepath.Join(b.TempDir(), "j")
		c, done := f.process(nil)
		start := nowNs()
		if _, err := c.Submit(bg, its); err != nil {
			b.Fatal(err)
		}
		got := 0
		if err := c.Wait(bg, func(r Result) error {
			if r.Failure == nil {
				got++
			}
			return nil
		}); err != nil || got != n {
			b.Fatalf("%v, %d answers", err, got)
		}
		batchNs += nowNs() - start
		done()
		start = nowNs()
		for _, it := range its {
			if _, err := sc.Complete(bg, it.Request); err != nil {
				b.Fatal(err)
			}
		}
		syncNs += nowNs() - start
	}
	b.ReportMetric(float64(batchNs)/float64(b.N*n), "batch-ns/request")
	b.ReportMetric(float64(syncNs)/float64(b.N*n), "sync-ns/request")
	b.ReportMetric(float64(syncNs)/float64(batchNs), "sync/batch")
}
