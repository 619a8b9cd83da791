package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

// Wiring checks: every stage type declares what its nodes give and what it
// reads of each input (stages.Schema). Build checks each instance's needs
// against its upstreams before anything is laid out, so a wiring whose
// upstream cannot give what the stage reads is an error at the input's
// attribute, naming the stage types and dataset formats that give it and
// the fix; validate refuses it instead of the run failing every item once
// the upstream was paid for. A need met by a dataset field some records
// lack (an IdeaBench target without an idea) is no error: Build counts the
// records without it, warns, and the plan says how many items will fail
// and why before any call.

// willFail is a need some items of an instance cannot meet: the items of
// its input whose dataset record lacks every one of the need's fields.
type willFail struct {
	input string   // the need's Input param: whose nodes of an item say it was dropped
	items []string // the items without the field, in dataset order
	why   string   // for plan: "dataset.targets has no "idea" for them (...)"
}

// datasetFields are the fields a dataset's records give, as its format
// declares them (nil when the records are whatever the file holds).
func (g *Graph) datasetFields(inst *Instance) []stages.Field {
	ds := g.Exp.Datasets[strings.TrimPrefix(inst.Address, "dataset.")]
	if ds == nil {
		return nil
	}
	fs, _, _ := datasets.FormatFields(ds.Format)
	var out []stages.Field
	for _, f := range fs {
		if strings.Contains(f.Name, "[]") {
			continue // a member of a list's objects, not a record field
		}
		out = append(out, stages.Field{Name: f.Name, Type: fieldType(f.Type), Optional: !f.Required, Doc: f.Doc})
	}
	return out
}

func fieldType(doc string) stages.FieldType {
	switch {
	case doc == "string":
		return stages.TextField
	case doc == "list of strings":
		return stages.TextsField
	case strings.HasPrefix(doc, "number"):
		return stages.NumberField
	case doc == "bool":
		return stages.BoolField
	case strings.HasPrefix(doc, "list of"):
		return stages.ObjectsField
	}
	return stages.ObjectField
}

// checkNeeds checks inst's needs (its schema's) against its upstreams. It
// returns an error per need no upstream node can meet, and a warning per
// need some dataset records cannot (noted in inst.willFail for the plan).
func (g *Graph) checkNeeds(inst *Instance) hcl.Diagnostics {
	sch, ok := stages.SchemaOf(inst.cfg.Type, inst.Params)
	if !ok {
		return nil
	}
	var diags hcl.Diagnostics
	for _, need := range sch.Needs {
		if need.Optional {
			continue // read when present: nothing fails without it
		}
		for _, up := range inst.upstreamsOf(need.Input) {
			from := up
			if need.Source {
				if up.Up.Source == nil {
					continue // Layout says what is wrong
				}
				from = g.byAddr[up.Up.Source.Address]
				if from == nil {
					continue
				}
			}
			if from.source {
				diags = append(diags, g.checkRecords(inst, need, up, from)...)
				continue
			}
			fsch, ok := stages.SchemaOf(from.cfg.Type, from.Params)
			if !ok || fsch.Open {
				continue
			}
			if fsch.GivesAny(need.Fields...) {
				if !givesAlways(&fsch, need.Fields) {
					// Only some of its nodes carry the field (a review's
					// score): which, the run tells.
					d := errAt(inst.cfg, need.Input, "%s reads %s%s from %s; %s (%s) gives it on some nodes only, so the nodes of %s reading the others will fail.%s",
						inst.Type, stages.QuoteOr(need.Fields), forText(need.Why), need.Input, from.Address, from.Type, inst.Block, fixText(need))
					d[0].Severity, d[0].Summary = hcl.DiagWarning, "Some nodes of "+inst.Block+" may fail"
					diags = append(diags, d...)
				}
				continue
			}
			diags = append(diags, g.needError(inst, need, up, from, fmt.Sprintf("%s (%s) gives %s", from.Address, from.Type, givesText(fsch.Gives)))...)
		}
	}
	return diags
}

// givesAlways reports whether a schema gives one of fields on every node
// (not only on some: a field marked Optional).
func givesAlways(s *stages.Schema, fields []string) bool {
	for _, n := range fields {
		top, _, _ := strings.Cut(n, ".")
		if f, ok := s.Field(top); ok && !f.Optional {
			return true
		}
	}
	return false
}

// upstreamsOf lists the instances an Input or Inputs param names.
func (inst *Instance) upstreamsOf(param string) []*Instance {
	if up := inst.inputs[param]; up != nil {
		return []*Instance{up}
	}
	var out []*Instance
	for _, u := range inst.Params.Inputs(param) {
		if up := inst.inputs[param+"\x00"+u.Address]; up != nil {
			out = append(out, up)
		}
	}
	return out
}

// checkRecords checks a need against the records of dataset ds, reached
// through inst's input up: an error when no record has the field, a
// warning (and a willFail for the plan) when some lack it.
func (g *Graph) checkRecords(inst *Instance, need stages.Need, up, ds *Instance) hcl.Diagnostics {
	var missing []string
	for _, ni := range ds.nodes {
		n := g.Nodes[ni]
		if !g.recordHas(ds, int(ni), n.output, need.Fields) {
			missing = append(missing, n.Spec.Item)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	where := ds.Address
	if format := g.datasetFormat(ds); format != "" {
		where += " (format " + format + ")"
	}
	if len(missing) == len(ds.nodes) {
		return g.needError(inst, need, up, ds, fmt.Sprintf("no record of %s has one", where))
	}
	why := fmt.Sprintf("%s has no %s for them", ds.Address, stages.QuoteOr(need.Fields))
	if need.Why != "" {
		why += " (" + need.Why + ")"
	}
	inst.willFail = append(inst.willFail, willFail{input: need.Input, items: missing, why: why})
	d := errAt(inst.cfg, need.Input, "%d of %d record(s) of %s have no %s, which %s reads%s through %s: their nodes will fail (%s).%s",
		len(missing), len(ds.nodes), where, stages.QuoteOr(need.Fields), inst.Type, forText(need.Why), need.Input, someItems(missing), fixText(need))
	d[0].Severity, d[0].Summary = hcl.DiagWarning, "Some items of "+inst.Block+" will fail"
	return d
}

// recordHas reports whether the record of dataset node ni has one of
// fields, scanning each record once per field and graph.
func (g *Graph) recordHas(ds *Instance, ni int, rec []byte, fields []string) bool {
	for _, f := range fields {
		k := recordField{node: ni, field: f}
		has, ok := g.hasField[k]
		if !ok {
			has = stages.HasField(rec, f)
			if g.hasField == nil {
				g.hasField = map[recordField]bool{}
			}
			g.hasField[k] = has
		}
		if has {
			return true
		}
	}
	return false
}

// recordField keys Graph.hasField: a dataset node and a field name.
type recordField struct {
	node  int
	field string
}

func (g *Graph) datasetFormat(ds *Instance) string {
	if d := g.Exp.Datasets[strings.TrimPrefix(ds.Address, "dataset.")]; d != nil {
		return d.Format
	}
	return ""
}

// needError is the error of a need from cannot meet, at inst's input
// attribute: what it reads, what from gives, who could give it and how.
func (g *Graph) needError(inst *Instance, need stages.Need, up, from *Instance, gives string) hcl.Diagnostics {
	what := fmt.Sprintf("each node of %s", need.Input)
	if need.Source {
		what = fmt.Sprintf("the dataset record of each item of %s (%s)", need.Input, up.Address)
	}
	d := errAt(inst.cfg, need.Input, "%s reads %s%s from %s; %s.%s%s",
		inst.Type, stages.QuoteOr(need.Fields), forText(need.Why), what, gives, feeders(inst, need), fixText(need))
	d[0].Summary = fmt.Sprintf("%s cannot read what %s gives", inst.Block, from.Address)
	return d
}

func forText(why string) string {
	if why == "" {
		return ""
	}
	return " (" + why + ")"
}

func fixText(need stages.Need) string {
	if need.Fix == "" {
		return ""
	}
	return " " + need.Fix
}

// feeders names what can meet need: the stage types (that the input
// accepts) whose outputs give one of its fields, and the dataset formats
// whose records declare one.
func feeders(inst *Instance, need stages.Need) string {
	var accepts []string
	for _, p := range inst.cfg.Type.Params() {
		if p.Name == need.Input {
			accepts = p.Accepts
		}
	}
	admits := func(t string) bool {
		if need.Source {
			return t == "dataset"
		}
		if len(accepts) == 0 {
			return true
		}
		for _, a := range accepts {
			if a == t {
				return true
			}
		}
		return false
	}
	var types []string
	if !need.Source {
		for _, name := range stages.Names() {
			t, _ := stages.Lookup(name)
			if !admits(name) {
				continue
			}
			if sch, ok := stages.SchemaOf(t, stages.WithDefaults(t, stages.Params{})); ok && !sch.Open && sch.GivesAny(need.Fields...) {
				types = append(types, name)
			}
		}
	}
	var formats []string
	if admits("dataset") {
		for _, f := range datasets.Formats() {
			fs, open, _ := datasets.FormatFields(f)
			if open {
				continue
			}
			for _, field := range fs {
				if containsString(need.Fields, field.Name) {
					formats = append(formats, f)
					break
				}
			}
		}
	}
	ds := fmt.Sprintf("a dataset whose records have %s", stages.QuoteOr(need.Fields))
	if len(formats) > 0 {
		ds += " (format " + orList(formats) + ", or a jsonl or csv file with that field)"
	}
	if need.Source {
		return fmt.Sprintf(" A dataset gives it when its records have %s%s.", stages.QuoteOr(need.Fields), strings.TrimPrefix(ds, "a dataset whose records have "+stages.QuoteOr(need.Fields)))
	}
	var parts []string
	if len(types) > 0 {
		parts = append(parts, "a stage of type "+orList(types))
	}
	if admits("dataset") {
		parts = append(parts, ds)
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(" Feed %s from %s.", need.Input, strings.Join(parts, ", or "))
}

func orList(ss []string) string {
	sort.Strings(ss)
	if len(ss) <= 2 {
		return strings.Join(ss, " or ")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " or " + ss[len(ss)-1]
}

// givesText lists fields for an error: their names, "nothing" for none.
func givesText(fs []stages.Field) string {
	if len(fs) == 0 {
		return "no fields"
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// someItems lists up to three items.
func someItems(items []string) string {
	if len(items) <= 3 {
		return "items " + strings.Join(items, ", ")
	}
	return fmt.Sprintf("items %s and %d more", strings.Join(items[:3], ", "), len(items)-3)
}

// willFailCounts is, per reason, how many items of inst the plan expects
// to fail for a missing dataset field: all those without it but the items
// whose nodes read an input the plan knows was dropped (a dropped target's
// nodes say so and do not fail). An item not laid out yet is counted
// unless its node of the need's input is known dropped.
func (w *walker) willFailCounts(inst *Instance) map[string]int {
	if len(inst.willFail) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, wf := range inst.willFail {
		n := 0
		for _, item := range wf.items {
			if !w.readsDropped(inst, wf.input, item) {
				n++
			}
		}
		if n > 0 {
			out[wf.why] += n
		}
	}
	return out
}

// readsDropped reports whether the plan knows item cannot fail for inst:
// every node of inst for item reads a dropped input, inst is laid out with
// no node for it (fluency pairs no single idea), or, before inst is laid
// out, its input's nodes for the item are dropped.
func (w *walker) readsDropped(inst *Instance, input, item string) bool {
	mine := inst.Up.ItemNodes(item)
	if len(mine) > 0 {
		for _, k := range mine {
			if !w.depDropped(inst.nodes[k]) {
				return false
			}
		}
		return true
	}
	if inst.laidOut && (inst.expander == nil || inst.expanded[item]) {
		return true // laid out with no node for the item: nothing reads it
	}
	up := inst.inputs[input]
	if up == nil || up.source {
		return false
	}
	for _, k := range up.Up.ItemNodes(item) {
		if st := &w.states[up.nodes[k]]; st.known && st.dropped {
			return true
		}
	}
	return false
}

// depDropped reports whether one of node i's inputs is known dropped.
func (w *walker) depDropped(i int32) bool {
	for _, d := range w.g.Nodes[i].Deps {
		if st := &w.states[d]; st.known && st.dropped {
			return true
		}
	}
	return false
}

// SchemaOf returns the schema the stage type of instance addr declares for
// the instance's params (what its nodes give and what it reads), and false
// for a dataset, an unknown address or a type that declares none.
func (g *Graph) SchemaOf(addr string) (stages.Schema, bool) {
	inst := g.byAddr[addr]
	if inst == nil || inst.source {
		return stages.Schema{}, false
	}
	return stages.SchemaOf(inst.cfg.Type, inst.Params)
}

// prepareError is how a node's failed Prepare reads in plans and runs: a
// missing field without the item (every item that lacks it is one reason,
// counted, not one line each; the node's address names the item), any
// other error as it is.
func prepareError(err error) string {
	var fe *stages.FieldError
	if errors.As(err, &fe) {
		return fe.Generic()
	}
	return err.Error()
}

// keepFields is what ProjectInputs cuts each input of inst down to: the top
// of every field its schema needs from it, by the Dep.Input a node names
// it with (the param, or for a Source need the dataset's address), and the
// drop convention. An input the schema needs nothing of keeps the drop
// fields alone.
func keepFields(t stages.Type, inst *Instance) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(input string, fields ...string) {
		if out[input] == nil {
			out[input] = map[string]bool{"dropped": true, "reason": true}
		}
		for _, f := range fields {
			top, _, _ := strings.Cut(f, ".")
			out[input][top] = true // AllFields ("*") keeps every field
		}
	}
	for _, p := range t.Params() {
		if p.Kind == stages.Input || p.Kind == stages.Inputs {
			add(p.Name)
		}
	}
	sch, _ := stages.SchemaOf(t, inst.Params)
	for _, n := range sch.Needs {
		if !n.Source {
			add(n.Input, n.Fields...)
			continue
		}
		for _, up := range inst.upstreamsOf(n.Input) {
			if up.Up.Source != nil {
				add(up.Up.Source.Address, n.Fields...)
			}
		}
	}
	return out
}

// projected is out cut down to the fields inst keeps of input (see
// keepFields); out itself when the graph does not project, for its own
// nodes (stages.Self) and for what is no JSON object.
func (inst *Instance) projected(input string, out []byte) []byte {
	if inst.keep == nil || input == stages.Self || out == nil {
		return out
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(out, &m) != nil || m == nil {
		return out
	}
	keep := inst.keep[input]
	if keep[stages.AllFields] {
		return out
	}
	for k := range m {
		if !keep[k] {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return out
	}
	return b
}
