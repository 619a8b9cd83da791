// Package batchexec is the executor of a run whose providers set batch =
// true: their chat calls go through the provider's Batch API
// (stages/llm/batch) in rounds, at the batch price, and every other call
// goes through the engine's LocalExecutor as before. See
// stages/llm/batch/DESIGN.md for the plan this follows.
//
// A batch task's Execute runs LocalExecutor.Execute with the provider's
// client replaced by a lane client, whose Complete does not send the
// request: it registers it with the provider's lane and blocks. So the
// Result is made exactly as for a synchronous call (llm.Ask, its repairs
// and refusal re-asks, the parse, the attempts), and a re-ask is simply a
// request of the next round. The lane closes a round when the engine says
// nothing more can come (executor.Rounds: Quiet) or the round is full,
// submits it, waits for its batches, and hands each Complete its answer.
//
// Answers are handed over before they are durable (the engine writes a
// task's record after Execute returns), so the lanes keep their
// submissions open in the journal (batch.Options.DeferDone) until Close,
// called once the run's records are written: a run killed before that
// collects the same answers again from the provider, never asking twice.
package batchexec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/batch"
	"github.com/ideaflow/ideaflow/stages/pricing"
)

// Options configure an Executor.
type Options struct {
	// Dir holds the lanes' journals (JournalPath); the CLI uses
	// <cache-dir>/batches.
	Dir string
	// Detach: never wait for a running batch. A round is submitted and
	// polled once; when the only tasks left are those of running batches,
	// OnDetach is called (the CLI cancels the run) and they return the
	// context's error: the run exits, the batches run on, and a later run
	// collects them.
	Detach   bool
	OnDetach func()
	// LLM are the options of every client (the logger is added).
	LLM []llm.Option
	// Clock paces polling (nil: the real clock); NewID names submissions
	// (nil: random). Tests set both.
	Clock llm.Clock
	NewID func() string
}

// MaxBatchRetries is how many later rounds a line that failed transiently
// is asked again in, under batch_retry = "batch", before its node fails.
const MaxBatchRetries = 2

// Executor sends batch providers' chat calls in rounds and the rest
// through a LocalExecutor.
type Executor struct {
	local *executor.LocalExecutor
	lanes map[string]*lane
	o     Options
	log   zerolog.Logger

	stillMu  sync.Mutex
	still    func() bool
	detached atomic.Bool
}

// IsBatch reports whether a provider block sets batch = true.
func IsBatch(p llm.Provider) bool {
	v, _ := p.Get("batch")
	on, _ := v.(bool)
	return on
}

// New is an executor for a run's providers.
func New(providers map[string]llm.Provider, log zerolog.Logger, o Options) *Executor {
	x := &Executor{local: executor.NewLocalExecutor(providers, log, o.LLM...), lanes: map[string]*lane{}, o: o, log: log}
	for name, p := range providers {
		if IsBatch(p) {
			x.lanes[name] = newLane(x, p)
		}
	}
	return x
}

// Any reports whether some provider sets batch = true: without one the
// LocalExecutor alone serves.
func Any(providers map[string]llm.Provider) bool {
	for _, p := range providers {
		if IsBatch(p) {
			return true
		}
	}
	return false
}

// JournalPath is where a provider's batch journal lives in dir: one per
// provider name and endpoint (base URL and key variable), since batches
// are listed per account.
func JournalPath(dir string, p llm.Provider) string {
	sum := sha256.Sum256([]byte(strings.TrimRight(p.BaseURL, "/") + "\x00" + p.APIKeyEnv))
	return filepath.Join(dir, p.Name+"-"+hex.EncodeToString(sum[:4])+".journal")
}

// Batched is executor.Rounds.Batched.
func (x *Executor) Batched(provider string) bool { return x.lanes[provider] != nil }

// Quiet is executor.Rounds.Quiet: every lane looks at its round again.
func (x *Executor) Quiet(still func() bool) {
	x.stillMu.Lock()
	x.still = still
	x.stillMu.Unlock()
	for _, l := range x.lanes {
		l.wake()
	}
}

func (x *Executor) quiet() bool {
	x.stillMu.Lock()
	f := x.still
	x.stillMu.Unlock()
	return f != nil && f()
}

// Concurrency is, for a batch provider, its round size: the scheduler then
// hands every ready call of it at once. Else the LocalExecutor's.
func (x *Executor) Concurrency(provider string) int {
	if l := x.lanes[provider]; l != nil {
		return l.max
	}
	return x.local.Concurrency(provider)
}

// BatchesSamples: a batch provider's samples go as lines of their own.
func (x *Executor) BatchesSamples(provider string) bool {
	return x.lanes[provider] == nil && x.local.BatchesSamples(provider)
}

// Detached reports whether the run was detached with batches in flight.
func (x *Executor) Detached() bool { return x.detached.Load() }

// Execute runs a task: a batch provider's chat task through its lane,
// anything else through the LocalExecutor.
func (x *Executor) Execute(ctx context.Context, t *executor.Task) (*executor.Result, error) {
	l := x.lanes[t.Provider]
	if l == nil {
		return x.local.Execute(ctx, t)
	}
	if err := l.start(); err != nil { // before the LocalExecutor makes a client of its own
		return nil, err
	}
	if t.Chat == nil {
		return x.local.Execute(ctx, t) // services go synchronously, through the lane client
	}
	tc := &taskCall{key: t.Key}
	res, err := x.local.Execute(context.WithValue(ctx, taskKey{}, tc), t)
	usage, obtained := tc.account(t.Price, l.name)
	if res != nil {
		res.Usage.CostUSD, res.Usage.CachedTokens, res.Obtained = usage.CostUSD, usage.CachedTokens, obtained
	}
	var ee *executor.ExecError
	if errors.As(err, &ee) {
		ee.Usage.CostUSD, ee.Usage.CachedTokens = usage.CostUSD, usage.CachedTokens
	}
	return res, err
}

// Close records every collected submission done (the run's records are
// durable once Run returned) and closes the journals. Call it after Run,
// unless the run failed to write the cache: then the next run collects
// the answers again.
func (x *Executor) Close(durable bool) error {
	var errs []error
	for _, l := range x.lanes {
		errs = append(errs, l.close(durable))
	}
	return errors.Join(errs...)
}

// Open lists each batch lane's open submissions, by provider (for the
// CLI's summary after a detached run).
func (x *Executor) Open() map[string][]batch.Submission {
	out := map[string][]batch.Submission{}
	for name, l := range x.lanes {
		if s := l.open(); len(s) > 0 {
			out[name] = s
		}
	}
	return out
}

// taskKey carries a batch task's taskCall to the lane client.
type taskKey struct{}

// taskCall is one batch task's completions: how many were asked (a
// re-ask's custom_id is numbered) and how each was obtained, to price it.
type taskCall struct {
	key   string
	mu    sync.Mutex
	asked int
	done  []completion
}

type completion struct {
	usage   llm.Usage
	mode    pricing.Mode
	batchID string
}

// customID is the custom_id of the task's nth request: the node key for
// the first (a batch answer is found by the key it is cached under), the
// first 64 hex digits of sha256(key, n) for a re-ask, a length and
// alphabet every batch API accepts.
func customID(key string, n int) string {
	if n == 0 {
		return key
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00re-ask %d", key, n))
	return hex.EncodeToString(sum[:])
}

func (tc *taskCall) next() string {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	id := customID(tc.key, tc.asked)
	tc.asked++
	return id
}

func (tc *taskCall) add(c completion) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.done = append(tc.done, c)
}

// account prices the task's completions, each at its mode's rates with its
// cached tokens, and says how they were obtained.
func (tc *taskCall) account(p stages.Price, provider string) (executor.Usage, string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var u executor.Usage
	var ids []string
	seen := map[string]bool{}
	syncs := 0
	for _, c := range tc.done {
		u.CostUSD += pricing.Cost(p, c.usage, c.mode)
		u.CachedTokens += c.usage.CachedTokens
		if c.mode == pricing.Sync {
			syncs++
		} else if !seen[c.batchID] {
			seen[c.batchID] = true
			ids = append(ids, c.batchID)
		}
	}
	if len(ids) == 0 {
		return u, ""
	}
	sort.Strings(ids)
	s := fmt.Sprintf("batch %s of provider %s", strings.Join(ids, ", "), provider)
	if len(ids) > 1 {
		s = "batches " + s[len("batch "):]
	}
	if syncs > 0 {
		s += fmt.Sprintf(" (%d of %d requests asked synchronously)", syncs, len(tc.done))
	}
	return u, s
}

// pollFirst is the lane's first poll wait, from batch_poll_seconds.
func pollFirst(p llm.Provider) time.Duration {
	v, _ := p.Get("batch_poll_seconds")
	s, _ := v.(float64)
	if s <= 0 {
		s = batch.DefaultPollFirst.Seconds()
	}
	return time.Duration(s * float64(time.Second))
}

func stringSetting(p llm.Provider, name string) string {
	v, _ := p.Get(name)
	s, _ := v.(string)
	return s
}
