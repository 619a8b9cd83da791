package aggregate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// DefaultFields is value_field's default for per-item upstream types whose
// output shape is known: rank_ideas' target_rank (1 = the judge put the
// target paper first). Aggregate upstreams need no field (their PerItem is
// read).
var DefaultFields = map[string]string{
	"rank_ideas": "target_rank",
}

// itemValues is one upstream read as one value per item.
type itemValues struct {
	items   []string // items with a value, sorted
	values  map[string]float64
	missing int // items whose nodes failed or were skipped (or the upstream's own Missing)
	dropped int // items dropped upstream (e.g. too few references)
}

// isAggregate reports whether up is a single aggregate node (Item ""), read
// as a stages.Score.
func isAggregate(up *stages.Upstream) bool {
	return len(up.Nodes) == 1 && up.Nodes[0].Item == ""
}

// fieldFor returns the value field to read from up: the given one, else
// the known default of up's type. An aggregate upstream needs none.
func fieldFor(param, field string, up *stages.Upstream) (string, error) {
	if isAggregate(up) || field != "" {
		return field, nil
	}
	if f, ok := DefaultFields[up.Type]; ok {
		return f, nil
	}
	return "", stages.ParamErrorf(param, "%s is a per-item %s stage, whose numbers this stage cannot guess: set value_field to the dotted path of the number in each of its node outputs (e.g. value_field = \"scores.originality\")", up.Address, up.Type)
}

// readItems reads one upstream's nodes (ins, in node order, all from up)
// as one value per item; see the package doc.
func readItems(up *stages.Upstream, ins []stages.In, field string) (*itemValues, error) {
	iv := &itemValues{values: map[string]float64{}}
	if isAggregate(up) {
		if len(ins) != 1 || ins[0].Output == nil {
			return nil, fmt.Errorf("%s failed or was skipped, so there is nothing to aggregate", up.Address)
		}
		if stages.LacksField(ins[0].Output, "value") {
			return nil, stages.MissingField(ins[0], "a score's per-item values", "value")
		}
		var s stages.Score
		if err := json.Unmarshal(ins[0].Output, &s); err != nil {
			return nil, fmt.Errorf("%s: output is not a score: %w", up.Address, err)
		}
		if s.Count > 0 && len(s.PerItem) == 0 {
			return nil, fmt.Errorf("%s scored %d items but keeps no per-item values, so nothing can be resampled", up.Address, s.Count)
		}
		for it, v := range s.PerItem {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: item %q has value %v", up.Address, it, v)
			}
			iv.items = append(iv.items, it)
			iv.values[it] = v
		}
		sort.Strings(iv.items)
		iv.missing = s.Missing
		iv.dropped = int(s.Extra["dropped"])
		return iv, nil
	}
	type acc struct {
		sum            float64
		n              int
		missing, dropd bool
	}
	var order []string
	byItem := map[string]*acc{}
	for _, in := range ins {
		item := in.Node.Item
		a := byItem[item]
		if a == nil {
			a = &acc{}
			byItem[item] = a
			order = append(order, item)
		}
		if in.Output == nil {
			a.missing = true
			continue
		}
		v, dropped, err := nodeValue(in.Output, field)
		if ae := (*absentError)(nil); errors.As(err, &ae) {
			return nil, ae.missing(in)
		}
		if err != nil {
			return nil, fmt.Errorf("%s, item %q, slot %d: %w", up.Address, item, in.Node.Slot, err)
		}
		if dropped {
			a.dropd = true
			continue
		}
		a.sum += v
		a.n++
	}
	for _, item := range order {
		switch a := byItem[item]; {
		case a.dropd:
			iv.dropped++
		case a.missing:
			iv.missing++
		default:
			iv.items = append(iv.items, item)
			iv.values[item] = a.sum / float64(a.n)
		}
	}
	sort.Strings(iv.items)
	return iv, nil
}

// nodeValue reads the number at the dotted path field of one node output,
// or reports that the node dropped its item ("dropped": true at the top).
func nodeValue(out []byte, field string) (v float64, dropped bool, err error) {
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		return 0, false, fmt.Errorf("output is not JSON: %w", err)
	}
	if m, ok := doc.(map[string]any); ok && m["dropped"] == true {
		return 0, true, nil
	}
	x, err := lookup(doc, "value_field", field)
	if err != nil {
		return 0, false, err
	}
	f, ok := x.(float64)
	if !ok {
		return 0, false, fmt.Errorf("value_field %q holds %s, not a number", field, describe(x))
	}
	return f, false, nil
}

// lookup walks a dotted path through decoded JSON objects.
func lookup(doc any, param, path string) (any, error) {
	x := doc
	for i, part := range strings.Split(path, ".") {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s %q: %q is %s, not an object", param, path, strings.Join(strings.Split(path, ".")[:i], "."), describe(x))
		}
		x, ok = m[part]
		if !ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return nil, &absentError{param: param, path: path, part: part, has: keys}
		}
	}
	return x, nil
}

// absentError is a path whose member is not in the output.
type absentError struct {
	param, path, part string
	has               []string // the members the object has
}

func (e *absentError) Error() string {
	return fmt.Sprintf("%s %q: no field %q (the output has %s)", e.param, e.path, e.part, strings.Join(e.has, ", "))
}

// missing is the *stages.FieldError of node in lacking the path.
func (e *absentError) missing(in stages.In) error {
	return stages.MissingField(in, fmt.Sprintf("what %s names; the output has %s", e.param, strings.Join(e.has, ", ")), e.path)
}

func describe(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a number"
}

// statistic is a decoded statistic/p pair.
type statistic struct {
	name string  // mean, median, percentile
	p    float64 // percentile's p in [0, 100]
}

// fn returns the statistic as a function for stats.Bootstrap.
func (s statistic) fn() func([]float64) float64 {
	switch s.name {
	case "median":
		return stats.PercentileStat(50)
	case "percentile":
		return stats.PercentileStat(s.p)
	}
	return stats.MeanStat
}

// label is how outputs name the statistic: "mean", "median", "p30".
func (s statistic) label() string {
	if s.name == "percentile" {
		return "p" + strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.6f", s.p), "0"), ".")
	}
	return s.name
}

// statisticParams are the params that choose a statistic.
func statisticParams() []stages.Param {
	return []stages.Param{
		{Name: "statistic", Kind: stages.String, Default: "mean", Doc: `"mean", "median" or "percentile" (with p) of the per-item values; LiveIdeaBench's flexibility is percentile with p = 30`},
		{Name: "p", Kind: stages.Number, Doc: "the percentile, in [0, 100], for statistic = \"percentile\" (NumPy's linear interpolation)"},
		{Name: "value_field", Kind: stages.String, Default: "", Doc: "for a per-item upstream: dotted path of the number in each node's output (default: known per type, rank_ideas: target_rank); an aggregate upstream's per-item values need none"},
	}
}

func readStatistic(p stages.Params) (statistic, error) {
	s := statistic{name: p.String("statistic")}
	switch s.name {
	case "mean", "median":
		if p.Has("p") {
			return s, stages.ParamErrorf("p", "p only applies to statistic = \"percentile\" (statistic is %q)", s.name)
		}
	case "percentile":
		if !p.Has("p") {
			// Reported at statistic, which is written, so the error points
			// at a line; p is not.
			return s, stages.ParamErrorf("statistic", "statistic = \"percentile\" needs p, the percentile in [0, 100] (e.g. p = 30 for flexibility)")
		}
		s.p = p.Number("p")
		if math.IsNaN(s.p) || s.p < 0 || s.p > 100 {
			return s, stages.ParamErrorf("p", "p = %v is not in [0, 100]", s.p)
		}
	default:
		return s, stages.ParamErrorf("statistic", "statistic = %q is not one of \"mean\", \"median\", \"percentile\"", s.name)
	}
	return s, nil
}

// bootstrapParams are the params of a bootstrap (bootstrap and compare).
func bootstrapParams() []stages.Param {
	return []stages.Param{
		{Name: "resamples", Kind: stages.Int, Default: stats.DefaultResamples, Min: 100, Max: 100000, Doc: "bootstrap resamples (each draws the items with replacement)"},
		{Name: "seed", Kind: stages.Int, Default: 0, Min: 0, Max: math.MaxInt32, Doc: "seed of the resampling; the same seed gives the same interval"},
		{Name: "confidence", Kind: stages.Number, Default: stats.DefaultLevel, Doc: "confidence level of the interval, in (0, 1)"},
		{Name: "method", Kind: stages.String, Default: "percentile", Doc: `"percentile" (the 2.5 and 97.5% points of the resampled statistic) or "bca" (bias-corrected and accelerated: second-order accurate for skewed or bounded scores such as a mean of ranks in [0, 1]; SciPy's definition, ties counted half; needs 3 items, resampled values not all strictly on one side of the estimate, and a statistic that changes when an item is left out; for a percentile statistic keep "percentile", the jackknife BCa relies on is unreliable for quantiles)`},
	}
}

func readOptions(p stages.Params) (stats.Options, error) {
	o := stats.Options{Resamples: p.Int("resamples"), Seed: uint64(p.Int("seed")), Level: p.Number("confidence")}
	if !(o.Level > 0 && o.Level < 1) {
		return o, stages.ParamErrorf("confidence", "confidence = %v must be in (0, 1), e.g. 0.95", o.Level)
	}
	switch m := p.String("method"); m {
	case "percentile":
		o.Method = stats.PercentileMethod
	case "bca":
		o.Method = stats.BCa
	default:
		return o, stages.ParamErrorf("method", "method = %q is not one of \"percentile\", \"bca\"", m)
	}
	return o, nil
}

// column returns the values of items in order.
func (iv *itemValues) column() []float64 {
	out := make([]float64, len(iv.items))
	for i, it := range iv.items {
		out[i] = iv.values[it]
	}
	return out
}
