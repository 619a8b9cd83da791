package format

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// How ideas are told apart in an answer, strongest first. The strongest style
// present decides the structure; weaker markers inside an idea (a bulleted
// method under "Idea 2:") stay part of that idea's text.
type ideaStyle int

const (
	styleLabeled  ideaStyle = iota // "Idea 1:", "**Idea 2**", "### Hypothesis 3:"
	styleNumbered                  // "1.", "2)", "(3)", "**4.**", "## 5."
	styleHeading                   // "### Title", unnumbered
	styleBold                      // "**Title**" alone on its line
	styleBullet                    // "- text", "* text", "• text"
)

// marker is the first line of one idea.
type marker struct {
	line      int
	indent    int
	num       int    // 1-based position for numbered styles, 0 otherwise
	level     int    // heading level (1-6) when the line is a markdown heading
	rest      string // the idea's text on the marker line, marker removed
	titleOnly bool   // the line is a heading or a bold title: the idea's body follows
}

var (
	labeledMarker  = regexp.MustCompile(`(?i)^(#{1,6}\s*)?(?:[-*+•]\s+)?(?:\d{1,2}[.)]\s+)?(?:[*_]{1,3}\s*)?(?:(?:research|new|proposed|novel|final)\s+)?(?:idea|hypothesis|proposal|direction)\s*(?:no\.?\s*|number\s+|#\s*)?(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten)\b([*_]*)`)
	numberedMarker = regexp.MustCompile(`^(#{1,6}\s*)?(?:[*_]{1,3}\s*)?(?:\(\s*(\d{1,2})\s*\)|(\d{1,2})(?:[.)]|\s*[:\x{2013}\x{2014}]|\s+-))([*_]*)`)
	headingLine    = regexp.MustCompile(`^(#{1,6})\s+(\S.*)$`)
	boldLine       = regexp.MustCompile(`^(?:\*\*|__)([^*_\s].*?)(?:\*\*|__)\s*:?\s*$`)
	bulletLine     = regexp.MustCompile(`^[-*+•]\s+(\S.*)$`)
	finalIdeaLabel = regexp.MustCompile(`(?i)\bfinal\s+idea\s*:`)
	outroLine      = regexp.MustCompile(`(?i)^(?:these (?:\w+ ){0,3}(?:ideas|proposals|directions|hypotheses|approaches|projects)|each of these|all (?:of )?(?:these|the above|three|four|five)\b|both (?:of these|ideas)|let me know|i hope|hope this|feel free|would you like|if you(?:'d| would) like|in summary|to summarize|summary:|in conclusion|to conclude|overall, these|taken together|together, these|collectively,|by (?:pursuing|exploring|combining|investigating) these|note:|i can (?:also )?(?:expand|elaborate|provide))`)
	preambleLine   = regexp.MustCompile(`(?i)^(?:here (?:is|are|'s)|below (?:is|are)|sure|certainly|okay|ok)\b.*:$|^[^.!?]{0,120}:$`)
	ideaLabel      = regexp.MustCompile(`(?i)^(?:(?:final|research|my|proposed)\s+)*idea\s*:\s*`)
)

var numberWords = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

func parseIdeas(spec Spec, text string) (*Answer, error) {
	jsonFirst := strings.HasPrefix(text, "[") || strings.HasPrefix(text, "{") || strings.Contains(text, "```")
	if jsonFirst {
		if ideas, ok := ideasFromJSON(jsonValues(text)); ok {
			return countIdeas(spec, ideas, true)
		}
	}
	if spec.N == 1 {
		if loc := finalIdeaLabel.FindStringIndex(text); loc != nil {
			return countIdeas(spec, []string{wholeIdea(text[loc[1]:])}, false)
		}
	}
	lines := strings.Split(text, "\n")
	if ideas, enumerated, ok := ideasFromMarkers(spec, lines); ok {
		return countIdeas(spec, ideas, enumerated)
	}
	if !jsonFirst {
		if ideas, ok := ideasFromJSON(jsonValues(text)); ok {
			return countIdeas(spec, ideas, true)
		}
	}
	if spec.N == 1 {
		return countIdeas(spec, []string{wholeIdea(text)}, false)
	}
	return nil, fmt.Errorf("found no numbered ideas, expected %s", expectedIdeas(spec.N))
}

// countIdeas checks the count. Surplus ideas are dropped only when the answer
// numbered them (or listed them in JSON): then "the first N" is well defined.
// Unnumbered extras (bullets, headings) may be notes rather than ideas, so they
// are an error.
//
// Every Ideas answer Parse returns passes through here, so this is where the
// guarantee stages build on is made: exactly spec.N ideas (at least one when
// N is 0), each trimmed and non-empty. A stage's Call.Output may then convert
// the answer without checking it: anything short of that is a parse error,
// which the model layer answers with a repair re-ask, while an Output error
// would fail the node outright.
func countIdeas(spec Spec, ideas []string, enumerated bool) (*Answer, error) {
	if spec.N > 0 && len(ideas) > spec.N {
		if !enumerated {
			return nil, fmt.Errorf("found %d unnumbered ideas, expected %s", len(ideas), expectedIdeas(spec.N))
		}
		ideas = ideas[:spec.N]
	}
	if len(ideas) == 0 || len(ideas) < spec.N {
		return nil, fmt.Errorf("found %s, expected %s", ideaCount(len(ideas)), expectedIdeas(spec.N))
	}
	out := make([]string, len(ideas))
	for i, idea := range ideas {
		out[i] = strings.TrimSpace(idea)
		if out[i] == "" {
			return nil, fmt.Errorf("idea %d is empty", i+1)
		}
	}
	return &Answer{Ideas: out}, nil
}

func ideaCount(n int) string {
	if n == 1 {
		return "1 idea"
	}
	return strconv.Itoa(n) + " ideas"
}

// expectedIdeas names the count a spec asks for; N == 0 accepts any.
func expectedIdeas(n int) string {
	if n == 0 {
		return "at least 1 idea"
	}
	return ideaCount(n)
}

// ideasFromMarkers splits an answer at its idea markers. enumerated reports
// whether the ideas were numbered.
func ideasFromMarkers(spec Spec, lines []string) (ideas []string, enumerated, ok bool) {
	byStyle := map[ideaStyle][]marker{}
	for i, line := range lines {
		if st, m, ok := classify(line); ok {
			m.line = i
			byStyle[st] = append(byStyle[st], m)
		}
	}
	if seq := numberedSequence(byStyle[styleLabeled]); len(seq) > 0 {
		return buildIdeas(lines, seq), true, true
	}
	// A single idea may lay out its steps as a numbered list; the list is the
	// answer's structure only if the answer opens with it.
	if seq := numberedSequence(byStyle[styleNumbered]); len(seq) > 0 && (spec.N != 1 || seq[0].line == firstContentLine(lines)) {
		return buildIdeas(lines, seq), true, true
	}
	if spec.N == 1 {
		return nil, false, false // headings and bullets of a single idea are its own layout
	}
	// One heading or bullet alone is a title or a note, not a list of ideas.
	if ms := headingGroup(byStyle[styleHeading], byStyle[styleBold]); len(ms) >= 2 {
		return buildIdeas(lines, ms), false, true
	}
	if ms := topLevel(byStyle[styleBullet]); len(ms) >= 2 {
		return buildIdeas(lines, ms), false, true
	}
	return nil, false, false
}

// classify recognises a line that starts an idea.
func classify(line string) (ideaStyle, marker, bool) {
	m := marker{indent: indentOf(line)}
	t := strings.TrimSpace(line)
	if g := labeledMarker.FindStringSubmatch(t); g != nil {
		rest := t[len(g[0]):]
		if g[1] != "" || g[3] != "" || startsIdeaText(rest) {
			m.num = numberWords[strings.ToLower(g[2])]
			if m.num == 0 {
				m.num, _ = strconv.Atoi(g[2])
			}
			m.level = strings.Count(g[1], "#")
			m.rest, m.titleOnly = markerRest(rest, g[1] != "" || wholeBold(t))
			return styleLabeled, m, true
		}
	}
	if g := numberedMarker.FindStringSubmatch(t); g != nil {
		rest := t[len(g[0]):]
		if rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '*' || rest[0] == '_' {
			num := g[2] + g[3]
			m.num, _ = strconv.Atoi(num)
			m.level = strings.Count(g[1], "#")
			m.rest, m.titleOnly = markerRest(rest, g[1] != "" || wholeBold(t))
			return styleNumbered, m, true
		}
	}
	if m.indent > 3 {
		return 0, m, false
	}
	if g := headingLine.FindStringSubmatch(t); g != nil {
		m.level = len(g[1])
		m.rest, m.titleOnly = plain(g[2]), true
		return styleHeading, m, true
	}
	if g := boldLine.FindStringSubmatch(t); g != nil {
		m.rest, m.titleOnly = plain(g[1]), true
		return styleBold, m, true
	}
	if g := bulletLine.FindStringSubmatch(t); g != nil {
		m.rest = plain(g[1])
		return styleBullet, m, true
	}
	return 0, m, false
}

// startsIdeaText reports whether what follows "Idea 2" makes it a marker:
// punctuation ("Idea 2: ...", "Idea 2 (Title)") or nothing. "Idea 2 builds on
// idea 1" at the start of a line is prose.
func startsIdeaText(rest string) bool {
	t := strings.TrimLeft(rest, " \t")
	if t == "" {
		return true
	}
	return strings.IndexByte(":.)-(", t[0]) >= 0 || strings.HasPrefix(t, "\u2013") || strings.HasPrefix(t, "\u2014")
}

// markerRest cleans the text after a marker. A whole-line bold or heading
// marker ("**Idea 1: Title**") carries only a title; the body follows.
func markerRest(rest string, heading bool) (string, bool) {
	trimmed := strings.TrimLeft(rest, " \t:.)-*_\u2013\u2014")
	titleOnly := heading || wholeBold(strings.TrimLeft(rest, " \t:.)-\u2013\u2014"))
	return plain(trimmed), titleOnly
}

func wholeBold(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) > 4 && ((strings.HasPrefix(s, "**") && strings.HasSuffix(s, "**")) || (strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__")))
}

func firstContentLine(lines []string) int {
	for i, l := range lines {
		if !isBlank(l) {
			return i
		}
	}
	return -1
}

// numberedSequence keeps the markers that count 1, 2, 3, ... in order. The
// first "1" opens the list; later markers join only if they continue the count
// and sit no deeper than it, so a numbered sub-list inside an idea stays text.
func numberedSequence(ms []marker) []marker {
	var seq []marker
	for _, m := range ms {
		switch {
		case len(seq) == 0 && m.num == 1:
			seq = append(seq, m)
		case len(seq) > 0 && m.num == seq[len(seq)-1].num+1 && m.indent <= seq[0].indent+1:
			seq = append(seq, m)
		}
	}
	return seq
}

// headingGroup picks the unnumbered titles that separate ideas: the heading
// level used most often (a single "## Ideas" above "### ..." titles is a
// document title), or whole-line bold titles if there are more of those.
func headingGroup(headings, bolds []marker) []marker {
	var best []marker
	for level := 1; level <= 6; level++ {
		var group []marker
		for _, m := range headings {
			if m.level == level {
				group = append(group, m)
			}
		}
		if len(group) > len(best) {
			best = group
		}
	}
	if len(bolds) > len(best) {
		return bolds
	}
	return best
}

// topLevel keeps the least indented bullets; deeper ones are details.
func topLevel(ms []marker) []marker {
	if len(ms) == 0 {
		return nil
	}
	min := ms[0].indent
	for _, m := range ms {
		if m.indent < min {
			min = m.indent
		}
	}
	var out []marker
	for _, m := range ms {
		if m.indent <= min+1 {
			out = append(out, m)
		}
	}
	return out
}

// buildIdeas turns markers into idea texts: each idea runs to the next marker;
// the last one stops where the answer's closing remarks start.
func buildIdeas(lines []string, ms []marker) []string {
	ideas := make([]string, len(ms))
	multiParagraph := false
	for k, m := range ms {
		end := len(lines)
		if k+1 < len(ms) {
			end = ms[k+1].line
		}
		body := lines[m.line+1 : end]
		if k+1 < len(ms) {
			multiParagraph = multiParagraph || hasLooseParagraph(body, m.indent)
		} else {
			body = trimOutro(body, m, multiParagraph)
		}
		ideas[k] = joinIdea(m.rest, body)
	}
	return ideas
}

// hasLooseParagraph reports whether an idea continues, after a blank line,
// with a paragraph that is not indented under its marker. If earlier ideas do
// that, such a paragraph after the last idea is part of it, not an outro.
func hasLooseParagraph(body []string, indent int) bool {
	sawBlank := false
	for _, l := range body {
		switch {
		case isBlank(l) || isRule(l):
			sawBlank = true
		case sawBlank && indentOf(l) <= indent:
			return true
		default:
			sawBlank = false
		}
	}
	return false
}

// trimOutro cuts the closing remarks ("These ideas could ...", "Let me know
// ...", a horizontal rule, a new section) off the last idea.
func trimOutro(body []string, m marker, multiParagraph bool) []string {
	hasBody := m.rest != "" && !m.titleOnly
	sawBlank := false
	for i, l := range body {
		if isBlank(l) {
			sawBlank = true
			continue
		}
		if isRule(l) {
			if hasBody {
				return body[:i]
			}
			sawBlank = true
			continue
		}
		unindented := indentOf(l) <= m.indent
		if unindented && outroLine.MatchString(plain(l)) {
			return body[:i]
		}
		if g := headingLine.FindStringSubmatch(strings.TrimSpace(l)); g != nil && hasBody && (m.level == 0 || len(g[1]) <= m.level) {
			return body[:i]
		}
		if sawBlank && unindented && hasBody && !multiParagraph {
			return body[:i]
		}
		hasBody = true
		sawBlank = false
	}
	return body
}

// joinIdea joins the marker line's text and the body lines, markdown removed.
func joinIdea(first string, body []string) string {
	var out []string
	if first != "" {
		out = append(out, first)
	}
	for _, l := range body {
		if isRule(l) {
			continue
		}
		if p := plain(l); p != "" {
			out = append(out, p)
		}
	}
	if len(out) > 1 {
		out[0] = strings.TrimSuffix(out[0], ":")
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// wholeIdea reads a single-idea answer written as prose: a preamble line
// ("Here is my idea:") and closing remarks are dropped.
func wholeIdea(text string) string {
	paras := paragraphs(text)
	if len(paras) > 1 && preambleLine.MatchString(plain(strings.TrimSpace(paras[0]))) {
		paras = paras[1:]
	}
	for i := 1; i < len(paras); i++ {
		if outroLine.MatchString(plain(paras[i])) {
			paras = paras[:i]
			break
		}
	}
	idea := plainText(strings.Join(paras, "\n"))
	return strings.TrimSpace(ideaLabel.ReplaceAllString(idea, ""))
}

// paragraphs splits text at blank lines and horizontal rules.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if isBlank(l) || isRule(l) {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return out
}

// ideasFromJSON reads ideas from the first JSON value that holds them: an
// array of strings or objects, or an object with an "ideas" array or
// "idea_1", "idea_2", ... keys.
func ideasFromJSON(values []any) ([]string, bool) {
	for _, v := range values {
		if ideas, ok := jsonIdeaList(v, 0); ok {
			return ideas, true
		}
	}
	return nil, false
}

var ideaKey = regexp.MustCompile(`^(?:research)?(?:idea|hypothesis|proposal)\d{1,2}$`)

func jsonIdeaList(v any, depth int) ([]string, bool) {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil, false
		}
		ideas := make([]string, 0, len(x))
		for _, item := range x {
			idea := jsonIdea(item)
			if idea == "" {
				return nil, false
			}
			ideas = append(ideas, idea)
		}
		return ideas, true
	case *jsonObject:
		if depth > 1 {
			return nil, false
		}
		if list, ok := x.lookup(func(k string) bool {
			return strings.Contains(k, "idea") || strings.Contains(k, "hypothes") || strings.Contains(k, "proposal")
		}); ok {
			if ideas, ok := jsonIdeaList(list, depth+1); ok {
				return ideas, true
			}
		}
		var ideas []string
		for i, k := range x.keys {
			if ideaKey.MatchString(normKey(k)) {
				if idea := jsonIdea(x.vals[i]); idea != "" {
					ideas = append(ideas, idea)
				}
			}
		}
		return ideas, len(ideas) > 0
	}
	return nil, false
}

// titleKeys name the part of an idea object that is its title.
var titleKeys = map[string]bool{"title": true, "name": true, "heading": true, "ideatitle": true, "shorttitle": true}

// jsonIdea renders one idea: a string, or an object's string fields in order
// with its title first ("Title: description ..."). Short values such as
// "novelty": "high" are labels about the idea, not its text, so values under
// three words are dropped when longer ones exist.
func jsonIdea(v any) string {
	switch x := v.(type) {
	case string:
		return plainText(strings.TrimSpace(x))
	case *jsonObject:
		var title string
		var long, short []string
		for i, k := range x.keys {
			s, ok := x.vals[i].(string)
			if s = strings.TrimSpace(s); !ok || s == "" {
				continue
			}
			switch {
			case title == "" && titleKeys[normKey(k)]:
				title = s
			case len(strings.Fields(s)) >= 3:
				long = append(long, s)
			default:
				short = append(short, s)
			}
		}
		body := long
		if len(body) == 0 {
			body = short
		}
		text := strings.Join(body, " ")
		switch {
		case title == "":
		case text == "":
			text = title
		default:
			text = title + ": " + text
		}
		return plainText(text)
	}
	return ""
}
