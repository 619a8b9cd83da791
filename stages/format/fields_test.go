package format

import "testing"

func fields(kv ...any) *Answer {
	m := map[string]int{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(int)
	}
	return &Answer{Fields: m}
}

func TestParseFields(t *testing.T) {
	of := Spec{Kind: Fields, Fields: []string{"originality", "feasibility"}, Min: 1, Max: 10}
	want := fields("originality", 7, "feasibility", 4)
	runParseCases(t, []parseCase{
		{name: "plain json", spec: of, text: `{"originality": 7, "feasibility": 4}`, want: want},
		{name: "json fence with prose", spec: of,
			text: "Here is my evaluation.\n\n```json\n{\n  \"originality\": 7,\n  \"feasibility\": 4\n}\n```\nThe idea is bold but hard to test.",
			want: want},
		{name: "comments and trailing commas", spec: of,
			text: "```jsonc\n{\n  // novel combination\n  \"originality\": 7, /* fairly */\n  \"feasibility\": 4, # needs funding\n}\n```",
			want: want},
		{name: "single quotes and unquoted keys", spec: of, text: "{'originality': 7, feasibility: 4}", want: want},
		{name: "numbers as strings", spec: of, text: `{"originality": "7", "feasibility": "4"}`, want: want},
		{name: "whole floats", spec: of, text: `{"originality": 7.0, "feasibility": 4.00}`, want: want},
		{name: "out of ten strings", spec: of, text: `{"originality": "7/10", "feasibility": "4 out of 10"}`, want: want},
		{name: "nested scores", spec: of, text: `{"scores": {"originality": 7, "feasibility": 4}, "comment": "good"}`, want: want},
		{name: "per-field objects", spec: of,
			text: `{"originality": {"score": 7, "reason": "new angle"}, "feasibility": {"score": 4, "reason": "costly"}}`,
			want: want},
		{name: "case-insensitive keys with suffix", spec: of, text: `{"Originality_Score": 7, "FEASIBILITY": 4}`, want: want},
		{name: "python literals around", spec: of, text: `{"originality": 7, "feasibility": 4, "flag": True, "note": None}`, want: want},
		{name: "prose lines", spec: of,
			text: "**Originality:** 7/10 - new angle\n**Feasibility:** 4/10 - expensive",
			want: want},
		{name: "prose with scale in parentheses", spec: of,
			text: "- Originality (1-10): 7\n- Feasibility (1-10): 4",
			want: want},
		{name: "markdown table", spec: of,
			text: "| Criterion | Score |\n|---|---|\n| Originality | 7/10 |\n| Feasibility | 4 |",
			want: want},
		{name: "json missing one field completed from prose", spec: of,
			text: "Feasibility: 4\n\n```json\n{\"originality\": 7}\n```",
			want: want},
		{name: "later corrected json wins", spec: of,
			text: "Draft: {\"originality\": 9, \"feasibility\": 9}\nCorrected: {\"originality\": 7, \"feasibility\": 4}",
			want: want},
		{name: "think block", spec: of, text: "<think>{\"originality\": 2}</think>{\"originality\": 7, \"feasibility\": 4}", want: want},
		{name: "zero lower bound", spec: Spec{Kind: Fields, Fields: []string{"relevance"}, Min: 0, Max: 5},
			text: `{"relevance": 0}`, want: fields("relevance", 0)},
		{name: "negative values unbounded", spec: Spec{Kind: Fields, Fields: []string{"comparison"}, Min: -1},
			text: `{"comparison": -1}`, want: fields("comparison", -1)},
		{name: "missing field", spec: of, text: `{"originality": 7}`, errSub: `missing field "feasibility"`},
		{name: "all missing", spec: of, text: `{"novelty": 7}`, errSub: `missing fields "originality", "feasibility"`},
		{name: "out of range", spec: of, text: `{"originality": 11, "feasibility": 4}`, errSub: `field "originality" = 11 is outside 1 to 10`},
		{name: "fraction", spec: of, text: `{"originality": 7.5, "feasibility": 4}`, errSub: `field "originality" = 7.5 is not a whole number`},
		{name: "wrong scale", spec: of, text: `{"originality": "4/5", "feasibility": 4}`, errSub: `field "originality" = 4/5 is on a scale to 5, expected 1 to 10`},
		{name: "not a number", spec: of, text: `{"originality": "high", "feasibility": 4}`, errSub: `field "originality" is "high", not a number`},
		{name: "refusal", spec: of, text: "I'm sorry, but I cannot evaluate this idea.", errSub: "declined", refusal: true},
	})
}
