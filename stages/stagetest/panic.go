package stagetest

import (
	"github.com/ideaflow/ideaflow/stages"
)

func init() { stages.Register(panicType{}) }

// panicType (test_panic) is a broken stage type: with in = "layout" its
// Layout panics (on the goroutine that builds the graph), with in =
// "compute" each item's compute node panics (on a resolver goroutine), with
// the message given. The CLI's tests check that a bug ends the process with
// the internal-error exit code and a bug-report hint, not a stack.
type panicType struct{}

func (panicType) Name() string    { return "test_panic" }
func (panicType) Version() string { return "1" }
func (panicType) Params() []stages.Param {
	return []stages.Param{
		{Name: "items", Kind: stages.Input, Required: true, Doc: "the dataset"},
		{Name: "in", Kind: stages.String, Default: "compute", Doc: `where to panic: "layout" or "compute"`},
		{Name: "message", Kind: stages.String, Default: "test_panic: a bug", Doc: "the panic's message"},
	}
}

func (panicType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	msg := inst.Params.String("message")
	if inst.Params.String("in") == "layout" {
		panic(msg)
	}
	items := inst.Params.Input("items")
	var nodes []stages.Node
	for i, it := range items.Nodes {
		nodes = append(nodes, stages.Node{Item: it.Item, Deps: []stages.Dep{{Input: "items", Index: i}},
			Prepare: func([]stages.In) (*stages.Work, error) {
				return &stages.Work{Compute: func() ([]byte, error) { panic(msg) }}, nil
			}})
	}
	return nodes, nil
}
