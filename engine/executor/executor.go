// Package executor runs call nodes: a Task (plain data: the request, the
// provider to send it to, the price to account it at) goes in, a Result
// (the parsed answer or the service's reply, usage, attempts) comes out. It
// knows nothing of graphs, experiment files or the cache: it imports neither
// HCL nor Badger (TestImports), so a worker on another machine needs only
// this package, the task and the provider settings. The engine (dispatch.go)
// turns a Result into a node's output and record.
package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/pricing"
)

// Task is one call node handed to an executor. It is plain data, so it can
// travel to a worker on another machine as JSON: the request (whose Format
// spec decides which answers are usable), the provider to send it to and the
// price to account it at. Turning the answer into the node's output is the
// engine's job, after Execute returns.
type Task struct {
	Key      string              `json:"key"`
	Address  string              `json:"address"`
	Provider string              `json:"provider"`
	Chat     *llm.Request        `json:"chat,omitempty"`
	Service  *llm.ServiceRequest `json:"service,omitempty"`
	Price    stages.Price        `json:"price"`
	// Samples, when more than one, asks Chat for these sample indexes in one
	// request with n choices (see choices.go); Result.Choices answers them.
	Samples []int `json:"samples,omitempty"`
	// Deadline, when set, bounds the task wherever it runs: an executor
	// gives up at it (a failure of kind cancelled), as it does when the
	// context it was handed is cancelled.
	Deadline time.Time `json:"deadline,omitzero"`
	// Settings are the provider's settings (names of the environment
	// variables holding secrets, never their values), so an executor that
	// has no provider of that name, a worker on another machine, can run
	// the task from the task alone. An executor that has one refuses a
	// task whose settings differ. Nil: the executor's own.
	Settings *llm.Provider `json:"settings,omitempty"`
}

// Result is what an executor returns for a task, also plain data: the parsed
// answer of a chat task, or the reply body of a service task.
type Result struct {
	Answer      *format.Answer  `json:"answer,omitempty"`
	Body        json.RawMessage `json:"body,omitempty"`
	Raw         string          `json:"raw,omitempty"`
	Reasoning   string          `json:"reasoning,omitempty"`
	ServedModel string          `json:"served_model,omitempty"`
	Fingerprint string          `json:"fingerprint,omitempty"`
	Usage       Usage           `json:"usage"`
	Attempts    []Attempt       `json:"attempts,omitempty"`
	Synthetic   bool            `json:"synthetic,omitempty"`
	// Choices answers a task's Samples, in order; nil where none came.
	Choices []*Result `json:"choices,omitempty"`
	// Obtained says how the answer was obtained when not by one request
	// (e.g. "batch batch_abc of provider openai"), for `show`.
	Obtained string `json:"obtained,omitempty"`
	// Error, when set, is the task's failure as plain data (see Envelope,
	// Settle): the rest is then empty.
	Error *Failure `json:"error,omitempty"`
	// Earlier marks an answer a queue's results store held before this
	// run asked (a coordinator killed after its workers answered, or one
	// whose cache was lost): paid for then, by the run that published it,
	// so the run summary counts it apart from this run's calls and cost.
	// Set by the coordinator that read it, never stored.
	Earlier bool `json:"earlier,omitempty"`
}

// ExecError is a failed task with what the model said, for the failure record.
type ExecError struct {
	Err      error
	Raw      string
	Attempts []Attempt
	// Usage is what the completions that came back before the call failed
	// cost (refused answers, repair re-asks): paid for, so summed into the
	// run's tokens, cost and budget like an answer's.
	Usage Usage
}

func (e *ExecError) Error() string { return e.Err.Error() }
func (e *ExecError) Unwrap() error { return e.Err }

// Executor runs call nodes. The in-process executor below is the only one
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

// client is the client for a provider's settings, made once per key.
func (e *LocalExecutor) client(key string, p llm.Provider) (llm.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.clients[key]; ok {
		return c, nil
	}
	c, err := llm.New(p, e.opts...)
	if err != nil {
		return nil, err // llm.New names the provider
	}
	e.clients[key] = c
	return c, nil
}

// settings are the provider settings t runs with, and the key of their
// client: the executor's own provider of t's name, else the settings the
// task carries (one client per distinct settings, so two coordinators'
// tasks never share a client whose settings are not theirs).
func (e *LocalExecutor) settings(t *Task) (llm.Provider, string, error) {
	own, ok := e.providers[t.Provider]
	if t.Settings == nil {
		if !ok {
			return llm.Provider{}, "", fmt.Errorf("no provider %q", t.Provider)
		}
		return own, t.Provider, nil
	}
	carried := NormalizeSettings(*t.Settings)
	if carried.Name != t.Provider {
		return llm.Provider{}, "", fmt.Errorf("task %s for provider %q carries the settings of provider %q", t.Address, t.Provider, carried.Name)
	}
	if ok {
		if SettingsDigest(own) != SettingsDigest(carried) {
			return llm.Provider{}, "", fmt.Errorf("the task's settings for provider %q differ from this executor's", t.Provider)
		}
		return own, t.Provider, nil
	}
	return carried, t.Provider + "@" + SettingsDigest(carried), nil
}

// Settings are the executor's own settings for provider, for a task that
// goes to an executor elsewhere (see Task.Settings).
func (e *LocalExecutor) Settings(provider string) (llm.Provider, bool) {
	p, ok := e.providers[provider]
	return p, ok
}

// Concurrency is the provider's max_concurrency, else its kind's default
// (the registry declares it). The client enforces the same bound (lowered
// adaptively on 429s); the scheduler's bound keeps goroutines few.
func (e *LocalExecutor) Concurrency(provider string) int {
	p := e.providers[provider]
	if p.MaxConcurrency > 0 {
		return p.MaxConcurrency
	}
	if k, ok := llm.LookupKind(p.Kind); ok && k.DefaultConcurrency > 0 {
		return k.DefaultConcurrency
	}
	return llm.DefaultMaxConcurrency
}

func (e *LocalExecutor) Execute(ctx context.Context, t *Task) (*Result, error) {
	p, key, err := e.settings(t)
	if err != nil {
		return nil, err
	}
	c, err := e.client(key, p)
	if err != nil {
		return nil, err
	}
	if !t.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, t.Deadline)
		defer cancel()
	}
	switch {
	case t.Chat != nil && len(t.Samples) > 1:
		return e.chatChoices(ctx, c, t)
	case t.Chat != nil:
		return e.chat(ctx, c, p, t)
	case t.Service != nil:
		return e.service(ctx, c, p, t)
	}
	return nil, fmt.Errorf("task %s has neither a chat nor a service request", t.Address)
}

func (e *LocalExecutor) chat(ctx context.Context, c llm.Client, p llm.Provider, t *Task) (*Result, error) {
	repairs := p.Repairs()
	start := time.Now()
	outcome, err := llm.Ask(ctx, c, *t.Chat, nil, repairs)
	var attempts []Attempt
	if outcome != nil {
		attempts = convertAttempts(outcome.Attempts)
	}
	var u Usage
	if outcome != nil {
		u = Usage{
			InputTokens:  outcome.Usage.InputTokens,
			OutputTokens: outcome.Usage.OutputTokens,
			LatencyMS:    time.Since(start).Milliseconds(),
			Attempts:     len(attempts),
			CachedTokens: outcome.Usage.CachedTokens,
		}
		u.CostUSD = pricing.Cost(t.Price, outcome.Usage, pricing.Sync)
	}
	if err != nil {
		raw := ""
		if outcome != nil && outcome.Response != nil {
			raw = outcome.Response.Text
		}
		return nil, &ExecError{Err: err, Raw: raw, Attempts: attempts, Usage: u}
	}
	r := outcome.Response
	return &Result{
		Answer: outcome.Answer, Raw: r.Text, Reasoning: r.Reasoning, ServedModel: r.Model,
		Fingerprint: r.SystemFingerprint, Usage: u, Attempts: attempts, Synthetic: c.Synthetic(),
	}, nil
}

func (e *LocalExecutor) service(ctx context.Context, c llm.Client, p llm.Provider, t *Task) (*Result, error) {
	sc, ok := c.(llm.ServiceClient)
	if !ok {
		return nil, fmt.Errorf("provider %q (kind %q) serves no %q requests; point the stage at a model of a provider kind that does", t.Provider, p.Kind, t.Service.Op)
	}
	start := time.Now()
	resp, err := sc.Call(ctx, *t.Service)
	if err != nil {
		return nil, &ExecError{Err: err}
	}
	// One service call, however many HTTP requests the client made for it
	// (retries, TEI's tokenize + embed, batch splits): as a model call with
	// its HTTP retries counts once.
	u := Usage{InputTokens: resp.Usage.InputTokens, LatencyMS: time.Since(start).Milliseconds(), Attempts: 1}
	u.CostUSD = Cost(t.Price, u.InputTokens, 0)
	return &Result{Body: resp.Body, ServedModel: resp.Model, Usage: u, Synthetic: sc.Synthetic()}, nil
}

// Cost is what in input and out output tokens cost at price p.
func Cost(p stages.Price, in, out int64) float64 {
	return float64(in)/1e6*p.InputPerMTok + float64(out)/1e6*p.OutputPerMTok
}

func convertAttempts(as []llm.Attempt) []Attempt {
	out := make([]Attempt, len(as))
	for i, a := range as {
		out[i] = Attempt{Error: a.Err, Raw: a.Raw, Status: a.Status, Repair: a.Repair, Duration: a.Latency.Milliseconds()}
	}
	return out
}
