// Package stagetest holds small stage types for testing the engine: a model
// node per item that answers a list (test_list), an Expander with one child
// per listed element (test_each), an aggregate laid out only once the
// expansion is final (test_collect), and an item's model node followed by a
// compute node of the same instance reading it (test_count), and a model
// node whose Output reads a param (test_lines), and a stage that panics
// (test_panic). Importing the package registers them;
// only tests import it, so they never reach the ideaflow binary.
package stagetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func init() {
	stages.Register(listType{})
	stages.Register(eachType{})
	stages.Register(collectType{})
	stages.Register(embedType{})
	stages.Register(countType{})
	stages.Register(linesType{})
}

// linesType (test_lines) asks test_list's question, and its Output refuses
// a list shorter than min_lines: a param its Output reads (Call.KeyParams),
// so the engine stores the answer apart and re-derives on a change.
type linesType struct{}

func (linesType) Name() string    { return "test_lines" }
func (linesType) Version() string { return "1" }
func (linesType) Params() []stages.Param {
	return []stages.Param{
		{Name: "items", Kind: stages.Input, Required: true, Doc: "the dataset whose items get a list each"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Generator: true, Doc: "the model asked for a list"},
		{Name: "min_lines", Kind: stages.Int, Default: 0, Min: 0, Max: 100, Doc: "lists with fewer lines are refused"},
	}
}

func (linesType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	items, m, err := itemsAndModel(inst)
	if err != nil {
		return nil, err
	}
	minLines := inst.Params.Int("min_lines")
	var nodes []stages.Node
	for i, it := range items.Nodes {
		item := it.Item
		nodes = append(nodes, stages.Node{Item: item, Deps: []stages.Dep{{Input: "items", Index: i}},
			Prepare: func([]stages.In) (*stages.Work, error) {
				msgs := []llm.Message{{Role: "user", Content: "List the methods of " + item}}
				return &stages.Work{Call: &stages.Call{Model: m, Request: m.Request(msgs, 0, format.Spec{Kind: format.Text}), KeyParams: []string{"min_lines"},
					Output: func(a *format.Answer) ([]byte, error) {
						l := lines(a.Text)
						if len(l) < minLines {
							return nil, fmt.Errorf("%d lines, fewer than min_lines = %d", len(l), minLines)
						}
						return json.Marshal(ListOutput{List: l})
					}}}, nil
			}})
	}
	return nodes, nil
}

// CountOutput is a test_count compute node's output.
type CountOutput struct {
	Count int `json:"count"`
}

// countType (test_count) lays out two nodes per item: a model node asking
// for a list (test_list's question), then a compute node counting its lines
// that reads it through stages.Self. With forward = true the compute node
// comes first and names the model node after it: an internal error the
// engine must refuse.
type countType struct{}

func (countType) Name() string    { return "test_count" }
func (countType) Version() string { return "1" }
func (countType) Params() []stages.Param {
	return []stages.Param{
		{Name: "items", Kind: stages.Input, Required: true, Doc: "the dataset whose items get a list each"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Generator: true, Doc: "the model asked for a list"},
		{Name: "forward", Kind: stages.Bool, Default: false, Doc: "lay out the count before the list it reads (a broken stage type)"},
	}
}

func (countType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	items, m, err := itemsAndModel(inst)
	if err != nil {
		return nil, err
	}
	count := func(in []stages.In) (*stages.Work, error) {
		var l ListOutput
		if err := json.Unmarshal(in[0].Output, &l); err != nil {
			return nil, err
		}
		return &stages.Work{Compute: func() ([]byte, error) { return json.Marshal(CountOutput{Count: len(l.List)}) }}, nil
	}
	var nodes []stages.Node
	for i, it := range items.Nodes {
		item := it.Item
		list := stages.Node{Item: item, Label: "list", Deps: []stages.Dep{{Input: "items", Index: i}},
			Prepare: func([]stages.In) (*stages.Work, error) {
				msgs := []llm.Message{{Role: "user", Content: "List the methods of " + item}}
				return &stages.Work{Call: &stages.Call{Model: m, Request: m.Request(msgs, 0, format.Spec{Kind: format.Text}),
					Output: func(a *format.Answer) ([]byte, error) { return json.Marshal(ListOutput{List: lines(a.Text)}) }}}, nil
			}}
		at := len(nodes)
		if inst.Params.Bool("forward") {
			nodes = append(nodes, stages.Node{Item: item, Slot: 1, Label: "count", Deps: []stages.Dep{{Input: stages.Self, Index: at + 1}}, Prepare: count}, list)
			continue
		}
		nodes = append(nodes, list, stages.Node{Item: item, Slot: 1, Label: "count", Deps: []stages.Dep{{Input: stages.Self, Index: at}}, Prepare: count})
	}
	return nodes, nil
}

// embedType (test_embed) makes one service call per item: the item id's
// sentence (or token) embeddings.
type embedType struct{}

func (embedType) Name() string    { return "test_embed" }
func (embedType) Version() string { return "1" }
func (embedType) Params() []stages.Param {
	return []stages.Param{
		{Name: "items", Kind: stages.Input, Required: true, Doc: "the items to embed (their ids)"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Service: true, Doc: "the embedding model (a provider of kind embeddings, tei or mock)"},
		{Name: "op", Kind: stages.String, Default: llm.OpEmbeddings, Doc: `"embeddings" or "token_embeddings"`},
	}
}

// ServiceOps: the model is asked for op.
func (embedType) ServiceOps(p stages.Params) map[string][]string {
	return map[string][]string{"model": {p.String("op")}}
}

func (embedType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	items, m, err := itemsAndModel(inst)
	if err != nil {
		return nil, err
	}
	op := inst.Params.String("op")
	var nodes []stages.Node
	for i, it := range items.Nodes {
		item := it.Item
		nodes = append(nodes, stages.Node{Item: item, Deps: []stages.Dep{{Input: "items", Index: i}},
			Prepare: func([]stages.In) (*stages.Work, error) {
				body, err := json.Marshal(map[string][]string{"input": {"the idea " + item}})
				if err != nil {
					return nil, err
				}
				return &stages.Work{Service: &stages.Service{Model: m, Request: llm.ServiceRequest{Op: op, Model: m.Name, Body: body}}}, nil
			}})
	}
	return nodes, nil
}

// ListOutput is a test_list node's output: the answer's non-empty lines.
type ListOutput struct {
	List []string `json:"list"`
}

// EachOutput is a test_each child's output.
type EachOutput struct {
	Element string `json:"element"`
	Text    string `json:"text,omitempty"` // the model's answer (model children)
	Length  int    `json:"length"`         // len(Element) (compute children)
}

// CollectOutput is a test_collect node's output: the children of one item in node order.
type CollectOutput struct {
	Elements []string `json:"elements"`
}

type listType struct{}

func (listType) Name() string    { return "test_list" }
func (listType) Version() string { return "1" }
func (listType) Params() []stages.Param {
	return []stages.Param{
		{Name: "items", Kind: stages.Input, Required: true, Doc: "the dataset whose items get a list each"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Generator: true, Doc: "the model asked for a list"},
		{Name: "prompt", Kind: stages.String, Default: "List the methods of", Doc: "the question, followed by the item id"},
	}
}

func (listType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	items, m, err := itemsAndModel(inst)
	if err != nil {
		return nil, err
	}
	prompt := inst.Params.String("prompt")
	var nodes []stages.Node
	for i, it := range items.Nodes {
		item := it.Item
		nodes = append(nodes, stages.Node{Item: item, Deps: []stages.Dep{{Input: "items", Index: i}},
			Prepare: func([]stages.In) (*stages.Work, error) {
				spec := format.Spec{Kind: format.Text}
				msgs := []llm.Message{{Role: "user", Content: prompt + " " + item}}
				return &stages.Work{Call: &stages.Call{Model: m, Request: m.Request(msgs, 0, spec),
					Output: func(a *format.Answer) ([]byte, error) { return json.Marshal(ListOutput{List: lines(a.Text)}) }}}, nil
			}})
	}
	return nodes, nil
}

// lines returns text's non-empty lines, but for comment lines ("# none"):
// an answer of only comments is an empty list, which a test of a zero
// expansion needs (an empty answer fails the node).
func lines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

type eachType struct{}

func (eachType) Name() string    { return "test_each" }
func (eachType) Version() string { return "1" }
func (eachType) Params() []stages.Param {
	return []stages.Param{
		{Name: "list", Kind: stages.Input, Required: true, Accepts: []string{"test_list"}, Doc: "the lists to expand"},
		{Name: "model", Kind: stages.ModelRef, Doc: "ask this model about each element"},
		{Name: "compute", Kind: stages.Bool, Doc: "compute children (the element's length) instead of asking the model"},
		{Name: "max", Kind: stages.Int, Default: 20, Min: 0, Max: 1000, Doc: "at most this many elements per item"},
		{Name: "first_word_labels", Kind: stages.Bool, Doc: "label a child by its element's first word only, so its request carries more than its label (the engine must still notice a changed element)"},
	}
}

func (eachType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	if inst.Params.Input("list") == nil {
		return nil, stages.ParamErrorf("list", "list is required")
	}
	return nil, nil
}

func (eachType) ExpandInputs() []string               { return []string{"list"} }
func (eachType) MaxPerItem(inst *stages.Instance) int { return inst.Params.Int("max") }

// Expand lays out one child per distinct element, labelled by the element,
// so the same elements in another order keep their keys. A child carries its
// element in its request (or label) and depends on no node: a dependency's
// whole output would be key material, and a list that gained an element
// would re-ask every child.
func (eachType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	if len(in) != 1 || in[0].Output == nil {
		return nil, nil // the list failed: nothing to expand
	}
	var l ListOutput
	if err := json.Unmarshal(in[0].Output, &l); err != nil {
		return nil, fmt.Errorf("decode list: %w", err)
	}
	m := inst.Params.Model("model")
	compute := inst.Params.Bool("compute")
	seen := map[string]bool{}
	var nodes []stages.Node
	for _, e := range l.List {
		if seen[e] || len(nodes) == inst.Params.Int("max") {
			continue
		}
		seen[e] = true
		e := e
		label := Label(e)
		if inst.Params.Bool("first_word_labels") {
			label = strings.Fields(e + " element")[0]
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label,
			Prepare: func([]stages.In) (*stages.Work, error) {
				if compute || m == nil {
					return &stages.Work{Compute: func() ([]byte, error) { return json.Marshal(EachOutput{Element: e, Length: len(e)}) }}, nil
				}
				spec := format.Spec{Kind: format.Text}
				msgs := []llm.Message{{Role: "user", Content: "Expand on: " + e}}
				return &stages.Work{Call: &stages.Call{Model: m, Request: m.Request(msgs, 0, spec),
					Output: func(a *format.Answer) ([]byte, error) {
						return json.Marshal(EachOutput{Element: e, Text: a.Text, Length: len(e)})
					}}}, nil
			}})
	}
	return nodes, nil
}

// Label names a child by its element: readable, and unique per element.
func Label(element string) string {
	sum := sha256.Sum256([]byte(element))
	word := strings.Fields(element)
	head := "element"
	if len(word) > 0 {
		head = strings.ToLower(word[0])
		if len(head) > 24 {
			head = head[:24]
		}
	}
	return head + "-" + hex.EncodeToString(sum[:4])
}

type collectType struct{}

func (collectType) Name() string    { return "test_collect" }
func (collectType) Version() string { return "1" }
func (collectType) Params() []stages.Param {
	return []stages.Param{
		{Name: "children", Kind: stages.Input, Required: true, Accepts: []string{"test_each"}, Doc: "the expanded stage to collect"},
		{Name: "allow_missing", Kind: stages.Bool, Default: true, Doc: "collect the children that succeeded; false: skip the item when one failed"},
	}
}

// Layout runs once the expansion is final, so it sees every child.
func (collectType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	up := inst.Params.Input("children")
	if up == nil {
		return nil, stages.ParamErrorf("children", "children is required")
	}
	var nodes []stages.Node
	for _, item := range up.Source.Items() {
		var deps []stages.Dep
		for _, k := range up.ItemNodes(item) {
			deps = append(deps, stages.Dep{Input: "children", Index: k})
		}
		nodes = append(nodes, stages.Node{Item: item, Deps: deps, AllowMissing: inst.Params.Bool("allow_missing"),
			Prepare: func(in []stages.In) (*stages.Work, error) {
				return &stages.Work{Compute: func() ([]byte, error) {
					out := CollectOutput{Elements: []string{}}
					for _, x := range in {
						var e EachOutput
						if x.Output != nil && json.Unmarshal(x.Output, &e) == nil {
							out.Elements = append(out.Elements, e.Element)
						}
					}
					return json.Marshal(out)
				}}, nil
			}})
	}
	return nodes, nil
}

// itemsAndModel reads the items and model params every test stage type
// but test_each and test_collect requires.
func itemsAndModel(inst *stages.Instance) (*stages.Upstream, *stages.Model, error) {
	items, m := inst.Params.Input("items"), inst.Params.Model("model")
	if items == nil {
		return nil, nil, stages.ParamErrorf("items", "items is required")
	}
	if m == nil {
		return nil, nil, stages.ParamErrorf("model", "model is required")
	}
	return items, m, nil
}
