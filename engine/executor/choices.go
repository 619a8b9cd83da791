package executor

import (
	"context"
	"time"

	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// SampleBatcher is an Executor that can send several samples of one prompt
// as one request (Task.Samples).
type SampleBatcher interface {
	BatchesSamples(provider string) bool
}

// BatchesSamples reports whether provider's n_choices setting is on and its
// client can ask for n choices.
func (e *LocalExecutor) BatchesSamples(provider string) bool {
	p, ok := e.providers[provider]
	return ok && NChoices(p)
}

// NChoices reads a provider's n_choices setting.
func NChoices(p llm.Provider) bool {
	v, _ := p.Get("n_choices")
	on, _ := v.(bool)
	return on
}

// chatChoices asks for a task's samples in one request; Result.Choices[i]
// answers Samples[i]: nil where the endpoint gave no answer, without an
// Answer (its usage kept) where the answer did not parse.
func (e *LocalExecutor) chatChoices(ctx context.Context, c llm.Client, t *Task) (*Result, error) {
	cc, ok := c.(llm.ChoicesClient)
	if !ok {
		return &Result{}, nil // every sample is asked alone
	}
	start := time.Now()
	resps, err := cc.CompleteChoices(ctx, *t.Chat, t.Samples)
	if err != nil {
		return nil, &ExecError{Err: err}
	}
	out := &Result{Choices: make([]*Result, len(t.Samples))}
	for i, r := range resps {
		if i >= len(t.Samples) {
			break
		}
		u := Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens,
			LatencyMS: time.Since(start).Milliseconds(), Attempts: 1}
		u.CostUSD = Cost(t.Price, u.InputTokens, u.OutputTokens)
		a, err := format.Parse(t.Chat.Format, r.Text)
		if err == nil {
			a.Raw = r.Text // as llm.Ask sets it: stages' compatibility parses read it
		}
		if err != nil {
			// Asked again alone, with repairs; its usage is still counted.
			out.Choices[i] = &Result{Raw: r.Text, Usage: u, Attempts: []Attempt{{Raw: r.Text, Status: r.Status}}, Synthetic: c.Synthetic()}
			continue
		}
		out.Choices[i] = &Result{Answer: a, Raw: r.Text, Reasoning: r.Reasoning, ServedModel: r.Model,
			Fingerprint: r.SystemFingerprint, Usage: u, Attempts: []Attempt{{Raw: r.Text, Status: r.Status}},
			Synthetic: c.Synthetic()}
	}
	return out, nil
}
