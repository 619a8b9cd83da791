package format

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	// "Rating: 7", "Overall rating (0-10): 7/10", "Score = 8", "my rating is 6".
	ratingLabel = regexp.MustCompile(`(?i)\b(?:(?:overall|final|my|total|overlap)\s+)?(?:rating|score)\b\s*(?:\([^)\n]{0,30}\)\s*)?(?:out\s+of\s+\d+\s*)?(?::|=|\bis\b|\s-\s|\s\x{2013}\s|\s\x{2014}\s)\s*`)
	// "I would rate this 7 out of 10", "I'd rate it a 6/10", "rated at 8 out of 10".
	ratePhrase    = regexp.MustCompile(`(?i)\brat(?:e|ed|ing)\b[^.\n]{0,40}?\b(\d{1,9}(?:\.\d+)?)\s*(?:/|out\s+of)\s*(\d{1,9})\b`)
	ratingHeading = regexp.MustCompile(`(?i)^(?:(?:overall|final|my|overlap)\s+)?(?:rating|score)\s*:?$`)
	fraction      = regexp.MustCompile(`\b(\d{1,9}(?:\.\d+)?)\s*(?:/|out\s+of)\s*(\d{1,9})\b`)
	bareNumber    = regexp.MustCompile(`^[([]?([-+]?\d{1,9}(?:\.\d+)?)[)\].]?$`)
	explLabel     = regexp.MustCompile(`(?im)^[^\S\n]*(?:explanation|justification|reasoning|rationale|reason|comments?)[^\S\n]*(?:\([^)\n]{0,30}\)[^\S\n]*)?(?::[^\S\n]*|$)`)
	ratingKeys    = map[string]bool{"rating": true, "score": true, "overallrating": true, "overallscore": true, "finalrating": true, "finalscore": true, "overlaprating": true, "overlapscore": true}
	explKeys      = map[string]bool{"explanation": true, "justification": true, "reasoning": true, "rationale": true, "reason": true, "comment": true, "comments": true}
)

func parseRating(spec Spec, text string) (*Answer, error) {
	if a, ok, err := ratingFromJSON(spec, text); ok {
		return a, err
	}
	body := plainText(text)
	sc, line, ok := ratingScore(body)
	if !ok {
		return nil, fmt.Errorf("found no rating; give one line %q with a whole number from %s", "Rating: N", spec.rangeText())
	}
	v, err := spec.value("rating", sc)
	if err != nil {
		return nil, err
	}
	return &Answer{Rating: v, Explanation: explanation(body, line)}, nil
}

// ratingScore finds the rating: the last "Rating:" label, else the last "rate
// this N out of M" phrase, else a single "N/M" or "N out of M" fraction, else
// an answer that is only a number. line is the line of a labelled rating (-1
// otherwise), so the explanation can leave it out.
func ratingScore(body string) (score, int, bool) {
	lines := strings.Split(body, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		ms := ratingLabel.FindAllStringIndex(lines[i], -1)
		for k := len(ms) - 1; k >= 0; k-- {
			if sc, ok := readScore(lines[i][ms[k][1]:]); ok {
				return sc, i, true
			}
		}
		// A heading "Rating" with the number on the next line.
		if i+1 < len(lines) && ratingHeading.MatchString(lines[i]) {
			if sc, ok := readScore(lines[i+1]); ok {
				return sc, i + 1, true
			}
		}
	}
	if ms := ratePhrase.FindAllStringSubmatch(body, -1); len(ms) > 0 {
		return fractionScore(ms[len(ms)-1]), -1, true
	}
	if ms := fraction.FindAllStringSubmatch(body, -1); len(ms) > 0 {
		first := fractionScore(ms[0])
		for _, m := range ms[1:] {
			if fractionScore(m) != first {
				return score{}, -1, false // several different scores: none is the rating
			}
		}
		return first, -1, true
	}
	if g := bareNumber.FindStringSubmatch(strings.TrimSpace(body)); g != nil {
		return score{raw: g[1]}, 0, true
	}
	return score{}, -1, false
}

func fractionScore(m []string) score {
	sc, _ := readScore(m[1] + "/" + m[2])
	return sc
}

// explanation returns the text after an "Explanation:" label (up to a later
// rating line), or else the whole answer without its rating line.
func explanation(body string, ratingLine int) string {
	if loc := explLabel.FindStringIndex(body); loc != nil {
		expl := body[loc[1]:]
		if sc := ratingLabel.FindStringIndex(expl); sc != nil {
			if nl := strings.LastIndexByte(expl[:sc[0]], '\n'); nl >= 0 {
				expl = expl[:nl]
			}
		}
		return strings.TrimSpace(expl)
	}
	lines := strings.Split(body, "\n")
	if ratingLine >= 0 && ratingLine < len(lines) {
		lines = append(lines[:ratingLine:ratingLine], lines[ratingLine+1:]...)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func ratingFromJSON(spec Spec, text string) (*Answer, bool, error) {
	values := jsonValues(text)
	for i := len(values) - 1; i >= 0; i-- {
		for _, obj := range objects(values[i]) {
			v, ok := obj.lookup(func(k string) bool { return ratingKeys[k] })
			if !ok {
				continue
			}
			sc, ok := jsonScore(v)
			if !ok {
				return nil, true, fmt.Errorf("rating %s is not a number", jsonText(v))
			}
			r, err := spec.value("rating", sc)
			if err != nil {
				return nil, true, err
			}
			a := &Answer{Rating: r}
			if e, ok := obj.lookup(func(k string) bool { return explKeys[k] }); ok {
				if s, ok := e.(string); ok {
					a.Explanation = strings.TrimSpace(s)
				}
			}
			return a, true, nil
		}
	}
	return nil, false, nil
}

// jsonText renders a JSON value briefly for an error message.
func jsonText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", snippet(x, 40))
	case jsonNumber:
		return string(x)
	case bool:
		return fmt.Sprint(x)
	case []any:
		return "a list"
	}
	return "an object"
}
