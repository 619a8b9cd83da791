package httpcall

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Redacted replaces every secret in scrubbed text.
const Redacted = "[REDACTED]"

// MinSecretLen is the shortest value treated as a secret. Shorter values are
// placeholders ("x", "none" for a local server that checks no key): masking
// them would turn every such letter of every reply into Redacted, and a
// guessable value protects nothing.
const MinSecretLen = 8

// Scrubber replaces secret values (API key, organisation, secret headers)
// with Redacted. Every text that leaves the layer passes through it, replies
// included: servers, gateways and HTTP libraries echo request details, even
// in successful bodies.
type Scrubber struct{ secrets []string }

// NewScrubber keeps the values of at least MinSecretLen bytes, each also in
// its JSON-escaped spelling, since replies are JSON.
func NewScrubber(values ...string) *Scrubber {
	s := &Scrubber{}
	for _, v := range values {
		if len(v) < MinSecretLen {
			continue
		}
		s.secrets = append(s.secrets, v)
		if b, err := json.Marshal(v); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != v {
				s.secrets = append(s.secrets, esc)
			}
		}
	}
	return s
}

// Scrub masks every secret in text. A nil Scrubber masks nothing.
func (s *Scrubber) Scrub(text string) string {
	if s == nil {
		return text
	}
	for _, secret := range s.secrets {
		text = strings.ReplaceAll(text, secret, Redacted)
	}
	return text
}

// ScrubBytes is Scrub for a body; it returns b itself when nothing matched.
func (s *Scrubber) ScrubBytes(b []byte) []byte {
	if s == nil || len(s.secrets) == 0 {
		return b
	}
	for _, secret := range s.secrets {
		if bytes.Contains(b, []byte(secret)) {
			return []byte(s.Scrub(string(b)))
		}
	}
	return b
}
