package jetstream

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

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
