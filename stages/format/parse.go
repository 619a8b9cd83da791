package format

import (
	"errors"
	"fmt"
)

// errEmpty is returned for an answer with nothing in it once reasoning blocks
// and blanks are removed.
var errEmpty = errors.New("the answer is empty")

// Parse reads a model's answer in the shape spec describes.
//
// It is lenient about surface form (markdown, code fences, preambles, JSON
// dialects, <think> blocks) and strict about content (counts, letters, ranges),
// because a wrong parse silently corrupts a benchmark while a failed one only
// costs a re-ask. Errors are short and name what is wrong; they are shown to the
// model in a repair message (see RepairMessage) and to the researcher.
//
// For every kind except Text, an answer that declines the task returns an error
// wrapping ErrRefusal. Text answers are returned as they are (trimmed); stages
// that care call IsRefusal themselves, or set Spec.Refusals, whose phrases
// mark refusals of every kind.
func Parse(spec Spec, text string) (*Answer, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("invalid format spec: %w", err)
	}
	text = prepare(text)
	if text == "" {
		return nil, errEmpty
	}
	if len(spec.Refusals) > 0 {
		if phrase, ok := PhraseRefusal(text, spec.Refusals); ok {
			return nil, phraseRefusalError(phrase)
		}
	} else if spec.Kind != Text {
		if open, ok := refusal(text); ok {
			return nil, refusalError(open)
		}
	}
	if spec.Kind == Text {
		return &Answer{Text: text}, nil
	}
	switch spec.Kind {
	case Ideas:
		return parseIdeas(spec, text)
	case Ranking:
		return parseRanking(spec, text)
	case Fields:
		return parseFields(spec, text)
	case Scores:
		return parseScores(spec, text)
	case Letter:
		return parseLetter(spec, text)
	default: // Rating; Validate rejected everything else
		return parseRating(spec, text)
	}
}
