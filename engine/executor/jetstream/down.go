package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// A provider one worker found unavailable (its breaker tripped: a refused
// key, an exhausted quota) is unavailable to every worker: the failure is
// shared in the limits bucket under the provider's identity (as its rate
// limits are), and a worker asked a task of that provider within
// RetryUnavailableAfter of the trip answers with that failure without a
// request, as a local run's one client does. The count of failures
// before a trip is shared too (SharedLimits' "health" key): every
// worker's breaker trips on the fleet's count.

// downRecord is a provider declared unavailable, as the bucket holds it.
type downRecord struct {
	At      time.Time         `json:"at"`
	Failure *executor.Failure `json:"failure"`
}

func downKey(p llm.Provider) string { return "down." + identity(p) }

// settingsOf is the provider settings an encoded task carries, if any.
func settingsOf(task []byte) (llm.Provider, bool) {
	var t struct {
		Settings *llm.Provider `json:"settings"`
	}
	if json.Unmarshal(task, &t) != nil || t.Settings == nil {
		return llm.Provider{}, false
	}
	return *t.Settings, true
}

// sharedDown is the result of a task to a provider the fleet found
// unavailable within RetryUnavailableAfter: the trip's failure, without
// its raw answer, attempts and usage (this task made no request).
func (w *Worker) sharedDown(ctx context.Context, task []byte) ([]byte, bool) {
	p, ok := settingsOf(task)
	if !ok {
		return nil, false
	}
	e, err := w.q.Limits.Get(ctx, downKey(p))
	if err != nil {
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			w.log.Warn().Err(err).Msg("reading whether the provider is down")
		}
		return nil, false
	}
	var d downRecord
	if json.Unmarshal(e.Value(), &d) != nil || d.Failure == nil || time.Since(d.At) >= w.RetryUnavailableAfter {
		return nil, false
	}
	f := *d.Failure
	f.Raw, f.Attempts, f.Usage = "", nil, executor.Usage{}
	b, err := json.Marshal(&executor.Result{Error: &f})
	return b, err == nil
}

// shareDown records that the provider of task was found unavailable.
func (w *Worker) shareDown(ctx context.Context, task, result []byte) {
	p, ok := settingsOf(task)
	if !ok {
		return
	}
	var r executor.Result
	if json.Unmarshal(result, &r) != nil || r.Error == nil {
		return
	}
	b, err := json.Marshal(downRecord{At: time.Now(), Failure: r.Error})
	if err == nil {
		_, err = w.q.Limits.Put(ctx, downKey(p), b)
	}
	if err != nil {
		w.log.Warn().Err(err).Msg("telling the other workers the provider is down")
	}
}
