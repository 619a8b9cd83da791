// Package judging draws judges from a panel: k per item, with a recorded
// seed, never the model that generated what is judged nor a model of its
// family. LiveIdeaBench's judge panel and fluency judge use it; IdeaBench and
// ScholarEval can draw their judges the same way.
//
// The draw is rendezvous (highest-random-weight) hashing: every judge j of
// the panel gets the weight
//
//	w(j) = first 8 bytes of SHA-256(decimal seed, NUL, key, NUL, j.Name)
//
// and the draw for key is the k eligible judges of highest weight (ties,
// which need a SHA-256 collision in 64 bits, by name). A judge's weight for
// a key does not depend on the rest of the panel, which gives the property
// this package guarantees and tests:
//
//   - Adding a judge J to the panel changes only the draws that now pick J,
//     and each of those by exactly one judge: J replaces the old draw's
//     lowest-weight judge. Every draw that does not pick J is unchanged.
//   - Removing a judge changes only the draws that picked it (the next
//     judge by weight takes its place).
//   - Raising k keeps every judge drawn before (top-k is a prefix of
//     top-(k+1)), so judges_per_idea 3 -> 4 adds one judgement per item.
//
// The same seed, key and panel (in any order) give the same draw.
package judging

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// Excluded reports whether judge may not judge what gen generated, and why:
// it is gen itself (the same model name), or of gen's family. A nil gen (a
// dataset's ideas, written by nobody the experiment knows) excludes nobody.
// An empty family matches nothing: a model without a family is excluded
// only by its own name.
func Excluded(judge, gen *stages.Model) (bool, string) {
	if gen == nil {
		return false, ""
	}
	if judge.Name == gen.Name {
		return true, "is the generator"
	}
	if gen.Family != "" && judge.Family == gen.Family {
		return true, fmt.Sprintf("is of the generator's family %q", gen.Family)
	}
	return false, ""
}

// Eligible returns the judges of panel that may judge gen's output, in
// panel order.
func Eligible(panel []*stages.Model, gen *stages.Model) []*stages.Model {
	out := make([]*stages.Model, 0, len(panel))
	for _, j := range panel {
		if ex, _ := Excluded(j, gen); !ex {
			out = append(out, j)
		}
	}
	return out
}

// Check validates a panel for drawing k judges of gen's output: no two
// judges share a model name (a draw is by name), and at least k remain
// after the exclusions. Its errors are *stages.ParamError on param (the
// panel attribute), or on kParam when the panel would do with a smaller k,
// so validate points at the attribute to change.
func Check(param, kParam string, panel []*stages.Model, gen *stages.Model, k int) error {
	if len(panel) == 0 {
		return stages.ParamErrorf(param, "%s is empty; list the judge models, e.g. %s = [model.a, model.b, model.c]", param, param)
	}
	seen := map[string]string{}
	for _, j := range panel {
		if first, dup := seen[j.Name]; dup {
			return stages.ParamErrorf(param, "%s lists model name %q twice (%s and %s); judges are drawn by name, so list each model once", param, j.Name, first, j.Address)
		}
		seen[j.Name] = j.Address
	}
	if k < 1 {
		return stages.ParamErrorf(kParam, "%s = %d; draw at least one judge", kParam, k)
	}
	eligible := Eligible(panel, gen)
	if len(eligible) >= k {
		return nil
	}
	var why []string
	for _, j := range panel {
		if ex, reason := Excluded(j, gen); ex {
			why = append(why, fmt.Sprintf("%s %s", j.Address, reason))
		}
	}
	whose := "the ideas"
	if gen != nil {
		whose = "the ideas of " + gen.Name
	}
	msg := fmt.Sprintf("%s has %d judge(s) for %s, fewer than %s = %d", param, len(eligible), whose, kParam, k)
	if len(why) > 0 {
		msg += " (excluded: " + strings.Join(why, "; ") + ")"
	}
	return stages.ParamErrorf(param, "%s; add judges of other families to %s or lower %s", msg, param, kParam)
}

// Weight is judge name's rendezvous weight for key under seed.
func Weight(seed int, key, name string) uint64 {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(seed)))
	h.Write([]byte{0})
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(name))
	var sum [sha256.Size]byte
	return binary.BigEndian.Uint64(h.Sum(sum[:0]))
}

// Draw returns the k judges of eligible with the highest weight for key,
// highest first. With fewer than k eligible it returns them all (Check
// refuses that case at layout). eligible is not modified.
func Draw(seed int, key string, eligible []*stages.Model, k int) []*stages.Model {
	type weighted struct {
		m *stages.Model
		w uint64
	}
	ws := make([]weighted, len(eligible))
	for i, m := range eligible {
		ws[i] = weighted{m, Weight(seed, key, m.Name)}
	}
	sort.Slice(ws, func(a, b int) bool {
		if ws[a].w != ws[b].w {
			return ws[a].w > ws[b].w
		}
		return ws[a].m.Name < ws[b].m.Name
	})
	if k > len(ws) {
		k = len(ws)
	}
	out := make([]*stages.Model, k)
	for i := range out {
		out[i] = ws[i].m
	}
	return out
}

// Key joins the parts that identify one draw (an item and a sample, an
// item and a pair) into a draw key. Parts are separated by NUL, which no
// item id or number holds, so different parts never give one key.
func Key(parts ...string) string { return strings.Join(parts, "\x00") }
