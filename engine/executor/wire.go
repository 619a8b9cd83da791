package executor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// Transport carries one encoded task to an executor elsewhere and brings
// its encoded result back (Serve's output). An error is the transport's
// own (the worker could not be reached), never the task's: a task's
// failure comes back inside the result.
type Transport func(ctx context.Context, task []byte) ([]byte, error)

// Local is what a wire executor reads from the coordinator's own provider
// settings: the settings it puts in each task, and the in-flight bound
// the scheduler keeps.
type Local interface {
	Settings(provider string) (llm.Provider, bool)
	Concurrency(provider string) int
}

// Wire is an executor that runs every task elsewhere: it encodes the task
// as JSON (with its provider's settings and its context's deadline), hands
// it to a Transport and decodes the Result, a failure envelope included.
// Over an in-process transport to a second LocalExecutor (ServeWith) it is
// the JSON seam's test; over a queue it is a fleet of workers.
type Wire struct {
	send          Transport
	local         Local
	keysElsewhere bool
}

// RemoteKeys is implemented by an Executor whose calls may read their
// providers' secrets on other machines (a fleet of workers): the process
// running the engine then needs none, and a run does not refuse a
// provider whose key it lacks (a worker that lacks it fails the task,
// saying so).
type RemoteKeys interface {
	KeysElsewhere() bool
}

// WithKeysElsewhere marks w's tasks as run where their keys are read, not
// in this process (see RemoteKeys); it returns w.
func (w *Wire) WithKeysElsewhere() *Wire { w.keysElsewhere = true; return w }

func (w *Wire) KeysElsewhere() bool { return w.keysElsewhere }

// NewWire sends tasks over send; local gives the providers' settings.
func NewWire(send Transport, local Local) *Wire { return &Wire{send: send, local: local} }

func (w *Wire) Concurrency(provider string) int { return w.local.Concurrency(provider) }

// BatchesSamples forwards to the local settings: the worker asks for n
// choices exactly when a local executor would.
func (w *Wire) BatchesSamples(provider string) bool {
	if sb, ok := w.local.(SampleBatcher); ok {
		return sb.BatchesSamples(provider)
	}
	return false
}

func (w *Wire) Execute(ctx context.Context, t *Task) (*Result, error) {
	moved := *t
	if moved.Settings == nil {
		if p, ok := w.local.Settings(t.Provider); ok {
			moved.Settings = &p
		}
	}
	if d, ok := ctx.Deadline(); ok && (moved.Deadline.IsZero() || d.Before(moved.Deadline)) {
		moved.Deadline = d
	}
	b, err := json.Marshal(&moved)
	if err != nil {
		return nil, fmt.Errorf("encoding task %s: %w", t.Address, err)
	}
	out, err := w.send(ctx, b)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &ExecError{Err: ctx.Err()}
		}
		return nil, fmt.Errorf("sending task %s: %w", t.Address, err)
	}
	var r Result
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("decoding the result of task %s: %w", t.Address, err)
	}
	return &r, nil // a failure in r.Error: the engine settles it (Settle)
}

// Serve is a worker's side of the wire: it decodes one task, runs it on ex
// and encodes the outcome, a failure as its envelope. It never fails: a
// task it cannot read comes back as a call_failed result.
func Serve(ctx context.Context, ex Executor, task []byte) []byte {
	var t Task
	var r *Result
	if err := json.Unmarshal(task, &t); err != nil {
		r = Envelope(nil, fmt.Errorf("decoding a task: %w", err))
	} else {
		r = Envelope(ex.Execute(ctx, &t))
	}
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(Envelope(nil, fmt.Errorf("encoding the result of task %s: %w", t.Address, err)))
	}
	return b
}

// ServeWith is the in-process transport to ex: every task and result still
// goes through JSON, as over a network.
func ServeWith(ex Executor) Transport {
	return func(ctx context.Context, task []byte) ([]byte, error) { return Serve(ctx, ex, task), nil }
}
