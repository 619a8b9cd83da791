package format

import (
	"fmt"
	"strings"
)

// Validate reports whether the spec can be parsed against at all; Parse calls it,
// and stages may call it at layout time to fail before any model call.
func (s Spec) Validate() error {
	switch s.Kind {
	case Text, Rating:
	case Ideas:
		if s.N < 0 {
			return fmt.Errorf("ideas: n must not be negative, got %d", s.N)
		}
	case Ranking, Letter:
		if err := validLetters(s.Letters); err != nil {
			return fmt.Errorf("%s: %w", s.Kind, err)
		}
	case Fields, Scores:
		if len(s.Fields) == 0 {
			return fmt.Errorf("%s: no field names", s.Kind)
		}
		seen := map[string]bool{}
		for _, f := range s.Fields {
			k := normKey(f)
			if k == "" {
				return fmt.Errorf("%s: field name %q has no letters or digits", s.Kind, f)
			}
			if seen[k] {
				return fmt.Errorf("%s: field %q listed twice", s.Kind, f)
			}
			seen[k] = true
		}
	case "":
		return fmt.Errorf("format kind is empty")
	default:
		return fmt.Errorf("unknown format kind %q", s.Kind)
	}
	if s.Max > 0 && s.Min > s.Max {
		return fmt.Errorf("%s: min %d is above max %d", s.Kind, s.Min, s.Max)
	}
	return nil
}

func validLetters(letters string) error {
	if letters == "" {
		return fmt.Errorf("no letters")
	}
	seen := map[byte]bool{}
	for i := 0; i < len(letters); i++ {
		c := upper(letters[i])
		if c < 'A' || c > 'Z' {
			return fmt.Errorf("letters %q: %q is not a letter A-Z", letters, letters[i])
		}
		if seen[c] {
			return fmt.Errorf("letters %q: %c listed twice", letters, c)
		}
		seen[c] = true
	}
	return nil
}

// letters returns the allowed letters in upper case, in spec order.
func (s Spec) letters() string { return strings.ToUpper(s.Letters) }

// bounded reports whether Min and Max constrain values: a zero Max means "no bounds",
// so that a zero Spec does not reject every number.
func (s Spec) bounded() bool { return s.Max > 0 }

func (s Spec) inRange(v int) bool { return !s.bounded() || (v >= s.Min && v <= s.Max) }

func (s Spec) rangeText() string { return fmt.Sprintf("%d to %d", s.Min, s.Max) }

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// listLetters renders "ABC" as "A, B, C".
func listLetters(letters string) string {
	parts := make([]string, len(letters))
	for i := range letters {
		parts[i] = letters[i : i+1]
	}
	return strings.Join(parts, ", ")
}
