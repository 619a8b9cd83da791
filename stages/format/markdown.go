package format

import (
	"regexp"
	"strings"
)

// typography maps characters that models emit in place of ASCII punctuation
// (curly quotes, full-width colons from multilingual models, invisible spaces)
// so the parsers only deal with ASCII syntax.
var typography = strings.NewReplacer(
	"\r\n", "\n", "\r", "\n",
	"\u00a0", " ", "\u202f", " ", "\u2009", " ", "\u200b", "", "\ufeff", "",
	"\u2018", "'", "\u2019", "'", "\u201c", `"`, "\u201d", `"`,
	"\uff1a", ":", "\uff08", "(", "\uff09", ")", "\uff0c", ",", "\uff1e", ">",
)

// prepare normalises an answer before kind-specific parsing.
func prepare(text string) string {
	return strings.TrimSpace(stripThink(typography.Replace(text)))
}

// stripThink drops reasoning that servers without a reasoning parser leave in
// the content (<think>...</think>). The answer is what follows the last closing
// tag; an opening tag that is never closed means the answer was cut off while
// still reasoning, so nothing after it is an answer.
func stripThink(text string) string {
	for _, tag := range [...]string{"think", "thinking", "reasoning"} {
		if i := strings.LastIndex(text, "</"+tag+">"); i >= 0 {
			text = text[i+len(tag)+3:]
		} else if i := strings.Index(text, "<"+tag+">"); i >= 0 {
			text = text[:i]
		}
	}
	return text
}

var (
	headingMark   = regexp.MustCompile(`^#{1,6}\s+`)
	starEmphasis  = regexp.MustCompile(`\*([^*\s](?:[^*]*[^*\s])?)\*`)
	underEmphasis = regexp.MustCompile(`(^|[\s(\[])_([^_\s](?:[^_]*[^_\s])?)_($|[\s).,;:!?\]])`)
)

// plain strips markdown decoration from one line (indentation, block quotes,
// heading marks, emphasis, inline code), keeping the words.
func plain(line string) string {
	s := strings.TrimSpace(line)
	for strings.HasPrefix(s, ">") {
		s = strings.TrimSpace(s[1:])
	}
	s = headingMark.ReplaceAllString(s, "")
	s = stripEmphasis(s)
	return strings.TrimSpace(s)
}

// stripEmphasis removes bold, italics and inline-code marks.
func stripEmphasis(s string) string {
	if !strings.ContainsAny(s, "*_`") {
		return s
	}
	s = strings.ReplaceAll(s, "**", "")
	s = strings.ReplaceAll(s, "__", "")
	s = strings.ReplaceAll(s, "`", "")
	if strings.Contains(s, "*") {
		s = starEmphasis.ReplaceAllString(s, "$1")
	}
	if strings.Contains(s, "_") {
		s = underEmphasis.ReplaceAllString(s, "$1$2$3")
	}
	return s
}

// isRule reports whether line is a horizontal rule ("---", "* * *", "___") or a
// setext underline ("==="): three or more of one mark, blanks between allowed.
func isRule(line string) bool {
	var mark byte
	n := 0
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\t':
		case '-', '*', '_', '=':
			if mark != 0 && c != mark {
				return false
			}
			mark = c
			n++
		default:
			return false
		}
	}
	return n >= 3
}

func isBlank(line string) bool { return strings.TrimSpace(line) == "" }

// indentOf counts leading blanks, a tab counting as four.
func indentOf(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

// plainText strips markdown from every line of a block and drops blank lines.
func plainText(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if isRule(l) {
			continue
		}
		if p := plain(l); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n")
}

// snippet shortens s for an error message.
func snippet(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "..."
}
