package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
)

// Spelling is one way a JSON encoder can write a string: what an echoing
// server's reply holds between a string's quotes. Every one decodes to the
// same text, so a client that masks secrets in raw bytes only would miss
// all but the first.
type Spelling int

const (
	// Plain is Go's encoding/json: only what must be escaped is.
	Plain Spelling = iota
	// EscapeAll writes every character as \u00XX, lower-case hex.
	EscapeAll
	// EscapeAllUpper writes every character as \u00XX, upper-case hex.
	EscapeAllUpper
	// EscapeAlternate escapes every other character, so no run of two
	// plain characters of the secret survives.
	EscapeAlternate
	// EscapedSlashes writes "/" as "\/" (PHP's json_encode, many Java encoders).
	EscapedSlashes
	// Gson is Gson's HTML-safe default: < > & = ' as \u003c \u003e \u0026
	// \u003d \u0027, so base64 padding arrives as \u003d.
	Gson
	// Nested is a JSON document inside a JSON string: the EscapeAll
	// spelling, escaped again (\\u0073...), as a model's JSON answer, or
	// an error body quoted by a proxy, carries it. One decoding gives the
	// EscapeAll spelling; a second (an answer parser) gives the text.
	Nested
)

// Spellings lists every Spelling, for table-driven tests.
var Spellings = []Spelling{Plain, EscapeAll, EscapeAllUpper, EscapeAlternate, EscapedSlashes, Gson, Nested}

func (sp Spelling) String() string {
	return [...]string{"plain", "every character \\u00xx", "every character \\u00XX", "every other character escaped",
		"escaped slashes", "Gson's HTML-safe escapes", "nested JSON (escaped twice)"}[sp]
}

// Spell writes s in spelling sp, as it stands between the quotes of a JSON
// string.
func Spell(s string, sp Spelling) string {
	switch sp {
	case EscapeAll, EscapeAllUpper, EscapeAlternate:
		format := "\\u%04x"
		if sp == EscapeAllUpper {
			format = "\\u%04X"
		}
		var b strings.Builder
		i := 0
		for _, r := range s {
			if sp == EscapeAlternate && i%2 == 1 {
				b.WriteString(plain(string(r)))
			} else {
				for _, u := range utf16.Encode([]rune{r}) {
					fmt.Fprintf(&b, format, u)
				}
			}
			i++
		}
		return b.String()
	case EscapedSlashes:
		return strings.ReplaceAll(plain(s), "/", `\/`)
	case Gson:
		r := strings.NewReplacer("=", `\u003d`, "'", `\u0027`)
		return r.Replace(plain(s)) // encoding/json already escapes < > & this way
	case Nested:
		return plain(Spell(s, EscapeAll))
	}
	return plain(s)
}

// plain is encoding/json's spelling of s, without the quotes.
func plain(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// echoMarker stands in a reply's JSON where an echo is spliced in, spelled,
// after the reply is encoded (an encoder would escape a spelling again).
const echoMarker = "\x1eECHO\x1e"

// splice replaces the marker's JSON spelling in body with text spelled sp.
func splice(body []byte, text string, sp Spelling) []byte {
	return []byte(strings.ReplaceAll(string(body), plain(echoMarker), Spell(text, sp)))
}
