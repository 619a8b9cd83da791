package format

import (
	"fmt"
	"strings"
)

// PhraseRefusal reports whether text declines the task by LiveIdeaBench's
// rule: it contains one of phrases, compared case-insensitively, anywhere.
// It returns the phrase found. Blank phrases are ignored (one would match
// every answer). When the answer has a "Final Idea:" marker (see
// FinalIdea) only what follows it is checked: a reasoning model's
// deliberation before its answer ("I can't decide between ...") is not a
// refusal, and the original checks the extracted idea too.
//
// Typographic apostrophes are already straightened by prepare, so "I can’t"
// matches the phrase "I can't".
func PhraseRefusal(text string, phrases []string) (string, bool) {
	if idea, ok := FinalIdea(text); ok {
		text = idea
	}
	lower := strings.ToLower(typography.Replace(text))
	for _, p := range phrases {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if strings.Contains(lower, strings.ToLower(typography.Replace(p))) {
			return p, true
		}
	}
	return "", false
}

func phraseRefusalError(phrase string) error {
	return fmt.Errorf("%w: the answer contains %q", ErrRefusal, phrase)
}
