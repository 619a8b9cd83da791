package stages

import (
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
