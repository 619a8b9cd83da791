package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// A failure crosses a wire as JSON and comes back as an error the engine
// reads as it reads the original: the same text, the same kind, the same
// errors.Is / errors.As answers, the same raw answer, attempts and usage.
func TestFailureRoundTrips(t *testing.T) {
	api := &llm.APIError{Provider: "p", Status: 401, Code: "invalid_api_key", Message: "bad key", Attempts: 1}
	usage := Usage{InputTokens: 10, OutputTokens: 3, CostUSD: 0.5, Attempts: 2}
	attempts := []Attempt{{Raw: "nope", Status: 200}, {Raw: "still no", Status: 200, Repair: true}}
	cases := []struct {
		name          string
		err           error
		kind          Kind
		unavailable   bool
		cancelled     bool
		deadline      bool
		budget        bool
		wantAPIStatus int
	}{
		{"unavailable", &ExecError{Err: &llm.UnavailableError{Provider: "p", Reason: "credentials refused", Cause: api}},
			KindProviderUnavailable, true, false, false, false, 401},
		{"unavailable wrapped", fmt.Errorf("asking: %w", &llm.UnavailableError{Provider: "p", Reason: "quota exhausted", Cause: api}),
			KindProviderUnavailable, true, false, false, false, 401},
		{"api error", &ExecError{Err: &llm.APIError{Provider: "p", Status: 400, Message: "context too long"}},
			KindCallFailed, false, false, false, false, 400},
		{"unparseable", &ExecError{Err: &llm.ParseError{Raw: "still no", Err: errors.New("found no ranking"), Attempts: 2}, Raw: "still no", Attempts: attempts, Usage: usage},
			KindUnparseable, false, false, false, false, 0},
		{"cancelled", &ExecError{Err: context.Canceled}, KindCancelled, false, true, false, false, 0},
		{"deadline", fmt.Errorf("waiting: %w", context.DeadlineExceeded), KindCancelled, false, false, true, false, 0},
		{"budget", fmt.Errorf("worker: %w", ErrBudget), KindBudget, false, false, false, true, 0},
		{"plain", errors.New(`no provider "x"`), KindCallFailed, false, false, false, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(Envelope(nil, c.err))
			if err != nil {
				t.Fatal(err)
			}
			var r Result
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if r.Error == nil || r.Error.Kind != c.kind {
				t.Fatalf("envelope %s: kind %v, want %s", b, r.Error, c.kind)
			}
			res, got := Settle(&r, nil)
			if res != nil || got == nil {
				t.Fatalf("Settle = %v, %v", res, got)
			}
			if got.Error() != c.err.Error() {
				t.Errorf("text %q, want %q", got.Error(), c.err.Error())
			}
			checks := []struct {
				what      string
				got, want bool
			}{
				{"ErrProviderUnavailable", errors.Is(got, llm.ErrProviderUnavailable), errors.Is(c.err, llm.ErrProviderUnavailable)},
				{"context.Canceled", errors.Is(got, context.Canceled), errors.Is(c.err, context.Canceled)},
				{"context.DeadlineExceeded", errors.Is(got, context.DeadlineExceeded), errors.Is(c.err, context.DeadlineExceeded)},
				{"ErrBudget", errors.Is(got, ErrBudget), errors.Is(c.err, ErrBudget)},
			}
			for _, ch := range checks {
				if ch.got != ch.want {
					t.Errorf("errors.Is %s = %v, the original's %v", ch.what, ch.got, ch.want)
				}
			}
			if ch := []bool{c.unavailable, c.cancelled, c.deadline, c.budget}; ch[0] != checks[0].want || ch[1] != checks[1].want ||
				ch[2] != checks[2].want || ch[3] != checks[3].want {
				t.Errorf("the case's expectations disagree with its error: %v", ch)
			}
			var gotAPI *llm.APIError
			if errors.As(got, &gotAPI) != (c.wantAPIStatus != 0) || (gotAPI != nil && gotAPI.Status != c.wantAPIStatus) {
				t.Errorf("errors.As APIError: %+v, want status %d", gotAPI, c.wantAPIStatus)
			}
			var ee, orig *ExecError
			if !errors.As(got, &ee) {
				t.Fatalf("%T is no *ExecError", got)
			}
			if errors.As(c.err, &orig) && (ee.Raw != orig.Raw || !reflect.DeepEqual(ee.Attempts, orig.Attempts) || ee.Usage != orig.Usage) {
				t.Errorf("raw %q attempts %+v usage %+v, want %q %+v %+v", ee.Raw, ee.Attempts, ee.Usage, orig.Raw, orig.Attempts, orig.Usage)
			}
			var pe *llm.ParseError
			if errors.As(got, &pe) != (c.kind == KindUnparseable) || (pe != nil && (pe.Raw != "still no" || pe.Attempts != 2)) {
				t.Errorf("ParseError: %+v", pe)
			}
		})
	}
}

// A result without a failure settles as itself; a task's deadline reaches
// the executor that runs it.
func TestSettleAndDeadline(t *testing.T) {
	r := &Result{Raw: "ok"}
	if got, err := Settle(r, nil); got != r || err != nil {
		t.Fatalf("Settle(ok) = %v, %v", got, err)
	}
	plain := errors.New("x")
	if got, err := Settle(nil, plain); got != nil || err != plain {
		t.Fatalf("Settle(err) = %v, %v", got, err)
	}
	providers := map[string]llm.Provider{"mock": {Name: "mock", Kind: "mock", Seed: 1, MaxRetries: -1, RepairAttempts: -1}}
	local := NewLocalExecutor(providers, zeroLog())
	var seen *Task
	wire := NewWire(func(ctx context.Context, b []byte) ([]byte, error) {
		seen = &Task{}
		if err := json.Unmarshal(b, seen); err != nil {
			return nil, err
		}
		return Serve(ctx, NewLocalExecutor(nil, zeroLog()), b), nil
	}, local)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: "Give one idea."}}, Format: format.Spec{Kind: format.Ideas, N: 1}}
	res, err := Settle(wire.Execute(ctx, &Task{Key: "k", Address: "a", Provider: "mock", Chat: &req}))
	if err != nil || res.Answer == nil {
		t.Fatalf("through the wire: %v, %v", res, err)
	}
	if d, _ := ctx.Deadline(); seen.Deadline.IsZero() || !seen.Deadline.Equal(d) || seen.Settings == nil || seen.Settings.Name != "mock" {
		t.Errorf("the task went out with deadline %v and settings %+v", seen.Deadline, seen.Settings)
	}
	// A deadline already past: the worker gives up, and says so in kind.
	past := &Task{Key: "k", Address: "a", Provider: "mock", Chat: &req, Deadline: time.Now().Add(-time.Second)}
	b, _ := json.Marshal(past)
	var out Result
	if err := json.Unmarshal(Serve(context.Background(), local, b), &out); err != nil {
		t.Fatal(err)
	}
	if out.Error == nil || out.Error.Kind != KindCancelled || !out.Error.Deadline {
		t.Errorf("a task past its deadline: %+v", out.Error)
	}
}

// A worker that has a provider of the task's name refuses a task whose
// settings for it differ: it would otherwise answer from another endpoint
// than the one the task's key names.
func TestWorkerRefusesOtherSettings(t *testing.T) {
	mine := llm.Provider{Name: "mock", Kind: "mock", Seed: 1, MaxRetries: -1, RepairAttempts: -1}
	theirs := mine
	theirs.Seed = 2
	ex := NewLocalExecutor(map[string]llm.Provider{"mock": mine}, zeroLog())
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: "Give one idea."}}, Format: format.Spec{Kind: format.Ideas, N: 1}}
	_, err := ex.Execute(context.Background(), &Task{Key: "k", Address: "a", Provider: "mock", Chat: &req, Settings: &theirs})
	if err == nil || FailureOf(err).Kind != KindCallFailed {
		t.Fatalf("err = %v", err)
	}
	if _, err := ex.Execute(context.Background(), &Task{Key: "k", Address: "a", Provider: "mock", Chat: &req, Settings: &mine}); err != nil {
		t.Fatalf("same settings: %v", err)
	}
}

func zeroLog() zerolog.Logger { return zerolog.Nop() }
