package format

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	// "Ranking:", "Final ranking (best to worst):", "my ranking is", "Ranked order =".
	rankLabel = regexp.MustCompile(`(?i)\b((?:(?:final|overall|complete|full|my|the|proposed)\s+)*)(?:ranking|ranked\s+order|rank\s+order|final\s+order|order\s+of\s+preference)\b[^:\n]{0,60}?(?::|=|\bis\b)\s*`)
	// The position marker of one ranked item: "1.", "2)", "(3)", "#1:", "Rank 2 -", "3rd place:".
	rankLine   = regexp.MustCompile(`(?i)^(?:[-*+•]\s+)?(?:[*_]{1,3}\s*)?(?:(?:rank(?:ed)?|place|position|no\.)\s*)?#?\s*(?:\((\d{1,2})\)|(\d{1,2})(?:st|nd|rd|th)?(?:\s+place)?)(?:[*_]{1,3})?(?:\s*[.):\x{2013}\x{2014}]|\s+-|\s|$)`)
	inlineRank = regexp.MustCompile(`(?:^|\s)\(?\d{1,2}[.)]\s*`)
	arrows     = strings.NewReplacer("->", ">", "=>", ">", "\u2192", ">", "\u27f6", ">", "\u227b", ">", "\u00bb", ">", ">>", ">", "\u2265", ">")
	fillers    = regexp.MustCompile(`(?i)^(?:(?:and|then|finally|followed\s+by|lastly|last|next)\b[\s,]*)+`)
	andThen    = regexp.MustCompile(`(?i)\s+(?:and|then|and\s+then|followed\s+by)\s+`)
	asFollows  = regexp.MustCompile(`(?i)^(?:as\s+follows|the\s+following)\s*:?\s*`)
)

// rankCandidate is one ranking found in the answer.
type rankCandidate struct {
	letters []byte
	end     int // the line it ends on; later candidates are the model's final word
}

func parseRanking(spec Spec, text string) (*Answer, error) {
	letters := spec.letters()
	if got, ok := rankingFromJSON(text); ok {
		return checkRanking(got, letters)
	}
	lines := strings.Split(text, "\n")
	// Lists are found once, in one pass each, and looked up by the line they
	// start on; searching below every label afresh would be quadratic.
	runs := append(numberedRuns(lines), letterRuns(lines)...)
	runAt := make(map[int][]byte, len(runs))
	for _, r := range runs {
		if _, dup := runAt[r.start]; !dup {
			runAt[r.start] = r.letters
		}
	}
	if got, ok := rankingFromLabels(lines, runAt); ok {
		return checkRanking(got, letters)
	}
	if got, ok := rankingFromLines(lines, runs, len(letters)); ok {
		return checkRanking(got, letters)
	}
	return nil, fmt.Errorf("found no ranking; end with one line like %q", "Ranking: "+exampleRanking(letters))
}

// rankingFromJSON reads {"ranking": ["B", "A", ...]}, {"ranking": "B > A"} or
// a bare array of letters.
func rankingFromJSON(text string) ([]byte, bool) {
	values := jsonValues(text)
	for i := len(values) - 1; i >= 0; i-- {
		for _, obj := range objects(values[i]) {
			v, ok := obj.lookup(func(k string) bool { return strings.Contains(k, "rank") || strings.Contains(k, "order") })
			if !ok {
				continue
			}
			if got, ok := jsonRankList(v); ok {
				return got, true
			}
		}
		if got, ok := jsonRankList(values[i]); ok {
			return got, true
		}
	}
	return nil, false
}

func jsonRankList(v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		return rankExpr(x)
	case []any:
		var got []byte
		for _, item := range x {
			if obj, isObj := item.(*jsonObject); isObj {
				item, _ = obj.lookup(func(k string) bool {
					return k == "idea" || k == "letter" || k == "id" || k == "label" || k == "option"
				})
			}
			s, ok := item.(string)
			if !ok {
				return nil, false
			}
			c, rest, ok := letterToken(s, false)
			if !ok || !restIsRationale(rest) {
				return nil, false
			}
			got = append(got, c)
		}
		return got, len(got) > 0
	}
	return nil, false
}

// rankingFromLabels reads the ranking after a "Ranking:" label. A label that
// says "final" wins over the others, and a later label over an earlier one:
// models reason first and conclude last.
func rankingFromLabels(lines []string, runAt map[int][]byte) ([]byte, bool) {
	type label struct {
		line  int
		rest  string
		final bool
	}
	var labels []label
	for i, l := range lines {
		if low := strings.ToLower(l); !strings.Contains(low, "rank") && !strings.Contains(low, "order") {
			continue // the label regexp is slow; most lines cannot match it
		}
		p := plain(l)
		for _, m := range rankLabel.FindAllStringSubmatchIndex(p, -1) {
			rest := asFollows.ReplaceAllString(p[m[1]:], "")
			labels = append(labels, label{line: i, rest: rest, final: strings.Contains(strings.ToLower(p[m[0]:m[1]]), "final")})
		}
	}
	for _, wantFinal := range [...]bool{true, false} {
		for k := len(labels) - 1; k >= 0; k-- {
			lb := labels[k]
			if lb.final != wantFinal {
				continue
			}
			if got, ok := rankExpr(lb.rest); ok {
				return got, true
			}
			// Only a label that ends its line introduces the lines below it;
			// "Ranking criteria: novelty ..." does not.
			if !hasWord(lb.rest) {
				if got, ok := rankingBelow(lines, lb.line+1, runAt); ok {
					return got, true
				}
			}
		}
	}
	return nil, false
}

// rankingBelow reads a ranking that starts on the first non-blank line from i:
// a numbered list, one letter per line (both in runAt, by first line), or one
// "B > A > C" line.
func rankingBelow(lines []string, i int, runAt map[int][]byte) ([]byte, bool) {
	for i < len(lines) && isBlank(lines[i]) {
		i++
	}
	if i >= len(lines) {
		return nil, false
	}
	if got, ok := runAt[i]; ok {
		return got, true
	}
	return rankExpr(plain(lines[i]))
}

// rankingFromLines looks for unlabelled rankings: numbered lists, one letter
// per line, "B > A > C" lines, and lines holding only "B, A, C". The last
// complete one wins; if none is complete, the last one is reported.
func rankingFromLines(lines []string, runs []rankRun, want int) ([]byte, bool) {
	var cands []rankCandidate
	for _, r := range runs {
		cands = append(cands, r.rankCandidate)
	}
	for i, l := range lines {
		p := plain(l)
		got, ok := rankExpr(p)
		if !ok {
			continue
		}
		if strings.ContainsAny(arrows.Replace(p), ">") || len(got) == want {
			cands = append(cands, rankCandidate{letters: got, end: i})
		}
	}
	var best *rankCandidate
	for k := range cands {
		c := &cands[k]
		complete := len(c.letters) == want
		switch {
		case best == nil:
			best = c
		case complete && (len(best.letters) != want || c.end >= best.end):
			best = c
		case !complete && len(best.letters) != want && c.end >= best.end:
			best = c
		}
	}
	if best == nil {
		return nil, false
	}
	return best.letters, true
}

type rankRun struct {
	rankCandidate
	start int
}

// numberedRuns finds numbered lists whose items each start with a letter
// ("1. B - clearer than A and D"). Only the leading letter counts, so a
// rationale that mentions other ideas cannot confuse the order. Lines without
// a number in between are rationale and do not break a run.
func numberedRuns(lines []string) []rankRun {
	var runs []rankRun
	var cur *rankRun
	flush := func() {
		if cur != nil && len(cur.letters) >= 2 {
			runs = append(runs, *cur)
		}
		cur = nil
	}
	for i, l := range lines {
		g := rankLine.FindStringSubmatch(strings.TrimSpace(l))
		if g == nil {
			continue
		}
		num, _ := strconv.Atoi(g[1] + g[2])
		c, _, ok := letterToken(strings.TrimSpace(l)[len(g[0]):], true)
		switch {
		case num == 1:
			flush()
			if ok {
				cur = &rankRun{rankCandidate: rankCandidate{letters: []byte{c}, end: i}, start: i}
			}
		case cur != nil && ok && num == len(cur.letters)+1:
			cur.letters = append(cur.letters, c)
			cur.end = i
		case !ok && (cur == nil || num != len(cur.letters)+1):
			// Prose that starts with a number ("10 samples suffice") is
			// rationale; only the next item without a letter ends the list.
		default:
			flush()
		}
	}
	flush()
	return runs
}

// maxLetterLineRest bounds the rationale on a one-letter line. Longer text
// after a letter ("**Idea A**: a careful extension of ...") is an analysis
// of the ideas in presentation order, not a ranking.
const maxLetterLineRest = 40

// letterRuns finds consecutive lines that each hold one letter ("B", "- A",
// "**D** (weakest)").
func letterRuns(lines []string) []rankRun {
	var runs []rankRun
	var cur *rankRun
	flush := func() {
		if cur != nil && len(cur.letters) >= 2 {
			runs = append(runs, *cur)
		}
		cur = nil
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		t = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(t, "- "), "• "), " ")
		c, rest, ok := letterToken(t, false)
		if !ok || !restIsRationale(rest) || len(strings.TrimSpace(rest)) > maxLetterLineRest {
			flush()
			continue
		}
		if cur == nil {
			cur = &rankRun{start: i}
		}
		cur.letters = append(cur.letters, c)
		cur.end = i
	}
	flush()
	return runs
}

// rankExpr reads an inline ranking: "B > A > D > C", "B, A, D and C",
// "[B, A, D, C]", "Idea B -> Idea A", "1. B 2. A 3. C", "B A D C".
func rankExpr(s string) ([]byte, bool) {
	s = strings.TrimSpace(stripEmphasis(s))
	s = strings.TrimRight(s, ". ")
	for _, pair := range [...][2]string{{"[", "]"}, {"{", "}"}} {
		if strings.HasPrefix(s, pair[0]) && strings.HasSuffix(s, pair[1]) {
			s = strings.TrimSpace(s[1 : len(s)-1])
		}
	}
	if s == "" {
		return nil, false
	}
	var parts []string
	switch a := arrows.Replace(s); {
	case strings.HasPrefix(s, "1.") || strings.HasPrefix(s, "1)") || strings.HasPrefix(s, "(1)"):
		for _, p := range inlineRank.Split(s, -1) {
			if p = strings.Trim(p, " ,;"); p != "" {
				parts = append(parts, p)
			}
		}
	case strings.Contains(a, ">"):
		parts = splitTop(a, '>')
	case strings.ContainsAny(s, ",;"):
		sep := byte(',')
		if !strings.Contains(s, ",") {
			sep = ';'
		}
		for _, p := range splitTop(s, sep) {
			for _, q := range andThen.Split(p, -1) {
				if strings.TrimSpace(q) != "" {
					parts = append(parts, q)
				}
			}
		}
	default:
		parts = strings.Fields(s)
	}
	if len(parts) == 0 {
		return nil, false
	}
	got := make([]byte, 0, len(parts))
	for _, p := range parts {
		p = fillers.ReplaceAllString(strings.TrimSpace(p), "")
		c, rest, ok := letterToken(p, false)
		if !ok || !restIsRationale(rest) {
			return nil, false
		}
		got = append(got, c)
	}
	return got, true
}

// restIsRationale accepts what may follow a letter inside a ranking: nothing,
// or punctuation opening a rationale ("B (most novel)", "B: clearer", "B.").
// A following word means the letter was part of a sentence.
func restIsRationale(rest string) bool {
	t := strings.TrimSpace(rest)
	return t == "" || !(isLetter(t[0]) || isDigit(t[0]))
}

// hasWord reports whether s contains a letter or digit.
func hasWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLetter(s[i]) || isDigit(s[i]) {
			return true
		}
	}
	return false
}

// splitTop splits s at sep outside parentheses and brackets, so a rationale
// "(novel, but costly)" stays with its letter.
func splitTop(s string, sep byte) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// checkRanking accepts a ranking only if it uses every allowed letter exactly
// once. Every Ranking answer Parse returns passes through here, so a stage's
// Call.Output may rely on it: the answer is a permutation of the spec's
// letters, in upper case.
func checkRanking(got []byte, letters string) (*Answer, error) {
	count := map[byte]int{}
	var unknown, dup, missing []string
	for _, c := range got {
		count[c]++
		switch {
		case strings.IndexByte(letters, c) < 0:
			if count[c] == 1 {
				unknown = append(unknown, string(c))
			}
		case count[c] == 2:
			dup = append(dup, string(c))
		}
	}
	for i := 0; i < len(letters); i++ {
		if count[letters[i]] == 0 {
			missing = append(missing, letters[i:i+1])
		}
	}
	ranking := make([]string, len(got))
	for i, c := range got {
		ranking[i] = string(c)
	}
	var problems []string
	if len(unknown) > 0 {
		problems = append(problems, "unknown "+strings.Join(unknown, ", "))
	}
	if len(dup) > 0 {
		problems = append(problems, "repeated "+strings.Join(dup, ", "))
	}
	if len(missing) > 0 {
		problems = append(problems, "missing "+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("ranking %s is invalid: %s (use each of %s exactly once)",
			strings.Join(ranking, " > "), strings.Join(problems, "; "), listLetters(letters))
	}
	return &Answer{Ranking: ranking}, nil
}

// exampleRanking is the example order shown to models. It is fixed (the first
// two letters swapped) so prompts, and with them cache keys, are stable, and it
// is not the presentation order, so a model copying it is not rewarded with the
// identity ranking by accident.
func exampleRanking(letters string) string {
	b := []byte(letters)
	if len(b) >= 2 {
		b[0], b[1] = b[1], b[0]
	}
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = string(c)
	}
	return strings.Join(parts, " > ")
}
