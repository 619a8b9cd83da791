package jetstream

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// BenchmarkRoundTrip is the queue's overhead per task: b.N distinct tasks
// through a coordinator (32 in flight) to 2 in-process workers (16 each)
// and their results back, against a fake endpoint answering at once, all
// on one in-process server with file storage.
func BenchmarkRoundTrip(b *testing.B) {
	b.Setenv(testKeyEnv, "sk-test")
	srv := llmtest.New()
	b.Cleanup(srv.Close)
	s := startServer(b)
	for range 2 {
		run(b, newWorker(open(b, s, Config{}), 16))
	}
	coord := NewCoordinator(open(b, s, Config{}))
	p := provider(srv)
	tasks := make([][]byte, b.N)
	for i := range tasks {
		tasks[i] = task(b, p, i)
	}
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				if _, err := coord.Send(context.Background(), tasks[i]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if n := srv.Count(); n != b.N {
		b.Fatalf("%d endpoint calls for %d tasks", n, b.N)
	}
}

// BenchmarkWorkers is fan-out: 256 tasks at 64 in flight against an
// endpoint that takes 20 ms a request, on 1, 2, 4 and 8 in-process
// workers of 8 tasks each: with the endpoint the bottleneck of each
// worker's slots, the time should fall as workers are added until the
// coordinator's 64 in flight bound it (8 workers).
func BenchmarkWorkers(b *testing.B) {
	b.Setenv(testKeyEnv, "sk-test")
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			srv := llmtest.New(llmtest.WithLatency(20 * time.Millisecond))
			b.Cleanup(srv.Close)
			s := startServer(b)
			for range n {
				run(b, newWorker(open(b, s, Config{}), 8))
			}
			coord := NewCoordinator(open(b, s, Config{}))
			p := provider(srv)
			p.MaxConcurrency = 8
			const tasks = 256
			b.ResetTimer()
			for round := range b.N {
				var next atomic.Int64
				var wg sync.WaitGroup
				for range 64 {
					wg.Go(func() {
						for {
							i := int(next.Add(1)) - 1
							if i >= tasks {
								return
							}
							if _, err := coord.Send(context.Background(), task(b, p, round*tasks+i)); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
			}
			b.StopTimer()
			b.ReportMetric(float64(tasks*b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
