package engine

import (
	"crypto/sha256"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func testNode() *Node {
	inst := &Instance{Type: "generate_ideas", Version: "1", Address: `stage.generate_ideas.main["m"]`}
	return &Node{Inst: inst, Spec: stages.Node{Item: "p1", Slot: 2}}
}

func testCall(temp float64, prompt string) *stages.Work {
	m := &stages.Model{Name: "gpt-x", Provider: "openai", Temperature: &temp, MaxTokens: 100,
		Price: stages.Price{InputPerMTok: 1, OutputPerMTok: 2}}
	req := m.Request([]llm.Message{{Role: "user", Content: prompt}}, 2, format.Spec{Kind: format.Ideas, N: 1})
	return &stages.Work{Call: &stages.Call{Model: m, Request: req}}
}

// TestKeyIsStable pins the key encoding: a change to it silently invalidates
// every cache, so it must be deliberate (bump keyFormat and this value).
func TestKeyIsStable(t *testing.T) {
	in := [][32]byte{sha256.Sum256([]byte("upstream"))}
	key := keyOf(keyParts(testNode(), testCall(0.7, "Propose an idea."), in))
	const want = "7d0244d9851e76e722b4836d38d08e2e42f0732f456e1fd1e0a77ab432fad0b7"
	if key != want {
		t.Fatalf("key encoding changed: %s", key)
	}
}

// TestKeyIgnoresOperationalSettings: provider name, price and the node's
// address do not change answers, so they are not in the key.
func TestKeyIgnoresOperationalSettings(t *testing.T) {
	in := [][32]byte{sha256.Sum256([]byte("upstream"))}
	a := keyOf(keyParts(testNode(), testCall(0.7, "Propose an idea."), in))
	w := testCall(0.7, "Propose an idea.")
	w.Call.Model.Provider = "elsewhere"
	w.Call.Model.Price = stages.Price{InputPerMTok: 99}
	n := testNode()
	n.Inst.Address = `stage.generate_ideas.renamed["m"]`
	n.Address = "moved"
	if b := keyOf(keyParts(n, w, in)); a != b {
		t.Fatal("provider, price or address changed the key")
	}
}

func TestExplain(t *testing.T) {
	in := [][32]byte{sha256.Sum256([]byte("upstream"))}
	base := keyParts(testNode(), testCall(0.7, "Propose an idea."), in)
	old := cacheParts(base)
	cases := []struct {
		name  string
		parts []namedPart
		want  string
	}{
		{"same", base, "not in cache"},
		{"temperature", keyParts(testNode(), testCall(0.2, "Propose an idea."), in), "model.temperature changed (0.7 -> 0.2)"},
		{"prompt", keyParts(testNode(), testCall(0.7, "Propose two ideas."), in), "prompt changed"},
		{"upstream", keyParts(testNode(), testCall(0.7, "Propose an idea."), [][32]byte{sha256.Sum256([]byte("other"))}), "upstream output changed"},
		{"two", keyParts(testNode(), testCall(0.2, "Other."), in), "prompt changed, model.temperature changed (0.7 -> 0.2)"},
	}
	for _, c := range cases {
		if got := explain(old, c.parts, nil); got != c.want {
			t.Errorf("%s: explain = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestComputeKeyParams(t *testing.T) {
	inst := &Instance{Type: "filter_references", Version: "1"}
	inst.paramParts = []namedPart{partOf("param.limit", []byte("5"), "5"), partOf("param.n", []byte("3"), "3")}
	n := &Node{Inst: inst, Spec: stages.Node{Item: "p1"}}
	all := keyParts(n, &stages.Work{Compute: func() ([]byte, error) { return nil, nil }}, nil)
	only := keyParts(n, &stages.Work{Compute: func() ([]byte, error) { return nil, nil }, KeyParams: []string{"limit"}}, nil)
	names := func(ps []namedPart) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.name)
		}
		return strings.Join(s, ",")
	}
	if got := names(all); got != "stage,param.limit,param.n,node,inputs" {
		t.Errorf("all params: %s", got)
	}
	if got := names(only); got != "stage,param.limit,node,inputs" {
		t.Errorf("KeyParams [limit]: %s", got)
	}
}

func TestBudget(t *testing.T) {
	b := &budget{max: 1.0}
	first, second := b.reserve(0.4), b.reserve(0.4)
	if !first || !second {
		t.Fatal("0.8 of 1.0 should fit")
	}
	if b.reserve(0.4) {
		t.Fatal("1.2 of 1.0 should not fit")
	}
	b.settle(0.4, 0.1)
	if b.reserve(0.1) {
		t.Fatal("once exhausted, dispatch stays stopped")
	}
	unlimited := &budget{}
	if !unlimited.reserve(1e9) {
		t.Fatal("no max means no limit")
	}
}

// TestEveryRequestFieldIsKeyed changes each field of llm.Request in turn and
// checks the key changes, so a field added to requests cannot be forgotten.
func TestEveryRequestFieldIsKeyed(t *testing.T) {
	in := [][32]byte{sha256.Sum256([]byte("upstream"))}
	base := testCall(0.7, "Propose an idea.")
	baseKey := keyOf(keyParts(testNode(), base, in))
	seven := 7
	half := 0.5
	changes := map[string]func(r *llm.Request){
		"Model":       func(r *llm.Request) { r.Model = "other" },
		"Messages":    func(r *llm.Request) { r.Messages = append(r.Messages, llm.Message{Role: "user", Content: "more"}) },
		"Temperature": func(r *llm.Request) { r.Temperature = &half },
		"TopP":        func(r *llm.Request) { r.TopP = &half },
		"MaxTokens":   func(r *llm.Request) { r.MaxTokens = 5 },
		"Seed":        func(r *llm.Request) { r.Seed = &seven },
		"Stop":        func(r *llm.Request) { r.Stop = []string{"END"} },
		"JSONMode":    func(r *llm.Request) { r.JSONMode = true },
		"Sample":      func(r *llm.Request) { r.Sample = 9 },
		"Format":      func(r *llm.Request) { r.Format.N = 4 },
		"JSONSchema":  func(r *llm.Request) { r.JSONSchema = []byte(`{"type":"object"}`) },
	}
	rt := reflect.TypeOf(llm.Request{})
	for i := 0; i < rt.NumField(); i++ {
		name := rt.Field(i).Name
		change, ok := changes[name]
		if !ok {
			t.Errorf("llm.Request.%s has no case here: decide whether it belongs in the key", name)
			continue
		}
		w := testCall(0.7, "Propose an idea.")
		change(&w.Call.Request)
		if keyOf(keyParts(testNode(), w, in)) == baseKey {
			t.Errorf("changing llm.Request.%s does not change the key", name)
		}
	}
}
