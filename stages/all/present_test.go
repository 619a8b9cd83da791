package all_test

import (
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	_ "github.com/ideaflow/ideaflow/stages/all"
)

// TestEveryTypePresents: show, export and report.html read every output
// through its stage type's presenter (stages.Present), knowing no type, so
// every registered type is a stages.Presenter or is covered by the
// default, which reads a schema's roles (a stages.Declarer). Each type's
// minimal instance is run, and each of its nodes presents without error:
// a node that is no helper exports at least one row, every column named;
// every idea has text; every judgement says what it judged, and has a
// verdict (score, scores, a verdict text or a ranking).
func TestEveryTypePresents(t *testing.T) {
	h := loadHarness(t)
	for _, name := range stages.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			typ, _ := stages.Lookup(name)
			_, presenter := typ.(stages.Presenter)
			_, declarer := typ.(stages.Declarer)
			if !presenter && !declarer {
				t.Fatalf("%s is neither a stages.Presenter nor a stages.Declarer: the default presenter has no roles to read", name)
			}
			addr := example(name)
			src, err := h.experiment(nil, addr)
			if err != nil {
				t.Fatal(err)
			}
			if o := h.outcome(t, src, addr); len(o.failures) > 0 || o.buildErr != "" || o.layoutErr != "" || o.loadErr != "" {
				t.Fatalf("the minimal %s does not run: %v %s %s %s", name, o.failures, o.buildErr, o.layoutErr, o.loadErr)
			}
			exp, diags := config.Load(h.dirOf(t, src), config.Options{Vars: h.vars()})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			g, diags := engine.Build(exp)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			e := &engine.Engine{Store: h.store}
			views, err := e.Inspect(e.Plan(g), addr, engine.InspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var params stages.Params
			for _, inst := range g.Instances {
				if strings.HasPrefix(inst.Address, addr) {
					params = inst.Params
				}
			}
			if len(views) == 0 && !zeroOnTheMock[name] {
				t.Fatalf("the minimal %s has no nodes to present", name)
			}
			for _, v := range views {
				if v.Result == nil {
					t.Fatalf("%s is not cached after its run (%s)", v.Address, v.Status)
				}
				out := &stages.NodeOutput{Params: params, Block: strings.TrimPrefix(v.Block, "stage."), Work: v.Work, Output: v.Result.Output,
					Node: stages.NodeInfo{Item: v.Item, Slot: v.Slot, Label: v.Label}, Raw: v.Result.Raw, Model: v.Result.Model}
				pr, err := stages.Present(typ, out)
				if err != nil {
					t.Fatalf("%s: %v", v.Address, err)
				}
				if !pr.Helper && len(pr.Rows) == 0 && !pr.Dropped {
					t.Errorf("%s: no export row, and neither a helper nor dropped", v.Address)
				}
				for _, r := range pr.Rows {
					for _, c := range r {
						if c.Name == "" {
							t.Errorf("%s: an export column has no name", v.Address)
						}
					}
				}
				for _, idea := range pr.Ideas {
					if strings.TrimSpace(idea.Text) == "" {
						t.Errorf("%s: an idea without text", v.Address)
					}
				}
				for _, j := range pr.Judgements {
					if j.Dimension == "" || (j.Score == nil && j.Verdict == "" && len(j.Scores) == 0 && len(j.Order) == 0 && j.Rationale == "") {
						t.Errorf("%s: judgement %+v says not what it judged, or nothing of it", v.Address, j)
					}
				}
			}
		})
	}
}
