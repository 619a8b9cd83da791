package engine

// reasonKind classifies why a plan must run a node, why a run failed it or
// why it skipped it. Summaries count by kind; the detail is for people.
type reasonKind uint8

const (
	reasonNone reasonKind = iota

	// Plan: why a node must run.
	planNew          // nothing was computed at this address before
	planChanged      // detail: the key parts that differ from the last key at this address
	planEvicted      // the last key at this address is no longer in the cache
	planFailedLast   // detail: last run's error; the node will be retried
	planUpstreamRuns // an input must run first, so the key is not known yet
	// planAnswerer: the key last computed at this address differs only in
	// who answers (detail: the explanation; reason.from: the old answerer):
	// the cached answer is another answerer's, and the new one is asked.
	planAnswerer
	// planOldScheme: the key last computed at this address was made by the
	// key scheme before v2, which did not key answers by who gave them.
	planOldScheme

	// Run: why a node failed.
	failInput   // detail: which input could not be read
	failPrepare // detail: the stage's error while preparing the work
	failCall    // detail: the model or service call's error
	failOutput  // detail: the stage could not use an accepted answer
	failCache   // detail: the cache write error
	failConfig  // detail: no client for the provider, an unserved operation

	// Run: why a node was skipped.
	skipInput       // detail: the address of the failed or skipped input
	skipInterrupted // the run was interrupted before the node was dispatched
	skipBudget      // --max-cost would have been exceeded
	skipStopped     // the run stopped before reaching the node (a cache write failed)
	skipUnavailable // detail: why the node's provider can serve no more calls this run
)

// reason is a typed reason with its human detail.
type reason struct {
	kind   reasonKind
	detail string
	from   string // planAnswerer: who answered the cached record
}

func why(k reasonKind, detail string) reason { return reason{kind: k, detail: detail} }

// String is what plan and run print.
func (r reason) String() string {
	switch r.kind {
	case planNew:
		return "new"
	case planChanged, planAnswerer:
		return r.detail
	case planOldScheme:
		return oldSchemeReason
	case planEvicted:
		return "evicted from cache"
	case planFailedLast:
		return "failed last run (" + shorten(r.detail, 60) + "); will retry"
	case planUpstreamRuns:
		return "upstream will run"
	case failInput:
		return "load input " + r.detail
	case failPrepare:
		return "prepare: " + r.detail
	case failOutput:
		return "answer not usable: " + r.detail
	case failCache:
		return "write cache: " + r.detail
	case skipInput:
		return "input failed or was skipped: " + r.detail
	case skipInterrupted:
		return "interrupted"
	case skipBudget:
		return "budget exhausted (--max-cost)"
	case skipStopped:
		return "run stopped: " + r.detail
	case skipUnavailable:
		return "provider unavailable: " + r.detail
	}
	return r.detail
}

// class is the summary's bucket for a skip reason.
func (r reason) class() string {
	switch r.kind {
	case reasonNone:
		return "not reached"
	case skipInput:
		return "input failed or skipped"
	case skipStopped:
		return "run stopped"
	case skipUnavailable:
		return "provider unavailable"
	}
	return r.String()
}
