package format

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrRefusal marks an answer in which the model declined the task. Parse wraps
// it, so callers test with errors.Is and may re-ask with a justification.
var ErrRefusal = errors.New("the model declined to answer")

const (
	refusalModal = `can ?not|can't|won't|will not|unable to|not able to`
	refusalVerb  = `help|assist|comply|fulfil|fulfill|provide|generate|create|produce|write|complete|answer|respond|engage|participate|support|continue|do|perform|rank|rate|evaluate|judge|score|compare|choose|select|pick|give|offer|share|proceed|process|accommodate|make|decline|refuse|with`
)

var (
	// An apology or an "as an AI" disclaimer, followed in the opening by an
	// inability to do something task-like, is a refusal. "I cannot be sure" or
	// "I cannot have opinions" alone is not: the model usually answers anyway.
	refusalPreface = regexp.MustCompile(`\b(?:sorry|apologi[sz]e|unfortunately|i'm afraid|i am afraid|as an ai|as a language model|as an assistant)\b`)
	refusalCore    = regexp.MustCompile(`\bi(?:'m| am)?(?: really| simply| just)? (?:` + refusalModal + `|must|have to|not comfortable|do not feel comfortable|don't feel comfortable)(?: in good conscience)? (?:be able to )?(?:` + refusalVerb + `)\b`)
	// A refusal that opens without an apology: "I can't help with that."
	refusalBare = regexp.MustCompile(`^i(?:'m| am)?(?: really| simply)? (?:(?:` + refusalModal + `) (?:be able to )?(?:` + refusalVerb + `)|must (?:decline|refuse))\b`)
	// After a disclaimer, models often answer anyway; these phrases, or an
	// answer label, mark that turn.
	refusalPivot = regexp.MustCompile(`\b(?:however|that said|that being said|nevertheless|nonetheless|here (?:are|is)|here's|below (?:are|is)|but based on|instead, here|if i had to|if i were to|my best (?:guess|estimate|answer))\b|\b(?:ranking|rating|answer|score|idea 1)\s*:`)
	sentenceEnd  = regexp.MustCompile(`[.!?](?:\s|$)|\n`)
)

// IsRefusal reports whether an answer declines the task: its opening (first
// two sentences) apologises or disclaims and says it cannot do the task, and
// nothing after that turns to answering ("However, here are ..."). It is
// deliberately narrow: a false refusal costs a re-ask, a missed one a failed
// parse, but reading a refusal as an answer would corrupt results, which is why
// Parse checks it before anything else.
func IsRefusal(text string) bool {
	_, ok := refusal(prepare(text))
	return ok
}

// refusal returns the opening that declines the task, if text is a refusal.
func refusal(text string) (string, bool) {
	body := strings.ToLower(plainText(text))
	open := opening(body, 2, 400)
	var end int
	if m := refusalBare.FindStringIndex(open); m != nil {
		end = m[1]
	} else if refusalPreface.MatchString(open) {
		m := refusalCore.FindStringIndex(open)
		if m == nil {
			return "", false
		}
		end = m[1]
	} else {
		return "", false
	}
	if refusalPivot.MatchString(body[end:]) {
		return "", false
	}
	return opening(plainText(text), 1, 120), true
}

// opening returns the first n sentences of s, at most max bytes.
func opening(s string, n, max int) string {
	end := 0
	for i := 0; i < n && end < len(s); i++ {
		m := sentenceEnd.FindStringIndex(s[end:])
		if m == nil {
			end = len(s)
			break
		}
		end += m[1]
	}
	if end > max {
		end = max
		for end > 0 && s[end]&0xC0 == 0x80 { // keep whole UTF-8 sequences
			end--
		}
	}
	return s[:end]
}

func refusalError(open string) error {
	return fmt.Errorf("%w: %q", ErrRefusal, snippet(open, 100))
}
