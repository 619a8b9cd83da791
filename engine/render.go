package engine

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteGraph writes the stage-level DAG (datasets and stage instances, with
// their node counts) as Graphviz dot or Mermaid.
func (g *Graph) WriteGraph(w io.Writer, format string) error {
	type edge struct{ from, to string }
	var edges []edge
	seen := map[edge]bool{}
	for _, inst := range g.Instances {
		if inst.cfg == nil {
			continue
		}
		for _, d := range inst.cfg.Deps {
			e := edge{d, inst.Address}
			if !seen[e] {
				seen[e] = true
				edges = append(edges, e)
			}
		}
	}
	ids := map[string]string{}
	for i, inst := range g.Instances {
		ids[inst.Address] = fmt.Sprintf("n%d", i)
	}
	label := func(inst *Instance) string {
		unit := "nodes"
		if inst.source {
			unit = "items"
		}
		return fmt.Sprintf("%s (%d %s)", inst.Address, inst.Count, unit)
	}
	switch format {
	case "dot":
		fmt.Fprintln(w, "digraph ideaflow {")
		fmt.Fprintln(w, "  rankdir=LR;")
		fmt.Fprintln(w, "  node [shape=box, fontname=\"Helvetica\"];")
		for _, inst := range g.Instances {
			shape := ""
			if inst.source {
				shape = ", shape=cylinder"
			}
			fmt.Fprintf(w, "  %s [label=%q%s];\n", ids[inst.Address], label(inst), shape)
		}
		for _, e := range edges {
			fmt.Fprintf(w, "  %s -> %s;\n", ids[e.from], ids[e.to])
		}
		fmt.Fprintln(w, "}")
	case "mermaid":
		fmt.Fprintln(w, "flowchart LR")
		for _, inst := range g.Instances {
			l := strings.ReplaceAll(label(inst), `"`, "#quot;")
			if inst.source {
				fmt.Fprintf(w, "  %s[(\"%s\")]\n", ids[inst.Address], l)
			} else {
				fmt.Fprintf(w, "  %s[\"%s\"]\n", ids[inst.Address], l)
			}
		}
		for _, e := range edges {
			fmt.Fprintf(w, "  %s --> %s\n", ids[e.from], ids[e.to])
		}
	default:
		return fmt.Errorf("unknown graph format %q: use dot or mermaid", format)
	}
	return nil
}

// Keys returns the keys of every node the plan found cached: what gc keeps
// and an experiment's bundle exports for this experiment.
func (p *Plan) Keys() map[string]bool {
	out := map[string]bool{}
	for i := range p.states {
		if st := &p.states[i]; st.status == StatusCached && st.key != "" {
			out[st.key] = true
			if st.answerKey != "" {
				out[st.answerKey] = true // what a change of its output params re-derives from
			}
		}
	}
	return out
}

// GraphStats counts what a graph holds.
type GraphStats struct {
	Instances, Nodes, Items int
}

// Stats counts stage instances, nodes (dataset items excluded) and items.
func (g *Graph) Stats() GraphStats {
	var s GraphStats
	for _, inst := range g.Instances {
		if inst.source {
			s.Items += inst.Count
			continue
		}
		s.Instances++
		s.Nodes += inst.Count
	}
	return s
}

// StageOrder lists the stage instance addresses (datasets excluded) in DAG order.
func (g *Graph) StageOrder() []string {
	var out []string
	for _, inst := range g.Instances {
		if !inst.source {
			out = append(out, inst.Address)
		}
	}
	return out
}

// Providers lists, sorted, the providers of the models the experiment's
// stages use: a provider block no used model points at (a gateway beside
// the mock, chosen by a variable) needs no key.
func (g *Graph) Providers() []string {
	seen := map[string]bool{}
	for _, inst := range g.Instances {
		for p := range inst.providers {
			seen[p] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
