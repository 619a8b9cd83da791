package config

// The stop_when block: an adaptive evaluation. The items of one dataset
// are taken in a seeded random order (the dataset's own sample/sample_seed
// selection, whose k items are a prefix of its k+r), round items at a
// time; after each round the engine reads every model's per-item scores
// from one stage and stages/adaptive decides whether to go on.

import (
	"math"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/stages/adaptive"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// StopWhen is a decoded stop_when block.
type StopWhen struct {
	// Items is the dataset taken in rounds (its name, without "dataset.").
	Items string
	// Scores is the address of the stage block whose nodes score the items
	// ("stage.judge_panel.main"): one instance per model (its for_each key
	// names the model), each node's Field a score of its item.
	Scores string
	// Field is the output field read as a node's score ("mean").
	Field string
	// Seed orders the items (sample_seed of each round's sample).
	Seed int
	Rule adaptive.Rule
	// DeclRange is the block's header, for diagnostics about it later.
	DeclRange hcl.Range
}

// stopWhenSchema is the stop_when block's attributes, in the order the
// reference (ideaflow doc) lists them.
var stopWhenSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "items", Required: true}, {Name: "scores", Required: true}, {Name: "round", Required: true},
	{Name: "seed"}, {Name: "separated"}, {Name: "tie"}, {Name: "half_width"}, {Name: "max_calls"},
	{Name: "method"}, {Name: "range"}, {Name: "field"},
}}

// maxRound bounds round: past a million items a round is no round.
const maxRound = 1_000_000

func (l *loader) evalStopWhen(d *decl) {
	a := d.content.Attributes
	sw := &StopWhen{Field: "mean", DeclRange: d.declRange,
		Rule: adaptive.Rule{Lo: 1, Hi: 10, Method: stats.CSBernstein}}
	ok := true
	refAt := func(name, kind, example string) string {
		v, attr := l.eval(a, name, nil)
		if attr == nil {
			return ""
		}
		addr, isRef := refOf(v)
		if !isRef || !strings.HasPrefix(addr, kind+".") {
			l.errorf(attr.Expr.Range().Ptr(), "stop_when "+name+" must be a "+kind,
				"%s names the %s the rounds are about; write e.g. %s = %s.", name, kind, name, example)
			ok = false
			return ""
		}
		return addr
	}
	if addr := refAt("items", "dataset", "dataset.keywords"); addr != "" {
		sw.Items = strings.TrimPrefix(addr, "dataset.")
		if ds := l.exp.Datasets[sw.Items]; ds != nil && ds.Select.Sample > 0 {
			l.errorf(a["items"].Expr.Range().Ptr(), "stop_when items already sampled",
				"dataset.%s sets sample = %d, but stop_when takes its items in rounds itself (each round a larger seeded sample). Remove sample from the dataset; stop_when's seed orders the items.", sw.Items, ds.Select.Sample)
			ok = false
		}
	}
	if attr, set := a["scores"]; set {
		// Read as written, not evaluated: a for_each stage's value is a map
		// of its instances, and the rule reads the block, one instance per
		// model.
		tr, diags := hcl.AbsTraversalForExpr(attr.Expr)
		names := traversalNames(tr)
		if diags.HasErrors() || len(names) < 3 || names[0] != "stage" {
			l.errorf(attr.Expr.Range().Ptr(), "stop_when scores must be a stage",
				"scores names the stage block whose nodes score each item, one instance per model; write e.g. scores = stage.judge_panel.main.")
			ok = false
		} else {
			sw.Scores = strings.Join(names[:3], ".")
		}
	}
	sw.Rule.Round, _ = l.intIn(a, "round", nil, 1, maxRound)
	sw.Seed, _ = l.intIn(a, "seed", nil, 0, math.MaxInt32)
	sw.Rule.MaxCalls, _ = l.intIn(a, "max_calls", nil, 1, math.MaxInt32)
	fraction := func(name, what string) float64 {
		f, set := l.float(a, name, nil)
		if set && !(f > 0 && f < 1) {
			l.errorf(a[name].Expr.Range().Ptr(), "stop_when "+name+" out of range",
				"%s = %v is %s, a number strictly between 0 and 1 (e.g. 0.95); fix the value.", name, f, what)
			ok = false
		}
		return f
	}
	sw.Rule.Separated = fraction("separated", "the confidence level at which every pair of models must be separated or tied")
	positive := func(name, what string) float64 {
		f, set := l.float(a, name, nil)
		if set && !(f > 0) {
			l.errorf(a[name].Expr.Range().Ptr(), "stop_when "+name+" must be positive",
				"%s = %v is %s on the scores' scale; give a positive number, or remove it.", name, f, what)
			ok = false
		}
		return f
	}
	sw.Rule.Tie = positive("tie", "the difference of means under which two models count as tied")
	sw.Rule.HalfWidth = positive("half_width", "the largest half-width every model's interval must get below")
	if _, set := a["tie"]; set && sw.Rule.Separated == 0 {
		l.errorf(a["tie"].Expr.Range().Ptr(), "tie without separated",
			"tie settles pairs of models as tied when the board is checked for separation; add separated = 0.95, or remove tie.")
		ok = false
	}
	if m, set := l.str(a, "method", nil); set {
		switch stats.CSMethod(m) {
		case stats.CSBernstein, stats.CSBetting:
			sw.Rule.Method = stats.CSMethod(m)
		default:
			l.errorf(a["method"].Expr.Range().Ptr(), "Unknown stop_when method",
				"method %q is not a confidence sequence ideaflow knows; use \"bernstein\" (empirical Bernstein) or \"betting\" (tighter, slower).", m)
			ok = false
		}
	}
	if f, set := l.str(a, "field", nil); set {
		if f == "" {
			l.errorf(a["field"].Expr.Range().Ptr(), "Empty stop_when field",
				"field names the output field read as a score (a judgement's \"mean\"); give one, or remove it.")
			ok = false
		}
		sw.Field = f
	}
	if attr, set := a["range"]; set {
		bounds, bok := l.floats(attr)
		if !bok || len(bounds) != 2 || !(bounds[0] < bounds[1]) {
			l.errorf(attr.Expr.Range().Ptr(), "Invalid stop_when range",
				"range is the scores' bounds as [lowest, highest] with lowest < highest, e.g. [1, 10] for LiveIdeaBench's judges; fix the value.")
			ok = false
		} else {
			sw.Rule.Lo, sw.Rule.Hi = bounds[0], bounds[1]
		}
	}
	if ok && sw.Rule.Separated == 0 && sw.Rule.HalfWidth == 0 && sw.Rule.MaxCalls == 0 {
		l.errorf(&d.declRange, "stop_when without a condition",
			"Nothing would stop the rounds before the last item. Add separated = 0.95 (every pair of models separated or tied), half_width = 0.1, or max_calls = 10000.")
		ok = false
	}
	if ok && sw.Rule.Round > 0 {
		l.exp.StopWhen = sw
	}
}

// floats reads a list of numbers.
func (l *loader) floats(attr *hcl.Attribute) ([]float64, bool) {
	v, diags := attr.Expr.Value(l.values.context(nil))
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || !(v.Type().IsListType() || v.Type().IsTupleType()) {
		return nil, false
	}
	var out []float64
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || !e.IsKnown() || e.Type().FriendlyName() != "number" {
			return nil, false
		}
		f, _ := e.AsBigFloat().Float64()
		out = append(out, f)
	}
	return out, true
}

// Sampled is a copy of d that keeps the first k items of its seeded
// order (datasets' sample/sample_seed), loaded afresh: what one round of
// a stop_when reads. k items of a seed are a prefix of k+r, so a later
// round's items include every earlier round's and their nodes hit the
// cache.
func (d *Dataset) Sampled(k, seed int) *Dataset {
	sel := d.Select
	sel.Sample, sel.SampleSeed = k, seed
	return &Dataset{Name: d.Name, Format: d.Format, Path: d.Path, IDField: d.IDField, Limit: d.Limit,
		Select: sel, DeclRange: d.DeclRange, refused: d.refused}
}
