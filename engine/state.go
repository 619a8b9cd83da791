package engine

import (
	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Status is what became of a node in a plan or a run.
type Status uint8

const (
	StatusPending Status = iota
	StatusCached         // served from the cache (or a dataset item)
	StatusRan            // computed or answered in this run
	StatusFailed         // failed in this run; recorded; a later run retries it
	StatusSkipped        // not run: an input failed, the run was interrupted, or the budget ran out
	StatusToRun          // plan: must run
)

func (s Status) String() string {
	return [...]string{"pending", "cached", "ran", "failed", "skipped", "to run"}[s]
}

// nodeState is the per-node result of a walk.
type nodeState struct {
	status Status
	known  bool // output and digest are known (cached, ran, or computed during plan)
	isCall bool // a model node (known once prepared; plan guesses for unprepared nodes)
	// isService marks a service node (embeddings, literature search...).
	isService bool
	// dedup marks a node answered by another node's call with the same key
	// in this run: it ran, but made no call of its own.
	dedup  bool
	output []byte
	digest [32]byte
	key    string
	why    reason // plan: why it must run; run: why it failed or was skipped
	// cost is what the node's calls used, or the plan's estimate of it; nil
	// for a node that made and will make no call (every node a warm run
	// settles from its memo). Apart so a warm node's state is 136 bytes
	// smaller: 140 MB at 1M nodes. Read it with costs, write with costsW.
	cost *nodeCost
	// earlier marks a call answered by a queue's results store before this
	// run asked (executor.Result.Earlier): its usage is counted apart.
	earlier  bool
	provider string
	// answerer is who answered a call or service node, as its record (or
	// the memo written with it) says; in a plan, for a node to run, who
	// will be asked. nil for compute nodes.
	answerer *llm.Answerer
	// prov is who answered the calls the node's output rests on,
	// transitively: its inputs' provenance and its own answerer
	// (provenance.go). Read from records, never from the configuration.
	prov        *provenance
	servedModel string
	// fingerprint is the record's system fingerprint, like servedModel
	// read from the record (or its memo): the lock names both without
	// reading a record per call.
	fingerprint string
	wantModel   string
	// dropped marks an output that says its item was dropped ("dropped":
	// true), with the reason in the words of the stage that dropped it,
	// numbers generalised so reasons can be counted.
	dropped bool
	dropWhy string
	// answerKey is a call node's answer key (answerKeyOf), "" when its key
	// is its answer's; reused marks a node whose output was derived from
	// the answer record under it, with no call.
	answerKey string
	reused    bool
	// answerSender marks the node that sends the call for its answer key
	// in this run; others with the key wait for its answer (answerFlight).
	answerSender bool
	// choice marks a node answered (or refused) as one choice of an
	// n-choices request: its sample rode on a request it shares.
	choice bool
}

// nodeCost is the part of a node's state about what its calls cost.
type nodeCost struct {
	usage cache.Usage
	// refused is the usage of the node's choice in an n-choices request
	// that did not parse (it was then asked alone).
	refused cache.Usage
	// answered counts the completions a failed call got (answers its
	// format refused, repair re-asks included): asked for and paid for.
	answered int
	// estimate is the plan's token estimate for a model node that must run.
	estIn, estOut int64
	estCost       float64
	estApprox     bool // the input estimate is not a tokenizer count
}

// noCost is what costs reads for a node with none. Never written.
var noCost nodeCost

// costs is the node's cost, for reading (a shared zero when it has none).
func (st *nodeState) costs() *nodeCost {
	if st.cost == nil {
		return &noCost
	}
	return st.cost
}

// costsW is the node's cost, for writing (made when it has none).
func (st *nodeState) costsW() *nodeCost {
	if st.cost == nil {
		st.cost = &nodeCost{}
	}
	return st.cost
}
