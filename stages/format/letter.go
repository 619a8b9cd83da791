package format

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	letterLabel  = regexp.MustCompile(`(?i)\b(?:(?:final|correct|my|best)\s+)?(?:answer|choice|option|selection|verdict|category|classification|judgement|judgment|label)\s*(?:is\s*:?|would\s+be\s*:?|[:=]|\s-\s|\s\x{2013}\s|\s\x{2014}\s)\s*`)
	letterBoxed  = regexp.MustCompile(`\\boxed\{\s*(?:\\text(?:bf)?\{\s*)?([A-Za-z])\s*\}?\s*\}`)
	letterChoose = regexp.MustCompile(`(?i)\bi(?:\s+would|'d|\s+will|'ll)?\s+(?:choose|select|pick|go\s+with|classify\s+(?:this|these|them|the\s+pair|it)\s+as)\s+`)
	letterIsThe  = regexp.MustCompile(`(?:^|[\s(*])([A-Za-z])[)*]*\s+is\s+the\s+(?:correct|best|right|appropriate|most\s+(?:appropriate|accurate|fitting))\b`)
	capital      = regexp.MustCompile(`\b[A-Z]\b`)
	// letterList is an answer that only lists letters ("A/B/C/D", "B or
	// C"): a judge echoing the options (LiveIdeaBench's fluency question
	// ends "ONLY ANSWER A/B/C/D") or hedging, not choosing.
	letterList = regexp.MustCompile(`(?i)^[\s*(\[]*[a-z][)\]*]*(?:\s*(?:/|,|\||\bor\b|\band\b)\s*[\s*(\[]*[a-z][)\]*]*)+\s*\.?$`)
	answerKeys = map[string]bool{"answer": true, "choice": true, "letter": true, "option": true, "label": true, "selection": true, "verdict": true, "category": true, "finalanswer": true}
)

func parseLetter(spec Spec, text string) (*Answer, error) {
	letters := spec.letters()
	pick := func(c byte) (*Answer, error) {
		if strings.IndexByte(letters, c) < 0 {
			return nil, fmt.Errorf("answer %c is not one of %s", c, listLetters(letters))
		}
		return &Answer{Letter: string(c)}, nil
	}
	if c, ok := letterFromJSON(text); ok {
		return pick(c)
	}
	body := plainText(text)
	if letterList.MatchString(strings.TrimSpace(body)) {
		var found []byte
		for i := 0; i < len(body); i++ {
			if c := upper(body[i]); isLetter(body[i]) && (i == 0 || !isLetter(body[i-1])) && (i+1 == len(body) || !isLetter(body[i+1])) && strings.IndexByte(string(found), c) < 0 {
				found = append(found, c)
			}
		}
		if len(found) > 1 {
			return nil, ambiguousLetter(letters, found)
		}
	}
	// An explicit label decides, and the last one wins: a rationale may weigh
	// several letters before it concludes with "Answer: C".
	labels := letterLabel.FindAllStringIndex(body, -1)
	for k := len(labels) - 1; k >= 0; k-- {
		rest := body[labels[k][1]:]
		if c, _, ok := letterToken(rest, false); ok {
			return pick(c)
		}
		// "Answer: C because ..." (a capital letter followed by words) counts
		// too, but only for an allowed letter: "Answer: I think ..." is prose.
		if c, _, ok := letterToken(rest, true); ok && strings.IndexByte(letters, c) >= 0 {
			return pick(c)
		}
	}
	if ms := letterBoxed.FindAllStringSubmatch(text, -1); len(ms) > 0 {
		return pick(upper(ms[len(ms)-1][1][0]))
	}
	// An answer may open or close with its letter. If it opens with one letter
	// and its last line starts with another, it is listing options, not choosing.
	lines := strings.Split(body, "\n")
	first, firstOK := lineLetter(lines[0], false)
	last, lastOK := lineLetter(lines[len(lines)-1], true)
	lastStart, lastStartOK := lineLetter(lines[len(lines)-1], false)
	switch {
	case len(lines) > 1 && firstOK && lastStartOK && first != lastStart:
		return nil, ambiguousLetter(letters, []byte{first, lastStart})
	case firstOK:
		return pick(first)
	case lastOK:
		return pick(last)
	}
	if found := phraseLetters(body); len(found) == 1 {
		return pick(found[0])
	} else if len(found) > 1 {
		return nil, ambiguousLetter(letters, found)
	}
	switch found := mentionedLetters(body, letters); len(found) {
	case 0:
		return nil, fmt.Errorf("found no answer letter; end with one line %q where X is one of %s", "Answer: X", listLetters(letters))
	case 1:
		return pick(found[0])
	default:
		return nil, ambiguousLetter(letters, found)
	}
}

func ambiguousLetter(letters string, found []byte) error {
	names := make([]string, len(found))
	for i, c := range found {
		names[i] = string(c)
	}
	return fmt.Errorf("ambiguous answer: it points to %s; end with one line %q where X is one of %s",
		strings.Join(names, " and "), "Answer: X", listLetters(letters))
}

// letterFromJSON reads {"answer": "B"} and its synonyms.
func letterFromJSON(text string) (byte, bool) {
	values := jsonValues(text)
	for i := len(values) - 1; i >= 0; i-- {
		for _, obj := range objects(values[i]) {
			v, ok := obj.lookup(func(k string) bool { return answerKeys[k] })
			if !ok {
				continue
			}
			if s, ok := v.(string); ok {
				if c, _, ok := letterToken(s, true); ok {
					return c, true
				}
			}
		}
	}
	return 0, false
}

// lineLetter reads an answer line that starts with a letter: "B", "**B**",
// "(B)", "b)", "B. Different ideas", "Option C". With whole set, the line must
// hold nothing but the letter and punctuation (used for the last line, where
// a sentence like "A new method..." must not count).
func lineLetter(line string, whole bool) (byte, bool) {
	c, rest, ok := letterToken(strings.TrimSpace(line), false)
	if !ok || (whole && strings.TrimSpace(strings.Trim(rest, ".!)*:")) != "") {
		return 0, false
	}
	return c, true
}

// phraseLetters collects letters named by "I would choose B" or "B is the
// best answer", distinct, in order.
func phraseLetters(body string) []byte {
	var found []byte
	add := func(c byte) {
		if strings.IndexByte(string(found), c) < 0 {
			found = append(found, c)
		}
	}
	for _, m := range letterChoose.FindAllStringIndex(body, -1) {
		if c, _, ok := letterToken(body[m[1]:], false); ok {
			add(c)
		}
	}
	for _, g := range letterIsThe.FindAllStringSubmatch(body, -1) {
		add(upper(g[1][0]))
	}
	return found
}

// sentenceStart reports whether a word after before would begin a sentence.
func sentenceStart(before string) bool {
	t := strings.TrimRight(before, " \t\"'(")
	return t == "" || strings.IndexByte(".!?:\n", t[len(t)-1]) >= 0
}

// mentionedLetters lists the allowed capital letters standing alone in the
// text, distinct, in order, skipping the article "A" and the pronoun "I".
func mentionedLetters(body, letters string) []byte {
	var found []byte
	for _, m := range capital.FindAllStringIndex(body, -1) {
		c := body[m[0]]
		if strings.IndexByte(letters, c) < 0 || strings.IndexByte(string(found), c) >= 0 {
			continue
		}
		after := body[m[1]:]
		if c == 'I' && (strings.HasPrefix(after, " ") || strings.HasPrefix(after, "'")) {
			continue
		}
		if c == 'A' && sentenceStart(body[:m[0]]) && len(after) > 1 && after[0] == ' ' && after[1] >= 'a' && after[1] <= 'z' {
			continue // "A similar idea ..."; mid-sentence "either A or C" names a letter
		}
		if strings.HasPrefix(after, "'") && len(after) > 1 && isLetter(after[1]) {
			continue // "A's" is a possessive, "I'm" a pronoun
		}
		found = append(found, c)
	}
	return found
}
