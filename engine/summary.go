package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Counts are node counts of a run, overall or for one stage instance.
type Counts struct {
	Total   int `json:"total"`
	Cached  int `json:"cached"`
	Ran     int `json:"ran"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// StageSummary is one stage instance's line of a run summary.
type StageSummary struct {
	Counts
	Drops
	LLMCalls     int     `json:"llm_calls,omitempty"`
	ServiceCalls int     `json:"service_calls,omitempty"`
	Tokens       *Tokens `json:"tokens,omitempty"`
	CostUSD      float64 `json:"cost_usd,omitempty"`
	// Unpriced lists the models without a price block this stage's calls
	// went to: CostUSD sums the priced calls only (see Summary.Unpriced).
	Unpriced []string `json:"unpriced,omitempty"`
}

// Drops count the nodes whose output says their item was dropped (a target
// with too few references), by reason; a reason is empty where the item
// was dropped upstream.
type Drops struct {
	Dropped     int            `json:"dropped,omitempty"`
	DropReasons map[string]int `json:"drop_reasons,omitempty"`
}

func (d *Drops) add(st *nodeState) {
	if !st.dropped {
		return
	}
	d.Dropped++
	why := st.dropWhy
	if why == "" {
		why = "dropped upstream"
	}
	if d.DropReasons == nil {
		d.DropReasons = map[string]int{}
	}
	addDropReason(d.DropReasons, why)
}

// Tokens are token totals.
type Tokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	// Cached is the part of Input the providers served from their prompt
	// caches (priced at the cached-input rate).
	Cached int64 `json:"cached,omitempty"`
}

// ModelUsage is what one model cost in a run.
type ModelUsage struct {
	Calls   int     `json:"calls"`
	Tokens  Tokens  `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	// Unpriced: the model has no price block, so its cost is unknown (the
	// JSON's cost_usd is then null).
	Unpriced bool `json:"unpriced,omitempty"`
}

// ServiceUsage is what one service provider cost in a run.
type ServiceUsage struct {
	Calls   int     `json:"calls"`
	Units   int64   `json:"units"` // tokens (or items) the service billed or the client estimated
	CostUSD float64 `json:"cost_usd"`
	// Unpriced: some of its calls went to a model without a price block
	// (the JSON's cost_usd is then null).
	Unpriced bool `json:"unpriced,omitempty"`
}

// FailedNode is one failure, for the summary.
type FailedNode struct {
	Address string `json:"address"`
	Error   string `json:"error"`
}

// Summary is the result of a run (`run --summary-json`).
// MemoCounts says how many of a run's cached nodes were found by rendering
// their work (no memo, or one written under another memo epoch: another
// key scheme or shared rendering code) and how many of those memos its plan
// rewrote. A warm run after a rebuild that changed no version renders none;
// after one that did, the first run renders and rewrites, the next none.
type MemoCounts struct {
	Rendered  int `json:"rendered"`
	Rewritten int `json:"rewritten"`
}

// EarlierAnswers are calls answered by an earlier coordinator's tasks
// (Summary.Earlier): how many, and what they cost when they were made.
type EarlierAnswers struct {
	Calls   int     `json:"calls"`
	Tokens  Tokens  `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

type Summary struct {
	Nodes Counts `json:"nodes"`
	// Warnings are the layout warnings of instances laid out during the
	// run (once their inputs settled), which loading could not see.
	Warnings hcl.Diagnostics `json:"-"`
	// LLMCalls counts completions asked for (samples), repairs and retries
	// that got an answer included; Requests counts the requests that went
	// out for them. They differ when samples go as n choices of one request
	// (a provider's n_choices): 200 requests, 1,000 samples.
	LLMCalls int `json:"llm_calls"`
	Requests int `json:"requests"`
	// ServiceCalls counts non-chat calls (embeddings, literature search);
	// Services breaks them down by provider.
	ServiceCalls int                     `json:"service_calls"`
	Services     map[string]ServiceUsage `json:"services,omitempty"`
	// Deduplicated counts nodes that ran on another node's call: the same
	// request, sent once.
	Deduplicated int `json:"deduplicated,omitempty"`
	// AnswersReused counts call nodes whose output was derived from an
	// answer stored for the same request under other output settings
	// (Call.KeyParams): no call was made.
	AnswersReused int `json:"answers_reused,omitempty"`
	// Unsaved counts the nodes that ran (deterministic ones, whose records
	// are written behind) but whose records could not be written: a full
	// disk, or a cache opened read-only (run --offline). Their outputs
	// served this run; the next run recomputes them, without a call.
	Unsaved int `json:"unsaved,omitempty"`
	// Unavailable names the providers that could serve no more calls (wrong
	// credentials, exhausted quota, an endpoint that kept failing) and why;
	// their remaining nodes were skipped.
	Unavailable map[string]string `json:"unavailable,omitempty"`
	// Memo says how this run's cached nodes were found (memo.go).
	Memo MemoCounts `json:"memo"`
	// Repaired counts cache records found damaged and recomputed.
	Repaired int     `json:"repaired,omitempty"`
	Tokens   Tokens  `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"` // see Unpriced
	// Earlier counts the call nodes answered by an earlier coordinator:
	// results a queue's store held before this run asked (run --executor
	// nats://..., after a coordinator was killed once its workers had
	// answered, or its cache was lost), as the records read say. Paid for
	// by the run that published them, they are not in LLMCalls, Requests,
	// Tokens or CostUSD (nor in the budget).
	Earlier *EarlierAnswers         `json:"earlier_answers,omitempty"`
	Stages  map[string]StageSummary `json:"stages"`
	Models  map[string]ModelUsage   `json:"models,omitempty"`
	// ServedModels counts, per requested model name, the model names the
	// endpoint said answered (cached and new answers alike). More than one
	// name, or a name other than the requested one, means the endpoint
	// re-routed: cached answers may come from another model than new ones.
	ServedModels    map[string]map[string]int `json:"served_models,omitempty"`
	Failures        []FailedNode              `json:"failures,omitempty"`
	Skipped         map[string]int            `json:"skipped_reasons,omitempty"`
	Interrupted     bool                      `json:"interrupted,omitempty"`
	BudgetExhausted bool                      `json:"budget_exhausted,omitempty"`
	// Synthetic says some result of the run rests on an answer of the
	// mock, as the records read and written say (never what the providers
	// configured suggest).
	Synthetic bool `json:"synthetic,omitempty"`
	// Answered lists who answered the model and service nodes the run
	// holds answers for (cached and new alike), from their records.
	Answered []AnsweredBy `json:"answered,omitempty"`
	Reports  []string     `json:"reports,omitempty"`
	// ResultsDigest digests every node's key and status, in no order (the
	// order nodes are laid out in is not a result: a run lays out the
	// largest graphs as it walks them, see BuildOptions.LayAhead): two runs
	// with the same digest hold the same results (keys name outputs), so a
	// page built from them need not be built again.
	ResultsDigest string `json:"results_digest,omitempty"`
	// Unpriced lists, sorted, the models (addresses) without a price block
	// that this run's calls went to. CostUSD then covers the priced calls
	// only: the JSON says "cost_usd": null (the total is unknown) and gives
	// that sum as "cost_usd_priced", and the CLI prints "cost unknown",
	// never $0.
	Unpriced []string `json:"unpriced,omitempty"`
	// Incomplete says this run left some node undone (interrupted, out of
	// budget, stopped, its provider unavailable): a report over it is
	// partial and is written beside a complete one, never over it. Failed
	// nodes were tried: a report counts them as missing, and is complete.
	Incomplete bool `json:"incomplete,omitempty"`
	// WallSeconds is the whole wall time, from the process's start when the
	// caller gives it; Phases splits it.
	WallSeconds float64 `json:"wall_seconds"`
	// Compacted says the CLI's close of the cache after the run compacted
	// its tables (Phases.Close is how long closing took).
	Compacted bool `json:"compacted,omitempty"`
	// MemosIndexed is how many memos the close wrote to the cache's memo
	// index for the next run's lookups (cache/memoindex.go); 0: none.
	MemosIndexed int    `json:"memos_indexed,omitempty"`
	Phases       Phases `json:"phases"`
}

// AnsweredBy is one answerer and the model and service nodes it answered,
// as their records say.
type AnsweredBy struct {
	Class     string `json:"class"`
	Identity  string `json:"identity,omitempty"`
	Synthetic bool   `json:"synthetic,omitempty"`
	Nodes     int    `json:"nodes"`
	// Models counts, per requested model name, the model names the
	// answerer said answered.
	Models map[string]map[string]int `json:"models,omitempty"`
}

// Name is the answerer as plans and pages name it: "mock seed 7".
func (a AnsweredBy) Name() string {
	return llm.Answerer{Class: a.Class, Identity: a.Identity}.String()
}

// answeredTally counts answered nodes per answerer.
type answeredTally map[llm.Answerer]*AnsweredBy

func (t answeredTally) add(st *nodeState) {
	if st.answerer == nil || !st.known || !(st.isCall || st.isService) {
		return
	}
	a := t[*st.answerer]
	if a == nil {
		a = &AnsweredBy{Class: st.answerer.Class, Identity: st.answerer.Identity, Synthetic: st.answerer.Synthetic}
		t[*st.answerer] = a
	}
	a.Nodes++
	if st.wantModel != "" {
		if a.Models == nil {
			a.Models = map[string]map[string]int{}
		}
		m := a.Models[st.wantModel]
		if m == nil {
			m = map[string]int{}
			a.Models[st.wantModel] = m
		}
		served := st.servedModel
		if served == "" {
			served = st.wantModel
		}
		m[served]++
	}
}

// list is the tally sorted by class, then identity.
func (t answeredTally) list() []AnsweredBy {
	if len(t) == 0 {
		return nil
	}
	out := make([]AnsweredBy, 0, len(t))
	for _, a := range t {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool {
		return answererLess(llm.Answerer{Class: out[i].Class, Identity: out[i].Identity, Synthetic: out[i].Synthetic},
			llm.Answerer{Class: out[j].Class, Identity: out[j].Identity, Synthetic: out[j].Synthetic})
	})
	return out
}

// Phases are the seconds a run spent loading (the experiment, datasets and
// cache), planning, running and writing reports.
type Phases struct {
	Load    float64 `json:"load"`
	Plan    float64 `json:"plan"`
	Run     float64 `json:"run"`
	Reports float64 `json:"reports"`
	// Close is the time the CLI took to close the cache after the run (a
	// compaction after many writes), set by the CLI, which closes the cache
	// before it prints the summary; absent from the run record, which is
	// written before.
	Close float64 `json:"close,omitempty"`
}

// PlanCounts are per-stage plan counts.
type PlanCounts struct {
	Drops
	Total   int            `json:"total"`
	Cached  int            `json:"cached"`
	ToRun   int            `json:"to_run"`
	Reasons map[string]int `json:"reasons,omitempty"`
	// ServedModels lists, for cached model nodes, served model names that differ
	// from the requested name (the endpoint answered with another model).
	ServedModels map[string]int `json:"served_models,omitempty"`
	// Estimate covers this stage's model nodes that must run.
	Estimate *Estimate `json:"estimate,omitempty"`
	// Pending is set when the plan could not lay out or expand the instance
	// fully: its nodes depend on outputs that do not exist yet.
	Pending *Pending `json:"pending,omitempty"`
	// WillFail counts, per reason, the items whose nodes will fail because
	// their dataset record lacks a field the stage needs (a target without
	// an idea), known before any call; items dropped upstream are not
	// counted.
	WillFail map[string]int `json:"will_fail,omitempty"`
}

// Pending describes an instance whose nodes are not all known at plan time.
type Pending struct {
	After      []string `json:"after"`                  // instances that must run first
	Items      int      `json:"items,omitempty"`        // items still to expand (expanding stages)
	MaxPerItem int      `json:"max_per_item,omitempty"` // the stage's bound on nodes per item
	LaidOut    bool     `json:"laid_out"`               // false: laid out only once After is final
	// UpperBound estimates the calls of the items still to expand, at the
	// stage's bound per item: an upper bound, not a forecast.
	UpperBound *Estimate `json:"upper_bound,omitempty"`
}

// Estimate is a plan's estimate of the calls still to make.
type Estimate struct {
	// Unpriced lists the models (addresses) of calls to make that have no
	// price block: CostUSD sums known prices only.
	Unpriced     []string `json:"unpriced,omitempty"`
	LLMCalls     int      `json:"llm_calls"`
	ServiceCalls int      `json:"service_calls,omitempty"`
	TokensInput  int64    `json:"tokens_input"`
	TokensOutput int64    `json:"tokens_output"`
	CostUSD      float64  `json:"cost_usd"`
	// ApproxTokens says some input counts are approximations (4 bytes per
	// token, or prompts not rendered yet); the rest are tokenizer counts.
	ApproxTokens bool `json:"approx_tokens,omitempty"`
	// Choices counts samples that ride along another's request as extra
	// choices (n_choices): in no call count, their input not counted again.
	Choices int `json:"choices,omitempty"`
}

// AnswererChange is a group of nodes a plan will ask anew because their
// cached answers are another answerer's.
type AnswererChange struct {
	// From is who gave the cached answers ("mock seed 7"); "" when they
	// were stored under the previous key scheme (OldScheme), which did not
	// record it.
	From      string `json:"from,omitempty"`
	OldScheme bool   `json:"old_scheme,omitempty"`
	// Provider is the provider block that will be asked, To who it is.
	Provider string `json:"provider"`
	To       string `json:"to"`
	Nodes    int    `json:"nodes"`
}

// PlanSummary is `plan --json`.
type PlanSummary struct {
	Nodes struct {
		Total  int `json:"total"`
		Cached int `json:"cached"`
		ToRun  int `json:"to_run"`
	} `json:"nodes"`
	Estimate Estimate `json:"estimate"`
	// UpperBound adds, for pending expansions, calls at their stages' bounds.
	UpperBound Estimate              `json:"upper_bound,omitempty"`
	Stages     map[string]PlanCounts `json:"stages"`
	// AnswererChanges says where answers will come from where that differs
	// from the cache: model and service nodes whose cached answer would
	// serve but for who gave it (or that were cached under the previous key
	// scheme, which did not record it), grouped by old answerer and the
	// provider that will be asked.
	AnswererChanges []AnswererChange `json:"answerer_changes,omitempty"`
	// ReasonsFrom is set when the reasons compare with the last run of the
	// experiment this one most likely was before it was moved or renamed,
	// or its settings { name } changed (it never ran under its own ID):
	// that run's path.
	ReasonsFrom string `json:"reasons_from,omitempty"`
	// Order lists stage addresses in DAG order, for printing.
	Order []string `json:"-"`
	// Batch describes the calls that go through Batch APIs (batchplan.go).
	Batch *BatchPlan `json:"batch,omitempty"`
}

// addCalls counts calls completions of model (m, when known, is its block),
// and what they cost, in the run's totals, stage c's and the model's.
func (s *Summary) addCalls(c *StageSummary, model string, m *stages.Model, calls int, u cache.Usage) {
	unpriced := m != nil && !m.Priced
	if unpriced {
		s.noteUnpriced(c, m.Address)
	}
	s.LLMCalls += calls
	s.Tokens.Input += u.InputTokens
	s.Tokens.Output += u.OutputTokens
	s.Tokens.Cached += u.CachedTokens
	s.CostUSD += u.CostUSD
	c.LLMCalls += calls
	if c.Tokens == nil {
		c.Tokens = &Tokens{}
	}
	c.Tokens.Input += u.InputTokens
	c.Tokens.Output += u.OutputTokens
	c.Tokens.Cached += u.CachedTokens
	c.CostUSD += u.CostUSD
	mu := s.Models[model]
	mu.Calls += calls
	mu.Tokens.Input += u.InputTokens
	mu.Tokens.Output += u.OutputTokens
	mu.Tokens.Cached += u.CachedTokens
	mu.CostUSD += u.CostUSD
	mu.Unpriced = mu.Unpriced || unpriced
	s.Models[model] = mu
}

// addEarlier counts calls that a queue's results store answered with what
// an earlier run's workers were paid for (Summary.Earlier).
func (s *Summary) addEarlier(calls int, u cache.Usage) {
	if s.Earlier == nil {
		s.Earlier = &EarlierAnswers{}
	}
	s.Earlier.Calls += calls
	s.Earlier.Tokens.Input += u.InputTokens
	s.Earlier.Tokens.Output += u.OutputTokens
	s.Earlier.Tokens.Cached += u.CachedTokens
	s.Earlier.CostUSD += u.CostUSD
}

// noteUnpriced records that a call of stage c went to the model at addr,
// which has no price.
func (s *Summary) noteUnpriced(c *StageSummary, addr string) {
	if !slices.Contains(s.Unpriced, addr) {
		s.Unpriced = append(s.Unpriced, addr)
		slices.Sort(s.Unpriced)
	}
	if !slices.Contains(c.Unpriced, addr) {
		c.Unpriced = append(c.Unpriced, addr)
		slices.Sort(c.Unpriced)
	}
}

// MarshalJSON writes an unknown cost as null, never 0: cost_usd is null
// when some call went to a model without a price, and the priced calls'
// sum is cost_usd_priced.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	out := struct {
		plain
		CostUSD       *float64 `json:"cost_usd"`
		CostUSDPriced *float64 `json:"cost_usd_priced,omitempty"`
	}{plain: plain(s)}
	if len(s.Unpriced) == 0 {
		out.CostUSD = &s.CostUSD
	} else {
		out.CostUSDPriced = &s.CostUSD
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote: CostUSD is the priced sum.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary
	in := struct {
		*plain
		CostUSD       *float64 `json:"cost_usd"`
		CostUSDPriced *float64 `json:"cost_usd_priced"`
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	switch {
	case in.CostUSD != nil:
		s.CostUSD = *in.CostUSD
	case in.CostUSDPriced != nil:
		s.CostUSD = *in.CostUSDPriced
	}
	return nil
}

// MarshalJSON writes the cost of a stage with unpriced calls as null.
func (c StageSummary) MarshalJSON() ([]byte, error) {
	type plain StageSummary
	out := struct {
		plain
		CostUSD       *float64 `json:"cost_usd,omitempty"`
		CostUSDPriced *float64 `json:"cost_usd_priced,omitempty"`
	}{plain: plain(c)}
	switch {
	case len(c.Unpriced) > 0 && c.CostUSD != 0:
		out.CostUSDPriced = &c.CostUSD
	case len(c.Unpriced) == 0 && c.CostUSD != 0:
		out.CostUSD = &c.CostUSD
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (c *StageSummary) UnmarshalJSON(b []byte) error {
	type plain StageSummary
	in := struct {
		*plain
		CostUSD       *float64 `json:"cost_usd"`
		CostUSDPriced *float64 `json:"cost_usd_priced"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	switch {
	case in.CostUSD != nil:
		c.CostUSD = *in.CostUSD
	case in.CostUSDPriced != nil:
		c.CostUSD = *in.CostUSDPriced
	}
	return nil
}

// MarshalJSON writes an estimate's cost as null when some of its calls go
// to models without a price (Unpriced), with the priced calls' sum as
// cost_usd_priced, as Summary does.
func (e Estimate) MarshalJSON() ([]byte, error) {
	type plain Estimate
	out := struct {
		plain
		CostUSD       *float64 `json:"cost_usd"`
		CostUSDPriced *float64 `json:"cost_usd_priced,omitempty"`
	}{plain: plain(e)}
	if len(e.Unpriced) == 0 {
		out.CostUSD = &e.CostUSD
	} else {
		out.CostUSDPriced = &e.CostUSD
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (e *Estimate) UnmarshalJSON(b []byte) error {
	type plain Estimate
	in := struct {
		*plain
		CostUSD       *float64 `json:"cost_usd"`
		CostUSDPriced *float64 `json:"cost_usd_priced"`
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	switch {
	case in.CostUSD != nil:
		e.CostUSD = *in.CostUSD
	case in.CostUSDPriced != nil:
		e.CostUSD = *in.CostUSDPriced
	}
	return nil
}

// MarshalJSON writes an unpriced model's cost as null.
func (m ModelUsage) MarshalJSON() ([]byte, error) {
	type plain ModelUsage
	out := struct {
		plain
		CostUSD *float64 `json:"cost_usd"`
	}{plain: plain(m)}
	if !m.Unpriced {
		out.CostUSD = &m.CostUSD
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (m *ModelUsage) UnmarshalJSON(b []byte) error {
	type plain ModelUsage
	in := struct {
		*plain
		CostUSD *float64 `json:"cost_usd"`
	}{plain: (*plain)(m)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if in.CostUSD != nil {
		m.CostUSD = *in.CostUSD
	}
	return nil
}

// MarshalJSON writes the cost of a service with unpriced calls as null.
func (u ServiceUsage) MarshalJSON() ([]byte, error) {
	type plain ServiceUsage
	out := struct {
		plain
		CostUSD *float64 `json:"cost_usd"`
	}{plain: plain(u)}
	if !u.Unpriced {
		out.CostUSD = &u.CostUSD
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (u *ServiceUsage) UnmarshalJSON(b []byte) error {
	type plain ServiceUsage
	in := struct {
		*plain
		CostUSD *float64 `json:"cost_usd"`
	}{plain: (*plain)(u)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if in.CostUSD != nil {
		u.CostUSD = *in.CostUSD
	}
	return nil
}

func (w *walker) summarize() *Summary {
	s := &Summary{Stages: map[string]StageSummary{}, Models: map[string]ModelUsage{}, Skipped: map[string]int{},
		ServedModels: map[string]map[string]int{}, Services: map[string]ServiceUsage{}}
	var results multisetDigest
	answered := answeredTally{}
	choiceSamples := 0 // completions that came as choices of a shared request
	for i, n := range w.g.Nodes {
		if n.Inst.source {
			continue
		}
		st := &w.states[i]
		if st.known {
			answered.add(st)
			s.Synthetic = s.Synthetic || st.prov.synthetic()
		}
		// Cached and ran both mean "has this output": a warm re-run of a
		// cold run holds the same results.
		settled := st.status
		if settled == StatusCached {
			settled = StatusRan
		}
		results.add(st.key, settled)
		c := s.Stages[n.Inst.Address]
		c.Total++
		s.Nodes.Total++
		c.Drops.add(st)
		if st.costs().refused.Attempts > 0 {
			// Its n-choices answer did not parse and it was asked alone:
			// that choice was asked for and paid for too.
			s.addCalls(&c, st.wantModel, w.modelOfState(n, st), st.costs().refused.Attempts, st.costs().refused)
			choiceSamples += st.costs().refused.Attempts
		} else if st.choice && st.isCall && st.status == StatusRan && !st.dedup && !st.reused {
			choiceSamples++ // its one completion came as a choice
		}
		switch st.status {
		case StatusCached:
			c.Cached++
			s.Nodes.Cached++
		case StatusRan:
			c.Ran++
			s.Nodes.Ran++
			if st.dedup {
				s.Deduplicated++
				break
			}
			if st.reused {
				s.AnswersReused++ // derived from a stored answer: no call
				break
			}
			calls := st.costs().usage.Attempts
			if calls == 0 {
				calls = 1
			}
			switch {
			case st.isCall && st.earlier:
				s.addEarlier(calls, st.costs().usage)
			case st.isCall:
				s.addCalls(&c, st.wantModel, w.modelOfState(n, st), calls, st.costs().usage)
			case st.isService:
				s.ServiceCalls += calls
				s.CostUSD += st.costs().usage.CostUSD
				c.ServiceCalls += calls
				c.CostUSD += st.costs().usage.CostUSD
				su := s.Services[st.provider]
				if m := w.modelOfState(n, st); m != nil && !m.Priced {
					s.noteUnpriced(&c, m.Address)
					su.Unpriced = true
				}
				su.Calls += calls
				su.Units += st.costs().usage.InputTokens
				su.CostUSD += st.costs().usage.CostUSD
				s.Services[st.provider] = su
			}
		case StatusFailed:
			c.Failed++
			s.Nodes.Failed++
			if st.isCall && !st.dedup && st.costs().answered > 0 {
				// Completions asked for whose answers failed the node:
				// paid for, so counted, with their tokens and cost.
				s.addCalls(&c, st.wantModel, w.modelOfState(n, st), st.costs().answered, st.costs().usage)
			}
			s.Failures = append(s.Failures, FailedNode{Address: n.Address, Error: st.why.String()})
		case StatusSkipped, StatusPending:
			c.Skipped++
			s.Nodes.Skipped++
			s.Skipped[st.why.class()]++
			if st.status == StatusPending || st.why.kind != skipInput {
				s.Incomplete = true
			}
		}
		if st.isCall && st.known && st.servedModel != "" {
			m := s.ServedModels[st.wantModel]
			if m == nil {
				m = map[string]int{}
				s.ServedModels[st.wantModel] = m
			}
			m[st.servedModel]++
		}
		s.Stages[n.Inst.Address] = c
	}
	sort.Slice(s.Failures, func(i, j int) bool { return s.Failures[i].Address < s.Failures[j].Address })
	if len(s.Skipped) == 0 {
		s.Skipped = nil
	}
	if len(s.Models) == 0 {
		s.Models = nil
	}
	if len(s.ServedModels) == 0 {
		s.ServedModels = nil
	}
	if len(s.Services) == 0 {
		s.Services = nil
	}
	s.Answered = answered.list()
	s.ResultsDigest = results.String()
	s.Requests = s.LLMCalls - choiceSamples + int(w.choiceRequests.Load())
	return s
}

// planSummary counts a plan. Calls are estimated once per distinct key: a
// run sends one call per key (single-flight), however many nodes share it.
// Instances the plan could not lay out or expand fully are reported as
// pending, with an upper bound for the calls they may make.
func (w *walker) planSummary() *PlanSummary {
	p := &PlanSummary{Stages: map[string]PlanCounts{}, Order: w.g.StageOrder()}
	if w.prior != "" {
		p.ReasonsFrom = w.priorPath
	}
	keys := map[string]bool{}
	// Samples sent as n choices: one request per group, its input once.
	choice := map[[32]byte]bool{}
	for i, n := range w.g.Nodes {
		if n.Inst.source {
			continue
		}
		st := &w.states[i]
		c := p.Stages[n.Inst.Address]
		c.Total++
		p.Nodes.Total++
		c.Drops.add(st)
		switch st.status {
		case StatusCached:
			c.Cached++
			p.Nodes.Cached++
			if st.isCall && st.servedModel != "" && st.servedModel != st.wantModel {
				if c.ServedModels == nil {
					c.ServedModels = map[string]int{}
				}
				c.ServedModels[st.servedModel]++
			}
		default:
			c.ToRun++
			p.Nodes.ToRun++
			if c.Reasons == nil {
				c.Reasons = map[string]int{}
			}
			c.Reasons[st.why.String()]++
			if !(st.isCall || st.isService) || st.reused {
				break // computed, or derived from a stored answer: no call
			}
			if st.key != "" {
				if keys[st.key] {
					break
				}
				keys[st.key] = true
			}
			if st.answerKey != "" {
				// The run sends one call per answer key (answerFlight).
				if keys[answerFlight(st.answerKey)] {
					break
				}
				keys[answerFlight(st.answerKey)] = true
			}
			if c.Estimate == nil {
				c.Estimate = &Estimate{}
			}
			unpriced := ""
			if m := w.modelOfState(n, st); m != nil && !m.Priced {
				unpriced = m.Address
			}
			repeat := false
			if g, ok := w.choiceGroups[int32(i)]; ok {
				repeat = choice[g]
				choice[g] = true
			}
			for _, e := range []*Estimate{&p.Estimate, c.Estimate} {
				if repeat {
					// Another choice of a request counted already: its
					// output only.
					e.TokensOutput += st.costs().estOut
					e.CostUSD += cost(modelPrice(w.modelOfState(n, st)), 0, st.costs().estOut)
					e.Choices++
					continue
				}
				if unpriced != "" && !containsString(e.Unpriced, unpriced) {
					e.Unpriced = append(e.Unpriced, unpriced)
				}
				e.ApproxTokens = e.ApproxTokens || st.costs().estApprox || st.key == ""
				if st.isService {
					e.ServiceCalls++
				} else {
					e.LLMCalls++
				}
				e.TokensInput += st.costs().estIn
				e.TokensOutput += st.costs().estOut
				e.CostUSD += st.costs().estCost
			}
		}
		p.Stages[n.Inst.Address] = c
	}
	p.AnswererChanges = w.answererChanges()
	for _, inst := range w.g.Instances {
		if wf := w.willFailCounts(inst); len(wf) > 0 {
			c := p.Stages[inst.Address]
			c.WillFail = wf
			p.Stages[inst.Address] = c
		}
	}
	for inst, pe := range w.g.pending() {
		c := p.Stages[inst.Address]
		c.Pending = &Pending{After: pe.after, Items: pe.items, MaxPerItem: pe.maxPerItem, LaidOut: pe.laidOut}
		if inst.expander != nil && pe.items > 0 {
			if inst.calls {
				if m := modelOf(inst); m != nil {
					calls := pe.items * pe.maxPerItem
					out := int64(m.MaxTokens)
					if out <= 0 {
						out = defaultOutputTokens
					}
					in := int64(promptOverheadTokens)
					ub := Estimate{LLMCalls: calls, TokensInput: in * int64(calls), TokensOutput: out * int64(calls),
						CostUSD: cost(m.Price, in*int64(calls), out*int64(calls)), ApproxTokens: true}
					if !m.Priced {
						ub.Unpriced = []string{m.Address}
					}
					c.Pending.UpperBound = &ub
					p.UpperBound.LLMCalls += ub.LLMCalls
					p.UpperBound.TokensInput += ub.TokensInput
					p.UpperBound.TokensOutput += ub.TokensOutput
					p.UpperBound.CostUSD += ub.CostUSD
					for _, u := range ub.Unpriced {
						if !containsString(p.UpperBound.Unpriced, u) {
							p.UpperBound.Unpriced = append(p.UpperBound.Unpriced, u)
						}
					}
				}
			}
		}
		p.Stages[inst.Address] = c
	}
	p.Batch = w.batchPlan()
	return p
}

// answererChanges groups the plan's model and service nodes to run whose
// cached answers are another answerer's (reasons planAnswerer and
// planOldScheme).
func (w *walker) answererChanges() []AnswererChange {
	type group struct {
		from      string
		oldScheme bool
		provider  string
	}
	counts := map[group]*AnswererChange{}
	for i := range w.g.Nodes {
		st := &w.states[i]
		if st.status != StatusToRun || !(st.isCall || st.isService) {
			continue
		}
		k := group{provider: st.provider}
		switch st.why.kind {
		case planAnswerer:
			k.from = st.why.from
		case planOldScheme:
			k.oldScheme = true
		default:
			continue
		}
		c := counts[k]
		if c == nil {
			to := ""
			if st.answerer != nil {
				to = st.answerer.String()
			}
			c = &AnswererChange{From: k.from, OldScheme: k.oldScheme, Provider: st.provider, To: to}
			counts[k] = c
		}
		c.Nodes++
	}
	out := make([]AnswererChange, 0, len(counts))
	for _, c := range counts {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.OldScheme != b.OldScheme {
			return a.OldScheme
		}
		return a.From < b.From
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

// modelOfState is the model a planned call goes to: the prepared request's
// when known, else the instance's first model param.
func (w *walker) modelOfState(n *Node, st *nodeState) *stages.Model {
	m := modelOf(n.Inst)
	if st.wantModel != "" {
		for _, v := range n.Inst.Params {
			switch x := v.(type) {
			case *stages.Model:
				if x.Name == st.wantModel {
					return x
				}
			case []*stages.Model:
				for _, mm := range x {
					if mm.Name == st.wantModel {
						return mm
					}
				}
			}
		}
	}
	return m
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func modelPrice(m *stages.Model) stages.Price {
	if m == nil {
		return stages.Price{}
	}
	return m.Price
}

// multisetDigest digests a multiset of (key, status) pairs: the sum, lane by
// lane mod 2^64, of each pair's SHA-256, so that the order pairs are added
// in does not matter while any changed, added or removed pair changes it.
// It detects change (a page to rebuild); it is not meant to resist a
// forger, who could pick pairs that cancel.
type multisetDigest struct {
	lanes [4]uint64
	n     uint64
}

func (d *multisetDigest) add(key string, status Status) {
	var buf [80]byte
	b := append(append(buf[:0], key...), 0, byte(status))
	h := sha256.Sum256(b)
	for i := range d.lanes {
		d.lanes[i] += binary.LittleEndian.Uint64(h[8*i:])
	}
	d.n++
}

func (d *multisetDigest) String() string {
	var out [40]byte
	for i, l := range d.lanes {
		binary.LittleEndian.PutUint64(out[8*i:], l)
	}
	binary.LittleEndian.PutUint64(out[32:], d.n)
	sum := sha256.Sum256(out[:])
	return "sha256:" + hex.EncodeToString(sum[:])
}
