package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/engine/executor/jetstream"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// The scale-out benchmarks: N worker processes (this test binary re-run as
// `ideaflow worker --connect ...`), one in-process NATS server, and a
// coordinator in the benchmark's process sending tasks straight to the
// queue (jetstream.Coordinator, as `ideaflow run --executor` does).

const benchKeyEnv = "BENCH_WORKERS_API_KEY"

// BenchmarkWorkerProcessesLimited: 1, 2, 4 and 8 worker processes share
// one API key's limit of 600 requests a minute (and 100,000 tokens a
// minute, which the 103-token requests do not reach) against a fake that
// enforces it over sliding windows and answers 429 past them. Each run
// sends 650 tasks, so that it lasts about 65 s and holds whole 60 s
// windows: the benchmark takes about 4.5 minutes, mostly asleep.
//
// The fake allows 11 requests in any 1 s and 601 in any 60 s: an evenly
// spaced limit (the GCRA's burst of 1) puts floor(W/T)+1 starts in a
// window W, one more than W's share of the rate. The metrics:
// throughput/limit (accepted requests a second between the first and the
// last, over 10/s), max1s/limit and max60s/limit (the most accepted
// requests in any sliding window, over the window's share of the rate: 10
// and 600; 1.1 and 1.0017 are the burst's one extra), and 429/req (429s
// over requests received).
func BenchmarkWorkerProcessesLimited(b *testing.B) {
	const perMinute, tokensPerMinute, tasks, concurrency = 600, 100_000, 650, 8
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			for range b.N {
				srv := llmtest.New(llmtest.WithRateLimit(
					llmtest.Window{Length: time.Second, Requests: perMinute/60 + 1},
					llmtest.Window{Length: time.Minute, Requests: perMinute + 1, Tokens: tokensPerMinute}))
				p := benchProvider(srv, concurrency)
				p.RequestsPerMinute, p.TokensPerMinute = perMinute, tokensPerMinute
				coord := startWorkerProcesses(b, n, concurrency)
				sendAll(b, coord, p, tasks, 0, 2*n*concurrency)
				acc := srv.Accepted()
				refused := srv.Refused()
				srv.Close()
				if len(acc) != tasks {
					b.Fatalf("%d requests accepted for %d tasks", len(acc), tasks)
				}
				times := make([]time.Time, len(acc))
				for i, a := range acc {
					times[i] = a.Time
				}
				span := times[len(times)-1].Sub(times[0]).Seconds()
				b.ReportMetric(float64(len(times)-1)/span/(perMinute/60.0), "throughput/limit")
				b.ReportMetric(float64(llmtest.MostInWindow(times, nil, time.Second))/(perMinute/60.0), "max1s/limit")
				b.ReportMetric(float64(llmtest.MostInWindow(times, nil, time.Minute))/perMinute, "max60s/limit")
				b.ReportMetric(float64(refused)/float64(refused+len(acc)), "429/req")
				b.ReportMetric(span, "s")
			}
		})
	}
}

// BenchmarkWorkerProcessesLatency: no limit, an endpoint that takes 200 ms
// a request, 8 tasks at once a worker process: throughput should be
// N x 8 / 0.2 s (40/s a worker) until the 2 cores run out. tasks/s is
// measured over 10 rounds of the fleet's slots; of-ideal is its share of
// N x c / L.
func BenchmarkWorkerProcessesLatency(b *testing.B) {
	const latency, concurrency = 200 * time.Millisecond, 8
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			srv := llmtest.New(llmtest.WithLatency(latency))
			b.Cleanup(srv.Close)
			p := benchProvider(srv, concurrency)
			coord := startWorkerProcesses(b, n, concurrency)
			tasks := 10 * n * concurrency
			sendAll(b, coord, p, tasks, 0, 2*n*concurrency) // warm: connections open, clients made
			b.ResetTimer()
			for round := range b.N {
				sendAll(b, coord, p, tasks, (round+1)*tasks, 2*n*concurrency)
			}
			b.StopTimer()
			rate := float64(tasks*b.N) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "tasks/s")
			b.ReportMetric(rate/(float64(n*concurrency)/latency.Seconds()), "of-ideal")
			if got, want := srv.Count(), tasks*(b.N+1); got != want {
				b.Fatalf("%d endpoint calls for %d tasks", got, want)
			}
		})
	}
}

// benchProvider is an openai-kind provider at srv whose calls go at most
// conc at a time in each worker.
func benchProvider(srv *llmtest.Server, conc int) llm.Provider {
	p := llm.NewProvider("fake", "openai")
	p.BaseURL, p.APIKeyEnv, p.MaxConcurrency = srv.URL, benchKeyEnv, conc
	return p
}

// startWorkerProcesses starts a NATS server and n worker processes of
// conc tasks each on it, waits until each says it is ready, and returns a
// coordinator on the queue. The workers are interrupted (and waited for)
// when the benchmark ends.
func startWorkerProcesses(b *testing.B, n, conc int) *jetstream.Coordinator {
	b.Helper()
	s, err := jetstream.StartServer("127.0.0.1:0", b.TempDir(), "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Stop)
	for range n {
		startWorkerProcess(b, []string{benchKeyEnv + "=sk-bench"},
			"--connect", s.URL(), "--concurrency", strconv.Itoa(conc), "--log-level", "error")
	}
	nc, err := connectNATS(s.URL(), "bench coordinator")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	q, err := jetstream.Open(context.Background(), nc, jetstream.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return jetstream.NewCoordinator(q)
}

// sendAll sends tasks distinct tasks of p (keys from first on) through
// coord, inFlight at once (the benchmarks give twice the fleet's slots:
// every slot busy and as many tasks queued), and fails the benchmark on
// any task not answered.
func sendAll(b *testing.B, coord *jetstream.Coordinator, p llm.Provider, tasks, first, inFlight int) {
	b.Helper()
	var next, failedN atomic.Int64
	var once sync.Once
	var firstErr string
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= tasks {
					return
				}
				k := first + i
				t, err := json.Marshal(&executor.Task{
					Key: fmt.Sprintf("bench%d", k), Address: fmt.Sprintf("stage.x[%d]", k), Provider: p.Name, Settings: &p,
					Chat: &llm.Request{Model: "m", MaxTokens: 100, Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf("question %d", k)}},
						Format: format.Spec{Kind: format.Text}},
				})
				if err != nil {
					b.Error(err)
					return
				}
				res, err := coord.Send(context.Background(), t)
				var r executor.Result
				if err == nil {
					err = json.Unmarshal(res, &r)
				}
				if err == nil && r.Error != nil {
					err = fmt.Errorf("%s: %s", r.Error.Kind, r.Error.Message)
				}
				if err != nil {
					failedN.Add(1)
					once.Do(func() { firstErr = err.Error() })
				}
			}
		})
	}
	wg.Wait()
	if n := failedN.Load(); n > 0 {
		b.Fatalf("%d of %d tasks failed, the first: %s", n, tasks, firstErr)
	}
}
