package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Task is one model node handed to an executor.
type Task struct {
	Key     string
	Address string
	Call    *stages.Call
}

// Result is what an executor returns for a task. Output is the node's
// canonical JSON output (Call.Output applied to the parsed answer).
type Result struct {
	Output      []byte
	Raw         string
	Reasoning   string
	ServedModel string
	Fingerprint string
	Usage       cache.Usage
	Attempts    []cache.Attempt
	Synthetic   bool
}

// ExecError is a failed task with what the model said, for the failure record.
type ExecError struct {
	Err      error
	Raw      string
	Attempts []cache.Attempt
}

func (e *ExecError) Error() string { return e.Err.Error() }
func (e *ExecError) Unwrap() error { return e.Err }

// Executor runs model nodes. The in-process executor below is the only one
// today; workers on a distributed queue can implement the same interface.
type Executor interface {
	Execute(ctx context.Context, t *Task) (*Result, error)
	// Concurrency is how many tasks the scheduler may have in flight for a provider.
	Concurrency(provider string) int
}

// LocalExecutor calls providers in-process through the llm layer.
type LocalExecutor struct {
	providers map[string]llm.Provider
	opts      []llm.Option
	mu        sync.Mutex
	clients   map[string]llm.Client
}

// NewLocalExecutor makes clients lazily, so a run that needs no calls never
// needs an API key.
func NewLocalExecutor(providers map[string]llm.Provider, log zerolog.Logger, opts ...llm.Option) *LocalExecutor {
	return &LocalExecutor{providers: providers, opts: append([]llm.Option{llm.WithLogger(log)}, opts...), clients: map[string]llm.Client{}}
}

func (e *LocalExecutor) client(name string) (llm.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.clients[name]; ok {
		return c, nil
	}
	p, ok := e.providers[name]
	if !ok {
		return nil, fmt.Errorf("no provider %q", name)
	}
	c, err := llm.New(p, e.opts...)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", name, err)
	}
	e.clients[name] = c
	return c, nil
}

// Concurrency is the provider's max_concurrency, else the llm layer's default
// for remote endpoints and 64 for the mock. The client enforces the same bound
// (lowered adaptively on 429s); the scheduler's bound keeps goroutines few.
func (e *LocalExecutor) Concurrency(provider string) int {
	p := e.providers[provider]
	if p.MaxConcurrency > 0 {
		return p.MaxConcurrency
	}
	if p.Kind == "mock" {
		return 64
	}
	return llm.DefaultMaxConcurrency
}

func (e *LocalExecutor) Execute(ctx context.Context, t *Task) (*Result, error) {
	c, err := e.client(t.Call.Model.Provider)
	if err != nil {
		return nil, err
	}
	var output []byte
	accept := func(a *format.Answer) error {
		out, err := t.Call.Output(a)
		if err != nil {
			return err
		}
		output = out
		return nil
	}
	repairs := e.providers[t.Call.Model.Provider].Repairs()
	start := time.Now()
	outcome, err := llm.Ask(ctx, c, t.Call.Request, accept, repairs)
	var attempts []cache.Attempt
	if outcome != nil {
		attempts = convertAttempts(outcome.Attempts)
	}
	if err != nil {
		raw := ""
		if outcome != nil && outcome.Response != nil {
			raw = outcome.Response.Text
		}
		return nil, &ExecError{Err: err, Raw: raw, Attempts: attempts}
	}
	m := t.Call.Model
	u := cache.Usage{
		InputTokens:  outcome.Usage.InputTokens,
		OutputTokens: outcome.Usage.OutputTokens,
		LatencyMS:    time.Since(start).Milliseconds(),
		Attempts:     len(attempts),
	}
	u.CostUSD = cost(m.Price, u.InputTokens, u.OutputTokens)
	r := outcome.Response
	return &Result{
		Output: output, Raw: r.Text, Reasoning: r.Reasoning, ServedModel: r.Model,
		Fingerprint: r.SystemFingerprint, Usage: u, Attempts: attempts, Synthetic: c.Synthetic(),
	}, nil
}

func cost(p stages.Price, in, out int64) float64 {
	return float64(in)/1e6*p.InputPerMTok + float64(out)/1e6*p.OutputPerMTok
}

func convertAttempts(as []llm.Attempt) []cache.Attempt {
	out := make([]cache.Attempt, len(as))
	for i, a := range as {
		out[i] = cache.Attempt{Error: a.Err, Raw: a.Raw, Status: a.Status, Repair: a.Repair, Duration: a.Latency.Milliseconds()}
	}
	return out
}
