package stages

import (
	"reflect"
	"testing"

	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func TestRequestSeedPerSample(t *testing.T) {
	seed := 40
	m := &Model{Name: "m", Seed: &seed}
	msgs := []llm.Message{{Role: "user", Content: "x"}}
	for sample, want := range []int{40, 41, 42} {
		r := m.Request(msgs, sample, format.Spec{Kind: format.Text})
		if r.Seed == nil || *r.Seed != want || r.Sample != sample {
			t.Errorf("sample %d: seed %v, want %d", sample, r.Seed, want)
		}
	}
	if seed != 40 {
		t.Errorf("the model's seed was modified: %d", seed)
	}
	if r := (&Model{Name: "m"}).Request(msgs, 2, format.Spec{Kind: format.Text}); r.Seed != nil {
		t.Errorf("no seed on the model, but the request has %d", *r.Seed)
	}
}

// defaultsType declares one param of each defaulting shape.
type defaultsType struct{}

func (defaultsType) Name() string    { return "defaults_test" }
func (defaultsType) Version() string { return "1" }
func (defaultsType) Params() []Param {
	return []Param{
		{Name: "n", Kind: Int, Default: 3},
		{Name: "mode", Kind: String, Default: "a"},
		{Name: "list", Kind: StringList, Default: []string{"x"}},
		{Name: "title", Kind: String}, // no default: stays unset
	}
}
func (defaultsType) Layout(*Instance) ([]Node, error) { return nil, nil }

func TestWithDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Params
		want Params
	}{
		{"nil params", nil, Params{"n": 3, "mode": "a", "list": []string{"x"}}},
		{"set values win, zero ones included", Params{"n": 0, "mode": "", "list": []string{}},
			Params{"n": 0, "mode": "", "list": []string{}}},
		{"nil value counts as unset", Params{"n": nil}, Params{"n": 3, "mode": "a", "list": []string{"x"}}},
		{"unknown params are kept", Params{"other": true, "title": "T"},
			Params{"other": true, "title": "T", "n": 3, "mode": "a", "list": []string{"x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before Params
			if tc.in != nil {
				before = Params{}
				for k, v := range tc.in {
					before[k] = v
				}
			}
			got := WithDefaults(defaultsType{}, tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("WithDefaults = %#v\nwant %#v", got, tc.want)
			}
			if tc.in != nil && !reflect.DeepEqual(tc.in, before) {
				t.Errorf("WithDefaults modified its argument: %#v, was %#v", tc.in, before)
			}
		})
	}
}
