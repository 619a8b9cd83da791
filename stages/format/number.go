package format

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// score is a number as a model wrote it: "7", "7.0", "7/10", "7 out of 10".
type score struct {
	raw   string // the number itself, e.g. "7.0"
	denom int    // 10 for "7/10"; 0 when no scale was written
}

var leadingScore = regexp.MustCompile(`^[*_\s"']*([-+]?\d{1,9}(?:\.\d+)?)(?:[*_"']*\s*(?:/|out of|of)\s*(\d{1,9})\b)?`)

// readScore reads a score at the start of s.
func readScore(s string) (score, bool) {
	m := leadingScore.FindStringSubmatch(s)
	if m == nil {
		return score{}, false
	}
	sc := score{raw: m[1]}
	if m[2] != "" {
		sc.denom, _ = strconv.Atoi(m[2])
	}
	return sc, true
}

func (sc score) String() string {
	if sc.denom > 0 {
		return fmt.Sprintf("%s/%d", sc.raw, sc.denom)
	}
	return sc.raw
}

// value converts a score to a whole number within the spec's bounds. Fractions
// are errors rather than rounded: "7.5" on an integer scale means the model did
// not follow the format, and guessing would bias the scores.
func (s Spec) value(what string, sc score) (int, error) {
	f, err := strconv.ParseFloat(strings.TrimPrefix(sc.raw, "+"), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > 1e9 {
		return 0, fmt.Errorf("%s %q is not a number", what, sc.raw)
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("%s %s is not a whole number", what, sc.raw)
	}
	v := int(f)
	if sc.denom > 0 && s.bounded() && sc.denom != s.Max {
		return 0, fmt.Errorf("%s %s is on a scale to %d, expected %s", what, sc, sc.denom, s.rangeText())
	}
	if !s.inRange(v) {
		return 0, fmt.Errorf("%s %d is outside %s", what, v, s.rangeText())
	}
	return v, nil
}

// jsonScore reads a score from a JSON value: a number, a numeric string
// ("7", "7/10", "7 (high)"), or an object holding one ({"score": 7, "reason": ...}).
func jsonScore(v any) (score, bool) {
	switch x := v.(type) {
	case jsonNumber:
		return score{raw: string(x)}, true
	case string:
		return readScore(x)
	case *jsonObject:
		if inner, ok := x.lookup(func(k string) bool {
			return k == "score" || k == "rating" || k == "value" || k == "grade"
		}); ok {
			if _, nested := inner.(*jsonObject); !nested {
				return jsonScore(inner)
			}
		}
	}
	return score{}, false
}
