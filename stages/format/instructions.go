package format

import (
	"errors"
	"fmt"
	"strings"
)

// Instructions is the answer-format paragraph a stage appends to its prompt.
// It asks for the form Parse reads most reliably; Parse still accepts the many
// other forms models use anyway. Text has no format, so its instruction is "".
//
// The wording is part of every request and therefore of every cache key:
// changing it re-runs all model nodes, so change it deliberately.
func Instructions(spec Spec) string {
	switch spec.Kind {
	case Ideas:
		switch spec.N {
		case 0:
			return "List your ideas, each starting on a new line with `Idea 1:`, `Idea 2:` and so on, followed by the idea itself. Write nothing before the first idea or after the last one."
		case 1:
			return "Write exactly one idea as a single paragraph, with no preamble, title list or closing remarks."
		}
		return fmt.Sprintf("Give exactly %d distinct ideas. Start each on a new line with `Idea 1:`, `Idea 2:`, ... up to `Idea %d:`, followed by the idea itself. Write nothing before the first idea or after the last one.", spec.N, spec.N)
	case Ranking:
		letters := spec.letters()
		return fmt.Sprintf("Rank the %d ideas (%s) from best to worst. You may explain your reasoning first, then end your answer with one line of the form `Ranking: %s` that uses each letter exactly once.",
			len(letters), listLetters(letters), exampleRanking(letters))
	case Fields:
		return fmt.Sprintf("Reply with a JSON object in a ```json code block with exactly these fields, each a whole number%s: %s. For example: %s",
			scaleText(spec), quotedList(spec.Fields), fieldsExample(spec))
	case Scores:
		return scoresInstructions(spec)
	case Letter:
		return fmt.Sprintf("Choose one of %s. You may explain briefly, then end your answer with one line of the form `Answer: X`, where X is the letter you chose.",
			listLetters(spec.letters()))
	case Rating:
		return fmt.Sprintf("Give your rating as a whole number%s on one line of the form `Rating: N`, followed by one line starting with `Explanation:` that justifies it briefly.", scaleText(spec))
	}
	return ""
}

// RepairMessage is the follow-up user message sent after an answer that Parse
// rejected: it names the problem and restates the expected form. A refusal is
// answered with the research context instead, as LiveIdeaBench re-asks refused
// prompts once with a justification. Spec.Reask replaces that message
// whole (a stage renders it with its own instructions, if any).
func RepairMessage(spec Spec, err error) string {
	if errors.Is(err, ErrRefusal) {
		if spec.Reask != "" {
			return spec.Reask
		}
		msg := "This request is part of a scientific benchmark of research-idea generation and evaluation; the answer is used only to compare ideas and is never acted upon. Please complete the original task."
		if ins := Instructions(spec); ins != "" {
			msg += " " + ins
		}
		return msg
	}
	problem := "it did not have the expected form"
	if err != nil {
		problem = err.Error()
	}
	if spec.Kind == Text {
		return fmt.Sprintf("Your previous answer could not be used: %s. Please answer the original request again.", problem)
	}
	return fmt.Sprintf("Your previous answer could not be used: %s. %s Reply again with the complete answer in exactly this form.", problem, Instructions(spec))
}

func scaleText(spec Spec) string {
	if !spec.bounded() {
		return ""
	}
	return " from " + spec.rangeText()
}

func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// fieldsExample shows the shape with placeholders rather than numbers, so the
// example cannot anchor the scores a judge gives.
func fieldsExample(spec Spec) string {
	placeholder := "<whole number>"
	if spec.bounded() {
		placeholder = fmt.Sprintf("<%d-%d>", spec.Min, spec.Max)
	}
	parts := make([]string, len(spec.Fields))
	for i, f := range spec.Fields {
		parts[i] = fmt.Sprintf("%q: %s", f, placeholder)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
