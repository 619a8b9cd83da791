package engine

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Rendered is what RenderReports did.
type Rendered struct {
	// Reports are the files written, as a run lists them.
	Reports []string `json:"reports,omitempty"`
	// Summary is the walk's summary (nodes cached, failed, to run; no calls,
	// no tokens: nothing ran), for the experiment's page.
	Summary *Summary `json:"-"`
	// Computed counts, per stage instance, the deterministic nodes that are
	// not in the cache and were computed in memory from cached inputs (a
	// report whose stage version changed, an aggregate over cached calls).
	// Nothing of them is written to the cache.
	Computed map[string]int `json:"computed,omitempty"`
	// Failed counts nodes whose last run failed; the reports count their
	// items as missing, as that run's reports did.
	Failed int `json:"failed,omitempty"`
	// Missing lists the reports that could not be rendered from the cache.
	Missing []MissingReport `json:"missing,omitempty"`
}

// MissingReport is a report the cache cannot fill: what it lacks.
type MissingReport struct {
	Report string `json:"report"`
	// Calls and Services count the model and service nodes it depends on
	// that have no cached answer (and no recorded failure); Other counts
	// the other nodes it lacks (a deterministic node that could not be
	// computed, an instance not laid out yet).
	Calls    int `json:"calls"`
	Services int `json:"services"`
	Other    int `json:"other"`
	// Examples names up to three of them, with why each is missing.
	Examples []string `json:"examples"`
}

func (m MissingReport) String() string {
	var what []string
	if m.Calls > 0 {
		what = append(what, fmt.Sprintf("%d model node(s)", m.Calls))
	}
	if m.Services > 0 {
		what = append(what, fmt.Sprintf("%d service node(s)", m.Services))
	}
	if m.Other > 0 {
		what = append(what, fmt.Sprintf("%d other node(s) or stage(s)", m.Other))
	}
	return fmt.Sprintf("%s needs %s not in the cache, e.g. %s", m.Report, strings.Join(what, " and "), strings.Join(m.Examples, "; "))
}

// RenderReports writes every report of g from the cache alone, running
// nothing: no model or service call, no cache write. It walks the graph as
// a plan does, against the cache, with two differences that make it render
// what the last run rendered:
//
//   - a node whose last run failed (a failure recorded under its key) is
//     failed, not "to run": aggregates count its items as missing;
//   - deterministic nodes missing from the cache are computed in memory from
//     their cached inputs (Rendered.Computed names them).
//
// A report whose inputs reach a model or service node with no cached
// answer cannot be rendered: it is listed in Rendered.Missing with what it
// lacks, and the reports that can be rendered are still written. opts gives
// the report folder and provenance fields; the rest is ignored.
func (e *Engine) RenderReports(g *Graph, opts RunOptions) (*Rendered, error) {
	start := time.Now()
	if opts.Started.IsZero() {
		opts.Started = start
	}
	w := e.newWalker(g, true)
	w.log = e.Log
	w.checkRecords = e.CheckRecords
	w.reportOnly = true
	w.walk(e.Resolvers)
	if w.growDiags.HasErrors() {
		return nil, &InputError{Diags: w.growDiags}
	}
	out := &Rendered{Computed: map[string]int{}}
	for i, n := range g.Nodes {
		st := &w.states[i]
		switch {
		case n.Inst.source:
		case st.status == StatusToRun && st.known:
			out.Computed[n.Inst.Address]++
		case st.status == StatusFailed:
			out.Failed++
		}
	}
	if len(out.Computed) == 0 {
		out.Computed = nil
	}
	out.Missing = w.missingReports()

	sum := w.summarize()
	paths, err := w.writeReports(opts.ReportDir, provenanceOf(g, sum, opts))
	out.Reports = paths
	sum.Reports = paths
	sum.WallSeconds = time.Since(start).Seconds()
	out.Summary = sum
	return out, err
}

// missingReports lists the reports (nodes that write files, and report
// blocks not laid out yet) that the walk could not compute, with the nodes
// they lack: for each, the model and service nodes with neither a cached
// answer nor a recorded failure (the nodes that would have to run), found
// by walking up from the report through the nodes that are not known.
func (w *walker) missingReports() []MissingReport {
	g := w.g
	var out []MissingReport
	for i, n := range g.Nodes {
		if !n.Spec.WritesFiles || w.states[i].known {
			continue
		}
		m := MissingReport{Report: n.Inst.Address}
		seen := map[int32]bool{int32(i): true}
		stack := []int32{int32(i)}
		for len(stack) > 0 {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			st := &w.states[j]
			root := st.status == StatusToRun && st.why.kind != planUpstreamRuns && !st.known
			if root {
				switch {
				case st.isCall:
					m.Calls++
				case st.isService:
					m.Services++
				default:
					m.Other++
				}
				if len(m.Examples) < 3 {
					m.Examples = append(m.Examples, g.Nodes[j].Address+" ("+st.why.String()+")")
				}
				continue
			}
			for _, d := range g.Nodes[j].Deps {
				if !seen[d] && !w.states[d].known {
					seen[d] = true
					stack = append(stack, d)
				}
			}
		}
		if m.Calls+m.Services+m.Other == 0 {
			m.Other = 1
			m.Examples = append(m.Examples, n.Address+" ("+w.states[i].why.String()+")")
		}
		out = append(out, m)
	}
	// A report block not laid out yet waits for stages that expand once
	// their inputs run: the cache does not hold those inputs.
	for inst, p := range g.pending() {
		if !strings.HasPrefix(inst.Address, "report.") || inst.laidOut {
			continue
		}
		out = append(out, MissingReport{Report: inst.Address, Other: 1,
			Examples: []string{"it is laid out once " + strings.Join(p.after, ", ") + " is complete"}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Report < out[j].Report })
	return out
}
