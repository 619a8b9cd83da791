package format

import (
	"fmt"
	"math/rand"
	"strings"
)

// synthHypothesisList writes order as IdeaBench's ranking prompt asks,
// "1. Hypothesis X: rationale", in three forms judges use: plain, the
// label in bold ("1. **Hypothesis X**: ..."), and a rationale that names
// the next hypothesis with a colon after it. Parse reads all three as
// order; the authors' parser (IdeaBenchRanking) reads the first two as
// order and the third with every named hypothesis repeated, so a mock run
// shows what their reading changes.
func synthHypothesisList(order []string, r *rand.Rand) string {
	form := r.Intn(3)
	var b strings.Builder
	for i, c := range order {
		switch {
		case form == 1:
			fmt.Fprintf(&b, "%d. **Hypothesis %s**: %s.\n", i+1, c, pick(r, rationales))
		case form == 2 && i+1 < len(order):
			fmt.Fprintf(&b, "%d. Hypothesis %s: stronger than Hypothesis %s: %s.\n", i+1, c, order[i+1], pick(r, rationales))
		default:
			fmt.Fprintf(&b, "%d. Hypothesis %s: %s.\n", i+1, c, pick(r, rationales))
		}
	}
	return b.String()
}
