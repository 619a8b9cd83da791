package stages

import (
	"encoding/json"
	"reflect"
	"testing"
)

// judgeType is a type declaring a judgement's roles, without a presenter.
type judgeType struct{ testType }

func (judgeType) Schema(Params) Schema {
	return Schema{Gives: []Field{
		{Name: "judge", Type: TextField, Role: RoleJudge},
		{Name: "scores", Type: NumbersField, Role: RoleScores},
		{Name: "mean", Type: NumberField, Role: RoleScore},
		{Name: "reasoning", Type: TextField, Role: RoleRationale, Optional: true},
		{Name: "dropped", Type: BoolField, Role: RoleDropped, Optional: true},
	}}
}

// ideaType declares a generated idea and its keyword.
type ideaType struct{ testType }

func (ideaType) Schema(Params) Schema {
	return Schema{Gives: []Field{
		{Name: "keyword", Type: TextField, Role: RoleKeyword},
		{Name: "idea", Type: TextField, Role: RoleIdea},
		{Name: "words", Type: NumberField},
	}}
}

type testType struct{}

func (testType) Name() string                     { return "t" }
func (testType) Version() string                  { return "1" }
func (testType) Params() []Param                  { return nil }
func (testType) Layout(*Instance) ([]Node, error) { return nil, nil }

func TestDefaultPresent(t *testing.T) {
	seven := 7.0
	for _, tc := range []struct {
		name string
		typ  Type
		out  NodeOutput
		want Presented
	}{
		{"a judgement: judge, scores, score, rationale from their roles", judgeType{},
			NodeOutput{Block: "judge_panel.scores", Work: "call", Model: "served-judge", Raw: "the answer",
				Output: []byte(`{"judge":"judge-a","scores":{"originality":7,"feasibility":6},"mean":7,"reasoning":"because","extra":[1]}`)},
			Presented{Rows: []Row{{{"judge", "judge-a"}, {"scores", json.RawMessage(`{"originality":7,"feasibility":6}`)}, {"mean", json.Number("7")},
				{"reasoning", "because"}, {"dropped", nil}, {"extra", json.RawMessage(`[1]`)}}},
				Judgements: []Judgement{{Judge: "judge-a", Dimension: "judge_panel.scores", Score: &seven,
					Scores: map[string]float64{"originality": 7, "feasibility": 6}, Rationale: "because"}}}},
		{"without a rationale field, the raw answer; without a judge field, who answered", judgeType{},
			NodeOutput{Block: "j", Work: "call", Model: "served-judge", Raw: "the answer", Output: []byte(`{"scores":{"a":1},"mean":7}`)},
			Presented{Rows: []Row{{{"judge", nil}, {"scores", json.RawMessage(`{"a":1}`)}, {"mean", json.Number("7")}, {"reasoning", nil}, {"dropped", nil}}},
				Judgements: []Judgement{{Judge: "served-judge", Dimension: "j", Score: &seven, Scores: map[string]float64{"a": 1}, Rationale: "the answer"}}}},
		{"a generation is an idea, its number no score", ideaType{},
			NodeOutput{Block: "gen", Work: "call", Output: []byte(`{"keyword":"k","idea":"an idea","words":2}`)},
			Presented{Rows: []Row{{{"keyword", "k"}, {"idea", "an idea"}, {"words", json.Number("2")}}},
				Ideas: []Idea{{Text: "an idea", Keyword: "k"}}}},
		{"a computed output is rows only", judgeType{},
			NodeOutput{Block: "j", Work: "compute", Output: []byte(`{"mean":7}`)},
			Presented{Rows: []Row{{{"judge", nil}, {"scores", nil}, {"mean", json.Number("7")}, {"reasoning", nil}, {"dropped", nil}}}}},
		{"a dropped item shows nothing", judgeType{},
			NodeOutput{Block: "j", Work: "call", Output: []byte(`{"dropped":true}`)},
			Presented{Dropped: true, Rows: []Row{{{"judge", nil}, {"scores", nil}, {"mean", nil}, {"reasoning", nil}, {"dropped", true}}}}},
		{"no schema: every field, sorted", testType{},
			NodeOutput{Block: "x", Work: "call", Output: []byte(`{"b":"x","a":1.50}`)},
			Presented{Rows: []Row{{{"a", json.Number("1.50")}, {"b", "x"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Present(tc.typ, &tc.out)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got\n%+v\nwant\n%+v", *got, tc.want)
			}
		})
	}
}

func TestFormatNumber(t *testing.T) {
	for v, want := range map[float64]string{7: "7", 5.488700564971752: "5.489", -0.0001: "0.000", 0.5: "0.500", -2: "-2"} {
		if got := FormatNumber(v, 3); got != want {
			t.Errorf("FormatNumber(%v) = %q, want %q", v, got, want)
		}
	}
}
