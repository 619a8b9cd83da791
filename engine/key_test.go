package engine

import (
	"crypto/sha256"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func testNode() *Node {
	inst := &Instance{Type: "generate_ideas", Version: "1", Address: `stage.generate_ideas.main["m"]`}
	return &Node{Inst: inst, Spec: stages.Node{Item: "p1", Slot: 2}}
}

// openAI is the answerer of a provider pointed at OpenAI's API.
var openAI = llm.Answerer{Class: llm.ClassEndpoint, Identity: "https://api.openai.com/v1"}

func testCall(temp float64, prompt string) *stages.Work {
	m := &stages.Model{Name: "gpt-x", Provider: "openai", Temperature: &temp, MaxTokens: 100,
		Price: stages.Price{InputPerMTok: 1, OutputPerMTok: 2}, Answerer: openAI}
	req := m.Request([]llm.Message{{Role: "user", Content: prompt}}, 2, format.Spec{Kind: format.Ideas, N: 1})
	return &stages.Work{Call: &stages.Call{Model: m, Request: req}}
}

func digests(ss ...string) keyInputs {
	in := keyInputs{}
	for _, s := range ss {
		in.digests = append(in.digests, sha256.Sum256([]byte(s)))
	}
	return in
}

func testService(a llm.Answerer) *stages.Work {
	return &stages.Work{Service: &stages.Service{Model: &stages.Model{Name: "bge", Provider: "emb", Answerer: a},
		Request: llm.ServiceRequest{Op: llm.OpEmbeddings, Model: "bge", Body: []byte(`{"input":["a"]}`)}}}
}

func testCompute() (*Node, *stages.Work) {
	inst := &Instance{Type: "insight_score", Version: "1"}
	inst.paramParts = []namedPart{partOf("param.digits", []byte("3"), "3")}
	return &Node{Inst: inst, Spec: stages.Node{Item: "p1"}}, &stages.Work{Compute: func() ([]byte, error) { return nil, nil }}
}

// TestKeyIsStable pins the key encoding: a change to it silently invalidates
// every cache, so it must be deliberate (bump keyFormat and these values).
// The v1 value is key scheme v1's key of the same call: adoption (adopt.go)
// finds old records by recomputing it, so it must never move.
func TestKeyIsStable(t *testing.T) {
	in := digests("upstream")
	parts := keyParts(testNode(), testCall(0.7, "Propose an idea."), in)
	if got, want := keyOf(parts), "3ecb3847745d6614af536d29bde9c4932c0d700ec9654254d5f77cf92d14437a"; got != want {
		t.Errorf("call key encoding changed: %s", got)
	}
	if got, want := keyOfFormat(keyFormatV1, v1Parts(parts)), "7d0244d9851e76e722b4836d38d08e2e42f0732f456e1fd1e0a77ab432fad0b7"; got != want {
		t.Errorf("the v1 key adoption recomputes is not v1's: %s", got)
	}
	if got, want := keyOf(keyParts(testNode(), testService(openAI), in)), "5a54165c9ba0d3e2b0f69ed0d138cd37ed0a16aad9c08e3c9579ea374d3ac83c"; got != want {
		t.Errorf("service key encoding changed: %s", got)
	}
	n, w := testCompute()
	tables := newProvTable()
	mock := tables.of([]llm.Answerer{{Class: llm.ClassMock, Identity: "seed 7", Synthetic: true}})
	cin := digests("a", "b")
	cin.provs, cin.union = []*provenance{mock, nil}, mock
	if got, want := keyOf(keyParts(n, w, cin)), "6852e2ca3a3006c1fc6333182abf94a21d5f9a83b740348c1af2ce1fa399b2cf"; got != want {
		t.Errorf("compute key encoding changed: %s", got)
	}
}

// TestKeyIgnoresOperationalSettings: provider name, price and the node's
// address do not change answers, so they are not in the key.
func TestKeyIgnoresOperationalSettings(t *testing.T) {
	in := digests("upstream")
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

// TestKeyHoldsAnswerer: who answers is key material of model and service
// nodes, so a mock's answer never serves an endpoint's node, nor one
// endpoint's another's; two providers of one answerer share keys.
func TestKeyHoldsAnswerer(t *testing.T) {
	in := digests("upstream")
	key := func(a llm.Answerer, service bool) string {
		w := testCall(0.7, "Propose an idea.")
		w.Call.Model.Answerer = a
		if service {
			w = testService(a)
		}
		return keyOf(keyParts(testNode(), w, in))
	}
	mock7 := llm.Answerer{Class: llm.ClassMock, Identity: "seed 7", Synthetic: true}
	for _, service := range []bool{false, true} {
		base := key(openAI, service)
		for name, a := range map[string]llm.Answerer{
			"mock":        mock7,
			"mock seed 8": {Class: llm.ClassMock, Identity: "seed 8", Synthetic: true},
			"baseline":    {Class: llm.ClassBaseline, Identity: "seed 7"},
			"endpoint B":  {Class: llm.ClassEndpoint, Identity: "https://openrouter.ai/api/v1"},
			"corpus":      {Class: llm.ClassCorpus, Identity: "sha256:00"},
		} {
			if key(a, service) == base {
				t.Errorf("service %v: %s answers under OpenAI's key", service, name)
			}
		}
		if key(mock7, service) == key(llm.Answerer{Class: llm.ClassMock, Identity: "seed 8", Synthetic: true}, service) {
			t.Errorf("service %v: the mock's seed is not in the key", service)
		}
		// The synthetic flag follows from the class; the same answerer is the same key.
		if key(openAI, service) != base {
			t.Errorf("service %v: the key is not a function of its parts", service)
		}
	}
}

// TestComputeKeyHoldsInputProvenance: a compute node's key changes when who
// answered an input changes, though its outputs do not.
func TestComputeKeyHoldsInputProvenance(t *testing.T) {
	n, w := testCompute()
	pt := newProvTable()
	mock := pt.of([]llm.Answerer{{Class: llm.ClassMock, Identity: "seed 7", Synthetic: true}})
	real := pt.of([]llm.Answerer{openAI})
	key := func(provs ...*provenance) string {
		in := digests("a", "b")
		in.provs, in.union = provs, pt.unionAll(provs)
		return keyOf(keyParts(n, w, in))
	}
	keys := map[string]string{
		"none":      key(nil, nil),
		"mock, -":   key(mock, nil),
		"-, mock":   key(nil, mock),
		"real, -":   key(real, nil),
		"mock, mix": key(mock, pt.union(mock, real)),
	}
	seen := map[string]string{}
	for name, k := range keys {
		if other, dup := seen[k]; dup {
			t.Errorf("inputs' provenance %q and %q give one key", name, other)
		}
		seen[k] = name
	}
	if got := pt.union(mock, real).String(); got != "endpoint https://api.openai.com/v1; mock seed 7" {
		t.Errorf("union = %q", got)
	}
	if !pt.union(mock, real).Synthetic || real.Synthetic {
		t.Error("synthetic is any answerer's")
	}
}

func TestExplain(t *testing.T) {
	in := digests("upstream")
	base := keyParts(testNode(), testCall(0.7, "Propose an idea."), in)
	old := cacheParts(base)
	mock := testCall(0.7, "Propose an idea.")
	mock.Call.Model.Answerer = llm.Answerer{Class: llm.ClassMock, Identity: "seed 7", Synthetic: true}
	mockParts := keyParts(testNode(), mock, in)
	cases := []struct {
		name  string
		old   []cache.Part
		parts []namedPart
		want  string
	}{
		{"same", old, base, "not in cache"},
		{"temperature", old, keyParts(testNode(), testCall(0.2, "Propose an idea."), in), "model.temperature changed (0.7 -> 0.2)"},
		{"prompt", old, keyParts(testNode(), testCall(0.7, "Propose two ideas."), in), "prompt changed"},
		{"upstream", old, keyParts(testNode(), testCall(0.7, "Propose an idea."), digests("other")), "upstream output changed"},
		{"two", old, keyParts(testNode(), testCall(0.2, "Other."), in), "prompt changed, model.temperature changed (0.7 -> 0.2)"},
		{"answerer", cacheParts(mockParts), base, "answerer changed (mock seed 7 -> endpoint https://api.openai.com/v1)"},
		{"old scheme", cacheParts(v1Parts(base)), base, oldSchemeReason},
	}
	for _, c := range cases {
		if got := explain(c.old, c.parts, nil); got != c.want {
			t.Errorf("%s: explain = %q, want %q", c.name, got, c.want)
		}
	}
	if !onlyAnswererDiffers(cacheParts(mockParts), base) || onlyAnswererDiffers(old, base) ||
		onlyAnswererDiffers(cacheParts(mockParts), keyParts(testNode(), testCall(0.2, "Propose an idea."), in)) {
		t.Error("onlyAnswererDiffers is wrong")
	}
	if !oldScheme(cacheParts(v1Parts(base))) || oldScheme(old) {
		t.Error("oldScheme is wrong")
	}
}

func TestComputeKeyParams(t *testing.T) {
	inst := &Instance{Type: "filter_references", Version: "1"}
	inst.paramParts = []namedPart{partOf("param.limit", []byte("5"), "5"), partOf("param.n", []byte("3"), "3")}
	n := &Node{Inst: inst, Spec: stages.Node{Item: "p1"}}
	all := keyParts(n, &stages.Work{Compute: func() ([]byte, error) { return nil, nil }}, keyInputs{})
	only := keyParts(n, &stages.Work{Compute: func() ([]byte, error) { return nil, nil }, KeyParams: []string{"limit"}}, keyInputs{})
	names := func(ps []namedPart) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.name)
		}
		return strings.Join(s, ",")
	}
	if got := names(all); got != "stage,param.limit,param.n,node,inputs.provenance,inputs" {
		t.Errorf("all params: %s", got)
	}
	if got := names(only); got != "stage,param.limit,node,inputs.provenance,inputs" {
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
	in := digests("upstream")
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
