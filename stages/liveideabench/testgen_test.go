package liveideabench_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/liveideabench"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// testGen (test_keyword_ideas) stands in for generate_from_keyword in these
// tests: one model node per (keyword, sample) whose output is an Idea, or a
// dropped Idea for the (item/sample) pairs listed in drop.
type testGen struct{}

func init() { stages.Register(testGen{}) }

func (testGen) Name() string    { return "test_keyword_ideas" }
func (testGen) Version() string { return "1" }
func (testGen) Params() []stages.Param {
	return []stages.Param{
		{Name: "keywords", Kind: stages.Input, Required: true, Doc: "a jsonl dataset with keyword and domain fields"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Generator: true, Doc: "the generator"},
		{Name: "ideas_per_keyword", Kind: stages.Int, Default: 2, Min: 1, Max: 10, Doc: "samples per keyword"},
		{Name: "drop", Kind: stages.StringList, Doc: "item/sample pairs whose idea is dropped (too_long)"},
		{Name: "refuse", Kind: stages.StringList, Doc: "item/sample pairs whose first answer counts as a refusal"},
	}
}

func (testGen) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	kw, m := p.Input("keywords"), p.Model("model")
	set := func(name string) map[string]bool {
		out := map[string]bool{}
		for _, s := range p.Strings(name) {
			out[s] = true
		}
		return out
	}
	drop, refuse := set("drop"), set("refuse")
	var nodes []stages.Node
	for i, n := range kw.Nodes {
		for s := 0; s < p.Int("ideas_per_keyword"); s++ {
			id := fmt.Sprintf("%s/%d", n.Item, s)
			sample := s
			nodes = append(nodes, stages.Node{Item: n.Item, Slot: s, Label: fmt.Sprintf("sample %d", s),
				Deps: []stages.Dep{{Input: "keywords", Index: i}},
				Prepare: func(in []stages.In) (*stages.Work, error) {
					var rec struct{ Keyword, Domain string }
					if err := json.Unmarshal(in[0].Output, &rec); err != nil {
						return nil, err
					}
					if drop[id] {
						b, _ := json.Marshal(liveideabench.Idea{Keyword: rec.Keyword, Domain: rec.Domain, Dropped: true, Reason: "too_long"})
						return &stages.Work{Compute: func() ([]byte, error) { return b, nil }}, nil
					}
					prompt := "Give one scientific idea about " + rec.Keyword + "."
					refused := refuse[id]
					if refused {
						prompt += " (second ask)"
					}
					spec := format.Spec{Kind: format.Text}
					return &stages.Work{Call: &stages.Call{Model: m, Request: m.Request([]llm.Message{{Role: "user", Content: prompt}}, sample, spec),
						Output: func(a *format.Answer) ([]byte, error) {
							idea := strings.Join(strings.Fields(a.Text), " ")
							return json.Marshal(liveideabench.Idea{Keyword: rec.Keyword, Domain: rec.Domain, Idea: idea, Answer: a.Text,
								Words: len(strings.Fields(idea)), Refused: refused})
						}}}, nil
				}})
		}
	}
	return nodes, nil
}
