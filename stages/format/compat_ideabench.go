package format

// Compatibility parses for IdeaBench (Guo et al.): what the authors' own
// code reads from a judge's answer, reproduced rule by rule so that a stage
// can store it beside ideaflow's strict parse of the same answer, and a
// report can show the difference their reading makes. These are not
// ideaflow's parsers: they accept what the authors' accept and read what
// the authors' read, mis-reads included (the first number of "On a scale
// of 1-10, I rate it 7" is 1). Nothing here is used to decide whether an
// answer is usable.
//
// The rules are the authors' regular expressions and string splits at
// amir-hassan25/IdeaBench@9dbd125, as Python 3 evaluates them: Python's
// \d matches any Unicode decimal digit (category Nd) and int() reads it,
// and its \s and str.strip() take Unicode whitespace, so the same classes
// are spelt out here for Go's ASCII-only \d and \s.

import (
	"regexp"
	"strconv"
	"strings"
)

// IdeaBenchCommit is the commit of amir-hassan25/IdeaBench whose code the
// IdeaBench compatibility parses reproduce.
const IdeaBenchCommit = "9dbd125"

// IdeaBenchRankingParser names the authors' ranking parser, for the parser
// field of a stored compatibility parse.
const IdeaBenchRankingParser = "amir-hassan25/IdeaBench@" + IdeaBenchCommit +
	": src/evaluation/llm_ranking_eval.py LLMRankingEval.parse_rankings, then src/evaluation/analyze_results.py update_ranking_list"

// IdeaBenchRatingParser names the authors' overlap-rating parser.
const IdeaBenchRatingParser = "amir-hassan25/IdeaBench@" + IdeaBenchCommit +
	": src/evaluation/evaluate_hypotheses.py LLMEvaluator.evaluate, then src/evaluation/analyze_results.py extract_llm_rating"

var (
	// parse_rankings: every "Hypothesis X:" in the answer, in order.
	ibHypothesis = regexp.MustCompile(`Hypothesis ([A-Z]):`)
	// update_ranking_list's fallback when that finds none: "1. **Hypothesis X**".
	ibBoldHypothesis = regexp.MustCompile(`\p{Nd}+\.` + pySpace + `\*\*Hypothesis ([A-Z])\*\*`)
	// extract_llm_rating: the first run of decimal digits.
	ibNumber = regexp.MustCompile(`\p{Nd}+`)
)

// IdeaBenchRanking returns the letters the authors' code reads from a
// ranking answer, best first, as their analysis uses them: every
// "Hypothesis X:" (X an upper-case ASCII letter, one space before it, the
// colon right after it) in order of appearance, repeats included (a
// rationale that names another hypothesis adds its letter); when there is
// none, every "N. **Hypothesis X**" instead (N decimal digits, one
// whitespace character). An answer in neither form reads as no letters:
// the authors then skip the target (see IdeaBenchRelativeRank).
func IdeaBenchRanking(answer string) []string {
	letters := matchLetters(ibHypothesis, answer)
	if len(letters) == 0 {
		letters = matchLetters(ibBoldHypothesis, answer)
	}
	return letters
}

func matchLetters(re *regexp.Regexp, s string) []string {
	out := []string{}
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// IdeaBenchRelativeRank is the authors' per-target Insight Score term
// (analyze_results.py get_relative_rank): the index of the first occurrence
// of letter in order divided by len(order) - 1, so a parse with repeats or
// missing letters changes the denominator, not only the position. It is 0
// for a one-letter order, and ok is false when letter is not in order (the
// authors leave such a target out of the mean).
func IdeaBenchRelativeRank(order []string, letter string) (rank float64, ok bool) {
	for i, l := range order {
		if l == letter {
			if len(order) == 1 {
				return 0, true
			}
			return float64(i) / float64(len(order)-1), true
		}
	}
	return 0, false
}

// IdeaBenchRating returns what the authors' code reads from an overlap
// answer. Their evaluate() takes the text between the first and second
// "Rating:" (case-sensitive), and within it the text before and after the
// first "Explanation:" (up to a second one), each stripped of whitespace:
// the rating string and the explanation. When either label is missing the
// rating string is "N/A" and the explanation the whole answer. Their
// analysis then reads the first run of decimal digits of the rating
// string, else of the explanation; ok is false when neither has one (the
// authors leave the target out of the mean and percentiles). The number is
// not checked against the prompt's scale: "Rating: 85/100" is 85. A run of
// more than 18 digits, which Python would read, is reported as no number.
func IdeaBenchRating(answer string) (rating int, explanation string, ok bool) {
	ratingStr, explanation := "N/A", answer
	if parts := strings.Split(answer, "Rating:"); len(parts) > 1 {
		part := pyStrip(parts[1])
		if sub := strings.Split(part, "Explanation:"); len(sub) > 1 {
			ratingStr, explanation = pyStrip(sub[0]), pyStrip(sub[1])
		}
	}
	if v, ok := firstNumber(ratingStr); ok {
		return v, explanation, true
	}
	v, ok := firstNumber(explanation)
	return v, explanation, ok
}

// firstNumber reads the first run of Unicode decimal digits as Python's
// int() does.
func firstNumber(s string) (int, bool) {
	m := ibNumber.FindString(s)
	if m == "" {
		return 0, false
	}
	var ascii strings.Builder
	for _, r := range m {
		ascii.WriteByte(byte('0' + digitValue(r)))
	}
	if ascii.Len() > 18 {
		return 0, false
	}
	v, err := strconv.Atoi(ascii.String())
	return v, err == nil
}
