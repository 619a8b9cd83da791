package stages

import "fmt"

// Reading params against their declaration. Params' accessors (p.Int("n"))
// are typed, but a misspelt or undeclared name, or a name read as another
// kind, reads as the zero value, silently. Two guards close that:
//
//   - stages/all's contract test reads every stage package's source and
//     fails on an accessor call whose name no type of that package declares
//     with a kind the accessor reads (AccessorKinds);
//   - Read wraps Params in a reader that panics on such a read at run time,
//     for code that builds its param names (a loop over metrics) where the
//     source check cannot see the name.

// AccessorKinds maps each Params accessor to the kinds of param it reads;
// Has reads any kind (nil).
var AccessorKinds = map[string][]Kind{
	"String":    {String, Template},
	"Int":       {Int},
	"Number":    {Number},
	"Bool":      {Bool},
	"Strings":   {StringList},
	"Model":     {ModelRef},
	"Models":    {ModelList},
	"Quality":   {QualityRef},
	"Input":     {Input},
	"Inputs":    {Inputs},
	"StringMap": {StringMap},
	"NumberMap": {NumberMap},
	"Has":       nil,
}

// Declared is a stage instance's Params read against its type's
// declarations: reading a name the type does not declare, or through an
// accessor of another kind, panics, naming the type and the param. It is
// a programming error in the stage, never a user's (engine/config refuses
// undeclared attributes before a stage runs).
type Declared struct {
	typ  string
	p    Params
	decl map[string]Kind
}

// Read returns p read against t's declared params.
func Read(t Type, p Params) Declared {
	d := Declared{typ: t.Name(), p: p, decl: make(map[string]Kind, len(t.Params()))}
	for _, param := range t.Params() {
		d.decl[param.Name] = param.Kind
	}
	return d
}

// check panics unless name is declared with a kind accessor reads.
func (d Declared) check(accessor, name string) {
	k, ok := d.decl[name]
	if !ok {
		panic(fmt.Sprintf("stage type %s reads param %q, which it does not declare", d.typ, name))
	}
	kinds, known := AccessorKinds[accessor]
	if !known {
		panic(fmt.Sprintf("stages.Declared: no accessor %s", accessor))
	}
	if kinds == nil {
		return
	}
	for _, want := range kinds {
		if k == want {
			return
		}
	}
	panic(fmt.Sprintf("stage type %s reads param %q (%s) with %s, which reads %v", d.typ, name, k, accessor, kinds))
}

func (d Declared) String(name string) string { d.check("String", name); return d.p.String(name) }
func (d Declared) Int(name string) int       { d.check("Int", name); return d.p.Int(name) }
func (d Declared) Number(name string) float64 {
	d.check("Number", name)
	return d.p.Number(name)
}
func (d Declared) Bool(name string) bool          { d.check("Bool", name); return d.p.Bool(name) }
func (d Declared) Strings(name string) []string   { d.check("Strings", name); return d.p.Strings(name) }
func (d Declared) Model(name string) *Model       { d.check("Model", name); return d.p.Model(name) }
func (d Declared) Models(name string) []*Model    { d.check("Models", name); return d.p.Models(name) }
func (d Declared) Quality(name string) *Quality   { d.check("Quality", name); return d.p.Quality(name) }
func (d Declared) Input(name string) *Upstream    { d.check("Input", name); return d.p.Input(name) }
func (d Declared) Inputs(name string) []*Upstream { d.check("Inputs", name); return d.p.Inputs(name) }
func (d Declared) StringMap(name string) map[string]string {
	d.check("StringMap", name)
	return d.p.StringMap(name)
}
func (d Declared) NumberMap(name string) map[string]float64 {
	d.check("NumberMap", name)
	return d.p.NumberMap(name)
}
func (d Declared) Has(name string) bool { d.check("Has", name); return d.p.Has(name) }
