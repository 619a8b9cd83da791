package format

import (
	"fmt"
	"math/rand"
	"regexp"
	"strings"
)

// Scores is a judge's verdict: named whole-number scores in [Min, Max],
// parsed exactly as Fields (JSON in a fence, any fence, the first object
// in prose, "key": N, scores as strings, trailing commas, prose lines),
// plus the judge's reasoning in Answer.Explanation. LiveIdeaBench's judges
// write a short analysis and then a JSON score block; the analysis is what
// a researcher reads when a score looks wrong, so it is kept.
//
// The reasoning is, in this order: a string member of the JSON named
// reasoning, reason, explanation, justification, rationale, analysis,
// comment(s) or feedback; else the per-score reasons of objects such as
// {"originality": {"score": 7, "reason": "..."}}, as "originality: ...";
// else the answer's text with the JSON (its fence, or the object) and a
// dangling label before it ("SCORES =", "Scores:") removed. It may be "".
func parseScores(spec Spec, text string) (*Answer, error) {
	a, err := parseFields(spec, text)
	if err != nil {
		return nil, err
	}
	a.Explanation = scoresReasoning(spec.Fields, text)
	return a, nil
}

var reasoningKeys = map[string]bool{
	"reasoning": true, "reason": true, "explanation": true, "justification": true, "rationale": true,
	"analysis": true, "comment": true, "comments": true, "feedback": true,
}

func scoresReasoning(fields []string, text string) string {
	values := jsonValues(text)
	// Per-score reasons first: their objects also hold a "reason" member,
	// which the search for a reasoning member would take for the whole.
	for i := len(values) - 1; i >= 0; i-- {
		var parts []string
		for _, f := range fields {
			want := normKey(f)
			for _, obj := range objects(values[i]) {
				inner, ok := obj.lookup(func(k string) bool { return fieldKeyMatches(k, want) })
				if !ok {
					continue
				}
				if o, ok := inner.(*jsonObject); ok {
					if s := reasoningMember(o); s != "" {
						parts = append(parts, f+": "+s)
					}
				}
				break
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	for i := len(values) - 1; i >= 0; i-- {
		for _, obj := range objects(values[i]) {
			if s := reasoningMember(obj); s != "" {
				return s
			}
		}
	}
	return strings.TrimSpace(danglingLabel.ReplaceAllString(withoutJSON(text), ""))
}

// reasoningMember is o's reasoning string member, trimmed, or "".
func reasoningMember(o *jsonObject) string {
	if v, ok := o.lookup(func(k string) bool { return reasoningKeys[k] }); ok {
		if s, ok := v.(string); ok {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// danglingLabel is a label left at the end of a line once the JSON after
// it is removed ("SCORES =", "**Scores:**", "JSON:").
var danglingLabel = regexp.MustCompile(`(?im)^[^\S\n]*[*_#]*[^\S\n]*(?:final\s+)?(?:scores?|ratings?|json|evaluation|output)[^\S\n]*(?:block)?[*_]*[^\S\n]*[:=]?[*_]*[^\S\n]*$`)

// withoutJSON removes the code fences from text or, when it has none, the
// JSON objects jsonValues would find in its prose.
func withoutJSON(text string) string {
	if strings.Contains(text, "```") {
		var b strings.Builder
		rest := text
		for {
			i := strings.Index(rest, "```")
			if i < 0 {
				b.WriteString(rest)
				break
			}
			b.WriteString(rest[:i])
			after := rest[i+3:]
			end := strings.Index(after, "```")
			if end < 0 {
				break // an unterminated fence runs to the end
			}
			rest = after[end+3:]
		}
		return b.String()
	}
	var b strings.Builder
	last, attempts := 0, 0
	for i := 0; i < len(text) && attempts < maxJSONAttempts; i++ {
		if text[i] != '{' {
			continue
		}
		attempts++
		if _, n, err := parseJSONPrefix(text[i:]); err == nil {
			b.WriteString(text[last:i])
			last = i + n
			i += n - 1
		}
	}
	b.WriteString(text[last:])
	return b.String()
}

// scoresInstructions asks for the analysis first, then the fenced JSON:
// reasoning before the verdict, the order the paper's judge prompt uses.
func scoresInstructions(spec Spec) string {
	return fmt.Sprintf("First write a brief analysis of the idea. Then give your scores as a JSON object in a ```json code block with exactly these fields, each a whole number%s: %s. For example: %s",
		scaleText(spec), quotedList(spec.Fields), fieldsExample(spec))
}

// synthScores writes a judge's answer: an analysis and a JSON block, the
// reasoning inside the JSON, or per-score reasons.
func synthScores(spec Spec, r *rand.Rand, topic string) (string, *Answer) {
	vals := make(map[string]int, len(spec.Fields))
	for _, f := range spec.Fields {
		vals[f] = drawScore(spec, r)
	}
	reason := fmt.Sprintf("The idea on %s %s, but %s.", topic, pick(r, rationales), pick(r, scoreCaveats))
	answer := &Answer{Fields: vals, Explanation: reason}
	var b strings.Builder
	switch r.Intn(4) {
	case 0, 1: // the paper's requested form: analysis, then a fenced block
		fmt.Fprintf(&b, "%s\n\n```json\n{\n", reason)
		for i, f := range spec.Fields {
			if i > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, "    %q: %d", f, vals[f])
		}
		b.WriteString("\n}\n```")
	case 2: // reasoning inside the JSON, scores as strings, a trailing comma
		fmt.Fprintf(&b, "{\"reasoning\": %q, ", reason)
		for _, f := range spec.Fields {
			fmt.Fprintf(&b, "%q: \"%d\", ", f, vals[f])
		}
		b.WriteString("}")
	default: // per-score reasons
		parts := make([]string, len(spec.Fields))
		var why []string
		for i, f := range spec.Fields {
			w := pick(r, rationales)
			parts[i] = fmt.Sprintf("%q: {\"score\": %d, \"reason\": %q}", f, vals[f], w)
			why = append(why, f+": "+w)
		}
		fmt.Fprintf(&b, "```json\n{%s}\n```", strings.Join(parts, ", "))
		answer.Explanation = strings.Join(why, "\n")
	}
	return b.String(), answer
}

var scoreCaveats = []string{
	"the validation plan needs a larger cohort",
	"the cost of the measurements is not discussed",
	"similar mechanisms have been proposed before",
	"the expected effect size is small",
}
