package engine

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// A task is plain data: it survives a JSON round trip, and a second executor
// (as a worker on another machine would be) gives the same result.
func TestTaskRoundTripsAndExecutesElsewhere(t *testing.T) {
	providers := map[string]llm.Provider{"mock": {Name: "mock", Kind: "mock", Seed: 3, MaxRetries: -1, RepairAttempts: -1}}
	temp := 0.7
	m := &stages.Model{Provider: "mock", Name: "mock-gen", Temperature: &temp, MaxTokens: 200, Price: stages.Price{InputPerMTok: 1, OutputPerMTok: 2}}
	work := &stages.Work{Call: &stages.Call{Model: m,
		Request: m.Request([]llm.Message{{Role: "user", Content: "Give two ideas about coral reef acoustics."}}, 1, format.Spec{Kind: format.Ideas, N: 2})}}
	task, _ := newTask("k1", "stage.x/a/sample 1", work)

	b, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	var moved Task
	if err := json.Unmarshal(b, &moved); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&moved, task) {
		t.Fatalf("task changed in a JSON round trip:\n%+v\n%+v", moved, *task)
	}

	here := NewLocalExecutor(providers, zerolog.Nop())
	there := NewLocalExecutor(providers, zerolog.Nop())
	r1, err := here.Execute(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := there.Execute(context.Background(), &moved)
	if err != nil {
		t.Fatal(err)
	}
	// The result is plain data too: it round-trips and matches, latency aside.
	rb, _ := json.Marshal(r2)
	var back Result
	if err := json.Unmarshal(rb, &back); err != nil {
		t.Fatal(err)
	}
	r1.Usage.LatencyMS, back.Usage.LatencyMS = 0, 0
	for i := range r1.Attempts {
		r1.Attempts[i].Duration = 0
	}
	for i := range back.Attempts {
		back.Attempts[i].Duration = 0
	}
	if !reflect.DeepEqual(r1, &back) {
		t.Fatalf("results differ:\n%+v\n%+v", r1, back)
	}
	if len(r1.Answer.Ideas) != 2 || !r1.Synthetic || r1.Usage.CostUSD == 0 {
		t.Fatalf("result: %+v", r1)
	}
	// The engine, not the executor, turns the answer into the output.
	work.Call.Output = func(a *format.Answer) ([]byte, error) { return json.Marshal(a.Ideas) }
	out, err := applyOutput(work, &back)
	if err != nil {
		t.Fatal(err)
	}
	var ideas []string
	if err := json.Unmarshal(out, &ideas); err != nil || len(ideas) != 2 {
		t.Fatalf("output %s (%v)", out, err)
	}
}

// A call whose answers never parse fails, and the ExecError carries what
// its completions cost: the tokens the server reported for the first ask
// and its repair, priced.
func TestExecErrorCarriesUsage(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(func(*openai.ChatCompletionRequest) string { return "All of them are fine." }))
	t.Cleanup(srv.Close)
	t.Setenv("EXEC_TEST_KEY", "sk-exec-test-key")
	p := llm.NewProvider("fake", "openai")
	p.BaseURL, p.APIKeyEnv, p.RepairAttempts = srv.URL, "EXEC_TEST_KEY", 1
	m := &stages.Model{Provider: "fake", Name: "judge", Price: stages.Price{InputPerMTok: 1e6, OutputPerMTok: 2e6}}
	work := &stages.Work{Call: &stages.Call{Model: m,
		Request: m.Request([]llm.Message{{Role: "user", Content: "Rank the 3 ideas (A, B and C)."}}, 0, format.Spec{Kind: format.Ranking, Letters: "ABC"})}}
	task, _ := newTask("k", "stage.r/a", work)
	ex := NewLocalExecutor(map[string]llm.Provider{"fake": p}, zerolog.Nop(), llm.WithHTTPClient(srv.HTTPClient(2)))
	_, err := ex.Execute(context.Background(), task)
	var ee *ExecError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v, want an *ExecError", err)
	}
	var in, out int64
	for _, r := range srv.Requests() {
		for _, msg := range r.Chat.Messages {
			in += int64(llmtest.Tokens(msg.Content))
		}
		out += int64(llmtest.Tokens("All of them are fine."))
	}
	if srv.Count() != 2 || ee.Usage.InputTokens != in || ee.Usage.OutputTokens != out || ee.Usage.Attempts != 2 ||
		ee.Usage.CostUSD != float64(in)+2*float64(out) {
		t.Errorf("%d requests; usage %+v, want %d in, %d out, cost %v", srv.Count(), ee.Usage, in, out, float64(in)+2*float64(out))
	}
}
