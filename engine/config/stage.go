package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

// InstanceAddress formats the address of one instance of a stage block.
func InstanceAddress(block, key string) string {
	if key == "" {
		return block
	}
	return block + "[" + strconv.Quote(key) + "]"
}

// inputValue is an Input param as written: one reference, or a stage with
// several instances (keyed), which makes the stage fan out over those keys.
type inputValue struct {
	single *InputRef
	multi  map[string]InputRef
}

// expandStage turns one stage (or report) block into its instances.
//
// With for_each, there is one instance per key, and each.key / each.value are
// in scope. Without it, a stage whose Input param points at a stage with
// several instances fans out over those instances' keys (generate per model ->
// rank per model), so a pipeline reads the way the DESIGN example does.
func (l *loader) expandStage(d *decl) {
	if d.content == nil {
		return
	}
	type keyed struct {
		key  string
		each map[string]cty.Value
	}
	var keys []keyed
	if d.forEach != nil {
		fe, diags := d.forEach.Expr.Value(l.values.context(nil))
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			return
		}
		ks, ok := forEachKeys(fe)
		if !ok {
			l.errorf(d.forEach.Expr.Range().Ptr(), "Wrong type for for_each",
				"for_each must be a map, an object or a set of strings; got %s. For example: for_each = { for m in [model.a, model.b] : m.name => m }.", friendly(fe))
			return
		}
		for _, k := range ks {
			if err := datasets.CheckID(k.key); err != nil {
				// A key is part of every node address of its instance, as an item id is.
				l.errorf(d.forEach.Expr.Range().Ptr(), "Invalid for_each key", "for_each key: %s.", strings.Replace(err.Error(), "item id", "instance key", 1))
				return
			}
			v := k.value
			keys = append(keys, keyed{key: k.key, each: map[string]cty.Value{"key": cty.StringVal(k.key), "value": v}})
		}
		if len(keys) == 0 {
			l.errorf(d.forEach.Expr.Range().Ptr(), "Empty for_each", "for_each is empty, so this stage would have no instances. Give it at least one element.")
			return
		}
	} else {
		keys = []keyed{{}}
	}

	var instances []*StageInstance
	for _, k := range keys {
		params, inputs, ranges, ok := l.decodeParams(d, k.each)
		if !ok {
			continue
		}
		fan := l.fanOutKeys(d, inputs, k.each != nil)
		if fan == nil {
			inst := l.newInstance(d, k.key, params, inputs, ranges, "")
			instances = append(instances, inst)
			continue
		}
		for _, fk := range fan {
			instances = append(instances, l.newInstance(d, fk, params, inputs, ranges, fk))
		}
	}
	l.exp.Stages = append(l.exp.Stages, instances...)

	// Publish the stage's value for later references.
	var val cty.Value
	if len(instances) == 1 && instances[0].Key == "" {
		val = instanceObject(instances[0])
	} else {
		m := map[string]cty.Value{}
		for _, in := range instances {
			m[in.Key] = instanceObject(in)
		}
		val = objectOrEmpty(m)
	}
	if d.kind == "stage" {
		t := d.stageType.Name()
		if l.values.stage[t] == nil {
			l.values.stage[t] = map[string]cty.Value{}
		}
		l.values.stage[t][d.name] = val
	}
}

func instanceObject(in *StageInstance) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(in.Address), "key": cty.StringVal(in.Key), "type": cty.StringVal(in.Type.Name()),
	})
}

func (l *loader) newInstance(d *decl, key string, params stages.Params, inputs map[string]inputValue, ranges map[string]hcl.Range, fanKey string) *StageInstance {
	inst := &StageInstance{
		Address: InstanceAddress(d.addr, key), Block: d.addr, Type: d.stageType, Key: key,
		Params: stages.Params{}, ParamRanges: ranges, DeclRange: d.declRange,
	}
	for k, v := range params {
		inst.Params[k] = v
	}
	seen := map[string]bool{}
	addDep := func(a string) {
		if !seen[a] {
			seen[a] = true
			inst.Deps = append(inst.Deps, a)
		}
	}
	for _, p := range d.stageType.Params() {
		iv, ok := inputs[p.Name]
		if !ok {
			continue
		}
		switch p.Kind {
		case stages.Input:
			ref := iv.single
			if ref == nil {
				r := iv.multi[fanKey]
				ref = &r
			}
			inst.Params[p.Name] = *ref
			addDep(ref.Address)
		}
	}
	for _, p := range d.stageType.Params() {
		if refs, ok := inst.Params[p.Name].([]InputRef); ok {
			for _, r := range refs {
				addDep(r.Address)
			}
		}
	}
	return inst
}

// fanOutKeys returns the instance keys a stage without for_each fans out over,
// or nil when it has a single instance.
func (l *loader) fanOutKeys(d *decl, inputs map[string]inputValue, hasForEach bool) []string {
	var keys []string
	var from string
	for _, p := range d.stageType.Params() {
		iv, ok := inputs[p.Name]
		if !ok || iv.multi == nil {
			continue
		}
		ks := slices.Sorted(maps.Keys(iv.multi))
		rng := iv.multi[ks[0]].Range
		if hasForEach {
			l.errorf(&rng, fmt.Sprintf("%s refers to a stage with several instances", p.Name),
				"Inside for_each, pick one instance by key, e.g. %s = stage.TYPE.NAME[each.key].", p.Name)
			return nil
		}
		if keys == nil {
			keys, from = ks, p.Name
			continue
		}
		if strings.Join(keys, "\x00") != strings.Join(ks, "\x00") {
			l.errorf(&rng, "Inputs fan out over different keys",
				"%s has instances %v but %s has %v; a stage fans out over one set of keys. Use for_each and index each input with each.key.",
				p.Name, ks, from, keys)
			return nil
		}
	}
	return keys
}

type forEachKey struct {
	key   string
	value cty.Value
}

func forEachKeys(v cty.Value) ([]forEachKey, bool) {
	if v.IsNull() || !v.IsWhollyKnown() {
		return nil, false
	}
	ty := v.Type()
	var out []forEachKey
	switch {
	case ty.IsMapType() || ty.IsObjectType():
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out = append(out, forEachKey{key: k.AsString(), value: ev})
		}
	case ty.IsSetType() || ty.IsListType() || ty.IsTupleType():
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			s, err := convert.Convert(ev, cty.String)
			if err != nil || s.IsNull() {
				return nil, false
			}
			out = append(out, forEachKey{key: s.AsString(), value: s})
		}
	default:
		return nil, false
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, true
}

func friendly(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	return v.Type().FriendlyName()
}

// decodeParams evaluates a stage body's params into typed Go values.
func (l *loader) decodeParams(d *decl, each map[string]cty.Value) (stages.Params, map[string]inputValue, map[string]hcl.Range, bool) {
	attrs := d.content.Attributes
	params := stages.Params{}
	inputs := map[string]inputValue{}
	ranges := map[string]hcl.Range{}
	before := len(l.diags.Errs())
	for _, p := range d.stageType.Params() {
		a, set := attrs[p.Name]
		if set {
			ranges[p.Name] = a.Expr.Range()
		}
		if !set {
			if p.Default != nil {
				params[p.Name] = p.Default
			}
			continue
		}
		switch p.Kind {
		case stages.String, stages.Template:
			if s, ok := l.str(attrs, p.Name, each); ok {
				params[p.Name] = s
				if p.Kind == stages.Template {
					l.noteTemplateFile(a, s)
				}
			}
		case stages.Int:
			if n, ok := l.param(attrs, p, each); ok {
				params[p.Name] = n
			}
		case stages.Number:
			if f, ok := l.float(attrs, p.Name, each); ok {
				params[p.Name] = f
			}
		case stages.Bool:
			if b, ok := l.boolean(attrs, p.Name, each); ok {
				params[p.Name] = b
			}
		case stages.StringList:
			if s, ok := l.strings(attrs, p.Name, each); ok {
				params[p.Name] = s
			}
		case stages.StringMap:
			if m, ok := l.stringMapParam(attrs, p.Name, each); ok {
				params[p.Name] = m
			}
		case stages.NumberMap:
			if m, ok := l.numberMapParam(attrs, p.Name, each); ok {
				params[p.Name] = m
			}
		case stages.ModelRef:
			if m := l.modelParam(a, each); m != nil {
				params[p.Name] = m
			}
		case stages.ModelList:
			if ms := l.modelListParam(a, each); ms != nil {
				params[p.Name] = ms
			}
		case stages.QualityRef:
			v, _ := l.eval(attrs, p.Name, each)
			addr, ok := refOf(v)
			if !ok || !strings.HasPrefix(addr, "quality.") {
				l.refKindError(a, "a quality reference", "quality.novelty", addr)
				continue
			}
			params[p.Name] = l.exp.Qualities[strings.TrimPrefix(addr, "quality.")]
		case stages.Input:
			v, _ := l.eval(attrs, p.Name, each)
			if iv, ok := l.inputParam(a, v, p); ok {
				inputs[p.Name] = iv
			}
		case stages.Inputs:
			v, _ := l.eval(attrs, p.Name, each)
			if refs, ok := l.inputsParam(a, v, p); ok {
				params[p.Name] = refs
			}
		}
	}
	return params, inputs, ranges, len(l.diags.Errs()) == before
}

func (l *loader) refKindError(a *hcl.Attribute, want, example, got string) {
	if got == "" {
		got = "a value that is not a reference"
	}
	l.errorf(a.Expr.Range().Ptr(), fmt.Sprintf("Wrong type for %s", a.Name),
		"%s must be %s (e.g. %s = %s); got %s.", a.Name, want, a.Name, example, got)
}

func (l *loader) modelParam(a *hcl.Attribute, each map[string]cty.Value) *stages.Model {
	v, _ := l.eval(hcl.Attributes{a.Name: a}, a.Name, each)
	addr, ok := refOf(v)
	if !ok || !strings.HasPrefix(addr, "model.") {
		l.refKindError(a, "a model reference", "model.gpt4o", addr)
		return nil
	}
	return l.exp.Models[strings.TrimPrefix(addr, "model.")]
}

func (l *loader) modelListParam(a *hcl.Attribute, each map[string]cty.Value) []*stages.Model {
	v, _ := l.eval(hcl.Attributes{a.Name: a}, a.Name, each)
	if v.IsNull() || !(v.Type().IsTupleType() || v.Type().IsListType() || v.Type().IsSetType() || v.Type().IsObjectType() || v.Type().IsMapType()) {
		l.refKindError(a, "a list of model references", "[model.a, model.b]", friendly(v))
		return nil
	}
	var out []*stages.Model
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		addr, ok := refOf(ev)
		if !ok || !strings.HasPrefix(addr, "model.") {
			l.refKindError(a, "a list of model references", "[model.a, model.b]", "an element that is "+orText(addr, friendly(ev)))
			return nil
		}
		out = append(out, l.exp.Models[strings.TrimPrefix(addr, "model.")])
	}
	return out
}

func orText(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func acceptsText(p stages.Param) string {
	if len(p.Accepts) == 0 {
		return "a dataset or stage reference"
	}
	var parts []string
	for _, t := range p.Accepts {
		if t == "dataset" {
			parts = append(parts, "dataset.NAME")
		} else {
			parts = append(parts, "stage."+t+".NAME")
		}
	}
	return "a reference to " + strings.Join(parts, " or ")
}

// checkAccepts verifies that an input points at a stage type the param accepts.
func (l *loader) checkAccepts(a *hcl.Attribute, p stages.Param, addr string) bool {
	if len(p.Accepts) == 0 {
		return true
	}
	kind := "dataset"
	if strings.HasPrefix(addr, "stage.") {
		kind = strings.Split(addr, ".")[1]
	}
	for _, t := range p.Accepts {
		if t == kind {
			return true
		}
	}
	l.refKindError(a, acceptsText(p), exampleRef(p), addr)
	return false
}

func exampleRef(p stages.Param) string {
	if len(p.Accepts) == 0 || p.Accepts[0] == "dataset" {
		return "dataset.targets"
	}
	return "stage." + p.Accepts[0] + ".main"
}

func (l *loader) inputParam(a *hcl.Attribute, v cty.Value, p stages.Param) (inputValue, bool) {
	if addr, ok := refOf(v); ok {
		if !strings.HasPrefix(addr, "dataset.") && !strings.HasPrefix(addr, "stage.") {
			l.refKindError(a, acceptsText(p), exampleRef(p), addr)
			return inputValue{}, false
		}
		if !l.checkAccepts(a, p, addr) {
			return inputValue{}, false
		}
		return inputValue{single: &InputRef{Address: addr, Range: a.Expr.Range()}}, true
	}
	if !v.IsNull() && (v.Type().IsObjectType() || v.Type().IsMapType()) && v.LengthInt() > 0 {
		multi := map[string]InputRef{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			addr, ok := refOf(ev)
			if !ok || !strings.HasPrefix(addr, "stage.") {
				l.refKindError(a, acceptsText(p), exampleRef(p), friendly(v))
				return inputValue{}, false
			}
			if !l.checkAccepts(a, p, addr) {
				return inputValue{}, false
			}
			multi[k.AsString()] = InputRef{Address: addr, Range: a.Expr.Range()}
		}
		return inputValue{multi: multi}, true
	}
	l.refKindError(a, acceptsText(p), exampleRef(p), friendly(v))
	return inputValue{}, false
}

// inputsParam flattens a list of references (each possibly a stage with
// several instances) into instance references, in order.
func (l *loader) inputsParam(a *hcl.Attribute, v cty.Value, p stages.Param) ([]InputRef, bool) {
	var out []InputRef
	add := func(ev cty.Value) bool {
		iv, ok := l.inputParam(a, ev, p)
		if !ok {
			return false
		}
		if iv.single != nil {
			out = append(out, *iv.single)
			return true
		}
		for _, k := range slices.Sorted(maps.Keys(iv.multi)) {
			out = append(out, iv.multi[k])
		}
		return true
	}
	if _, ok := refOf(v); ok || (!v.IsNull() && (v.Type().IsObjectType() || v.Type().IsMapType())) {
		return out, add(v)
	}
	if v.IsNull() || !(v.Type().IsTupleType() || v.Type().IsListType()) {
		l.refKindError(a, "a list of stage references", "[stage.insight_score.novelty]", friendly(v))
		return nil, false
	}
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if !add(ev) {
			return nil, false
		}
	}
	return out, true
}

// noteTemplateFile tells stages which file a Template param's text was read
// from, when it is exactly what a file() call returned, so that a template
// error found at layout or in a node names that file and line instead of
// only the stage. The path is given as the experiment's files are: relative
// to where ideaflow was started.
func (l *loader) noteTemplateFile(a *hcl.Attribute, text string) {
	name, ok := l.fileTexts[text]
	if !ok {
		return
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(filepath.Dir(a.Range.Filename), name)
	}
	stages.NoteTemplateFile(text, name)
}
