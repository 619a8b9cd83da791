// Package liveideabench implements LiveIdeaBench (Ruan et al.): one scientific
// keyword in, one short idea out (generate_from_keyword), judged by a panel
// independent of the generator's family (judge_panel), fluency between a
// model's ideas for the same keyword (fluency), and the leaderboard.
package liveideabench

// Idea is the output of one generate_from_keyword node: item = keyword id,
// slot = sample index (ideas_per_keyword samples, each its own node).
// Downstream stages (judge_panel, fluency) read Keyword and Idea, and the
// generator from stages.Upstream.Generator. An idea left out (too long,
// too short, refused twice under drop_refused) is a dropped output: {"dropped": true,
// "reason": "..."} plus these fields, so the engine counts it and every
// dependent skips it.
type Idea struct {
	Keyword string `json:"keyword"`
	Domain  string `json:"domain,omitempty"` // the keyword's category, when the dataset has one
	Idea    string `json:"idea"`             // the idea text judged: "Final Idea:" extracted, whitespace collapsed
	Answer  string `json:"answer"`           // the model's whole final answer
	Words   int    `json:"words"`
	// Refused: the first answer was a refusal and the model was re-asked
	// with a research justification; RefusalAnswer keeps that first answer.
	// FallbackRefused: the re-ask's answer (Answer) was a refusal too; it is
	// judged all the same unless drop_refused.
	Refused         bool   `json:"refused,omitempty"`
	RefusalAnswer   string `json:"refusal_answer,omitempty"`
	FallbackRefused bool   `json:"fallback_refused,omitempty"`
	Dropped         bool   `json:"dropped,omitempty"`
	Reason          string `json:"reason,omitempty"` // why dropped: "too_long", "too_short", "refused"
}
