package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/ideaflow/ideaflow/stages"
)

// refAttr marks an object that stands for a block or stage instance, so a
// param expecting a reference can find what it points at after any amount of
// expression plumbing (for expressions, locals, for_each values).
const refAttr = "__ref"

// values holds what each namespace evaluates to so far.
type values struct {
	ns    map[string]map[string]cty.Value // var, local, provider, model, dataset, quality
	stage map[string]map[string]cty.Value // type -> name -> value
	funcs map[string]function.Function
}

func (v *values) context(each map[string]cty.Value) *hcl.EvalContext {
	vars := map[string]cty.Value{}
	for ns, m := range v.ns {
		vars[ns] = objectOrEmpty(m)
	}
	st := map[string]cty.Value{}
	for t, m := range v.stage {
		st[t] = objectOrEmpty(m)
	}
	vars["stage"] = objectOrEmpty(st)
	if each != nil {
		vars["each"] = cty.ObjectVal(each)
	}
	return &hcl.EvalContext{Variables: vars, Functions: v.funcs}
}

func objectOrEmpty(m map[string]cty.Value) cty.Value {
	if len(m) == 0 {
		return emptyObject
	}
	return cty.ObjectVal(m)
}

func (l *loader) load(files []parsedFile) {
	// Reference analysis runs even when decoding found errors, so one pass
	// reports unknown attributes and undeclared references together.
	l.collect(files)
	l.analyse()
	// Evaluation goes on past those errors, so one pass also reports the
	// type, value and dataset errors of the declarations they do not touch:
	// a declaration an error points into is skipped, and so is whatever
	// reads it (below).
	failed := l.brokenDecls()
	l.values = &values{
		ns: map[string]map[string]cty.Value{
			"var": {}, "local": {}, "provider": {}, "model": {}, "dataset": {}, "quality": {},
		},
		stage: map[string]map[string]cty.Value{},
		funcs: functions(l.resolveRead, l.noteFile),
	}
	l.exp.Variables = map[string]cty.Value{}
	l.exp.Providers = map[string]*Provider{}
	l.exp.Models = map[string]*stages.Model{}
	l.exp.ModelRanges = map[string]hcl.Range{}
	l.exp.Datasets = map[string]*Dataset{}
	l.exp.Qualities = map[string]*stages.Quality{}
	l.exp.MaxNodes = DefaultMaxNodes
	overrides := l.variableOverrides()
	// A declaration reading one that failed is skipped, as Terraform skips
	// the vertices downstream of a failed one: its errors would be follow-ons
	// ("no attribute named generate_ideas" for a stage whose for_each failed)
	// that hide the one that matters.
	for _, d := range l.sorted {
		if failed[d.addr] || l.readsFailed(d, failed) {
			failed[d.addr] = true
			continue
		}
		before := errorCount(l.diags)
		switch d.kind {
		case "variable":
			l.evalVariable(d, overrides)
		case "local":
			v, diags := d.attr.Expr.Value(l.values.context(nil))
			l.diags = append(l.diags, diags...)
			l.values.ns["local"][d.name] = v
		case "provider":
			l.evalProvider(d)
		case "model":
			l.evalModel(d)
		case "dataset":
			l.evalDataset(d)
		case "quality":
			l.evalQuality(d)
		case "stage", "report", "expect":
			l.expandStage(d)
		case "settings":
			l.evalSettings(d)
		case "stop_when":
			l.evalStopWhen(d)
		}
		if errorCount(l.diags) > before && publishesNothingReliable[d.kind] {
			failed[d.addr] = true
		}
	}
	l.checkProviderUse()
	if !l.diags.HasErrors() {
		l.checkHasStage(files)
		l.checkDatasets()
		l.checkContamination()
	}
}

// publishesNothingReliable lists the kinds whose value is missing or wrong
// after an error in them: a variable keeps a value of the wrong type, a
// stage whose for_each failed has no instances. The others (a dataset whose
// file is missing, a model with a bad temperature) still stand for their
// block, so what reads them is decoded and its own mistakes reported.
var publishesNothingReliable = map[string]bool{"variable": true, "local": true, "stage": true, "report": true, "expect": true}

// brokenDecls lists the declarations that an error found so far points
// into (an unknown attribute, an undeclared reference): evaluating them would
// only repeat or garble the error.
func (l *loader) brokenDecls() map[string]bool {
	failed := map[string]bool{}
	for _, diag := range l.diags {
		if diag.Severity != hcl.DiagError || diag.Subject == nil {
			continue
		}
		for _, d := range l.decls {
			if r := d.sourceRange(); r.Filename == diag.Subject.Filename &&
				r.Start.Byte <= diag.Subject.Start.Byte && diag.Subject.Start.Byte <= r.End.Byte {
				failed[d.addr] = true
			}
		}
	}
	return failed
}

func (l *loader) readsFailed(d *decl, failed map[string]bool) bool {
	for _, r := range d.refs {
		if failed[r.to] {
			return true
		}
	}
	return false
}

func errorCount(diags hcl.Diagnostics) int {
	n := 0
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			n++
		}
	}
	return n
}

// eval evaluates one attribute, or returns null when it is absent.
func (l *loader) eval(attrs hcl.Attributes, name string, each map[string]cty.Value) (cty.Value, *hcl.Attribute) {
	a, ok := attrs[name]
	if !ok {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	v, diags := a.Expr.Value(l.values.context(each))
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	return v, a
}

// refOf returns the address an object value stands for.
func refOf(v cty.Value) (string, bool) {
	if v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() || !v.Type().HasAttribute(refAttr) {
		return "", false
	}
	r := v.GetAttr(refAttr)
	if r.IsNull() || r.Type() != cty.String {
		return "", false
	}
	return r.AsString(), true
}
