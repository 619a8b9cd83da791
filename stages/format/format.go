// Package format describes the structured answers stages ask models for and
// parses the many ways real models give them (code fences, bold, prose, ...).
//
// A stage appends Instructions(spec) to its prompt; the model layer parses the
// reply with Parse and, on an error, re-asks with RepairMessage(spec, err). The
// mock provider answers with Synthesize, whose output Parse always accepts.
//
// Parsing policy, in short: lenient about form, strict about content.
//   - <think> blocks, markdown, code fences, preambles and closing remarks are
//     ignored; JSON may have comments, trailing commas and single quotes.
//   - Counts, letters and ranges are never guessed: a ranking must use every
//     letter once, scores must be whole numbers within [Min, Max].
//   - Where an answer revises itself, the last explicit label wins ("Final
//     ranking:", "Answer: C", "Rating: 6").
//   - Ideas beyond N are dropped only when the answer numbered them (or listed
//     them in JSON); unnumbered extras are an error.
//   - An answer that declines the task is ErrRefusal (except for Text).
package format

// Kind names a structured answer shape.
type Kind string

const (
	Text    Kind = "text"    // free text; always parses (after trimming)
	Ideas   Kind = "ideas"   // N numbered/bulleted ideas in one answer
	Ranking Kind = "ranking" // an order over Letters, best first, e.g. "B > A > C"
	Fields  Kind = "fields"  // a JSON object with named integer fields in [Min,Max]
	Scores  Kind = "scores"  // Fields plus the judge's reasoning (Answer.Explanation); see parseScores
	Letter  Kind = "letter"  // one letter out of Letters, e.g. "Answer: B"
	Rating  Kind = "rating"  // "Rating: N" with N in [Min,Max], plus optional "Explanation:"
)

// Spec is the answer a stage expects. It travels with the request so that the
// mock provider can synthesise a well-formed answer and the parser knows what to accept.
type Spec struct {
	Kind    Kind     `json:"kind"`
	N       int      `json:"n,omitempty"`       // Ideas: how many
	Letters string   `json:"letters,omitempty"` // Ranking/Letter: allowed letters, e.g. "ABCD"
	Fields  []string `json:"fields,omitempty"`  // Fields: required field names
	Min     int      `json:"min,omitempty"`     // Fields/Rating: inclusive bounds
	Max     int      `json:"max,omitempty"`
	// Refusals, when set, are the phrases that mark an answer as a refusal,
	// for every kind, Text included, in place of the built-in detection: an
	// answer containing one (case-insensitively; after a "Final Idea:"
	// marker when it has one) is ErrRefusal. LiveIdeaBench detects refusals
	// so. llm.Ask then re-asks once with Reask and keeps both answers (see
	// Answer.Refusal), whatever its repair budget.
	Refusals []string `json:"refusals,omitempty"`
	// Reask is the message sent after a refusal in place of the default
	// research justification (see RepairMessage); "": the default.
	Reask string `json:"reask,omitempty"`
	// Style names the answer shape the prompt itself asks for, when the
	// stage sends no Instructions (an original benchmark's prompt): the mock
	// then answers in it. Parse ignores it. "": Instructions' shape.
	Style string `json:"style,omitempty"`
	// ReaskAlone sends the re-ask after a refusal as a request of its own
	// (the request's system messages, then Reask as the only user
	// message) instead of a reply that follows the refusal: LiveIdeaBench
	// sends its fallback prompt so, the model never seeing what it
	// declined.
	ReaskAlone bool `json:"reask_alone,omitempty"`
}

// StyleHypothesisList is a Ranking answered as IdeaBench's prompt asks:
// "1. Hypothesis X: rationale" lines, best first.
const StyleHypothesisList = "hypothesis_list"

// Answer is a parsed answer; only the member matching Spec.Kind is set.
type Answer struct {
	Text        string         `json:"text,omitempty"`
	Ideas       []string       `json:"ideas,omitempty"`   // exactly Spec.N (N == 0: at least one), each trimmed and non-empty
	Ranking     []string       `json:"ranking,omitempty"` // upper-case letters, best first: each of Spec.Letters exactly once
	Fields      map[string]int `json:"fields,omitempty"`
	Letter      string         `json:"letter,omitempty"`
	Rating      int            `json:"rating,omitempty"`
	Explanation string         `json:"explanation,omitempty"`
	// Refusal is the first answer, kept when it was a refusal under
	// Spec.Refusals and the model was re-asked. Refused says the re-ask was
	// refused too: Text then holds that second answer and no member of the
	// spec's kind is set.
	Refusal string `json:"refusal,omitempty"`
	Refused bool   `json:"refused,omitempty"`
	// Raw is the text this answer was parsed from. Reasked says it came
	// after re-asks (a repair or a refusal re-ask), and FirstRaw is then
	// the model's first answer to the request. They are not parsed
	// content: a stage's Output reads them to store, beside its strict
	// parse, what an original benchmark's parser (which never re-asked)
	// would have read from the same answer (see Unrepaired). Set by
	// llm.Ask and the n-choices executor, not by Parse; answers stored
	// before they existed have none.
	Raw      string `json:"raw,omitempty"`
	Reasked  bool   `json:"reasked,omitempty"`
	FirstRaw string `json:"first_raw,omitempty"`
}

// Unrepaired is the model's first answer to the request: FirstRaw when the
// answer was re-asked, else Raw. known is false for an answer stored before
// these fields existed, so a caller can tell "no text known" from an empty
// first answer.
func (a *Answer) Unrepaired() (text string, known bool) {
	if a.Reasked {
		return a.FirstRaw, true
	}
	return a.Raw, a.Raw != ""
}
