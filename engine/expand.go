package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/stages"
)

// settledOutputs is what growing the graph needs to know of a walk.
type settledOutputs interface {
	// settled reports whether node i will not change any more in this walk
	// (cached, ran, failed, skipped; for a plan also computed in memory).
	settled(i int32) bool
	// output returns node i's output, or nil when it failed or was skipped.
	output(i int32) ([]byte, error)
}

// grow lays out the instances whose inputs have become final and expands the
// items of Expander instances whose expand inputs have settled for that
// item. It repeats until a pass adds nothing, so an instance laid out (or
// made final) here unblocks its dependents in the same call. It reports
// whether any node was added and re-indexes the dependents if so.
func (g *Graph) grow(src settledOutputs) (bool, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	before := len(g.Nodes)
	for progress := true; progress; {
		progress = false
		for _, inst := range g.Instances {
			if inst.source || inst.final {
				continue
			}
			if !inst.laidOut {
				if !inst.layoutReady() {
					continue
				}
				d := g.layout(inst)
				diags = append(diags, d...) // warnings too: plan and run print them
				if d.HasErrors() {
					inst.laidOut, inst.final = true, true // do not try again
					continue
				}
				progress = true
			}
			if inst.expander != nil && !inst.final {
				n, d := g.expandReady(inst, src)
				diags = append(diags, d...)
				if n > 0 || inst.final {
					progress = true
				}
			}
		}
	}
	if len(g.Nodes) == before {
		return false, diags
	}
	g.indexDependents()
	return true, diags
}

// expandReady expands every item of inst whose expand inputs have settled
// and returns how many items it expanded.
func (g *Graph) expandReady(inst *Instance, src settledOutputs) (int, hcl.Diagnostics) {
	items := inst.Up.Source.Items()
	done := 0
	for _, item := range items {
		if inst.expanded[item] {
			continue
		}
		in, ready, err := expandInputs(inst, item, src)
		if !ready {
			continue
		}
		var nodes []stages.Node
		if err == nil {
			nodes, err = inst.expander.Expand(inst.stInst, item, in)
		}
		if err == nil {
			err = checkExpansion(inst, item, nodes)
		}
		if err != nil {
			// The item's expansion fails as a node of its own, so the run
			// counts it, records why, and skips what depends on it.
			err := fmt.Errorf("expand %s for item %q: %w", inst.Address, item, err)
			nodes = []stages.Node{{Item: item, Label: "expand", Prepare: func([]stages.In) (*stages.Work, error) { return nil, err }}}
		}
		from := expandDigest(in)
		if d := g.appendNodes(inst, nodes, &from); d.HasErrors() {
			return done, d
		}
		inst.expanded[item] = true
		done++
	}
	if len(inst.expanded) == len(items) {
		inst.final = true
	}
	return done, nil
}

// expandDigest digests the outputs an Expand call read, in order, length
// prefixed (a failed input, nil, differs from an empty one).
func expandDigest(in []stages.In) [32]byte {
	h := sha256.New()
	var buf [9]byte
	for _, x := range in {
		buf[0] = 0
		if x.Output != nil {
			buf[0] = 1
		}
		binary.LittleEndian.PutUint64(buf[1:], uint64(len(x.Output)))
		h.Write(buf[:])
		h.Write(x.Output)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// expandInputs gathers the nodes of item in inst's expand inputs, or reports
// that they have not all settled (or not all been laid out) yet.
func expandInputs(inst *Instance, item string, src settledOutputs) ([]stages.In, bool, error) {
	var in []stages.In
	for _, name := range inst.expander.ExpandInputs() {
		up := inst.inputs[name]
		if up == nil {
			if !inst.Params.Has(name) {
				continue // an optional input the experiment leaves unset
			}
			return nil, true, fmt.Errorf("expand input %q is not an input of the instance", name)
		}
		if !up.laidOut || (up.expander != nil && !up.final && !up.expanded[item]) {
			return nil, false, nil
		}
		for _, k := range up.Up.ItemNodes(item) {
			gi := up.nodes[k]
			if !src.settled(gi) {
				return nil, false, nil
			}
			out, err := src.output(gi)
			if err != nil {
				return nil, true, fmt.Errorf("read %s: %w", up.Address, err)
			}
			in = append(in, stages.In{Dep: stages.Dep{Input: name, Index: k}, Node: up.Up.Nodes[k], From: up.Up, Output: inst.projected(name, out)})
		}
	}
	return in, true, nil
}

// checkExpansion enforces the Expander contract the engine relies on.
func checkExpansion(inst *Instance, item string, nodes []stages.Node) error {
	if max := inst.expander.MaxPerItem(inst.stInst); len(nodes) > max {
		return fmt.Errorf("stage type %s expanded %d nodes, more than its bound of %d per item (an internal error in the stage type)", inst.Type, len(nodes), max)
	}
	labels := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if n.Item != item {
			return fmt.Errorf("stage type %s expanded a node for item %q while expanding %q (an internal error in the stage type)", inst.Type, n.Item, item)
		}
		if n.Label == "" || labels[n.Label] {
			return fmt.Errorf("stage type %s expanded two nodes labelled %q for one item; labels name what a node stands for and must differ (an internal error in the stage type)", inst.Type, n.Label)
		}
		labels[n.Label] = true
	}
	return nil
}

// pendingExpansion says why an instance is not final at the end of a plan.
type pendingExpansion struct {
	after      []string // instances that must run first
	items      int      // items not expanded yet (expanders), or 0
	maxPerItem int
	laidOut    bool
}

// pending lists the instances a plan could not lay out or expand fully.
func (g *Graph) pending() map[*Instance]pendingExpansion {
	out := map[*Instance]pendingExpansion{}
	for _, inst := range g.Instances {
		if inst.source || inst.final {
			continue
		}
		p := pendingExpansion{laidOut: inst.laidOut}
		seen := map[string]bool{}
		for name, up := range inst.inputs {
			if up.final && !inst.isExpandInput(name) {
				continue
			}
			if !seen[up.Address] {
				seen[up.Address] = true
				p.after = append(p.after, up.Address)
			}
		}
		if inst.expander != nil {
			p.maxPerItem = inst.expander.MaxPerItem(inst.stInst)
			if inst.laidOut {
				p.items = len(inst.Up.Source.Items()) - len(inst.expanded)
			} else if inst.Up.Source != nil {
				p.items = len(inst.Up.Source.Items())
			}
		}
		sort.Strings(p.after)
		out[inst] = p
	}
	return out
}
