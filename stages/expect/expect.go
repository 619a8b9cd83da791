// Package expect is the expect stage type: a published result set beside
// the one a run computed, with the margin within which it counts as
// reproduced. `ideaflow check` prints every expect of an experiment, pass or
// drift, and exits 4 when one drifts. An expect has one of two forms:
//
//   - a value: one number of one score instance (score) against the
//     published number (published), within tolerance: a table cell;
//   - an order: one number of each instance of a score stage (scores)
//     against the published values by instance key (published_values), by
//     Kendall's tau-b between the two orders, at least min_tau_b: a
//     leaderboard's ranking, or "ScholarEval above the baseline".
//
// An expect block is a stage of its own, so what it reads is keyed like any
// other input: changing the published value or the tolerance recomputes the
// verdict and nothing else, and the verdict of a cached run costs no call.
package expect

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

func init() { stages.Register(expectType{}) }

type expectType struct{}

func (expectType) Name() string    { return "expect" }
func (expectType) Version() string { return "2" } // 2: the order form, node, published and tolerance only in the value form

func (expectType) Params() []stages.Param {
	return []stages.Param{
		{Name: "score", Kind: stages.Input, Doc: "the value form: the instance whose number is checked, an aggregate score (insight_score, similarity_score, overlap_score, aggregate, bootstrap, coverage_score, ...)"},
		{Name: "scores", Kind: stages.Inputs, Doc: "the order form: every instance of a score stage, one number each (stage.liveideabench_score.average has one per model), ranked against published_values"},
		{Name: "node", Kind: stages.String, Default: "", Doc: `the node read of a score instance that has several, by its label or item (coverage_score's groups: "overall", "domain=ai"); empty: the instance has one`},
		{Name: "field", Kind: stages.String, Default: "value", Doc: `dotted path of the number in its output ("value": a score's value; "extra.average" for a named extra)`},
		{Name: "published", Kind: stages.Number, Doc: "the value form: the published value (the paper's table cell)"},
		{Name: "tolerance", Kind: stages.Number, Doc: "the value form: the largest |measured - published| that counts as reproduced, in the value's units"},
		{Name: "published_values", Kind: stages.NumberMap, Doc: `the order form: the published values by the instances' keys ({ "gpt-4o" = 7.33, ... }); only their order counts`},
		{Name: "min_tau_b", Kind: stages.Number, Doc: "the order form: the smallest Kendall's tau-b between the run's order and the published one that counts as reproduced (1: the same order)"},
		{Name: "source", Kind: stages.String, Default: "", Doc: `where the published value is from, printed beside the verdict ("IdeaBench Table 1")`},
	}
}

// Verdict is an expect node's output.
type Verdict struct {
	// Status is "pass" (|Measured - Published| <= Tolerance; in the order
	// form Measured >= Order.MinTauB), "drift" (farther) or "missing" (a
	// score's node failed, its output has no number at Field, or the order
	// is undefined: nothing was reproduced).
	Status string `json:"status"`
	// Published and Tolerance are the value form's.
	Published *float64 `json:"published,omitempty"`
	Tolerance *float64 `json:"tolerance,omitempty"`
	// Measured is the value read, or in the order form Kendall's tau-b.
	Measured *float64 `json:"measured,omitempty"`
	// Delta is Measured - Published.
	Delta *float64 `json:"delta,omitempty"`
	// CILow and CIHigh are the score's interval, when it gives one
	// (extra.ci_low, extra.ci_high); Covers says it holds Published.
	CILow  *float64 `json:"ci_low,omitempty"`
	CIHigh *float64 `json:"ci_high,omitempty"`
	Covers *bool    `json:"covers,omitempty"`
	Count  *int     `json:"count,omitempty"` // the items the score is over, when it says
	Order  *Order   `json:"order,omitempty"` // the order form's rows
	Score  string   `json:"score"`           // the checked instance's (instances') address
	Node   string   `json:"node,omitempty"`  // the node read of each instance (its label or item)
	Field  string   `json:"field"`
	Source string   `json:"source,omitempty"`
	Reason string   `json:"reason,omitempty"` // why it is missing

	noField bool // the score's output has no number at Field
}

// Order is the order form's detail: the rows compared, and the keys on
// one side only (never part of tau-b).
type Order struct {
	MinTauB float64    `json:"min_tau_b"`
	Rows    []OrderRow `json:"rows"` // the published order: highest published value first
	// Unpublished lists the run's instances without a published value;
	// Unrun the published keys no instance of this run has (a run over a
	// subset of the models).
	Unpublished []string `json:"unpublished,omitempty"`
	Unrun       []string `json:"unrun,omitempty"`
}

// OrderRow is one instance: its value in the run (absent when its node
// failed) and in the paper.
type OrderRow struct {
	Key       string   `json:"key"`
	Measured  *float64 `json:"measured,omitempty"`
	Published float64  `json:"published"`
}

func (expectType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	field, node, source := p.String("field"), p.String("node"), p.String("source")
	if field == "" {
		return nil, stages.ParamErrorf("field", `field is empty: give the dotted path of the number, e.g. "value"`)
	}
	single, many := p.Input("score"), p.Inputs("scores")
	switch {
	case single != nil && len(many) > 0:
		return nil, stages.ParamErrorf("scores", "give score (one number against published) or scores (an order against published_values), not both")
	case single == nil && len(many) == 0:
		return nil, stages.ParamErrorf("score", `score is required: the instance whose number is checked (score = stage.insight_score.novelty["gpt-4o"], with published and tolerance), or scores for an order (scores = stage.liveideabench_score.average, with published_values and min_tau_b)`)
	case single != nil:
		return valueLayout(p, single, node, field, source)
	default:
		return orderLayout(p, many, node, field, source)
	}
}

// valueLayout lays out the value form: one node reading one number.
func valueLayout(p stages.Params, up *stages.Upstream, node, field, source string) ([]stages.Node, error) {
	for _, name := range []string{"published_values", "min_tau_b"} {
		if p.Has(name) {
			return nil, stages.ParamErrorf(name, "%s belongs to the order form (scores = every instance of a score stage); with score, give published and tolerance", name)
		}
	}
	for _, name := range []string{"published", "tolerance"} {
		if !p.Has(name) {
			return nil, stages.ParamErrorf(name, "%s is required with score: the published value and the largest |measured - published| that counts as reproduced (published = 0.61, tolerance = 0.05)", name)
		}
	}
	published, tol := p.Number("published"), p.Number("tolerance")
	if math.IsNaN(published) || math.IsInf(published, 0) {
		return nil, stages.ParamErrorf("published", "published = %v is not a number", published)
	}
	if !(tol >= 0) || math.IsInf(tol, 0) {
		return nil, stages.ParamErrorf("tolerance", "tolerance = %v must be a number 0 or more (0: the exact value)", tol)
	}
	idx, ok, err := pick(up, node, "score")
	if err != nil {
		return nil, err
	}
	if !ok {
		// The data this run covers has no such node (a subset without that
		// discipline): nothing to read, and the verdict says so.
		return []stages.Node{{Prepare: func([]stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				return stages.EncodeOutput(Verdict{Status: "missing", Published: &published, Tolerance: &tol, Score: up.Address, Node: node, Field: field, Source: source,
					Reason: noNode([]*stages.Upstream{up}, node)})
			}}, nil
		}}}, nil
	}
	return []stages.Node{{
		Deps:         []stages.Dep{{Input: "score", Index: idx}},
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				v := judge(in[0], up.Address, field, published, tol, source)
				v.Node = node
				if v.noField {
					// The score gives no number there: a wiring error
					// (validate refuses what it can see), not a verdict.
					return nil, &stages.FieldError{Address: stages.NodeAddress(in[0]), From: up.Address, Fields: []string{field}, Why: "the number checked"}
				}
				return stages.EncodeOutput(v)
			}}, nil
		},
	}}, nil
}

// pick returns the index of the node of up an expect reads: its only
// node, or the one labelled (or of the item) name. ok is false when name
// is given and up has no such node: not an error, since which nodes a
// score has can depend on the data (coverage_score has a node per
// discipline the ideas cover), but a missing verdict and a warning
// (LayoutWarnings).
func pick(up *stages.Upstream, name, param string) (idx int, ok bool, err error) {
	if name == "" {
		if len(up.Nodes) != 1 {
			return 0, false, stages.ParamErrorf(param, "%s (%s) has %d nodes; an expect checks one number of each instance: point it at an aggregate score, or set node to one of them (%s)", param, up.Address, len(up.Nodes), itemsOf(up))
		}
		return 0, true, nil
	}
	var found []int
	for i, n := range up.Nodes {
		if n.Label == name || n.Item == name {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		return 0, false, nil
	case 1:
		return found[0], true, nil
	default:
		return 0, false, stages.ParamErrorf("node", "node = %q names %d nodes of %s; an expect checks one number: point it at an aggregate score", name, len(found), up.Address)
	}
}

// noNode says that ups have no node name, and which nodes they have.
func noNode(ups []*stages.Upstream, name string) string {
	var keys []string
	for _, up := range ups {
		keys = append(keys, up.Key)
	}
	what := ups[0].Address
	if len(ups) > 1 {
		what = fmt.Sprintf("%s (%s)", stagesOf(ups), strings.Join(keys, ", "))
	}
	return fmt.Sprintf("%s has no node %q (its nodes: %s): the data this run covers has none, or node is misspelt", what, name, itemsOf(ups[0]))
}

// LayoutWarnings warns of a node the scores do not have: the verdict will
// be missing.
func (expectType) LayoutWarnings(inst *stages.Instance) []*stages.ParamError {
	name := inst.Params.String("node")
	if name == "" {
		return nil
	}
	ups := inst.Params.Inputs("scores")
	if up := inst.Params.Input("score"); up != nil {
		ups = append(ups, up)
	}
	var lacking []*stages.Upstream
	for _, up := range ups {
		if _, ok, err := pick(up, name, "node"); err == nil && !ok {
			lacking = append(lacking, up)
		}
	}
	if len(lacking) == 0 {
		return nil
	}
	return []*stages.ParamError{{Param: "node", Err: fmt.Errorf("%s; the verdict will be missing", noNode(lacking, name))}}
}

// itemsOf lists up to five of up's nodes (their labels, else their
// items), for an error.
func itemsOf(up *stages.Upstream) string {
	var out []string
	for _, n := range up.Nodes {
		if len(out) == 5 {
			out = append(out, "...")
			break
		}
		name := n.Label
		if name == "" {
			name = n.Item
		}
		out = append(out, fmt.Sprintf("%q", name))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// orderLayout lays out the order form: one node reading one number of
// every instance that has a published value.
func orderLayout(p stages.Params, ups []*stages.Upstream, node, field, source string) ([]stages.Node, error) {
	for _, name := range []string{"published", "tolerance"} {
		if p.Has(name) {
			return nil, stages.ParamErrorf(name, "%s belongs to the value form (score = one instance); with scores, give published_values and min_tau_b", name)
		}
	}
	if !p.Has("published_values") {
		return nil, stages.ParamErrorf("published_values", `published_values is required with scores: the published values by the instances' keys ({ "gpt-4o" = 7.33, ... })`)
	}
	if !p.Has("min_tau_b") {
		return nil, stages.ParamErrorf("min_tau_b", "min_tau_b is required with scores: the smallest Kendall's tau-b that counts as the published order (1: the same order; 0.8 allows a few swaps)")
	}
	minTau := p.Number("min_tau_b")
	if !(minTau >= -1 && minTau <= 1) {
		return nil, stages.ParamErrorf("min_tau_b", "min_tau_b = %v must be between -1 and 1", minTau)
	}
	published := p.NumberMap("published_values")
	for k, v := range published {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, stages.ParamErrorf("published_values", "published_values[%q] = %v is not a number", k, v)
		}
	}
	type row struct {
		key    string
		dep    stages.Dep       // Index -1: the instance has no such node
		absent *stages.Upstream // the instance without the node
	}
	var rows []row
	var unpublished, keys []string
	seen := map[string]string{}
	off := 0
	for _, up := range ups {
		if up.Key == "" {
			return nil, stages.ParamErrorf("scores", "scores (%s) is an instance without a key: an order compares instances by key, so point scores at a stage with for_each, or one that fans out over models", up.Address)
		}
		if prev, dup := seen[up.Key]; dup {
			return nil, stages.ParamErrorf("scores", "scores has two instances keyed %q (%s and %s): give one stage's instances", up.Key, prev, up.Address)
		}
		seen[up.Key] = up.Address
		keys = append(keys, up.Key)
		idx, found, err := pick(up, node, "scores")
		if err != nil {
			return nil, err
		}
		if _, ok := published[up.Key]; ok {
			r := row{key: up.Key, dep: stages.Dep{Input: "scores", Index: off + idx}}
			if !found {
				r.dep.Index, r.absent = -1, up
			}
			rows = append(rows, r)
		} else {
			unpublished = append(unpublished, up.Key)
		}
		off += len(up.Nodes)
	}
	if len(rows) < 2 {
		some := slices.Sorted(maps.Keys(published))
		if len(some) > 3 {
			some = append(some[:3], "...")
		}
		if len(keys) > 3 {
			keys = append(keys[:3], "...")
		}
		return nil, stages.ParamErrorf("published_values", "published_values shares %d key(s) with the instances of scores, and an order needs 2: its keys are the instances' keys (scores has %s; published_values has %s)", len(rows), strings.Join(keys, ", "), strings.Join(some, ", "))
	}
	var unrun []string
	for k := range published {
		if _, ok := seen[k]; !ok {
			unrun = append(unrun, k)
		}
	}
	slices.Sort(unrun)
	slices.Sort(unpublished)
	address := stagesOf(ups)
	var deps []stages.Dep
	var absent []*stages.Upstream
	for _, r := range rows {
		if r.dep.Index >= 0 {
			deps = append(deps, r.dep)
		} else {
			absent = append(absent, r.absent)
		}
	}
	return []stages.Node{{
		Deps:         deps,
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				o := &Order{MinTauB: minTau, Unpublished: unpublished, Unrun: unrun}
				next := 0
				for _, r := range rows {
					o.Rows = append(o.Rows, OrderRow{Key: r.key, Published: published[r.key]})
					if r.dep.Index < 0 {
						continue
					}
					x, ok, bad := read(in[next], field)
					if bad {
						return nil, &stages.FieldError{Address: stages.NodeAddress(in[next]), From: address, Fields: []string{field}, Why: "the number ranked"}
					}
					if ok {
						o.Rows[len(o.Rows)-1].Measured = &x
					}
					next++
				}
				v := judgeOrder(o, address, node, field, source)
				if len(absent) > 0 {
					v.Reason = noNode(absent, node)
				}
				return stages.EncodeOutput(v)
			}}, nil
		},
	}}, nil
}

// stagesOf names the stages ups are instances of (stage.x.y["k"] ->
// stage.x.y), in order, each once.
func stagesOf(ups []*stages.Upstream) string {
	var out []string
	for _, up := range ups {
		a := up.Address
		if up.Key != "" {
			if i := strings.LastIndex(a, "["); i > 0 {
				a = a[:i]
			}
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return strings.Join(out, ", ")
}

// read reads the number at field of in's output: ok when there is one;
// bad when the output has none there (a wiring error); neither when the
// node failed.
func read(in stages.In, field string) (x float64, ok, bad bool) {
	if in.Output == nil {
		return 0, false, false
	}
	var doc any
	if err := json.Unmarshal(in.Output, &doc); err != nil {
		return 0, false, true
	}
	x, ok = number(doc, field)
	return x, ok, !ok
}

// judgeOrder gives the order form's verdict over o's rows: tau-b between
// the measured and the published values, pass at min_tau_b or more. A row
// without a measured value makes the verdict missing: tau-b over the rest
// would be another claim than the one published.
func judgeOrder(o *Order, address, node, field, source string) Verdict {
	slices.SortStableFunc(o.Rows, func(a, b OrderRow) int {
		if c := cmp.Compare(b.Published, a.Published); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	v := Verdict{Order: o, Score: address, Node: node, Field: field, Source: source}
	var failed []string
	x, y := make([]float64, 0, len(o.Rows)), make([]float64, 0, len(o.Rows))
	for _, r := range o.Rows {
		if r.Measured == nil {
			failed = append(failed, r.Key)
			continue
		}
		x, y = append(x, *r.Measured), append(y, r.Published)
	}
	if len(failed) > 0 {
		v.Status, v.Reason = "missing", fmt.Sprintf("%d of %d rows have no value (failed or not run): %s", len(failed), len(o.Rows), strings.Join(failed, ", "))
		return v
	}
	tau, err := stats.KendallTauB(x, y)
	if err != nil {
		v.Status, v.Reason = "missing", fmt.Sprintf("Kendall's tau-b is undefined over the %d rows: the run's or the published values are all equal (%v)", len(o.Rows), err)
		return v
	}
	v.Measured = &tau
	v.Status = "drift"
	if tau >= o.MinTauB-1e-12 {
		v.Status = "pass"
	}
	return v
}

// judge compares the number at field of in's output with published.
func judge(in stages.In, address, field string, published, tol float64, source string) Verdict {
	v := Verdict{Published: &published, Tolerance: &tol, Score: address, Field: field, Source: source}
	if in.Output == nil {
		v.Status, v.Reason = "missing", address+" failed or was not run"
		return v
	}
	var doc any
	if err := json.Unmarshal(in.Output, &doc); err != nil {
		v.Status, v.Reason = "missing", fmt.Sprintf("decode %s: %v", address, err)
		return v
	}
	x, ok := number(doc, field)
	if !ok {
		v.Status, v.Reason, v.noField = "missing", fmt.Sprintf("%s has no number at %q", address, field), true
		return v
	}
	if c, ok := number(doc, "count"); ok && c == 0 && field == "value" {
		// A value over no item (a rate over no reference) measured
		// nothing: it must not pass for the published one.
		v.Status, v.Reason = "missing", fmt.Sprintf("%s is over 0 items: nothing was measured", address)
		return v
	}
	d := x - published
	v.Measured, v.Delta = &x, &d
	v.Status = "drift"
	// The tolerance is inclusive; a last-digit rounding of the published
	// value (0.766 for 0.7655) must not flip it, hence the epsilon.
	if math.Abs(d) <= tol+1e-12 {
		v.Status = "pass"
	}
	if field == "value" {
		lo, okLo := number(doc, "extra.ci_low")
		hi, okHi := number(doc, "extra.ci_high")
		if okLo && okHi {
			covers := lo <= published && published <= hi
			v.CILow, v.CIHigh, v.Covers = &lo, &hi, &covers
		}
		if c, ok := number(doc, "count"); ok {
			n := int(c)
			v.Count = &n
		}
	}
	return v
}

// number reads the number at a dotted path of decoded JSON.
func number(doc any, path string) (float64, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false
		}
		if cur, ok = m[part]; !ok {
			return 0, false
		}
	}
	f, ok := cur.(float64)
	return f, ok
}
