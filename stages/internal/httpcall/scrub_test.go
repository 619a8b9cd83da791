package httpcall

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

func TestScrubber(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"every occurrence", []string{"sk-abcdefgh", "", "org-12345678"}, "key sk-abcdefgh and sk-abcdefgh, org org-12345678",
			"key [REDACTED] and [REDACTED], org [REDACTED]"},
		{"placeholders under 8 bytes are not secrets", []string{"x", "none", "1234567"}, "x marks none of 1234567", "x marks none of 1234567"},
		{"JSON-escaped spelling", []string{`pa"ss/word\1`}, `{"echo":"pa\"ss/word\\1"}`, `{"echo":"[REDACTED]"}`},
		{"a backslash in the secret, as is", []string{`pa\nss-word`}, `key pa\nss-word`, `key [REDACTED]`},
		{"overlapping secrets", []string{"sk-abcdefgh", "abcdefgh-xyz"}, "sk-abcdefgh-xyz!", "[REDACTED]!"},
		{"a lone surrogate is no secret's", []string{"sk-abcdefgh"}, `"\ud800sk-abcdefgh"`, `"\ud800[REDACTED]"`},
		{"escapes outside any string", []string{"sk-abcdefgh"}, `<p>\u0073k-abcdefgh</p>`, `<p>[REDACTED]</p>`},
		{"nothing to mask", nil, "plain", "plain"},
		{"escapes but no secret", []string{"sk-abcdefgh"}, `{"a":"line\nbreak \u00e9 \\ \/"}`, `{"a":"line\nbreak \u00e9 \\ \/"}`},
	}
	for _, tt := range tests {
		s := NewScrubber(tt.secrets...)
		if got := s.Scrub(tt.in); got != tt.want {
			t.Errorf("%s: Scrub = %q, want %q", tt.name, got, tt.want)
		}
		if got := string(s.ScrubBytes([]byte(tt.in))); got != tt.want {
			t.Errorf("%s: ScrubBytes = %q, want %q", tt.name, got, tt.want)
		}
	}
	var none *Scrubber
	if got := none.Scrub("sk-abcdefgh"); got != "sk-abcdefgh" {
		t.Errorf("nil Scrubber changed the text: %q", got)
	}
	clean := []byte(`{"a":"line\nbreak"}`)
	if got := NewScrubber("sk-abcdefgh").ScrubBytes(clean); &got[0] != &clean[0] {
		t.Error("ScrubBytes copied a body that held no secret")
	}
}

// TestScrubEverySpelling: a key echoed in a JSON reply in any spelling an
// encoder produces is replaced as a whole: the body stays valid JSON, and
// it decodes to Redacted, not to the key, once or (nested) twice.
func TestScrubEverySpelling(t *testing.T) {
	// Slashes, base64 padding, a quote and an HTML-unsafe character: each
	// has a spelling of its own in some encoder.
	const key = "sk-b64/Zm9v+YmFy='x<y"
	s := NewScrubber(key)
	for _, sp := range llmtest.Spellings {
		for _, where := range []string{"whole", "prefix", "suffix"} {
			text := map[string]string{"whole": "%s", "prefix": "Bearer %s.", "suffix": "%s is wrong"}[where]
			spelled := strings.Replace(text, "%s", llmtest.Spell(key, sp), 1)
			body := `{"error":{"message":"` + spelled + `","code":null}}`
			got := s.ScrubBytes([]byte(body))
			var v struct {
				Error struct{ Message string } `json:"error"`
			}
			if err := json.Unmarshal(got, &v); err != nil {
				t.Fatalf("%v, %s: scrubbed body %s is no longer JSON: %v", sp, where, got, err)
			}
			want := strings.Replace(text, "%s", Redacted, 1)
			if v.Error.Message != want {
				t.Errorf("%v, %s: decodes to %q, want %q (body %s)", sp, where, v.Error.Message, want, got)
			}
			// Decode once more: the nested spelling's second layer.
			var again string
			if err := json.Unmarshal([]byte(`"`+v.Error.Message+`"`), &again); err == nil && strings.Contains(again, key) {
				t.Errorf("%v, %s: the second decoding gives the key: %q", sp, where, again)
			}
			if s.Scrub(body) != string(got) {
				t.Errorf("%v, %s: Scrub and ScrubBytes differ", sp, where)
			}
		}
	}
}

// BenchmarkScrubReply: a 4 kB chat reply with escapes and no secret, the
// common case every reply pays.
func BenchmarkScrubReply(b *testing.B) {
	s := NewScrubber("sk-bench-0123456789", "org-bench-0123456789")
	body := []byte(`{"choices":[{"message":{"content":"` + strings.Repeat(`a sentence of the answer, about a hundred bytes long, as replies are: words, words, words.\n`, 40) + `\"quoted\"` + `"}}]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		s.ScrubBytes(body)
	}
}
