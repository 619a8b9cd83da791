package cache

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkCompactAtClose: what the compaction at close costs the run that
// wrote n records, and what it saves the next one. A run writes n records
// through one handle and closes it, compacting (the default past
// flattenAfter writes) or not; the next opens the cache and reads every
// record once, as a warm run's lookups do. Reports close_s, open_s and
// lookups_s (one run each: compare the two variants' figures of one run).
func BenchmarkCompactAtClose(b *testing.B) {
	for _, n := range []int{50_000, 200_000} {
		for _, compact := range []bool{true, false} {
			b.Run(fmt.Sprintf("records=%d/compact=%v", n, compact), func(b *testing.B) {
				after := int64(flattenAfter)
				if !compact {
					after = 1 << 62
				}
				for range b.N {
					dir := b.TempDir()
					s, err := Create(dir, withFlattenAfter(after))
					if err != nil {
						b.Fatal(err)
					}
					fill(b, s, n)
					t0 := time.Now()
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
					closeS := time.Since(t0).Seconds()
					t0 = time.Now()
					if s, err = Open(dir); err != nil {
						b.Fatal(err)
					}
					openS := time.Since(t0).Seconds()
					t0 = time.Now()
					for i := range n {
						if _, err := s.Get(benchRecord(i).Key); err != nil {
							b.Fatal(err)
						}
					}
					lookupS := time.Since(t0).Seconds()
					s.Close()
					b.ReportMetric(closeS, "close_s")
					b.ReportMetric(openS, "open_s")
					b.ReportMetric(lookupS, "lookups_s")
				}
			})
		}
	}
}
