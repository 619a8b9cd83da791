package httpcall

import "testing"

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
		{"nothing to mask", nil, "plain", "plain"},
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
}
