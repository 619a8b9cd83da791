// Package judging draws judges from a panel: k per item, with a recorded
// seed, never the model that generated what is judged (and, under a
// family exclusion, no model of its family). LiveIdeaBench's judge panel
// and fluency judge use it; IdeaBench and ScholarEval can draw their
// judges the same way.
//
// Who may not judge is an Exclusion: ExcludeModel keeps out the generator
// itself, by its exact model name, as LiveIdeaBench's run.py does
// (available_critics = [m for m in CRITIC_MODELS if m != idea_model]);
// ExcludeFamily keeps out every model of the generator's family too
// (ideaflow's stricter rule: a fine-tune does not judge its base);
// ExcludeNone keeps out nobody, as hash.py's fluency judge
// (random.choice(CRITIC_MODELS)).
//
// The draw is rendezvous (highest-random-weight) hashing: every judge j of
// the panel gets the weight
//
//	w(j) = first 8 bytes of SHA-256(decimal seed, NUL, key, NUL, j.Name)
//
// and the draw for key is the k eligible judges of highest weight (ties,
// which need a SHA-256 collision in 64 bits, by name). The weights of one
// key are independent and uniform, so the draw is a uniform random k of
// the eligible judges, as random.sample draws them; what a key names
// decides which draws are independent of each other (the caller's choice:
// LiveIdeaBench keys each idea by its generator, keyword and sample, so
// every idea gets a draw of its own). A judge's weight for a key does not
// depend on the rest of the panel, which gives the property this package
// guarantees and tests:
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

// Exclusion says which judges may not judge a generator's output.
type Exclusion string

const (
	// ExcludeModel: the generator itself, by exact model name
	// (LiveIdeaBench's run.py, and its paper's "that model is explicitly
	// excluded from the judge panel").
	ExcludeModel Exclusion = "model"
	// ExcludeFamily: the generator and every model of its family.
	ExcludeFamily Exclusion = "family"
	// ExcludeNone: nobody (LiveIdeaBench's hash.py draws its fluency judge
	// from the whole panel).
	ExcludeNone Exclusion = "none"
)

// Exclusions lists the exclusions in the order a param's doc names them.
var Exclusions = []Exclusion{ExcludeModel, ExcludeFamily, ExcludeNone}

// ParseExclusion reads an exclusion param's value.
func ParseExclusion(param, v string) (Exclusion, error) {
	for _, e := range Exclusions {
		if string(e) == v {
			return e, nil
		}
	}
	return "", stages.ParamErrorf(param, `%s = %q is not one of "model" (the generator itself, as the authors' code), "family" (the generator's whole family) or "none"`, param, v)
}

// Excluded reports whether judge may not judge what gen generated under
// ex, and why: it is gen itself (the same model name), or, under
// ExcludeFamily, of gen's family. A nil gen (a dataset's ideas, written by
// nobody the experiment knows) excludes nobody. An empty family matches
// nothing: a model without a family is excluded only by its own name.
func Excluded(judge, gen *stages.Model, ex Exclusion) (bool, string) {
	if gen == nil || ex == ExcludeNone {
		return false, ""
	}
	if judge.Name == gen.Name {
		return true, "is the generator"
	}
	if ex == ExcludeFamily && gen.Family != "" && judge.Family == gen.Family {
		return true, fmt.Sprintf("is of the generator's family %q", gen.Family)
	}
	return false, ""
}

// Eligible returns the judges of panel that may judge gen's output under
// ex, in panel order.
func Eligible(panel []*stages.Model, gen *stages.Model, ex Exclusion) []*stages.Model {
	out := make([]*stages.Model, 0, len(panel))
	for _, j := range panel {
		if excluded, _ := Excluded(j, gen, ex); !excluded {
			out = append(out, j)
		}
	}
	return out
}

// Check validates a panel for drawing k judges of gen's output under ex:
// no two judges share a model name (a draw is by name), and at least k
// remain after the exclusions. Its errors are *stages.ParamError on param
// (the panel attribute), or on kParam when the panel would do with a
// smaller k, so validate points at the attribute to change.
func Check(param, kParam string, panel []*stages.Model, gen *stages.Model, k int, ex Exclusion) error {
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
	eligible := Eligible(panel, gen, ex)
	if len(eligible) >= k {
		return nil
	}
	var why []string
	for _, j := range panel {
		if out, reason := Excluded(j, gen, ex); out {
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
	fix := "add judges of other families to " + param
	if ex != ExcludeFamily {
		fix = "add judges to " + param
	}
	return stages.ParamErrorf(param, "%s; %s or lower %s", msg, fix, kParam)
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
