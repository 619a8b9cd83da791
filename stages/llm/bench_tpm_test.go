package llm

import (
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// BenchmarkTokensPerMinuteOverestimated: tokens_per_minute = 600,000 (10,000
// a second), requests without max_tokens whose estimate is 5x the usage the
// server reports (see overestimatedRequest), 50 ms latency, 32 in flight,
// real sockets and the wall clock, 4 s of starts. Reports the tokens the
// server counted over the budget of the same span (issue 23.3: 0.19-0.20
// before settled usage woke the waiting call; at least 0.95 wanted) and the
// busiest second's share of the per-second budget.
func BenchmarkTokensPerMinuteOverestimated(b *testing.B) {
	const tpm, span = 600000, 4 * time.Second
	srv := llmtest.New(llmtest.WithLatency(50*time.Millisecond), llmtest.WithResponder(overestimatedResponder))
	defer srv.Close()
	for i := 0; i < b.N; i++ {
		c := benchClient(b, Provider{Name: "bench", Kind: "openai", BaseURL: srv.URL, APIKeyEnv: "TEST_KEY",
			MaxConcurrency: 32, TokensPerMinute: tpm, MaxRetries: -1})
		start := time.Now()
		calls := int(1.05 * tpm / 60 * span.Seconds() / overestimatedUse)
		runCalls(b, c, calls, 32, overestimatedRequest)
		var inSpan int
		times, used := usageTimes(srv)
		for j := len(times) - 1; j >= 0; j-- {
			if times[j].Before(start) { // an earlier iteration's
				times, used = times[j+1:], used[j+1:]
				break
			}
		}
		for j, at := range times {
			if at.Sub(start) < span {
				inSpan += used[j]
			}
		}
		b.ReportMetric(float64(inSpan)/(tpm/60*span.Seconds()), "budget_ratio")
		b.ReportMetric(float64(llmtest.MostInWindow(times, used, time.Second))/(tpm/60), "busiest_second_ratio")
	}
}
