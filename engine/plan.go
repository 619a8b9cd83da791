package engine

import (
	"crypto/sha256"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/ideaflow/ideaflow/stages"
)

// The plan mode (walker.plan): every node is looked up, none is called. A
// miss is estimated (planMiss), a compute node whose inputs are known is
// evaluated in memory so the plan sees early cutoff, and whyDirty says why
// a node must run. A plan writes nothing, unless it is the plan of a run:
// then it rewrites the memos it had to render (memo.go).

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
func (e *Engine) Plan(g *Graph) *Plan { return e.plan(g, nil, nil) }

// plan plans g. On the plan of a run, memos rewrites the memos of the
// cached nodes it had to render, and ahead sends calls as it finds them
// (early.go); both nil for a plan alone.
func (e *Engine) plan(g *Graph, memos *memoWriter, ahead *early) *Plan {
	w := e.newWalker(g, true)
	w.memos = memos
	w.early = ahead
	w.onResolve = e.planResolve
	w.walk(e.Resolvers)
	return &Plan{Summary: w.planSummary(), g: g, states: w.states, provs: w.provs, Diags: w.growDiags, rendered: int(w.rendered.Load())}
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
	c := st.costsW()
	c.estIn = w.unpreparedInput(n.Deps)
	c.estOut = int64(m.MaxTokens)
	if c.estOut <= 0 {
		c.estOut = defaultOutputTokens
	}
	c.estCost = cost(m.Price, c.estIn, c.estOut)
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
		case ds.costs().estOut > 0:
			in += ds.costs().estOut
		}
	}
	return in
}

// modelOf is the model an instance's calls will likely go to (see
// Instance.model), nil when it has no model param.
func modelOf(inst *Instance) *stages.Model { return inst.model }

// promptOverheadTokens is what a prompt adds around its inputs (instructions,
// quality definition), assumed for a model node that cannot be rendered yet.
const promptOverheadTokens = 200

// planMiss settles a node a plan found missing from the cache.
func (w *walker) planMiss(i int32, work *stages.Work, key string, parts []namedPart) {
	n := w.g.Nodes[i]
	st := &w.states[i]
	st.status = StatusToRun
	st.why = w.whyDirty(n, key, parts)
	if m := workModel(work); m != nil {
		// Who will be asked: the model's provider (a record will say).
		st.answerer = w.provs.answerer(m.Answerer)
		st.prov = w.provs.with(st.prov, st.answerer)
	}
	if w.reportOnly && work.Compute == nil && st.why.kind == planFailedLast {
		st.status, st.why = StatusFailed, why(failCall, st.why.detail)
		w.finish(i)
		return
	}
	switch {
	case work.Compute != nil:
		// Compute nodes are cheap and pure: evaluate them now so the plan
		// knows their output and can show early cutoff downstream.
		out, err := work.Compute()
		if err == nil {
			st.known, st.output, st.digest = true, out, sha256.Sum256(out)
			noteDrop(st, out)
		} else if w.reportOnly {
			st.status, st.why = StatusFailed, why(failPrepare, prepareError(err))
		}
	case work.Call != nil && w.planReuse(i, work):
		// Its answer is cached under the answer key: the run derives the
		// output from it, with no call, and so does the plan.
	case work.Call != nil:
		var exact bool
		c := st.costsW()
		c.estIn, exact, c.estOut, c.estCost = estimateCallExact(work.Call.Model, work.Call.Request)
		c.estApprox = !exact
		w.notePlanChoice(i, work)
	case work.Service != nil:
		c := st.costsW()
		c.estIn, c.estCost = estimateService(work.Service)
	}
	w.finish(i)
}

func (w *walker) whyDirty(n *Node, key string, parts []namedPart) reason {
	if f, err := w.store.Failure(key); err == nil {
		return why(planFailedLast, f.Error)
	}
	old, ok, err := w.store.Latest(w.expKey + n.Address)
	if err == nil && !ok {
		if p := w.priorPrefix(); p != "" {
			old, ok, err = w.store.Latest(p + n.Address)
		}
	}
	if err == nil && !ok {
		if p := w.legacyIndex(); p != "" {
			if k, found, lerr := w.store.Latest(p + n.Address); lerr == nil && found && k == keyOfFormat(keyFormatV1, v1Parts(parts)) {
				return why(planOldScheme, "")
			}
		}
	}
	if err != nil || !ok {
		return why(planNew, "")
	}
	if old == key {
		return why(planEvicted, "")
	}
	oldParts, err := w.store.Parts(old)
	if err != nil {
		return why(planChanged, "key changed")
	}
	switch {
	case oldScheme(oldParts):
		return why(planOldScheme, "")
	case onlyAnswererDiffers(oldParts, parts):
		// The cached answer would serve, were it the same answerer's.
		r := why(planAnswerer, explain(oldParts, parts, n.Inst.about))
		r.from = answererOfParts(oldParts)
		return r
	}
	return why(planChanged, explain(oldParts, parts, n.Inst.about))
}
