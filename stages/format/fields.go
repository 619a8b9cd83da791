package format

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

func parseFields(spec Spec, text string) (*Answer, error) {
	found := fieldsFromJSON(spec.Fields, text)
	if len(found) < len(spec.Fields) {
		body := plainText(text)
		for _, f := range spec.Fields {
			if _, ok := found[f]; !ok {
				if v, ok := fieldFromProse(f, body); ok {
					found[f] = v
				}
			}
		}
	}
	out := make(map[string]int, len(spec.Fields))
	var missing, problems []string
	for _, f := range spec.Fields {
		v, ok := found[f]
		if !ok {
			missing = append(missing, fmt.Sprintf("%q", f))
			continue
		}
		sc, ok := jsonScore(v)
		if !ok {
			problems = append(problems, fmt.Sprintf("field %q is %s, not a number", f, jsonText(v)))
			continue
		}
		n, err := spec.value(fmt.Sprintf("field %q =", f), sc)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out[f] = n
	}
	if len(missing) == 1 {
		problems = append(problems, "missing field "+missing[0])
	} else if len(missing) > 1 {
		problems = append(problems, "missing fields "+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return &Answer{Fields: out}, nil
}

// fieldsFromJSON returns the raw values of the wanted fields from the JSON
// object that has most of them (the last one on a tie: a model that corrects
// itself does so later). Keys match case-insensitively and may carry a
// "score"/"rating" suffix; nested objects ({"scores": {...}}) are searched.
func fieldsFromJSON(fields []string, text string) map[string]any {
	best := map[string]any{}
	for _, v := range jsonValues(text) {
		got := map[string]any{}
		for _, f := range fields {
			want := normKey(f)
			for _, obj := range objects(v) {
				if val, ok := obj.lookup(func(k string) bool { return fieldKeyMatches(k, want) }); ok {
					got[f] = val
					break
				}
			}
		}
		if len(got) > 0 && len(got) >= len(best) {
			best = got
		}
	}
	return best
}

func fieldKeyMatches(key, want string) bool {
	if key == want {
		return true
	}
	rest, ok := strings.CutPrefix(key, want)
	return ok && (rest == "score" || rest == "rating" || rest == "scores")
}

// fieldFromProse reads "Originality: 7", "**Feasibility (1-10):** 6/10",
// "- clarity = 8" or a table row "| Clarity | 8 |"; the last such line wins.
func fieldFromProse(field, body string) (any, bool) {
	re := fieldLineRegexp(field)
	ms := re.FindAllStringSubmatchIndex(body, -1)
	for k := len(ms) - 1; k >= 0; k-- {
		rest := body[ms[k][1]:]
		if sc, ok := readScore(rest); ok {
			return sc.String(), true
		}
	}
	return nil, false
}

var fieldLineCache sync.Map // field name -> *regexp.Regexp

// fieldLineRegexp matches the start of a prose line naming field, up to where
// its value starts. Words of the field name may be joined by spaces,
// underscores or hyphens ("clarity_score", "Clarity score").
func fieldLineRegexp(field string) *regexp.Regexp {
	if re, ok := fieldLineCache.Load(field); ok {
		return re.(*regexp.Regexp)
	}
	words := strings.FieldsFunc(field, func(r rune) bool { return r == '_' || r == '-' || r == ' ' })
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	// A quoted key ("originality": 7 on a line of its own, JSON without
	// its braces) counts as a label too.
	pattern := `(?im)^[^\S\n]*(?:[-*+•|][^\S\n]*|\d{1,2}[.)][^\S\n]*)?["']?` + strings.Join(words, `[\s_-]*`) +
		`(?:[\s_-]*(?:score|rating))?\b["']?[^\S\n]*(?:\([^)\n]{0,30}\)[^\S\n]*)?(?::|=|\||\s-\s|\s\x{2013}\s|\s\x{2014}\s|\s)[^\S\n]*`
	re := regexp.MustCompile(pattern)
	fieldLineCache.Store(field, re)
	return re
}
