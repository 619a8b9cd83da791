package engine

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// aboutPrefix marks parts stored beside a record to explain a later miss in
// the user's words. They are never key material: keyOf is computed before
// they are added. A model node's key holds its rendered prompt, so a
// reworded quality definition changes "prompt"; the about parts let the
// plan say "quality.definition changed" instead.
const aboutPrefix = "about:"

// aboutDigestLen is how many hex digits of an about part's digest are stored.
const aboutDigestLen = 16

// aboutParts describes an instance's non-input params one field at a time:
// a model param P as P (its name), P.temperature, P.top_p, P.max_tokens,
// P.seed; a quality Q as Q.name and Q.definition; any other param by value.
func aboutParts(t stages.Type, params stages.Params) []namedPart {
	var out []namedPart
	add := func(name, value string) {
		out = append(out, namedPart{name: aboutPrefix + name, digest: sha256.Sum256([]byte(value)), display: displayValue(value)})
	}
	for _, p := range t.Params() {
		v, ok := params[p.Name]
		if !ok || v == nil {
			continue
		}
		switch x := v.(type) {
		case *stages.Upstream, []*stages.Upstream:
			// Inputs explain themselves: "upstream output changed".
		case *stages.Model:
			add(p.Name, x.Name)
			add(p.Name+".temperature", floatDisplay(x.Temperature))
			add(p.Name+".top_p", floatDisplay(x.TopP))
			add(p.Name+".max_tokens", strconv.Itoa(x.MaxTokens))
			add(p.Name+".seed", intDisplay(x.Seed))
		case []*stages.Model:
			names := make([]string, len(x))
			for i, m := range x {
				names[i] = m.Name
			}
			add(p.Name, strings.Join(names, ", "))
		case *stages.Quality:
			add(p.Name+".name", x.Name)
			add(p.Name+".definition", x.Definition)
		case string:
			add(p.Name, x)
		default:
			b, _ := json.Marshal(x)
			add(p.Name, string(b))
		}
	}
	return out
}

// displayValue shortens a value for an explanation; long texts (prompts,
// definitions) are only said to have changed.
func displayValue(v string) string {
	if len(v) > 40 || strings.ContainsAny(v, "\n") {
		return ""
	}
	return v
}

// explainAbout names the about parts that differ between an old record's
// parts and the new ones, or returns nil when none does (or the old record
// has none).
func explainAbout(prev map[string]string, prevDisplay map[string]string, about []namedPart) []string {
	var out []string
	for _, p := range about {
		old, ok := prev[p.name]
		if !ok || strings.HasPrefix(fmt.Sprintf("%x", p.digest), old) {
			continue
		}
		name := strings.TrimPrefix(p.name, aboutPrefix)
		od, nd := prevDisplay[p.name], p.display
		if od != "" && nd != "" {
			out = append(out, fmt.Sprintf("%s changed (%s -> %s)", name, od, nd))
		} else {
			out = append(out, name+" changed")
		}
	}
	return out
}
