package engine

import (
	"fmt"
	"slices"
	"strings"
)

// ClosureKeys returns the keys of the cached records that the output of the
// stage instance (or report) at addr depends on: its own nodes' and, through
// the DAG, every node they read, transitively (answer keys included, as in
// Keys). A pack carries exactly these. addr may name a for_each block
// (report.x) or one instance of it.
func (p *Plan) ClosureKeys(addr string) (map[string]bool, error) {
	var stack []int32
	for i, n := range p.g.Nodes {
		a := n.Inst.Address
		if a == addr || strings.HasPrefix(a, addr+"[") {
			stack = append(stack, int32(i))
		}
	}
	if len(stack) == 0 {
		var known []string
		for _, inst := range p.g.Instances {
			if !inst.source {
				known = append(known, inst.Address)
			}
		}
		slices.Sort(known)
		return nil, fmt.Errorf("no stage, report, table or plot %q in %s (it has %s)", addr, p.g.Exp.Name, strings.Join(known, ", "))
	}
	seen := map[int32]bool{}
	out := map[string]bool{}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			continue
		}
		seen[i] = true
		if st := &p.states[i]; st.status == StatusCached && st.key != "" {
			out[st.key] = true
			if st.answerKey != "" {
				out[st.answerKey] = true
			}
		}
		stack = append(stack, p.g.Nodes[i].Deps...)
	}
	return out, nil
}

// Missing counts the plan's nodes that are not cached (a pack of an
// incomplete output would not rebuild it).
func (p *Plan) Missing() int { return p.Summary.Nodes.ToRun }
