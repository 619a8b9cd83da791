package format

import (
	"strings"
	"unicode"
)

// Python's text rules, which the authors' parsers (compat_*.go) run under
// and Go's differ from. One definition for every benchmark's compatibility
// parse.

// pySpace is Python's \s in a str pattern (and str.isspace) as a character
// class: ASCII \t-\r and space, the separators \x1c-\x1f, NEL, and
// Unicode's space, line and paragraph separators. Go's \s is ASCII only and
// unicode.IsSpace leaves out \x1c-\x1f, so it is spelled out.
const pySpace = `[\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

// isPySpace is str.isspace for one character: the runes of pySpace.
func isPySpace(r rune) bool {
	return r >= '\t' && r <= '\r' || r >= 0x1c && r <= 0x20 || r == 0x85 || r == 0xa0 || r == 0x1680 ||
		r >= 0x2000 && r <= 0x200a || r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000
}

// pyStrip is Python's str.strip() with no argument.
func pyStrip(s string) string { return strings.TrimFunc(s, isPySpace) }

// digitValue is the value of a Unicode decimal digit (category Nd, what
// Python's \d and int() accept). Unicode assigns Nd in contiguous runs of
// whole blocks 0-9, so the value is the offset within its run, modulo 10.
func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return int(r-lo) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return int(r-lo) % 10
		}
	}
	return 0
}
