package format

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON that models write is often not JSON: comments, trailing commas,
// single quotes, unquoted keys, Python's True/None, raw newlines in strings.
// encoding/json rejects all of these, so this small parser accepts them. It
// also keeps object keys in order (ideas must come back in the order written)
// and numbers as their source text ("7.0" vs "7.5" is decided later, exactly).

// jsonObject is an object with its keys in source order.
type jsonObject struct {
	keys []string
	vals []any
}

// jsonNumber is a number token as written.
type jsonNumber string

// lookup returns the value of the first key whose normalised form satisfies match.
func (o *jsonObject) lookup(match func(norm string) bool) (any, bool) {
	for i, k := range o.keys {
		if match(normKey(k)) {
			return o.vals[i], true
		}
	}
	return nil, false
}

// normKey folds case and drops everything but letters and digits, so that
// "Originality_Score", "originality score" and "originalityScore" compare equal.
func normKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

const (
	maxJSONDepth    = 64 // nesting beyond this is not an answer; it also bounds recursion
	maxJSONAttempts = 64 // brace positions tried when scanning prose for JSON
)

var errJSON = errors.New("not json")

type jsonParser struct {
	s     string
	pos   int
	depth int
}

// parseJSONPrefix parses one value at the start of s (after blanks and comments)
// and returns it with the offset just past it.
func parseJSONPrefix(s string) (any, int, error) {
	p := &jsonParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, 0, err
	}
	return v, p.pos, nil
}

func (p *jsonParser) skip() {
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '#' || strings.HasPrefix(p.s[p.pos:], "//"):
			if i := strings.IndexByte(p.s[p.pos:], '\n'); i >= 0 {
				p.pos += i + 1
			} else {
				p.pos = len(p.s)
			}
		case strings.HasPrefix(p.s[p.pos:], "/*"):
			if i := strings.Index(p.s[p.pos+2:], "*/"); i >= 0 {
				p.pos += i + 4
			} else {
				p.pos = len(p.s)
			}
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, error) {
	p.skip()
	if p.pos >= len(p.s) {
		return nil, errJSON
	}
	switch c := p.s[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || c == '+' || c == '.' || isDigit(c):
		return p.number()
	default:
		word := p.ident()
		switch word {
		case "true", "True":
			return true, nil
		case "false", "False":
			return false, nil
		case "null", "None":
			return nil, nil
		}
		return nil, errJSON
	}
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return errJSON
	}
	p.pos++ // the opening bracket
	return nil
}

func (p *jsonParser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	obj := &jsonObject{}
	for {
		p.skip()
		if p.pos >= len(p.s) {
			return nil, errJSON
		}
		if p.s[p.pos] == '}' {
			p.pos++
			p.depth--
			return obj, nil
		}
		var key string
		if c := p.s[p.pos]; c == '"' || c == '\'' {
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			key = k
		} else if key = p.ident(); key == "" {
			return nil, errJSON
		}
		p.skip()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return nil, errJSON
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		obj.keys = append(obj.keys, key)
		obj.vals = append(obj.vals, v)
		if err := p.separator('}'); err != nil {
			return nil, err
		}
	}
}

func (p *jsonParser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	arr := []any{}
	for {
		p.skip()
		if p.pos >= len(p.s) {
			return nil, errJSON
		}
		if p.s[p.pos] == ']' {
			p.pos++
			p.depth--
			return arr, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		if err := p.separator(']'); err != nil {
			return nil, err
		}
	}
}

// separator consumes the comma after a member. A missing comma is forgiven when
// the next member clearly starts (models drop commas at line ends).
func (p *jsonParser) separator(closer byte) error {
	p.skip()
	if p.pos >= len(p.s) {
		return errJSON
	}
	switch c := p.s[p.pos]; {
	case c == ',':
		p.pos++
	case c == closer:
	case c == '"' || c == '\'' || c == '{' || c == '[':
	default:
		return errJSON
	}
	return nil
}

func isIdentByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '$' }

func (p *jsonParser) ident() string {
	start := p.pos
	for p.pos < len(p.s) && isIdentByte(p.s[p.pos]) {
		p.pos++
	}
	return p.s[start:p.pos]
}

func (p *jsonParser) number() (any, error) {
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if !(isDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		p.pos++
	}
	tok := strings.TrimPrefix(p.s[start:p.pos], "+")
	if _, err := strconv.ParseFloat(tok, 64); err != nil {
		return nil, errJSON
	}
	return jsonNumber(tok), nil
}

func (p *jsonParser) str() (string, error) {
	q := p.s[p.pos]
	p.pos++
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			return b.String(), nil
		case c == '\\' && p.pos+1 < len(p.s):
			p.pos++
			if err := p.escape(&b); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return "", errJSON
}

// escape decodes one escape sequence; p.pos is on the byte after the backslash.
func (p *jsonParser) escape(b *strings.Builder) error {
	c := p.s[p.pos]
	p.pos++
	switch c {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return errJSON
		}
		if utf16.IsSurrogate(r) && strings.HasPrefix(p.s[p.pos:], `\u`) {
			save := p.pos
			p.pos += 2
			if r2, ok := p.hex4(); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
				r = utf16.DecodeRune(r, r2)
			} else {
				p.pos = save
				r = utf8.RuneError
			}
		} else if utf16.IsSurrogate(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	default: // \" \' \\ \/ and anything else a model escaped needlessly
		b.WriteByte(c)
	}
	return nil
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.pos:p.pos+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(v), true
}

// jsonValues finds the JSON values in an answer. Values inside code fences come
// first and, when there are any, alone: a fenced block is the model's stated
// answer. Otherwise the text is scanned for objects and arrays in prose.
func jsonValues(text string) []any {
	var out []any
	for _, block := range codeFences(text) {
		if v, _, err := parseJSONPrefix(block); err == nil {
			out = append(out, v)
		}
	}
	if len(out) > 0 {
		return out
	}
	attempts := 0
	for i := 0; i < len(text) && attempts < maxJSONAttempts; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		attempts++
		if v, n, err := parseJSONPrefix(text[i:]); err == nil {
			out = append(out, v)
			i += n - 1
		}
	}
	return out
}

// codeFences returns the contents of ``` blocks, in order. An unterminated
// block (a cut-off answer) runs to the end of the text.
func codeFences(text string) []string {
	var out []string
	for {
		i := strings.Index(text, "```")
		if i < 0 {
			return out
		}
		text = text[i+3:]
		// Skip the info string ("json", "jsonc"); it is a single word, so an
		// inline fence whose content starts on the same line keeps its content.
		j := 0
		for j < len(text) && (isIdentByte(text[j]) || text[j] == '-') {
			j++
		}
		body := text[j:]
		end := strings.Index(body, "```")
		if end < 0 {
			return append(out, body)
		}
		out = append(out, body[:end])
		text = body[end+3:]
	}
}

// objects returns o and the objects nested in it, breadth first, so that a
// shallow key wins over a deeper one with the same name.
func objects(v any) []*jsonObject {
	var out []*jsonObject
	queue := []any{v}
	for len(queue) > 0 && len(out) < 256 {
		cur := queue[0]
		queue = queue[1:]
		switch x := cur.(type) {
		case *jsonObject:
			out = append(out, x)
			queue = append(queue, x.vals...)
		case []any:
			queue = append(queue, x...)
		}
	}
	return out
}
