package datasets

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parsePyList parses a list of strings as pandas writes one into a CSV cell:
// Python's repr of a list (['Review', 'JournalArticle'], ["it's"], []), or
// None, or an empty cell (both nil). Semantic Scholar dumps saved through
// pandas hold publication types, intents and contexts this way, so a
// references CSV cannot be read as JSON. Only what repr produces for a list
// of strings is accepted; anything else is an error saying where it stops
// making sense, since a half-parsed list would silently change the filter.
func parsePyList(s string) ([]string, error) {
	t := strings.TrimSpace(s)
	if t == "" || t == "None" {
		return nil, nil
	}
	p := &pyParser{s: t}
	if !p.eat('[') {
		return nil, fmt.Errorf("expected a list like ['a', 'b'], [] or None, got %s", clip(t))
	}
	out := []string{}
	for {
		p.space()
		if p.eat(']') {
			break
		}
		str, err := p.str()
		if err != nil {
			return nil, err
		}
		out = append(out, str)
		p.space()
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			break
		}
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("list is not closed with ]")
		}
		return nil, fmt.Errorf("expected , or ] at column %d, got %q", p.i+1, p.s[p.i])
	}
	p.space()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("unexpected text after the list at column %d: %s", p.i+1, clip(p.s[p.i:]))
	}
	return out, nil
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str parses one quoted string with Python's escapes.
func (p *pyParser) str() (string, error) {
	if p.i >= len(p.s) {
		return "", fmt.Errorf("list is not closed with ]")
	}
	q := p.s[p.i]
	if q != '\'' && q != '"' {
		return "", fmt.Errorf("expected a quoted string at column %d, got %s", p.i+1, clip(p.s[p.i:]))
	}
	start := p.i
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", fmt.Errorf("string starting at column %d is not closed", start+1)
		}
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", fmt.Errorf("string starting at column %d is not closed", start+1)
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				var v uint64
				err := fmt.Errorf("too short")
				if p.i+n <= len(p.s) {
					v, err = strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
				}
				if err != nil {
					return "", fmt.Errorf("escape \\%c at column %d needs %d hex digits", e, p.i-1, n)
				}
				if !utf8.ValidRune(rune(v)) {
					return "", fmt.Errorf("escape \\%c%s at column %d is not a character", e, p.s[p.i:p.i+n], p.i-1)
				}
				b.WriteRune(rune(v))
				p.i += n
			default:
				// Python keeps an unknown escape as written.
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 30 {
		return strconv.Quote(s[:30]) + "..."
	}
	return strconv.Quote(s)
}

// parsePyInt parses a whole number as pandas writes one: "12", or "12.0" in
// a column that also holds missing values (pandas then stores floats).
// Empty, None and nan are missing: 0.
func parsePyInt(s string) (int, error) {
	t := strings.TrimSpace(s)
	switch t {
	case "", "None", "nan", "NaN":
		return 0, nil
	}
	if n, err := strconv.Atoi(t); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && f == float64(int64(f)) && f >= -1e15 && f <= 1e15 {
		return int(f), nil
	}
	return 0, fmt.Errorf("%q is not a whole number", s)
}

// parsePyBool parses True/False (Python), true/false (JSON) or empty/None (false).
func parsePyBool(s string) (bool, error) {
	switch strings.TrimSpace(s) {
	case "", "None", "False", "false":
		return false, nil
	case "True", "true":
		return true, nil
	}
	return false, fmt.Errorf("%q is not True or False", s)
}
