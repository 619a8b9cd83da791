package executor

import (
	"context"
	"errors"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// Kind says how a task failed, in terms the engine acts on: the engine reads
// Go errors (errors.Is(err, llm.ErrProviderUnavailable), *ExecError), and a
// failure that crossed a wire as JSON must lead to the same decisions as the
// error it was made from.
type Kind string

const (
	// KindProviderUnavailable: no later call to the provider can succeed in
	// this run (refused credentials, an exhausted quota, a tripped breaker).
	KindProviderUnavailable Kind = "provider_unavailable"
	// KindCallFailed: the call failed (an HTTP error after its retries, a
	// provider the executor cannot serve, a task it cannot read).
	KindCallFailed Kind = "call_failed"
	// KindUnparseable: answers came but none parsed, repairs included.
	KindUnparseable Kind = "unparseable"
	// KindCancelled: the task's context was cancelled or its deadline passed.
	KindCancelled Kind = "cancelled"
	// KindBudget: the executor refused the task for a spending limit.
	KindBudget Kind = "budget"
)

// ErrBudget is matched (errors.Is) by the error of a task an executor
// refused for a spending limit: the engine skips its node for the budget
// rather than failing it.
var ErrBudget = errors.New("the budget is spent")

// Failure is a failed task as plain data: Result.Error. It carries what the
// engine records of a failure (the message, the last raw answer, the
// attempts and what they cost) and what it decides on (the kind, and for a
// provider's error the fields of llm.APIError), so Err rebuilds an error the
// engine treats exactly as the one FailureOf was given.
type Failure struct {
	Kind     Kind      `json:"kind"`
	Message  string    `json:"message"` // the error's text, as the local error says it
	Raw      string    `json:"raw,omitempty"`
	Attempts []Attempt `json:"attempts,omitempty"`
	Usage    Usage     `json:"usage"`
	// API is the provider's error under the failure, when there was one.
	API *APIFailure `json:"api,omitempty"`
	// Reason is why a provider was declared unavailable; for an
	// unparseable answer, why the last one did not parse.
	Reason string `json:"reason,omitempty"`
	// ParseAttempts is the model calls an unparseable answer took.
	ParseAttempts int  `json:"parse_attempts,omitempty"`
	Deadline      bool `json:"deadline,omitempty"` // cancelled: by the task's deadline
}

// APIFailure is llm.APIError as plain data (its message is scrubbed of
// secrets when the error is built, before it gets here).
type APIFailure struct {
	Provider  string `json:"provider"`
	Status    int    `json:"status,omitempty"`
	Code      string `json:"code,omitempty"`
	Message   string `json:"message,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
	Attempts  int    `json:"attempts,omitempty"`
}

// FailureOf turns a task's error into its envelope; nil for nil.
func FailureOf(err error) *Failure {
	if err == nil {
		return nil
	}
	f := &Failure{Kind: KindCallFailed, Message: err.Error()}
	var ee *ExecError
	if errors.As(err, &ee) {
		f.Raw, f.Attempts, f.Usage = ee.Raw, ee.Attempts, ee.Usage
	}
	var api *llm.APIError
	if errors.As(err, &api) {
		f.API = &APIFailure{Provider: api.Provider, Status: api.Status, Code: api.Code, Message: api.Message,
			Retryable: api.Retryable, Attempts: api.Attempts}
	}
	var un *llm.UnavailableError
	var pe *llm.ParseError
	switch {
	case errors.Is(err, context.Canceled):
		f.Kind = KindCancelled
	case errors.Is(err, context.DeadlineExceeded):
		f.Kind, f.Deadline = KindCancelled, true
	case errors.As(err, &un):
		f.Kind, f.Reason = KindProviderUnavailable, un.Reason
		if f.API == nil { // a breaker always has its cause; keep Err total anyway
			f.API = &APIFailure{Provider: un.Provider}
		}
	case errors.Is(err, llm.ErrProviderUnavailable):
		f.Kind = KindProviderUnavailable
	case errors.Is(err, ErrBudget):
		f.Kind = KindBudget
	case errors.As(err, &pe):
		f.Kind, f.ParseAttempts = KindUnparseable, pe.Attempts
		if pe.Err != nil {
			f.Reason = pe.Err.Error()
		}
		if f.Raw == "" {
			f.Raw = pe.Raw
		}
	}
	return f
}

// Err is the error the failure was made from, as the engine reads it: an
// *ExecError (raw answer, attempts, usage) whose text is the original's and
// whose chain holds the typed error its kind stands for, so errors.Is and
// errors.As decide as they did on the worker.
func (f *Failure) Err() error {
	var api *llm.APIError
	if f.API != nil {
		api = &llm.APIError{Provider: f.API.Provider, Status: f.API.Status, Code: f.API.Code, Message: f.API.Message,
			Retryable: f.API.Retryable, Attempts: f.API.Attempts}
	}
	var cause error
	switch f.Kind {
	case KindProviderUnavailable:
		if api == nil {
			api = &llm.APIError{}
		}
		cause = &llm.UnavailableError{Provider: api.Provider, Reason: f.Reason, Cause: api}
	case KindCancelled:
		cause = context.Canceled
		if f.Deadline {
			cause = context.DeadlineExceeded
		}
	case KindBudget:
		cause = ErrBudget
	case KindUnparseable:
		cause = &llm.ParseError{Raw: f.Raw, Err: errors.New(f.Reason), Attempts: f.ParseAttempts}
	default:
		if api != nil {
			cause = api
		}
	}
	return &ExecError{Err: &RemoteError{Kind: f.Kind, Message: f.Message, cause: cause},
		Raw: f.Raw, Attempts: f.Attempts, Usage: f.Usage}
}

// RemoteError is a failure rebuilt from its envelope: its text is the
// original error's, its chain the typed error of its kind.
type RemoteError struct {
	Kind    Kind
	Message string
	cause   error
}

func (e *RemoteError) Error() string { return e.Message }
func (e *RemoteError) Unwrap() error { return e.cause }

// Envelope is the outcome of Execute as one value, for a wire: the result,
// or a Result carrying the failure (Error set, the rest empty).
func Envelope(r *Result, err error) *Result {
	if err != nil {
		return &Result{Error: FailureOf(err)}
	}
	if r == nil {
		return &Result{Error: &Failure{Kind: KindCallFailed, Message: "the executor returned no result"}}
	}
	return r
}

// Settle is the outcome of Execute as the engine reads it: a Result that
// carries a failure becomes that failure's error. Every engine call site
// reads an executor's outcome through it, so an executor may return either
// form.
func Settle(r *Result, err error) (*Result, error) {
	if err == nil && r != nil && r.Error != nil {
		return nil, r.Error.Err()
	}
	return r, err
}
