package engine

import (
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// A model node is keyed on the params its Output reads (Call.KeyParams)
// beside its request, and on no other param.
func TestCallKeyParams(t *testing.T) {
	inst := &Instance{Type: "generate_from_keyword", Version: "1"}
	inst.paramParts = []namedPart{partOf("param.max_words", []byte("200"), "200"), partOf("param.ideas_per_keyword", []byte("2"), "2")}
	n := &Node{Inst: inst, Spec: stages.Node{Item: "soil"}}
	call := func(keyParams ...string) *stages.Work {
		return &stages.Work{Call: &stages.Call{Model: &stages.Model{Name: "m"}, Request: llm.Request{Model: "m"}, KeyParams: keyParams}}
	}
	names := func(ps []namedPart) string {
		var s []string
		for _, p := range ps {
			if strings.HasPrefix(p.name, "param.") {
				s = append(s, p.name)
			}
		}
		return strings.Join(s, ",")
	}
	if got := names(keyParts(n, call(), keyInputs{})); got != "" {
		t.Errorf("no KeyParams: params %q keyed", got)
	}
	if got := names(keyParts(n, call("max_words"), keyInputs{})); got != "param.max_words" {
		t.Errorf("KeyParams [max_words]: params %q keyed", got)
	}
	other := *inst
	other.paramParts = []namedPart{partOf("param.max_words", []byte("150"), "150"), inst.paramParts[1]}
	if got := explain(cacheParts(keyParts(n, call("max_words"), keyInputs{})), keyParts(&Node{Inst: &other, Spec: n.Spec}, call("max_words"), keyInputs{}), nil); got != "param.max_words changed (200 -> 150)" {
		t.Errorf("explain = %q", got)
	}
}
