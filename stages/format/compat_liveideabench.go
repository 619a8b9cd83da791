package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// LiveIdeaBench's own parsers, as compatibility parses: what the authors'
// code (github.com/x66ccff/liveideabench) would have read from an answer,
// stored beside the strict parse of the same raw text so a report can show
// both and the difference the authors' mis-reads make. They are never used
// to accept or refuse an answer (the strict parse decides that, and asks
// again); they only read.
//
// Each mirrors one function of the authors' Python, with Python's
// semantics where they differ from Go's: re's \s and \d are Unicode
// (str.isspace, category Nd), json.loads accepts NaN and Infinity, and a
// score is used as float(value) the way stats.ipynb averages it. Where the
// authors' code would re-ask (an answer its parser cannot read), the
// compatibility parse says so (Valid false, with the reason) and reads
// nothing: no call is made here.

// Parser names, stored with every compatibility parse (repository, commit,
// file and function), so no one mistakes one for the strict parse.
const (
	ParserLiveIdeaBenchScoresV1 = "x66ccff/liveideabench@8dbdfef8cc6533cdf6d4f75f47b2cc16a11ea61e utils/LLM.py parse_critique"
	ParserLiveIdeaBenchScoresV2 = "x66ccff/liveideabench@6fc8285269c7679ed427b20864d1f1b127b1a228 utils/LLM.py parse_critique (get_values_from_dict)"
	ParserLiveIdeaBenchLetterV1 = "x66ccff/liveideabench@2520c315da313212f23bb77111511c146e8b261b hash.py main (method llm)"
	ParserLiveIdeaBenchLetterV2 = "x66ccff/liveideabench@6fc8285269c7679ed427b20864d1f1b127b1a228 hash.py main (method llm)"
)

// CompatScores is what an authors' score parser read from one answer.
// Valid says the authors' pipeline would use the answer's scores: their
// parser found every score and their statistics can average it (float()
// of each value; a value "N/A" makes stats.ipynb drop the row). Scores
// holds each value read, as float(value), when Valid; Reason says why not
// otherwise (where the authors' run.py asks the judge again).
type CompatScores struct {
	Scores map[string]float64 `json:"scores,omitempty"`
	Valid  bool               `json:"valid"`
	Reason string             `json:"reason,omitempty"`
}

// CompatLetter is what the authors' fluency parser read: the letter A-D,
// or Valid false and why (where hash.py asks again).
type CompatLetter struct {
	Letter string `json:"letter,omitempty"`
	Valid  bool   `json:"valid"`
	Reason string `json:"reason,omitempty"`
}

// liveIdeaBenchV2Keys are the keys get_values_from_dict reads, whatever the
// judge was asked for.
var liveIdeaBenchV2Keys = []string{"originality", "feasibility", "clarity"}

var (
	// LLM.py@8dbdfef: re.search(r"SCORES\s*=\s*({.+?})", raw_text, re.DOTALL).
	v1ScoresBlock = regexp.MustCompile(`(?s)SCORES` + pySpace + `*=` + pySpace + `*(\{.+?\})`)
	// LLM.py@6fc8285 get_values_from_dict, methods 1 to 3.
	v2FenceJSON = regexp.MustCompile("(?s)```json(.*?)```")
	v2Fence     = regexp.MustCompile("(?s)```(.*?)```")
	v2Braces    = regexp.MustCompile(`(?s)\{(.*?)\}`)
	// hash.py: re.sub(r'[^a-zA-Z]', '', critique).
	notASCIILetter = regexp.MustCompile(`[^a-zA-Z]`)
)

// v2KeyNumber is get_values_from_dict's method 4 for key: `"key"\s*:\s*(\d+)`,
// then the same without the quotes.
func v2KeyNumber(text, key string) (float64, bool) {
	for _, pat := range []string{`"` + regexp.QuoteMeta(key) + `"`, regexp.QuoteMeta(key)} {
		re := regexp.MustCompile(pat + pySpace + `*:` + pySpace + `*(\p{Nd}+)`)
		if m := re.FindStringSubmatch(text); m != nil {
			return pyInt(m[1]), true
		}
	}
	return 0, false
}

// LiveIdeaBenchScoresV1 reads a judge's answer as the December 2024
// release did (utils/LLM.py parse_critique at 8dbdfef): the first
// "SCORES = {...}" (case-sensitive, up to the first closing brace) decoded
// with json.loads, else again with every ' made " and every newline
// removed; each of fields is then read from that object by its exact
// name. An answer without the SCORES label, nested objects and prose
// scores read nothing.
func LiveIdeaBenchScoresV1(text string, fields []string) CompatScores {
	m := v1ScoresBlock.FindStringSubmatch(text)
	if m == nil {
		return CompatScores{Reason: `no "SCORES = {...}" block`}
	}
	v, err := pyJSONLoads(m[1])
	if err != nil {
		cleaned := strings.ReplaceAll(strings.ReplaceAll(m[1], "'", `"`), "\n", "")
		if v, err = pyJSONLoads(cleaned); err != nil {
			return CompatScores{Reason: "the SCORES block is not JSON, even with ' made \" (\"Error parsing SCORES\")"}
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return CompatScores{Reason: "the SCORES block is not an object"}
	}
	vals := make([]any, len(fields))
	for i, f := range fields {
		x, ok := obj[f]
		if !ok || x == nil {
			return CompatScores{Reason: fmt.Sprintf("the SCORES block has no %q", f)}
		}
		vals[i] = x
	}
	return pyScores(fields, vals)
}

// LiveIdeaBenchScoresV2 reads a judge's answer as the current release does
// (utils/LLM.py parse_critique and get_values_from_dict at 6fc8285), for
// its three keys originality, feasibility and clarity: the first ```json
// fence (else the first ``` fence) decoded with json.loads and its keys
// read; if it does not decode, the first {...} of the answer, up to the
// first closing brace; if that does not decode either, the first
// "key": N (then key: N) for each key, digits only. A fence that decodes
// to something other than an object is an error the parser does not
// survive; a missing key is a failed parse, with no further method tried.
func LiveIdeaBenchScoresV2(text string) CompatScores {
	keys := liveIdeaBenchV2Keys
	fromObject := func(v any) CompatScores {
		obj, ok := v.(map[string]any)
		if !ok {
			return CompatScores{Reason: "the JSON is not an object (rating_dict.get raises, parse_critique returns is_valid False)"}
		}
		vals := make([]any, len(keys))
		for i, k := range keys {
			x, ok := obj[k]
			if !ok || x == nil {
				return CompatScores{Reason: fmt.Sprintf("the JSON has no %q", k)}
			}
			vals[i] = x
		}
		return pyScores(keys, vals)
	}
	m := v2FenceJSON.FindStringSubmatch(text)
	if m == nil {
		m = v2Fence.FindStringSubmatch(text)
	}
	if m != nil {
		if v, err := pyJSONLoads(pyStrip(m[1])); err == nil {
			return fromObject(v)
		}
	}
	if m := v2Braces.FindStringSubmatch(text); m != nil {
		if v, err := pyJSONLoads("{" + m[1] + "}"); err == nil {
			return fromObject(v)
		}
	}
	out := CompatScores{Scores: map[string]float64{}}
	var missing []string
	for _, k := range keys {
		if v, ok := v2KeyNumber(text, k); ok {
			out.Scores[k] = v
		} else {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		out.Valid = true
		return out
	}
	if len(missing) == len(keys) {
		return CompatScores{Reason: "no JSON and no \"key: N\" for any score"}
	}
	return CompatScores{Reason: fmt.Sprintf("no JSON, and no \"key: N\" for %s", strings.Join(missing, ", "))}
}

// LiveIdeaBenchLetter reads a fluency answer as hash.py does (method llm,
// the same at 2520c31 and 6fc8285): every character but the ASCII letters
// removed, the answer is the first letter left, provided one of the capitals
// A-D is somewhere in what is left. So "Answer: C" reads A (the A of
// "Answer"), "The answer is B" reads nothing (T is not a grade), and a
// lower-case "b" reads nothing.
func LiveIdeaBenchLetter(text string) CompatLetter {
	cleaned := notASCIILetter.ReplaceAllString(text, "")
	if !strings.ContainsAny(cleaned, "ABCD") {
		return CompatLetter{Reason: "no capital A, B, C or D among the answer's letters"}
	}
	if c := cleaned[0]; c < 'A' || c > 'D' {
		return CompatLetter{Reason: fmt.Sprintf("the first letter is %q, not a grade (score_mapping raises KeyError)", string(c))}
	}
	return CompatLetter{Letter: cleaned[:1], Valid: true}
}

// pyScores converts the values a parser read the way stats.ipynb uses them:
// a value equal to "N/A" drops the row (has_na), every other is float(v).
func pyScores(keys []string, vals []any) CompatScores {
	out := CompatScores{Scores: make(map[string]float64, len(keys)), Valid: true}
	for i, k := range keys {
		if s, ok := vals[i].(string); ok && s == "N/A" {
			return CompatScores{Reason: fmt.Sprintf("%s is \"N/A\" (stats.ipynb drops the row)", k)}
		}
		f, ok := pyFloat(vals[i])
		if !ok {
			return CompatScores{Reason: fmt.Sprintf("%s = %s is not a number float() reads", k, reprJSON(vals[i]))}
		}
		out.Scores[k] = f
	}
	return out
}

// pyFloat is Python's float(v) of a json.loads value: numbers, booleans
// (True is 1.0) and strings in Python's float syntax.
func pyFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			// Out of float64's range: Python's float() of such an int
			// raises OverflowError, of such a float literal gives inf.
			if strings.ContainsAny(string(x), ".eE") {
				return math.Copysign(math.Inf(1), f), true
			}
			return 0, false
		}
		return f, true
	case float64: // NaN and Infinity
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		return pyFloatString(x)
	}
	return 0, false
}

// pyFloatSyntax is what float(str) accepts after stripping: a decimal with
// optional underscores between digits, or inf, infinity, nan in any case.
var pyFloatSyntax = regexp.MustCompile(`(?i)^[+-]?(?:(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:e[+-]?\d(?:_?\d)*)?|inf|infinity|nan)$`)

func pyFloatString(s string) (float64, bool) {
	s = asciiDigits(pyStrip(s))
	if !pyFloatSyntax.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// reprJSON is a value as the reason text shows it.
func reprJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// asciiDigits writes every Unicode decimal digit of s as its ASCII digit:
// Python's float() and int() read any of them.
func asciiDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r > unicode.MaxASCII && unicode.IsDigit(r) {
			return '0' + rune(digitValue(r))
		}
		return r
	}, s)
}

// pyInt is int() of a run of Unicode decimal digits (Python's \d+).
func pyInt(digits string) float64 {
	v := 0.0
	for _, r := range digits {
		v = v*10 + float64(digitValue(r))
	}
	return v
}

// Python's json.loads accepts NaN, Infinity and -Infinity as values; Go's
// decoder does not, so they are swapped for marker strings first.
const pyMarker = "\x00ideaflow-python-json:"

var pySpecials = map[string]float64{"NaN": math.NaN(), "Infinity": math.Inf(1), "-Infinity": math.Inf(-1)}

// pyJSONLoads decodes s as Python's json.loads does for a judge's answer:
// one JSON value with nothing but whitespace around it, numbers kept as
// written (json.Number), NaN and Infinity accepted.
func pyJSONLoads(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(pyJSONSpecials(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value")
	}
	return pyJSONRestore(v), nil
}

// pyJSONSpecials quotes NaN, Infinity and -Infinity where a value may
// stand (at the start, after ':', ',' or '['), outside strings.
func pyJSONSpecials(s string) string {
	if !strings.Contains(s, "NaN") && !strings.Contains(s, "Infinity") {
		return s
	}
	var b bytes.Buffer
	inString, escaped := false, false
	prev := byte(0) // the last byte outside strings and white space
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				prev = '"'
			}
			continue
		}
		if c == '"' {
			inString = true
			b.WriteByte(c)
			continue
		}
		if prev == 0 || prev == ':' || prev == ',' || prev == '[' {
			replaced := false
			for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
				if strings.HasPrefix(s[i:], tok) {
					q, _ := json.Marshal(pyMarker + tok)
					b.Write(q)
					i += len(tok) - 1
					prev, replaced = 'x', true
					break
				}
			}
			if replaced {
				continue
			}
		}
		b.WriteByte(c)
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			prev = c
		}
	}
	return b.String()
}

func pyJSONRestore(v any) any {
	switch x := v.(type) {
	case string:
		if tok, ok := strings.CutPrefix(x, pyMarker); ok {
			return pySpecials[tok]
		}
	case map[string]any:
		for k, e := range x {
			x[k] = pyJSONRestore(e)
		}
	case []any:
		for i, e := range x {
			x[i] = pyJSONRestore(e)
		}
	}
	return v
}

// liveIdeaBenchMarkers are extract_final_idea's markers, lower-cased, in
// the order it tries them (its list names the first two twice, in two
// cases, which lower-casing makes one).
var liveIdeaBenchMarkers = []string{"**final idea:**", "**final idea**:", "final idea"}

// LiveIdeaBenchFinalIdea cuts a reasoning model's answer as the authors'
// extract_final_idea does (utils/LLM.py, the same at 8dbdfef and 6fc8285):
// the answer stripped, then, for the first of "**Final Idea:**",
// "**Final Idea**:" and "final idea" (any case) that it contains, what
// follows that marker's first occurrence, stripped; the whole stripped
// answer when it has none. So "my final idea should be ..." is cut after
// "final idea", and a bare "Final Idea: X" keeps its ": X".
func LiveIdeaBenchFinalIdea(text string) string {
	rs := []rune(pyStrip(text))
	lower := make([]rune, len(rs))
	for i, r := range rs {
		lower[i] = unicode.ToLower(r)
	}
	for _, m := range liveIdeaBenchMarkers {
		mr := []rune(m)
		for i := 0; i+len(mr) <= len(lower); i++ {
			if string(lower[i:i+len(mr)]) == m {
				return pyStrip(string(rs[i+len(mr):]))
			}
		}
	}
	return string(rs)
}
