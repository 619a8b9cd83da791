package format

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// Compatibility parses for ScholarEval (Moussa et al., 2025): what the
// authors' code would have read from an answer, stored beside ideaflow's
// strict parse so a report can show both numbers. They are never the
// parse a stage decides by; their names start with Compat so that no one
// takes them for one.

// CompatPrometheusParser names the code CompatPrometheusAbsolute follows:
// ScholarEval's evaluation/coverage.py grades with PrometheusEval from the
// prometheus-eval package, whose batch_completions_with_retries hands each
// answer, stripped by its LiteLLM wrapper, to _parse_output_absolute.
// ScholarEval's requirements.txt does not pin prometheus-eval; 0.1.20 is the
// last release, and the parser has not changed since (8eee0ba, 2024-08-30).
const CompatPrometheusParser = "prometheus-eval 0.1.20 prometheus_eval/parser.py _parse_output_absolute " +
	"(prometheus-eval/prometheus-eval@1a88c06, unchanged at dcfb442), as evaluation/coverage.py calls it (skai-research/ScholarEval@b8391a0)"

// prometheusAbsolute is _parse_output_absolute's pattern (re.IGNORECASE |
// re.VERBOSE, searched once) with Python's \s and \d (Unicode decimal
// digits) spelled out: a label ("[RESULT]", "[SCORE]", "Score", "Result",
// "[Result]", each with an optional colon, or "score of"), brackets or
// spaces, a number, an optional ")", "]", "/5" or "out of 5", and then
// nothing but spaces to the end of the answer. RE2's leftmost-first
// matching picks the submatch Python's backtracking does.
var prometheusAbsolute = regexp.MustCompile(`(?i)(?:\[RESULT\]|\[SCORE\]|Score:?|score:?|Result:?|\[Result\]:?|score` + pySpace + `+of)` +
	pySpace + `*(?:\(|\[|` + pySpace + `)*(\p{Nd}+)` +
	`(?:(?:\)|\]|` + pySpace + `|$)|(?:/` + pySpace + `*5|` + pySpace + `*out` + pySpace + `*of` + pySpace + `*5))?` +
	`(?:` + pySpace + `*$)`)

// CompatPrometheusAbsolute reads an absolute-grading answer as
// prometheus-eval's parser does (see CompatPrometheusParser), and returns
// what it returns: the score and, as feedback, the whole answer, stripped
// as Python's str.strip strips (the parser computes the text before the
// score and then returns the answer instead). ok is false where it reads
// nothing: no label and number at the very end of the answer ("[RESULT] 4."
// and "[RESULT] **4**" are not read, nor a score followed by any other
// words), or a number outside 1-5 ("[RESULT] 0", "[RESULT] 45"), even when
// an earlier label holds a valid one. The authors' code then sends the
// request again, up to 10 times, and records no score if every answer
// fails. Where it reads a score, that score is the leftmost label from
// which only spaces follow, so a later restatement does not win: "[RESULT] 4
// ... Score: 3" reads 3, and a trailing "(4)" or "5/5" is read whole.
//
// answer is the text ideaflow's format layer kept (format.Parse's Text:
// trimmed, reasoning blocks removed, typographic look-alikes such as
// full-width brackets and zero-width spaces mapped to ASCII); the
// authors' parser saw the model's text, which differs from it only there.
func CompatPrometheusAbsolute(answer string) (score int, feedback string, ok bool) {
	out := strings.TrimFunc(answer, isPySpace)
	m := prometheusAbsolute.FindStringSubmatch(out)
	if m == nil {
		return 0, "", false
	}
	// int() of the digits, any decimal digits (Python's \d), kept from
	// overflowing: anything past 5 is out of range all the same.
	v := 0
	for _, r := range m[1] {
		v = 10*v + digitValue(r)
		if v > 5 {
			return 0, "", false
		}
	}
	if v < 1 {
		return 0, "", false
	}
	return v, out, true
}

// CompatPreferenceParser names the code CompatScholarEvalPreference follows.
const CompatPreferenceParser = "ScholarEval evaluation/llm_metrics.py parse_judgment_response, with ScholarEval/utils/string_utils.py StringUtils.extract_json_output (skai-research/ScholarEval@b8391a0)"

// PreferenceCriteria are the criteria of ScholarEval's pairwise judge, as
// its answer names them ("<criterion>-rationale", "<criterion>-winner").
var PreferenceCriteria = []string{"Evidence-based", "Actionability", "Depth"}

// preferenceFence is extract_json_output's pattern for an answer that
// starts with "```json".
var preferenceFence = regexp.MustCompile("(?s)```json\\s*(\\{.*?\\}|\\[.*?\\])\\s*```")

// CompatScholarEvalPreference reads a pairwise judgment as the authors'
// code does (see CompatPreferenceParser) and returns, per criterion, the
// winner it records in report letters: "A", "B", "TIE" or "UNCLEAR". ok is
// false where it reads no judgment at all (and llm_metrics.py counts every
// criterion UNCLEAR): an answer that starts with anything but "```json" and
// is not JSON as a whole (prose before a fence, "```JSON", a fence without
// a tag), JSON that Python's json.loads refuses (a raw newline inside a
// string), or a winner or rationale field missing. A winner is upper-cased
// and, unless it is exactly A, B or TIE, read by what it contains, "TIE"
// first, then "A", then "B": "B (marginally)" and "Both are equal" read A,
// "Neither" and null read UNCLEAR. Backslashes not followed by a JSON
// escape letter are doubled first, as its clean_json_string does, which
// breaks \u escapes ("\u0041" reads UNCLEAR). Python's NaN and Infinity
// literals are not accepted here.
func CompatScholarEvalPreference(answer string) (winners map[string]string, ok bool) {
	var text string
	if strings.HasPrefix(answer, "```json") {
		m := preferenceFence.FindStringSubmatch(answer)
		if m == nil {
			return nil, false
		}
		text = m[1]
	} else {
		text = strings.TrimFunc(answer, isPySpace)
	}
	var v any
	clean := pyCleanJSON(text)
	dec := json.NewDecoder(strings.NewReader(clean))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || strings.TrimLeft(clean[dec.InputOffset():], " \t\n\r") != "" {
		return nil, false // json.loads: an error, or "Extra data"
	}
	if list, isList := v.([]any); isList {
		if len(list) == 0 {
			return nil, false
		}
		v = list[0]
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return nil, false
	}
	winners = map[string]string{}
	for _, c := range PreferenceCriteria {
		if _, has := obj[c+"-rationale"]; !has {
			return nil, false
		}
		w, has := obj[c+"-winner"]
		if !has {
			return nil, false
		}
		s := strings.ToUpper(strings.TrimFunc(pyStr(w), isPySpace))
		switch {
		case s == "A" || s == "B" || s == "TIE":
		case strings.Contains(s, "TIE"):
			s = "TIE"
		case strings.Contains(s, "A"):
			s = "A"
		case strings.Contains(s, "B"):
			s = "B"
		default:
			s = "UNCLEAR"
		}
		winners[c] = s
	}
	return winners, true
}

// pyCleanJSON doubles each backslash that is neither preceded by a
// backslash nor followed by one of "\/bfnrt (clean_json_string's
// (?<!\\)\\(?!["\\/bfnrt]), looked up in the original text).
func pyCleanJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		if c == '\\' && (i == 0 || s[i-1] != '\\') && (i+1 == len(s) || !strings.ContainsRune(`"\/bfnrt`, rune(s[i+1]))) {
			b.WriteByte('\\')
		}
	}
	return b.String()
}

// pyStr is Python's str() of a JSON value as json.loads returns it: what
// the authors' code upper-cases and searches for A, B and TIE.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return x
	case json.Number:
		return x.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // Python keeps insertion order; only the letters matter here
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return ""
}

func pyRepr(v any) string {
	if s, isStr := v.(string); isStr {
		return "'" + s + "'"
	}
	return pyStr(v)
}
