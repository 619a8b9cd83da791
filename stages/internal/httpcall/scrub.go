package httpcall

import (
	"bytes"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Redacted replaces every secret in scrubbed text.
const Redacted = "[REDACTED]"

// MinSecretLen is the shortest value treated as a secret. Shorter values are
// placeholders ("x", "none" for a local server that checks no key): masking
// them would turn every such letter of every reply into Redacted, and a
// guessable value protects nothing.
const MinSecretLen = 8

// unescapeDepth is how many layers of JSON string escaping a secret is
// looked for under: a reply (one layer: "\u0073k-..." decodes to "sk-..."),
// a JSON document carried in one of its strings (two: a model's JSON answer,
// which an answer parser decodes again), and one more for a proxy that wraps
// such a reply in its own JSON error.
const unescapeDepth = 3

// Scrubber replaces secret values (API key, organisation, secret headers)
// with Redacted. Every text that leaves the layer passes through it, replies
// included: servers, gateways and HTTP libraries echo request details, even
// in successful bodies.
//
// A secret is found in every spelling a JSON encoder can give it, not only
// byte for byte: \u00XX escapes of any of its characters (either case of
// hex), escaped slashes (\/), Gson's HTML-safe escapes (\u003d for the "="
// of base64 padding), two-character escapes (\" \\), and the same again
// under up to unescapeDepth layers of escaping (a JSON answer inside a JSON
// reply). Scrubbing the reply's bytes this way means what a decoder makes
// of them (the answer, the reported model, an error message, a token's
// text) never holds the secret either: the escaped span is replaced as a
// whole, so the JSON stays valid and decodes to Redacted.
type Scrubber struct {
	secrets [][]byte
	// in marks the bytes some secret holds: an escape that stands for
	// none of them cannot be part of a secret's spelling.
	in [256]bool
}

// NewScrubber keeps the values of at least MinSecretLen bytes.
func NewScrubber(values ...string) *Scrubber {
	s := &Scrubber{}
	for _, v := range values {
		if len(v) >= MinSecretLen {
			s.secrets = append(s.secrets, []byte(v))
			for i := range len(v) {
				s.in[v[i]] = true
			}
		}
	}
	return s
}

// Scrub masks every secret in text, in every spelling (see Scrubber). A
// nil Scrubber masks nothing.
func (s *Scrubber) Scrub(text string) string {
	if s == nil || len(s.secrets) == 0 {
		return text
	}
	out, changed := s.scrub([]byte(text))
	if !changed {
		return text
	}
	return string(out)
}

// ScrubBytes is Scrub for a body; it returns b itself when nothing matched.
func (s *Scrubber) ScrubBytes(b []byte) []byte {
	if s == nil || len(s.secrets) == 0 {
		return b
	}
	out, _ := s.scrub(b)
	return out
}

// scrub replaces every span of raw that spells a secret. Spans found under
// different layers may overlap; they are merged, and the search runs again
// on the result until it finds nothing, so the output holds no secret at
// any layer. Replacing a span can make another appear only for a secret
// spelled around Redacted itself; the rounds are bounded all the same.
func (s *Scrubber) scrub(raw []byte) ([]byte, bool) {
	changed := false
	for round := 0; round < 8; round++ {
		spans := s.find(raw)
		if len(spans) == 0 {
			return raw, changed
		}
		var out bytes.Buffer
		out.Grow(len(raw))
		at := 0
		for _, sp := range spans {
			out.Write(raw[at:sp.lo])
			out.WriteString(Redacted)
			at = sp.hi
		}
		out.Write(raw[at:])
		raw, changed = out.Bytes(), true
	}
	return raw, changed
}

type span struct{ lo, hi int }

// find returns the spans of raw, sorted and disjoint, that spell a secret
// at any layer of unescaping.
func (s *Scrubber) find(raw []byte) []span {
	layers := [][]byte{raw}
	for len(layers) <= unescapeDepth {
		top := layers[len(layers)-1]
		if !s.mayHide(top) {
			break
		}
		layers = append(layers, unescape(top))
	}
	var spans []span
	for depth, text := range layers {
		for _, secret := range s.secrets {
			for from := 0; ; {
				i := bytes.Index(text[from:], secret)
				if i < 0 {
					break
				}
				lo, hi := from+i, from+i+len(secret)
				from = hi
				for d := depth; d > 0; d-- { // back down to the raw bytes
					lo, hi = escapedSpan(layers[d-1], lo, hi)
				}
				spans = append(spans, span{lo, hi})
			}
		}
	}
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int { return a.lo - b.lo })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		if last := &merged[len(merged)-1]; sp.lo <= last.hi {
			last.hi = max(last.hi, sp.hi)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// mayHide reports whether unescaping b could reveal a secret the plain
// search missed: whether b holds an escape standing for a byte of a secret,
// or an escaped backslash (which can start an escape in the next layer).
// Replies are full of \n and \", which stand for no byte of a key: for
// them the layer is never built.
func (s *Scrubber) mayHide(b []byte) bool {
	var buf [utf8.UTFMax]byte
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 || i+j+1 == len(b) {
			return false
		}
		i += j
		switch c := b[i+1]; c {
		case '\\':
			return true
		case 'u':
			dec, n := unit(b, i, &buf)
			if s.in[dec[0]] {
				return true
			}
			i += n
		default: // a two-character escape, or a plain backslash
			if shortEscapes[c] != 0 && s.in[shortEscapes[c]] {
				return true
			}
			i += 2
		}
	}
}

// unescape decodes every JSON string escape in b, wherever it stands (the
// bytes need not be valid JSON: an error page quoting a JSON body is
// searched too). Other bytes are kept as they are.
func unescape(b []byte) []byte {
	out := make([]byte, 0, len(b))
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return append(out, b[i:]...)
		}
		out = append(out, b[i:i+j]...)
		dec, n := unit(b, i+j, &buf)
		out = append(out, dec...)
		i += j + n
	}
	return out
}

// escapedSpan maps the span [lo, hi) of unescape(b) back to the span of b
// that spells it: from the start of the unit holding byte lo to the end of
// the unit holding byte hi-1. Plain bytes are units of their own.
func escapedSpan(b []byte, lo, hi int) (int, int) {
	var buf [utf8.UTFMax]byte
	rawLo := -1
	at := 0 // offset in unescape(b) of b[i]
	for i := 0; i < len(b); {
		if j := bytes.IndexByte(b[i:], '\\'); j != 0 { // a run of plain bytes, mapped one to one
			if j < 0 {
				j = len(b) - i
			}
			if rawLo < 0 && lo < at+j {
				rawLo = i + lo - at
			}
			if hi <= at+j {
				return rawLo, i + hi - at
			}
			at, i = at+j, i+j
			continue
		}
		dec, n := unit(b, i, &buf)
		next := at + len(dec)
		if rawLo < 0 && lo < next {
			rawLo = i
		}
		if hi <= next {
			return rawLo, i + n
		}
		at, i = next, i+n
	}
	return max(rawLo, 0), len(b)
}

// unit reads the spelling unit at b[i]: a JSON escape sequence, or one
// byte. It returns the bytes the unit stands for (in buf, or b's own) and
// how many bytes of b it spans. A \u escape of a UTF-16 surrogate pair is
// one unit; a lone surrogate stands for U+FFFD, as encoding/json decodes it.
func unit(b []byte, i int, buf *[utf8.UTFMax]byte) ([]byte, int) {
	if b[i] != '\\' || i+1 == len(b) {
		return b[i : i+1], 1
	}
	switch c := b[i+1]; c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		buf[0] = shortEscapes[c]
		return buf[:1], 2
	case 'u':
		r, ok := hex4(b, i+2)
		if !ok {
			break
		}
		n := 6
		if utf16.IsSurrogate(r) {
			if r2, ok := hex4(b, i+8); ok && b[i+6] == '\\' && b[i+7] == 'u' {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					r, n = pair, 12
				}
			}
			if n == 6 {
				r = utf8.RuneError
			}
		}
		return buf[:utf8.EncodeRune(buf[:], r)], n
	}
	return b[i : i+1], 1 // not an escape JSON knows: a plain backslash
}

// shortEscapes are the bytes JSON's two-character escapes stand for.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads the four hex digits at b[i:], either case.
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c-'a') + 10
		case 'A' <= c && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

// ScrubStrings masks every secret in each of texts, in place: the decoded
// fields of a reply (an answer, a model name, token texts), checked again
// after decoding whatever the transport already masked.
func (s *Scrubber) ScrubStrings(texts ...*string) {
	for _, t := range texts {
		*t = s.Scrub(*t)
	}
}
