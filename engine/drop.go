package engine

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// Dropped items: a stage that leaves an item out (a target with too few
// references) says so in the node's output, as {"dropped": true, "reason":
// "..."}; its dependents propagate "dropped": true. The engine counts these
// per stage so plan and run can say how many items were dropped and why,
// without knowing any stage's output type.

var droppedField = []byte(`"dropped":true`)

// dropOf reads the drop convention from an output, cheaply when it is absent.
func dropOf(out []byte) (bool, string) {
	if !bytes.Contains(out, droppedField) {
		return false, ""
	}
	var d struct {
		Dropped bool   `json:"dropped"`
		Reason  string `json:"reason"`
	}
	if json.Unmarshal(out, &d) != nil || !d.Dropped {
		return false, ""
	}
	return true, generalise(d.Reason)
}

var digits = regexp.MustCompile(`[0-9]+`)

// generalise turns "2 of 5 references kept, fewer than min_references = 3"
// into "N of N references kept, fewer than min_references = 3" so reasons of
// different items count together: counts become N, a setting's value (after
// "= ") stays.
func generalise(reason string) string {
	var b []byte
	last := 0
	for _, m := range digits.FindAllStringIndex(reason, -1) {
		if m[0] >= 2 && reason[m[0]-2:m[0]] == "= " {
			continue
		}
		b = append(b, reason[last:m[0]]...)
		b = append(b, 'N')
		last = m[1]
	}
	return string(append(b, reason[last:]...))
}

func noteDrop(st *nodeState, out []byte) {
	st.dropped, st.dropWhy = dropOf(out)
}
