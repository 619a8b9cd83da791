package format

import (
	"math/rand"
	"reflect"
	"testing"
)

func scores(reason string, kv ...any) *Answer {
	a := fields(kv...)
	a.Explanation = reason
	return a
}

// TestParseScores: judge answers in the shapes real models give them for
// LiveIdeaBench's judge prompt (analysis, then a JSON block).
func TestParseScores(t *testing.T) {
	ofc := Spec{Kind: Scores, Fields: []string{"originality", "feasibility", "clarity"}, Min: 1, Max: 10}
	of := Spec{Kind: Scores, Fields: []string{"originality", "feasibility"}, Min: 1, Max: 10}
	const analysis = "The idea combines CRISPR screens with organoids in a new way, but the readout is vague."
	want := func(reason string) *Answer { return scores(reason, "originality", 7, "feasibility", 4, "clarity", 6) }
	runParseCases(t, []parseCase{
		{name: "paper form: analysis then json fence", spec: ofc,
			text: analysis + "\n\n```json\n{\n    \"originality\": 7,\n    \"feasibility\": 4,\n    \"clarity\": 6\n}```",
			want: want(analysis)},
		{name: "analysis label and bold", spec: ofc,
			text: "**Analysis:** " + analysis + "\n\n**Scores:**\n```json\n{\"originality\": 7, \"feasibility\": 4, \"clarity\": 6}\n```",
			want: want("**Analysis:** " + analysis)},
		{name: "any fence without info string", spec: ofc,
			text: analysis + "\n```\n{\"originality\": 7, \"feasibility\": 4, \"clarity\": 6}\n```",
			want: want(analysis)},
		{name: "first object in prose", spec: ofc,
			text: analysis + " Scores: {\"originality\": 7, \"feasibility\": 4, \"clarity\": 6}",
			want: want(analysis + " Scores:")},
		{name: "v1 python dict SCORES =", spec: of,
			text: "SCORES = {\n    \"originality\": 7,\n    \"feasibility\": 4\n}",
			want: scores("", "originality", 7, "feasibility", 4)},
		{name: "trailing commas", spec: ofc,
			text: "```json\n{\n  \"originality\": 7,\n  \"feasibility\": 4,\n  \"clarity\": 6,\n}\n```",
			want: want("")},
		{name: "scores as strings", spec: ofc,
			text: `{"originality": "7", "feasibility": "4", "clarity": "6"}`,
			want: want("")},
		{name: "scores out of ten", spec: ofc,
			text: `{"originality": "7/10", "feasibility": "4/10", "clarity": "6 out of 10"}`,
			want: want("")},
		{name: "reasoning member", spec: ofc,
			text: `{"reasoning": "` + analysis + `", "originality": 7, "feasibility": 4, "clarity": 6}`,
			want: want(analysis)},
		{name: "justification after scores", spec: ofc,
			text: "```json\n{\"originality\": 7, \"feasibility\": 4, \"clarity\": 6, \"justification\": \"Bold but vague.\"}\n```",
			want: want("Bold but vague.")},
		{name: "nested scores with comment", spec: ofc,
			text: `{"scores": {"originality": 7, "feasibility": 4, "clarity": 6}, "comment": "Bold but vague."}`,
			want: want("Bold but vague.")},
		{name: "per-score reasons", spec: ofc,
			text: `{"originality": {"score": 7, "reason": "new pairing"}, "feasibility": {"score": 4, "reason": "costly"}, "clarity": {"score": 6, "reason": "readout vague"}}`,
			want: want("originality: new pairing\nfeasibility: costly\nclarity: readout vague")},
		{name: "key colon number without json", spec: ofc,
			text: analysis + "\n\n\"originality\": 7\n\"feasibility\": 4\n\"clarity\": 6",
			want: want(analysis + "\n\n\"originality\": 7\n\"feasibility\": 4\n\"clarity\": 6")},
		{name: "prose scores", spec: ofc,
			text: "Originality: 7/10\nFeasibility: 4/10\nClarity: 6/10",
			want: want("Originality: 7/10\nFeasibility: 4/10\nClarity: 6/10")},
		{name: "capitalised keys with suffix", spec: ofc,
			text: `{"Originality_Score": 7, "Feasibility_Score": 4, "Clarity_Score": 6}`,
			want: want("")},
		{name: "think block then answer", spec: ofc,
			text: "<think>Maybe originality 9? No.</think>\n" + analysis + "\n```json\n{\"originality\": 7, \"feasibility\": 4, \"clarity\": 6}\n```",
			want: want(analysis)},
		{name: "single quotes and comments", spec: ofc,
			text: "```python\n{'originality': 7,  # novel\n 'feasibility': 4, # costly\n 'clarity': 6}\n```",
			want: want("")},
		{name: "closing remark after the block", spec: ofc,
			text: analysis + "\n```json\n{\"originality\": 7, \"feasibility\": 4, \"clarity\": 6}\n```\nOverall, promising.",
			want: want(analysis + "\n\nOverall, promising.")},
		{name: "corrected second block wins", spec: ofc,
			text: "```json\n{\"originality\": 9, \"feasibility\": 9, \"clarity\": 9}\n```\nOn reflection that is too generous:\n```json\n{\"originality\": 7, \"feasibility\": 4, \"clarity\": 6}\n```",
			want: want("On reflection that is too generous:")},
		{name: "missing clarity", spec: ofc, text: `{"originality": 7, "feasibility": 4}`, errSub: `missing field "clarity"`},
		{name: "zero is out of range", spec: ofc, text: `{"originality": 0, "feasibility": 4, "clarity": 6}`, errSub: `field "originality" = 0 is outside 1 to 10`},
		{name: "half points refused", spec: ofc, text: `{"originality": 7.5, "feasibility": 4, "clarity": 6}`, errSub: "is not a whole number"},
		{name: "placeholder left in", spec: ofc, text: `{"originality": "<score_1_to_10>", "feasibility": 4, "clarity": 6}`, errSub: `field "originality" is "<score_1_to_10>", not a number`},
		{name: "refusal", spec: ofc, text: "I'm sorry, but I can't evaluate this idea.", errSub: "declined", refusal: true},
	})
}

func TestScoresRoundTrip(t *testing.T) {
	for _, spec := range []Spec{
		{Kind: Scores, Fields: []string{"originality", "feasibility", "clarity"}, Min: 1, Max: 10},
		{Kind: Scores, Fields: []string{"originality", "feasibility"}, Min: 1, Max: 10},
	} {
		for seed := int64(0); seed < 200; seed++ {
			text, want := synthesize(spec, rand.New(rand.NewSource(seed)), synthTopics[seed%int64(len(synthTopics))])
			got, err := Parse(spec, text)
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, text)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d:\n got %#v\nwant %#v\n%s", seed, got, want, text)
			}
		}
	}
}

func TestScoresSpec(t *testing.T) {
	if err := (Spec{Kind: Scores}).Validate(); err == nil || err.Error() != "scores: no field names" {
		t.Errorf("Validate: %v", err)
	}
	got := Instructions(Spec{Kind: Scores, Fields: []string{"originality", "feasibility"}, Min: 1, Max: 10})
	want := "First write a brief analysis of the idea. Then give your scores as a JSON object in a ```json code block with exactly these fields, each a whole number from 1 to 10: \"originality\", \"feasibility\". For example: {\"originality\": <1-10>, \"feasibility\": <1-10>}"
	if got != want {
		t.Errorf("Instructions:\n got %s\nwant %s", got, want)
	}
}
