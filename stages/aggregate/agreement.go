package aggregate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"strconv"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// agreementType is the agreement stage: how far judges (or one judge under
// several permutations) agree.
type agreementType struct{}

func (agreementType) Name() string    { return "agreement" }
func (agreementType) Version() string { return "1" }

func (agreementType) Params() []stages.Param {
	return []stages.Param{
		{Name: "judgements", Kind: stages.Inputs, Required: true, Doc: "the judging stage instances: one (coders = its slots, e.g. rank_ideas' permutations, or a coder_field) or several (coders = the instances, e.g. rank_ideas by judge A and by judge B)"},
		{Name: "coders", Kind: stages.String, Default: "auto", Doc: `who the coders are: "slot" (each node slot of an item: permutations, samples), "instance" (each listed instance), "field" (the value at coder_field, e.g. a panel's judge name), "keys" (value_field holds an object of numbers, one per coder: {"judge-a": 7, "judge-b": 5}); "auto": field when coder_field is set, else slot for one instance and instance for several`},
		{Name: "coder_field", Kind: stages.String, Default: "", Doc: `dotted path of the coder's name in each node's output (e.g. "judge"), for coders = "field"`},
		{Name: "value_field", Kind: stages.String, Default: "", Doc: "dotted path of the number in each node's output (default: known per type, rank_ideas: target_rank); aggregate score upstreams (coders = instance) need none"},
		{Name: "metric", Kind: stages.String, Default: "ordinal", Doc: `Krippendorff's alpha metric: "nominal", "ordinal", "interval" or "ratio"; ordinal by default because ranks and rating scales are ordered but not evenly spaced`},
		{Name: "kappa_weights", Kind: stages.String, Default: "quadratic", Doc: `Cohen's kappa weights: "none" (Cohen 1960, for categories), "linear" or "quadratic" (for ordered scores, where a near miss is a lesser disagreement)`},
	}
}

// AgreementOutput is the agreement stage's output. It is a stages.Score so a
// report column can show alpha:
//
//   - Value: Krippendorff's alpha (Metric) over every unit two or more
//     coders judged; Count: those units (0 when alpha is undefined, see
//     Notes); Missing: judgements whose node failed or was skipped;
//   - Extra: "alpha" (as Value), "kappa" and "tau_b" (the mean over coder
//     pairs of Cohen's kappa and Kendall's tau-b on the units both judged,
//     over the pairs where they are defined), "order_tau_b" (rank_ideas
//     with coders = slot: the mean tau-b between the full orderings of
//     two permutations of one item, over items and permutation pairs),
//     "coders", "units" (units with any judgement) and "dropped" (nodes
//     whose item was dropped upstream). A statistic that is undefined for
//     the data is absent from Extra and explained in Notes.
//
// Coders lists the coders' names; Pairs has one entry per coder pair.
type AgreementOutput struct {
	stages.Score
	Metric  string      `json:"metric"`
	Weights string      `json:"kappa_weights"`
	Coders  []string    `json:"coders"`
	Pairs   []CoderPair `json:"pairs"`
	Notes   []string    `json:"notes,omitempty"`
}

// CoderPair is the agreement of two coders on the units both judged. Kappa
// and TauB are null when undefined for those units (fewer than two, or a
// constant coder).
type CoderPair struct {
	A      string   `json:"a"`
	B      string   `json:"b"`
	Shared int      `json:"shared"`
	Kappa  *float64 `json:"kappa"`
	TauB   *float64 `json:"tau_b"`
}

type agreementConfig struct {
	ups         []*stages.Upstream
	offsets     []int
	fields      []string
	coders      string
	coderField  string
	metric      stats.Metric
	metricName  string
	weights     stats.Weights
	weightsName string
}

func readAgreement(p stages.Params) (*agreementConfig, error) {
	c := &agreementConfig{ups: p.Inputs("judgements"), coderField: p.String("coder_field"), metricName: p.String("metric"), weightsName: p.String("kappa_weights")}
	if len(c.ups) == 0 {
		return nil, stages.ParamErrorf("judgements", "judgements needs at least one judging stage instance")
	}
	c.coders = p.String("coders")
	switch c.coders {
	case "auto":
		switch {
		case c.coderField != "":
			c.coders = "field"
		case len(c.ups) == 1:
			c.coders = "slot"
		default:
			c.coders = "instance"
		}
	case "slot", "instance", "field", "keys":
	default:
		return nil, stages.ParamErrorf("coders", "coders = %q is not one of \"auto\", \"slot\", \"instance\", \"field\"", c.coders)
	}
	if (c.coders == "field") != (c.coderField != "") {
		return nil, stages.ParamErrorf("coder_field", "coder_field names the coders exactly when coders = \"field\" (coders is %q, coder_field %q)", c.coders, c.coderField)
	}
	if c.coders == "instance" && len(c.ups) < 2 {
		return nil, stages.ParamErrorf("coders", "coders = \"instance\" needs at least two judging instances, got one")
	}
	metrics := map[string]stats.Metric{"nominal": stats.NominalMetric, "ordinal": stats.OrdinalMetric, "interval": stats.IntervalMetric, "ratio": stats.RatioMetric}
	m, ok := metrics[c.metricName]
	if !ok {
		return nil, stages.ParamErrorf("metric", "metric = %q is not one of \"nominal\", \"ordinal\", \"interval\", \"ratio\"", c.metricName)
	}
	c.metric = m
	weights := map[string]stats.Weights{"none": stats.Unweighted, "linear": stats.Linear, "quadratic": stats.Quadratic}
	w, ok := weights[c.weightsName]
	if !ok {
		return nil, stages.ParamErrorf("kappa_weights", "kappa_weights = %q is not one of \"none\", \"linear\", \"quadratic\"", c.weightsName)
	}
	c.weights = w
	c.offsets = make([]int, len(c.ups)+1)
	for i, u := range c.ups {
		c.offsets[i+1] = c.offsets[i] + len(u.Nodes)
		if isAggregate(u) && c.coders != "instance" {
			return nil, stages.ParamErrorf("judgements", "%s is an aggregate score: its per-item values can only be a coder each (coders = \"instance\", with another instance to agree with)", u.Address)
		}
		f, err := fieldFor("judgements", p.String("value_field"), u)
		if err != nil {
			return nil, err
		}
		c.fields = append(c.fields, f)
	}
	return c, nil
}

func (agreementType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	c, err := readAgreement(inst.Params)
	if err != nil {
		return nil, err
	}
	deps := make([]stages.Dep, c.offsets[len(c.ups)])
	for i := range deps {
		deps[i] = stages.Dep{Input: "judgements", Index: i}
	}
	return []stages.Node{{
		Deps:         deps,
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				out, err := c.compute(in)
				if err != nil {
					return nil, err
				}
				return stages.EncodeOutput(out)
			}}, nil
		},
	}}, nil
}

// judgements is the (unit, coder) -> value table being filled.
type judgements struct {
	units, coders []string
	unitIx        map[string]int
	coderIx       map[string]int
	value         map[[2]int]float64
}

func (j *judgements) add(unit, coder string, v float64) error {
	u, ok := j.unitIx[unit]
	if !ok {
		u = len(j.units)
		j.unitIx[unit] = u
		j.units = append(j.units, unit)
	}
	c := j.coder(coder)
	if _, dup := j.value[[2]int{u, c}]; dup {
		return fmt.Errorf("coder %q judged unit %q twice; with several judgements per item (samples) choose coders so that each unit has one per coder", coder, unit)
	}
	j.value[[2]int{u, c}] = v
	return nil
}

// sortCoders orders the coders by name (named coders: a panel's judges
// appear in whatever order their nodes come).
func (j *judgements) sortCoders() {
	old := j.coders
	j.coders = slices.Sorted(slices.Values(old))
	for i, name := range j.coders {
		j.coderIx[name] = i
	}
	value := make(map[[2]int]float64, len(j.value))
	for k, v := range j.value {
		value[[2]int{k[0], j.coderIx[old[k[1]]]}] = v
	}
	j.value = value
}

func (j *judgements) coder(name string) int {
	c, ok := j.coderIx[name]
	if !ok {
		c = len(j.coders)
		j.coderIx[name] = c
		j.coders = append(j.coders, name)
	}
	return c
}

// rankOrder is what order_tau_b reads of a rank_ideas output: the letters
// best first and what each letter stood for ("target", "idea I"), so two
// permutations' orderings can be compared on what was ranked.
type rankOrder struct {
	Order  []string          `json:"order"`
	Labels map[string]string `json:"labels"`
}

func (c *agreementConfig) compute(in []stages.In) (*AgreementOutput, error) {
	j := &judgements{unitIx: map[string]int{}, coderIx: map[string]int{}, value: map[[2]int]float64{}}
	instNames := names(c.ups)
	missing, dropped := 0, 0
	orders := map[string][][]string{} // unit -> orderings (rank_ideas, coders = slot)
	// With instances as coders, a unit is an item's slot when any instance
	// has several nodes per item (judge A and judge B under the same
	// permutations): the same permutation shows both the same order.
	slotted := false
	for _, u := range c.ups {
		seen := map[string]bool{}
		for _, n := range u.Nodes {
			slotted = slotted || seen[n.Item]
			seen[n.Item] = true
		}
	}
	for i, u := range c.ups {
		ins := in[c.offsets[i]:c.offsets[i+1]]
		if isAggregate(u) {
			iv, err := readItems(u, ins, "")
			if err != nil {
				return nil, err
			}
			j.coder(instNames[i])
			for _, it := range iv.items {
				if err := j.add(it, instNames[i], iv.values[it]); err != nil {
					return nil, err
				}
			}
			missing += iv.missing
			dropped += iv.dropped
			continue
		}
		for _, x := range ins {
			unit := x.Node.Item
			if c.coders != "instance" && len(c.ups) > 1 {
				unit = instNames[i] + ": " + unit
			}
			if (c.coders == "instance" || c.coders == "keys") && slotted {
				unit += " / slot " + strconv.Itoa(x.Node.Slot)
			}
			coder := ""
			switch c.coders {
			case "slot":
				coder = "slot " + strconv.Itoa(x.Node.Slot)
			case "instance":
				coder = instNames[i]
			}
			if x.Output == nil {
				missing++
				if coder != "" {
					j.coder(coder)
				}
				continue
			}
			if c.coders == "keys" {
				byCoder, drop, err := nodeValues(x.Output, c.fields[i])
				if ae := (*absentError)(nil); errors.As(err, &ae) {
					return nil, ae.missing(x)
				}
				if err != nil {
					return nil, fmt.Errorf("%s, item %q, slot %d: %w", u.Address, x.Node.Item, x.Node.Slot, err)
				}
				if drop {
					dropped++
				}
				for _, name := range slices.Sorted(maps.Keys(byCoder)) {
					if err := j.add(unit, name, byCoder[name]); err != nil {
						return nil, fmt.Errorf("%s: %w", u.Address, err)
					}
				}
				continue
			}
			v, drop, err := nodeValue(x.Output, c.fields[i])
			if ae := (*absentError)(nil); errors.As(err, &ae) {
				return nil, ae.missing(x)
			}
			if err != nil {
				return nil, fmt.Errorf("%s, item %q, slot %d: %w", u.Address, x.Node.Item, x.Node.Slot, err)
			}
			if drop {
				dropped++
				continue
			}
			if c.coders == "field" {
				coder, err = coderName(x.Output, c.coderField)
				if ae := (*absentError)(nil); errors.As(err, &ae) {
					return nil, ae.missing(x)
				}
				if err != nil {
					return nil, fmt.Errorf("%s, item %q, slot %d: %w", u.Address, x.Node.Item, x.Node.Slot, err)
				}
			}
			if err := j.add(unit, coder, v); err != nil {
				return nil, fmt.Errorf("%s: %w", u.Address, err)
			}
			if c.coders == "slot" && u.Type == "rank_ideas" {
				var r rankOrder
				if err := json.Unmarshal(x.Output, &r); err != nil {
					return nil, fmt.Errorf("%s, item %q: %w", u.Address, x.Node.Item, err)
				}
				ids := make([]string, len(r.Order))
				for k, letter := range r.Order {
					ids[k] = r.Labels[letter]
				}
				orders[unit] = append(orders[unit], ids)
			}
		}
	}

	if c.coders == "field" || c.coders == "keys" {
		j.sortCoders()
	}
	out := &AgreementOutput{Metric: c.metricName, Weights: c.weightsName, Coders: j.coders, Pairs: []CoderPair{}}
	out.Missing = missing
	out.Extra = map[string]float64{"coders": float64(len(j.coders)), "units": float64(len(j.units)), "dropped": float64(dropped)}
	data := make([][]float64, len(j.coders))
	for ci := range data {
		data[ci] = make([]float64, len(j.units))
		for ui := range data[ci] {
			v, ok := j.value[[2]int{ui, ci}]
			if !ok {
				v = math.NaN()
			}
			data[ci][ui] = v
		}
	}
	pairable := 0
	for ui := range j.units {
		m := 0
		for ci := range data {
			if !math.IsNaN(data[ci][ui]) {
				m++
			}
		}
		if m >= 2 {
			pairable++
		}
	}
	if len(j.coders) < 2 || len(j.units) == 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("alpha undefined: %d coders and %d units; agreement needs two coders judging the same units", len(j.coders), len(j.units)))
	} else if alpha, err := stats.KrippendorffAlpha(data, c.metric); err != nil {
		if !errors.Is(err, stats.ErrUndefined) {
			return nil, err
		}
		out.Notes = append(out.Notes, "alpha undefined: "+err.Error())
	} else {
		out.Value, out.Count = alpha, pairable
		out.Extra["alpha"] = alpha
	}

	var kappas, taus []float64
	for a := range j.coders {
		for b := a + 1; b < len(j.coders); b++ {
			var xa, xb []float64
			for ui := range j.units {
				if !math.IsNaN(data[a][ui]) && !math.IsNaN(data[b][ui]) {
					xa, xb = append(xa, data[a][ui]), append(xb, data[b][ui])
				}
			}
			p := CoderPair{A: j.coders[a], B: j.coders[b], Shared: len(xa)}
			if len(xa) >= 2 {
				if k, err := stats.CohenKappa(xa, xb, c.weights); err == nil {
					p.Kappa = &k
					kappas = append(kappas, k)
				}
				if t, err := stats.KendallTauB(xa, xb); err == nil {
					p.TauB = &t
					taus = append(taus, t)
				}
			}
			out.Pairs = append(out.Pairs, p)
		}
	}
	meanInto(out, "kappa", kappas, "Cohen's kappa")
	meanInto(out, "tau_b", taus, "Kendall's tau-b")

	if len(orders) > 0 {
		var ts []float64
		for _, unit := range slices.Sorted(maps.Keys(orders)) {
			os := orders[unit]
			for a := range os {
				for b := a + 1; b < len(os); b++ {
					if t, err := stats.KendallTauOrders(os[a], os[b]); err == nil {
						ts = append(ts, t)
					}
				}
			}
		}
		meanInto(out, "order_tau_b", ts, "order tau-b (between permutations' orderings)")
	}
	return out, nil
}

// meanInto sets Extra[key] to the mean of vs, or notes that it is undefined.
func meanInto(out *AgreementOutput, key string, vs []float64, what string) {
	if len(vs) == 0 {
		out.Notes = append(out.Notes, what+" undefined for every pair (fewer than two shared units, or a constant coder)")
		return
	}
	m, _ := stats.Mean(vs)
	out.Extra[key] = m
}

// nodeValues reads the object of numbers at the dotted path field (coder
// name -> value; a null value is a missing judgement), or reports that the
// node dropped its item.
func nodeValues(out []byte, field string) (map[string]float64, bool, error) {
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, false, fmt.Errorf("output is not JSON: %w", err)
	}
	if m, ok := doc.(map[string]any); ok && m["dropped"] == true {
		return nil, true, nil
	}
	x, err := lookup(doc, "value_field", field)
	if err != nil {
		return nil, false, err
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("value_field %q holds %s; coders = \"keys\" needs an object of numbers, one per coder", field, describe(x))
	}
	vals := make(map[string]float64, len(m))
	for k, v := range m {
		switch f := v.(type) {
		case float64:
			vals[k] = f
		case nil:
		default:
			return nil, false, fmt.Errorf("value_field %q: coder %q has %s, not a number", field, k, describe(v))
		}
	}
	return vals, false, nil
}

// coderName reads the coder's name at path: a string, or a number.
func coderName(out []byte, path string) (string, error) {
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		return "", err
	}
	x, err := lookup(doc, "coder_field", path)
	if err != nil {
		return "", err
	}
	switch v := x.(type) {
	case string:
		return v, nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("coder_field %q holds %s, not a name", path, describe(x))
}
