package format

import (
	"regexp"
	"strings"
)

// A "Final Idea" marker, as LiveIdeaBench asks reasoning models to write
// ("You MUST give your answer after **Final Idea:**") and as they write it
// instead: any case, bold or italic around the words or the colon, a dash
// for the colon, or a heading or bold line of its own.
var (
	finalIdeaMarker  = regexp.MustCompile(`(?i)(?:^|[^\pL\pN])[#*_]*[ \t]*final[ \t]+idea[ \t]*(?:[*_]*[ \t]*:|[*_]*[ \t]+[-–—][ \t])[*_]*`)
	finalIdeaHeading = regexp.MustCompile(`(?im)^[ \t]*(?:#{1,6}|[*_]{1,3})[ \t]*final[ \t]+idea[ \t]*[*_]*[ \t]*$`)
)

// FinalIdea returns what follows the last "Final Idea" marker of text,
// trimmed, and true; or false when text has no marker or nothing after its
// last one. The last marker wins because a reasoning model revises itself
// ("Final idea: ... Wait, ... **Final Idea:** ..."), the rule this package
// applies to every label. The original takes the first occurrence of the
// bare words "final idea", which also cuts at "my final idea should be";
// here the words must be a label (a colon or dash after them, or a line of
// their own), so such a mention is never a marker.
//
// Stages fall back to the whole answer when it returns false, as the paper
// does ("critic LLMs evaluated the complete reasoning output").
func FinalIdea(text string) (string, bool) {
	end := -1
	start := -1
	for _, re := range []*regexp.Regexp{finalIdeaMarker, finalIdeaHeading} {
		for _, m := range re.FindAllStringIndex(text, -1) {
			if m[0] > start {
				start, end = m[0], m[1]
			}
		}
	}
	if end < 0 {
		return "", false
	}
	idea := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(text[end:]), "*_"))
	if idea == "" {
		return "", false
	}
	return idea, true
}

// CollapseSpace joins text's words with single spaces, as LiveIdeaBench
// cleans every idea (line breaks and tabs included) before it is judged.
func CollapseSpace(text string) string { return strings.Join(strings.Fields(text), " ") }
