package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
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
	return true, d.Reason
}

// Reasons of different items count together when they differ only in their
// counts: "2 of 5 references kept, fewer than min_references = 3" and "0 of 9
// references kept, fewer than min_references = 3" are one reason, written
// with each count's range over the items ("0-2 of 5-9 references kept, ...").
// A setting's value (the token after "= ") is part of the reason's text, not a
// count, so it stays as the stage wrote it (min_references = 3,
// published_after = 2024-05-01).

// count matches a count in a reason, or a range of counts in one already
// merged ("0-2").
var count = regexp.MustCompile(`[0-9]+(?:-[0-9]+)?`)

// span is the range of one count over the items a reason covers.
type span struct{ lo, hi int }

// slotMark stands for a count in a reason's template; stages' reasons are
// text and never hold it.
const slotMark = "\x00"

// parseReason splits a reason into its template (the text with each count
// replaced by slotMark) and the counts' spans.
func parseReason(reason string) (string, []span) {
	var settings [][2]int // the values after "= ", kept as text
	for i := 0; ; {
		j := strings.Index(reason[i:], "= ")
		if j < 0 {
			break
		}
		start := i + j + 2
		end := start
		for end < len(reason) && !strings.ContainsRune(" ,;()", rune(reason[end])) {
			end++
		}
		settings = append(settings, [2]int{start, end})
		i = end
	}
	inSetting := func(at int) bool {
		for _, s := range settings {
			if at >= s[0] && at < s[1] {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	var spans []span
	last := 0
	for _, m := range count.FindAllStringIndex(reason, -1) {
		if inSetting(m[0]) {
			continue
		}
		lo, hi, _ := strings.Cut(reason[m[0]:m[1]], "-")
		if hi == "" {
			hi = lo
		}
		l, err1 := strconv.Atoi(lo)
		h, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil { // too long for an int: text
			continue
		}
		b.WriteString(reason[last:m[0]])
		b.WriteString(slotMark)
		spans = append(spans, span{l, h})
		last = m[1]
	}
	b.WriteString(reason[last:])
	return b.String(), spans
}

// renderReason writes a template's slots as their spans: one number where
// every item had the same count, else "lo-hi".
func renderReason(template string, spans []span) string {
	parts := strings.Split(template, slotMark)
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(p)
		if i < len(spans) {
			if s := spans[i]; s.lo == s.hi {
				b.WriteString(strconv.Itoa(s.lo))
			} else {
				fmt.Fprintf(&b, "%d-%d", s.lo, s.hi)
			}
		}
	}
	return b.String()
}

// addDropReason counts one more item dropped for reason in reasons, keyed by
// the reasons merged so far: an item whose reason differs from a key's only
// in its counts joins that key, whose ranges widen to cover it.
func addDropReason(reasons map[string]int, reason string) {
	if _, ok := reasons[reason]; ok {
		reasons[reason]++
		return
	}
	tmpl, spans := parseReason(reason)
	if len(spans) > 0 {
		for key, n := range reasons {
			kt, ks := parseReason(key)
			if kt != tmpl || len(ks) != len(spans) {
				continue
			}
			for i := range ks {
				ks[i].lo, ks[i].hi = min(ks[i].lo, spans[i].lo), max(ks[i].hi, spans[i].hi)
			}
			delete(reasons, key)
			reasons[renderReason(kt, ks)] = n + 1
			return
		}
	}
	reasons[reason] = 1
}

func noteDrop(st *nodeState, out []byte) {
	st.dropped, st.dropWhy = dropOf(out)
}
