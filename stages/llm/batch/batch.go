// Package batch sends chat requests through a provider's batch interface
// (OpenAI's Batch API, through go-openai): it writes the requests as batch
// input files (custom_id = the node key), uploads and submits them,
// polls with back-off, downloads the output and error files, and turns
// each line into the Response a synchronous call would have returned for
// the same reply (llm.BatchAPI: the same decoding and secret masking), or
// into a Failure saying why the line has no answer, for the caller's
// retry policy.
//
// Every submission is recorded in a Journal before each step that could
// make a batch exist, so that a run killed at any point, and started
// again on the same journal, never submits a request twice: it finds the
// batches it had created (by the submission id in their metadata) and
// collects their answers. See Journal and DESIGN.md.
package batch

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm"
)

// The limits of one batch input file, as OpenAI documents them for the
// Batch API ("up to 50,000 requests, and can be up to 200 MB in size"),
// and the one completion window it offers.
const (
	DefaultMaxRequests      = 50_000
	DefaultMaxFileBytes     = 200_000_000 // decimal MB: the smaller reading of "200 MB"
	DefaultCompletionWindow = "24h"
)

// Polling: the first wait after a submission, doubled after every poll
// that found a batch still running, up to the cap. Batches take minutes
// to hours; polling faster buys nothing and spends the batch routes'
// rate limit.
const (
	DefaultPollFirst = 15 * time.Second
	DefaultPollMax   = 10 * time.Minute
)

// DefaultMaxPollErrors is how many polls in a row may fail transiently (no
// reply, 408, 429, 5xx) before Wait gives up; the batches run on at the
// provider meanwhile, and the next Wait (or run) picks them up.
const DefaultMaxPollErrors = 5

// DefaultMaxDownloadBytes caps one output or error file read whole: a full
// input file's answers (50,000 lines of a few kB each) with room to spare.
const DefaultMaxDownloadBytes = 2 << 30

// MetadataKey is the batch metadata entry holding the submission id: how a
// resuming client finds a batch whose creation it never heard answered.
const MetadataKey = "ideaflow_submission"

// Item is one request to send: Key is the node key, the line's custom_id,
// and the key the answer is cached under.
type Item struct {
	Key     string
	Request llm.Request
}

// Result is one line's outcome: a Response, or a Failure.
type Result struct {
	Key        string
	Response   *llm.Response // as Complete would have returned it; Status is the line's status_code, Attempts 1
	Failure    *Failure
	Submission string
	BatchID    string // how the answer was obtained, for `show`
}

// FailureKind says why a line has no answer.
type FailureKind string

const (
	FailLine        FailureKind = "line_error"   // an error object on the line (e.g. request_timeout)
	FailStatus      FailureKind = "status"       // the request's reply was not 2xx
	FailExpired     FailureKind = "expired"      // the batch's window ran out first
	FailCancelled   FailureKind = "cancelled"    // the batch was cancelled first
	FailBatch       FailureKind = "batch_failed" // the batch was refused (validation)
	FailMissing     FailureKind = "missing"      // the batch ended without a line for it
	FailUndecodable FailureKind = "undecodable"  // a 2xx line whose body is no chat completion
	FailTooLarge    FailureKind = "too_large"    // one request over the file size limit: never batched
)

// Failure is a line without an answer.
type Failure struct {
	Kind    FailureKind
	Code    string // the error object's code, if any
	Status  int    // the reply's status_code, for FailStatus
	Message string
}

func (f *Failure) Error() string {
	s := string(f.Kind)
	if f.Status != 0 {
		s += fmt.Sprintf(" %d", f.Status)
	}
	if f.Code != "" {
		s += " " + f.Code
	}
	if f.Message != "" {
		s += ": " + f.Message
	}
	return s
}

// Retryable says whether asking again (in a later batch, or
// synchronously) may answer: lines that never ran or met a transient
// failure. A cancelled line is not: someone cancelled it.
func (f *Failure) Retryable() bool {
	switch f.Kind {
	case FailExpired, FailMissing:
		return true
	case FailLine:
		return f.Code == "request_timeout" || f.Code == "rate_limit_exceeded" || f.Code == "server_error"
	case FailStatus:
		return f.Status == http.StatusTooManyRequests || f.Status >= 500
	}
	return false
}

// Options tune a Client; zero fields take the defaults above.
type Options struct {
	MaxRequests      int   // lines per input file
	MaxFileBytes     int64 // bytes per input file
	CompletionWindow string
	PollFirst        time.Duration
	PollMax          time.Duration
	MaxDownloadBytes int64
	MaxPollErrors    int
	Clock            llm.Clock     // polling waits (tests: llmtest.FakeClock)
	NewID            func() string // submission ids (default: random)
	// DeferDone leaves a submission open once its results are handed over
	// (Submission.Collected) until Finish records it done: for a caller
	// whose sink is not durable by itself (the engine writes a result to
	// the cache after the executor returns it), so that a crash before
	// the write collects the answers again rather than asking again.
	DeferDone bool
}

func (o *Options) defaults() {
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.CompletionWindow == "" {
		o.CompletionWindow = DefaultCompletionWindow
	}
	if o.PollFirst <= 0 {
		o.PollFirst = DefaultPollFirst
	}
	if o.PollMax <= 0 {
		o.PollMax = DefaultPollMax
	}
	if o.MaxDownloadBytes <= 0 {
		o.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	if o.MaxPollErrors <= 0 {
		o.MaxPollErrors = DefaultMaxPollErrors
	}
	if o.Clock == nil {
		o.Clock = llm.RealClock
	}
	if o.NewID == nil {
		o.NewID = randomID
	}
}
