package format

import (
	"strings"
)

// labelWords may precede a letter label: "Idea B", "Option C".
var labelWords = [...]string{"research idea", "idea", "proposal", "option", "choice", "candidate", "hypothesis", "answer", "letter", "response", "item", "statement", "text"}

// letterToken reads a letter label at the start of s: "B", "**B**", "(B)",
// "[b]", "'B'", "Idea B", "Option (C)", "b)". It returns the letter in upper
// case and the text after it.
//
// A bare letter followed by a word ("A novel method", "I think") is usually an
// article or a pronoun, not a label, so it is accepted only when wordOK is set
// and the letter is upper case, or when decoration ("**A** is", "Idea A is")
// makes the label explicit.
func letterToken(s string, wordOK bool) (byte, string, bool) {
	i, decorated := skipOpeners(s, 0)
	if n := labelWordLen(s[i:]); n > 0 {
		i, _ = skipOpeners(s, i+n)
		decorated = true
	}
	if i >= len(s) || !isLetter(s[i]) {
		return 0, "", false
	}
	c := s[i]
	i++
	if i < len(s) && (isLetter(s[i]) || isDigit(s[i]) || (s[i] == '\'' && i+1 < len(s) && isLetter(s[i+1]))) {
		return 0, "", false // a word ("Bob"), not a letter; "I'd" is a pronoun
	}
	j := i
	for j < len(s) && strings.IndexByte("*_`\"')]}>", s[j]) >= 0 {
		j++
	}
	closed := j > i
	rest := s[j:]
	t := strings.TrimLeft(rest, " \t")
	switch {
	case t == "":
	case strings.IndexByte(".:;,)/|>([!?-", t[0]) >= 0:
	case strings.HasPrefix(t, "\u2013"), strings.HasPrefix(t, "\u2014"), strings.HasPrefix(t, "\u2192"), strings.HasPrefix(t, "\u227b"):
	case len(t) < len(rest) && (decorated || closed || (wordOK && c >= 'A' && c <= 'Z')):
	default:
		return 0, "", false
	}
	return upper(c), rest, true
}

// skipOpeners skips blanks and opening decoration from i, reporting whether
// any decoration (not just blanks) was skipped.
func skipOpeners(s string, i int) (int, bool) {
	decorated := false
	for i < len(s) && strings.IndexByte(" \t*_`\"'([{<#", s[i]) >= 0 {
		if s[i] != ' ' && s[i] != '\t' {
			decorated = true
		}
		i++
	}
	return i, decorated
}

// labelWordLen returns the length of a label word and the blanks after it at
// the start of s, or 0.
func labelWordLen(s string) int {
	for _, w := range labelWords {
		if len(s) <= len(w) || !strings.EqualFold(s[:len(w)], w) {
			continue
		}
		n := len(w)
		for n < len(s) && (s[n] == ' ' || s[n] == '\t' || s[n] == '#' || s[n] == '-') {
			n++
		}
		if n > len(w) {
			return n
		}
	}
	return 0
}
