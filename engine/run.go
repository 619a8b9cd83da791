package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
)

// Engine plans and runs graphs against a cache.
type Engine struct {
	Store cache.Store
	Exec  Executor
	Log   zerolog.Logger
	// Resolvers is how many goroutines resolve nodes (prepare, key, cache
	// lookup); 0 means GOMAXPROCS.
	Resolvers int
	// CheckRecords makes plans and runs read every cached record they rely
	// on instead of trusting memos: for a cache that lost records on opening
	// (a damaged log cut by recovery), so each lost record is recomputed.
	CheckRecords bool
	// epoch replaces memoEpoch (tests: two builds of other rendering code).
	epoch string
}

// newWalker is a walker over g with the engine's store, log and memo epoch.
func (e *Engine) newWalker(g *Graph, plan bool) *walker {
	w := newWalker(g, e.Store, plan)
	w.log = e.Log
	w.checkRecords = e.CheckRecords
	if e.epoch != "" {
		w.epoch = e.epoch
	}
	return w
}

// Plan is the result of planning a graph.
type Plan struct {
	Summary *PlanSummary
	// Diags are layout errors of instances laid out while the plan grew the
	// graph (downstream of an Expander).
	Diags  hcl.Diagnostics
	g      *Graph
	states []nodeState
	provs  *provTable // interns the states' provenance
	// rendered counts the cached nodes found by rendering (no valid memo).
	rendered int
}

// Plan works out, without any model call, which nodes are cached and which
// must run, why, and what the calls will cost.
//
// A plan grows the graph as far as the cache allows: an Expander item whose
// inputs are cached (or computed in memory) expands, so its children are
// planned, kept by gc and exported in bundles; the rest is reported as
// pending, with an upper-bound estimate.
func (e *Engine) Plan(g *Graph) *Plan { return e.plan(g, nil) }

// plan plans g; memos, when set (the plan of a run), rewrites the memos of
// the cached nodes it had to render.
func (e *Engine) plan(g *Graph, memos *memoWriter) *Plan {
	w := e.newWalker(g, true)
	w.memos = memos
	w.walk(e.Resolvers)
	return &Plan{Summary: w.planSummary(), g: g, states: w.states, provs: w.provs, Diags: w.growDiags, rendered: int(w.rendered.Load())}
}

// Verify recomputes every cached deterministic node of the graph and
// compares the result with the cache (Go's GODEBUG=gocacheverify=1 for
// ideaflow): a mismatch means a stage changed its outputs without a
// Version bump. It makes no calls and writes nothing.
func (e *Engine) Verify(g *Graph) *VerifyReport {
	w := e.newWalker(g, true)
	w.verify = true
	w.walk(e.Resolvers)
	sort.Slice(w.mismatches, func(i, j int) bool { return w.mismatches[i].Address < w.mismatches[j].Address })
	return &VerifyReport{Verified: w.verified, Mismatches: w.mismatches}
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Verified   int              `json:"verified"`
	Mismatches []VerifyMismatch `json:"mismatches,omitempty"`
}

// callProviders lists the providers the plan's model nodes to run will call.
func (p *Plan) callProviders() []string {
	set := map[string]bool{}
	for i, n := range p.g.Nodes {
		st := &p.states[i]
		if n.Inst.source || st.status == StatusCached || !(st.isCall || st.isService) {
			continue
		}
		if st.provider != "" {
			set[st.provider] = true
			continue
		}
		for prov := range n.Inst.providers {
			set[prov] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// RunOptions control one run.
type RunOptions struct {
	Offline    bool
	MaxCost    float64 // USD; 0: no limit
	ReportDir  string  // where report files go; "" means g.Exp.ResultsDir
	OnProgress func(total int) (report func(address string, status Status), grow func(added int))
	Variables  map[string]string
	GitCommit  string
	// Started is when the process started (for the whole wall time) and
	// LoadSeconds how long loading the experiment, its datasets and the
	// cache took; zero values leave them out.
	Started     time.Time
	LoadSeconds float64
	// Version is the ideaflow version, for the provenance of reports.
	Version string
	// AllowUnpriced starts a run with a MaxCost although some of its calls go
	// to models without a price (their cost is unknown): without it such a
	// run is refused before any call, since the budget could not bind them.
	AllowUnpriced bool
}

// checkCallable refuses, before any call, a run that cannot make the calls
// its plan needs: offline with calls not in the cache, or a provider in use
// whose key is missing.
func (p *Plan) checkCallable(offline bool) error {
	if !offline {
		if diags := p.g.Exp.MissingKeys(p.callProviders()); diags.HasErrors() {
			return &InputError{Diags: diags}
		}
		return nil
	}
	var first FailedNode
	models, services := 0, 0
	for i, n := range p.g.Nodes {
		st := &p.states[i]
		if n.Inst.source || st.status == StatusCached || !(st.isCall || st.isService) {
			continue
		}
		if models+services == 0 {
			first = FailedNode{Address: n.Address, Error: st.why.String()}
		}
		if st.isService {
			services++
		} else {
			models++
		}
	}
	if models+services == 0 {
		return nil
	}
	what := fmt.Sprintf("%d model node(s)", models)
	switch {
	case models == 0:
		what = fmt.Sprintf("%d service node(s)", services)
	case services > 0:
		what += fmt.Sprintf(" and %d service node(s)", services)
	}
	msg := fmt.Sprintf("%s are not in the cache, e.g. %s (%s); import a cache bundle that holds them or run without --offline",
		what, first.Address, first.Error)
	return &InputError{Err: fmt.Errorf("%w: %s", ErrOffline, msg)}
}

// ErrOffline is returned when an offline run would need a model call.
var ErrOffline = errors.New("offline run needs model calls")

// InputError is bad input found before any call (missing API key, offline
// misses): the CLI exits 2.
type InputError struct {
	Diags hcl.Diagnostics
	Err   error
}

func (e *InputError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Diags.Error()
}
func (e *InputError) Unwrap() error { return e.Err }

// Run plans the graph, checks that every call it needs can be made (API keys
// present, or --offline satisfied), then runs it. Cached nodes found by the
// plan are not visited again. Every completed node is in the cache when Run
// returns, even when ctx is cancelled part-way.
func (e *Engine) Run(ctx context.Context, g *Graph, opts RunOptions) (*Summary, error) {
	if e.Exec == nil {
		return nil, errors.New("engine has no executor")
	}
	start := time.Now()
	if opts.Started.IsZero() {
		opts.Started = start
	}
	memos := newMemoWriter(e.Store)
	plan := e.plan(g, memos)
	if plan.Diags.HasErrors() {
		memos.stop()
		return nil, &InputError{Diags: plan.Diags}
	}
	if err := plan.checkCallable(opts.Offline); err != nil {
		memos.stop()
		return nil, err
	}
	if opts.MaxCost > 0 && !opts.AllowUnpriced {
		if err := plan.checkBudgetBinds(opts.MaxCost); err != nil {
			memos.stop()
			return nil, err
		}
	}
	planned := time.Now()
	ps := plan.Summary
	e.Log.Info().Str("experiment", g.Exp.Name).Int("nodes", ps.Nodes.Total).Int("cached", ps.Nodes.Cached).
		Int("to_run", ps.Nodes.ToRun).Int("est_llm_calls", ps.Estimate.LLMCalls).Float64("est_cost_usd", ps.Estimate.CostUSD).
		Msg("run planned")

	w := e.newWalker(g, false)
	w.ctx = ctx
	w.budget = &budget{max: opts.MaxCost}
	// The run takes over the plan's states: cached nodes stay settled, the
	// rest start afresh (a plan's in-memory results are not cache records).
	w.states, w.provs = plan.states, plan.provs
	plan.states = nil
	for i := range w.states {
		if w.states[i].status != StatusCached {
			w.states[i] = nodeState{}
		}
	}
	if opts.OnProgress != nil {
		total := 0
		for i, n := range g.Nodes {
			if !n.Inst.source && w.states[i].status != StatusCached {
				total++
			}
		}
		report, grow := opts.OnProgress(total)
		w.onProgress = func(n *Node, st *nodeState) { report(n.Address, st.status) }
		w.onGrow = grow
	}
	toRun := 0
	for i := range w.states {
		if w.states[i].status != StatusCached {
			toRun++
		}
	}
	e.startWorkers(w, toRun)
	w.planGroups(e.Exec)
	w.startWriters()
	w.walk(e.Resolvers)
	for _, q := range w.queues {
		close(q)
	}
	w.stopWriters()
	memosRewritten := memos.stop()
	sum := w.summarize()
	sum.Memo = MemoCounts{Rendered: plan.rendered + int(w.rendered.Load()), Rewritten: memosRewritten}
	sum.Repaired = w.dmg.fixed
	sum.Unsaved = int(w.unsaved.Load())
	sum.Unavailable = w.down
	sum.Interrupted = ctx.Err() != nil
	sum.BudgetExhausted = w.budget.exhausted
	ran := time.Now()
	if w.storeErr != nil {
		sum.Phases = Phases{Load: opts.LoadSeconds, Plan: planned.Sub(start).Seconds(), Run: ran.Sub(planned).Seconds()}
		sum.WallSeconds = ran.Sub(opts.Started).Seconds()
		return sum, fmt.Errorf("cache write failed: %w", w.storeErr)
	}
	if w.growDiags.HasErrors() {
		return sum, &InputError{Diags: w.growDiags}
	}
	paths, err := w.writeReports(opts.ReportDir, provenanceOf(g, sum, opts))
	sum.Reports = paths
	end := time.Now()
	sum.Phases = Phases{Load: opts.LoadSeconds, Plan: planned.Sub(start).Seconds(), Run: ran.Sub(planned).Seconds(), Reports: end.Sub(ran).Seconds()}
	sum.WallSeconds = end.Sub(opts.Started).Seconds()
	if err != nil {
		return sum, err
	}
	e.recordRun(g, w, sum, start, opts)
	e.Log.Info().Str("experiment", g.Exp.Name).Int("cached", sum.Nodes.Cached).Int("ran", sum.Nodes.Ran).
		Int("failed", sum.Nodes.Failed).Int("skipped", sum.Nodes.Skipped).Int("llm_calls", sum.LLMCalls).Int("service_calls", sum.ServiceCalls).
		Int64("tokens_in", sum.Tokens.Input).Int64("tokens_out", sum.Tokens.Output).Float64("cost_usd", sum.CostUSD).
		Float64("wall_s", sum.WallSeconds).Bool("interrupted", sum.Interrupted).Msg("run finished")
	return sum, nil
}

// promptOverheadTokens is what a prompt adds around its inputs (instructions,
// quality definition), assumed for a model node that cannot be rendered yet.
const promptOverheadTokens = 200

// estimateUnprepared estimates a model node whose inputs are not computed yet:
// its prompt holds its inputs, which are either known (their size) or will be
// model answers (at most their max_tokens), plus a fixed overhead.
func (w *walker) estimateUnprepared(n *Node, st *nodeState) {
	if !st.isCall {
		return
	}
	m := modelOf(n.Inst)
	if m == nil {
		return
	}
	st.estIn = w.unpreparedInput(n.Deps)
	st.estOut = int64(m.MaxTokens)
	if st.estOut <= 0 {
		st.estOut = defaultOutputTokens
	}
	st.estCost = cost(m.Price, st.estIn, st.estOut)
}

// unpreparedInput estimates the input tokens of a prompt built from deps:
// their sizes when known, their estimated answers when they must run, plus
// a fixed overhead.
func (w *walker) unpreparedInput(deps []int32) int64 {
	in := int64(promptOverheadTokens)
	for _, d := range deps {
		ds := &w.states[d]
		switch {
		case ds.known && ds.output != nil:
			in += int64(len(ds.output) / 4)
		case ds.estOut > 0:
			in += ds.estOut
		}
	}
	return in
}

// modelOf is the model an instance's calls will likely go to (see
// Instance.model), nil when it has no model param.
func modelOf(inst *Instance) *stages.Model { return inst.model }

// incomplete reports whether any node node i depends on, directly or not,
// was left undone by this run: interrupted, out of budget, stopped or never
// reached. Failed nodes were tried: a report counts them as missing.
func (w *walker) incomplete(i int32) bool {
	seen := map[int32]bool{i: true}
	stack := []int32{i}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range w.g.Nodes[j].Deps {
			if seen[d] {
				continue
			}
			seen[d] = true
			st := &w.states[d]
			switch {
			case st.status == StatusPending:
				return true
			case st.status == StatusSkipped && st.why.kind != skipInput:
				return true
			}
			stack = append(stack, d)
		}
	}
	return false
}

func (e *Engine) recordRun(g *Graph, w *walker, sum *Summary, start time.Time, opts RunOptions) {
	b, _ := json.Marshal(sum)
	rec := &cache.RunRecord{
		ID: fmt.Sprintf("%s-%d", g.Exp.Name, start.UnixNano()), Experiment: g.Exp.Name,
		ExperimentDigest: g.Exp.Source, Variables: opts.Variables, GitCommit: opts.GitCommit,
		Started: start.UTC(), Finished: time.Now().UTC(), Summary: b,
		ExperimentID: g.Exp.ID, ExperimentPath: g.Exp.Path, LatestPrefix: w.expKey, Blocks: g.Exp.Blocks,
	}
	if err := e.Store.PutRun(rec); errors.Is(err, cache.ErrReadOnly) {
		e.Log.Debug().Err(err).Msg("run record not written")
	} else if err != nil {
		e.Log.Warn().Err(err).Msg("could not write run record")
	}
}
