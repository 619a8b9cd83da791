package all

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

// TestStageTypeContracts checks every registered stage type, whatever
// package registers it, against what the engine relies on.
func TestStageTypeContracts(t *testing.T) {
	names := stages.Names()
	if len(names) == 0 {
		t.Fatal("no stage types registered")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			typ, ok := stages.Lookup(name)
			if !ok || typ.Name() != name {
				t.Fatalf("stages.Names lists %q, but Lookup finds %v (ok %v)", name, typ, ok)
			}
			for _, p := range contractProblems(typ) {
				t.Error(p)
			}
		})
	}
}

// kindType is the Go type of a Default for each Kind that may have one; any
// other Kind's Default must be nil (a reference cannot have a default).
var kindType = map[stages.Kind]reflect.Type{
	stages.String:     reflect.TypeFor[string](),
	stages.Template:   reflect.TypeFor[string](),
	stages.Int:        reflect.TypeFor[int](),
	stages.Number:     reflect.TypeFor[float64](),
	stages.Bool:       reflect.TypeFor[bool](),
	stages.StringList: reflect.TypeFor[[]string](),
	stages.StringMap:  reflect.TypeFor[map[string]string](),
	stages.NumberMap:  reflect.TypeFor[map[string]float64](),
}

// contractProblems lists how typ breaks the stage type contract, one
// sentence each; nil when it keeps it. It is a function of its own, not
// inline in the test, so that it can be tested on broken types.
func contractProblems(typ stages.Type) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if typ.Version() == "" {
		add("Version() is empty")
	}
	params := map[string]stages.Param{}
	for _, p := range typ.Params() {
		if p.Name == "" {
			add("a param has no name")
			continue
		}
		if _, dup := params[p.Name]; dup {
			add("param %s is declared twice", p.Name)
		}
		params[p.Name] = p
		if p.Name == stages.Self {
			add("param %s is named like stages.Self, which names a dependency on the instance's own nodes", p.Name)
		}
		if strings.TrimSpace(p.Doc) == "" {
			add("param %s has no Doc", p.Name)
		}
		if p.Default != nil {
			want, ok := kindType[p.Kind]
			switch got := reflect.TypeOf(p.Default); {
			case !ok:
				add("param %s (%s) has Default %#v; a %s param cannot have one", p.Name, p.Kind, p.Default, p.Kind)
			case got != want:
				add("param %s (%s) has Default of type %s, want %s", p.Name, p.Kind, got, want)
			}
			if p.Required {
				add("param %s is Required and has a Default, which is never used", p.Name)
			}
		}
		switch {
		case p.Service && p.Kind != stages.ModelRef:
			add("param %s (%s) is marked Service; only a model reference can be", p.Name, p.Kind)
		case p.Kind == stages.Int && !p.Bounded():
			add("param %s is an unbounded %s; declare Min and Max (a count without a bound lets n = 1e9 through)", p.Name, p.Kind)
		case p.Kind == stages.Int && p.Min > p.Max:
			add("param %s has Min %d above Max %d", p.Name, p.Min, p.Max)
		case p.Kind == stages.Int && p.Default != nil:
			if d, ok := p.Default.(int); ok && (d < p.Min || d > p.Max) {
				add("param %s has Default %d outside its bounds %d..%d", p.Name, d, p.Min, p.Max)
			}
		case p.Kind != stages.Int && p.Bounded():
			add("param %s (%s) declares Min/Max, which only Int params have", p.Name, p.Kind)
		}
		if p.Generator && p.Kind != stages.ModelRef {
			add("param %s is a Generator of kind %s; only a %s can be", p.Name, p.Kind, stages.ModelRef)
		}
	}
	for _, p := range typ.Params() {
		if _, ok := typ.(stages.ServiceUser); p.Service && !ok {
			add("param %s is a Service model, but the type does not implement stages.ServiceUser, so Build cannot check that its provider serves the operation", p.Name)
			break
		}
	}
	// Layout must refuse an instance without its required params, with an
	// error rather than a panic, whether or not defaults were filled in.
	for _, c := range []struct {
		what   string
		params stages.Params
	}{
		{"empty Params", stages.Params{}},
		{"WithDefaults of empty Params", stages.WithDefaults(typ, stages.Params{})},
	} {
		inst := &stages.Instance{Address: "stage." + typ.Name() + ".contract", Params: c.params}
		nodes, err := layout(typ, inst)
		var pe panicError
		switch {
		case errors.As(err, &pe):
			add("Layout with %s panics: %v", c.what, pe.value)
		case err == nil:
			add("Layout with %s returns %d nodes and no error", c.what, len(nodes))
		}
	}
	out = append(out, schemaProblems(typ, params)...)
	if ex, ok := typ.(stages.Expander); ok {
		inst := &stages.Instance{Address: "stage." + typ.Name() + ".contract", Params: stages.WithDefaults(typ, stages.Params{})}
		if n := ex.MaxPerItem(inst); n < 0 {
			add("MaxPerItem = %d, want >= 0", n)
		}
		for _, name := range ex.ExpandInputs() {
			if p, ok := params[name]; !ok || p.Kind != stages.Input {
				add("ExpandInputs names %q, which is not an Input param", name)
			}
		}
	}
	return out
}

// schemaProblems lists how typ's schema (stages.Declarer) breaks the
// contract: every registered type declares one; it must not panic on the
// params Layout would refuse; its fields are named once; its needs name
// Input or Inputs params and at least one field each.
func schemaProblems(typ stages.Type, params map[string]stages.Param) []string {
	var out []string
	said := map[string]bool{}
	add := func(format string, args ...any) {
		if p := fmt.Sprintf(format, args...); !said[p] { // the same for both params below: once
			said[p] = true
			out = append(out, p)
		}
	}
	if _, ok := typ.(stages.Declarer); !ok {
		add("declares no schema (stages.Declarer): what its nodes give and what it reads of each input (a schema.go beside the type)")
		return out
	}
	for _, c := range []struct {
		what   string
		params stages.Params
	}{
		{"empty Params", stages.Params{}},
		{"WithDefaults of empty Params", stages.WithDefaults(typ, stages.Params{})},
	} {
		sch, err := schemaOf(typ, c.params)
		if err != nil {
			add("Schema with %s panics: %v", c.what, err)
			continue
		}
		if len(sch.Gives) == 0 && !sch.Open {
			add("Schema with %s gives no field", c.what)
		}
		seen := map[string]bool{}
		for _, f := range sch.Gives {
			switch {
			case f.Name == "":
				add("Schema gives a field without a name")
			case seen[f.Name]:
				add("Schema gives %q twice", f.Name)
			case f.Type == "":
				add("Schema gives %q without a Type", f.Name)
			case strings.TrimSpace(f.Doc) == "":
				add("Schema gives %q without a Doc", f.Name)
			case f.Optional && f.Only != "":
				add("Schema gives %q both Optional and Only", f.Name)
			case f.PerNode != 0 && f.Type != stages.TextsField:
				add("Schema gives %q with PerNode, which only a %s field has", f.Name, stages.TextsField)
			}
			seen[f.Name] = true
		}
		for _, n := range sch.Needs {
			p, ok := params[n.Input]
			switch {
			case !ok || (p.Kind != stages.Input && p.Kind != stages.Inputs):
				add("Schema needs %v from %q, which is not an Input or Inputs param", n.Fields, n.Input)
			case len(n.Fields) == 0:
				add("Schema needs no field from %q (a Need names at least one)", n.Input)
			case strings.TrimSpace(n.Why) == "":
				add("Schema needs %v from %q without a Why", n.Fields, n.Input)
			}
		}
	}
	return out
}

// schemaOf calls Schema, turning a panic into an error.
func schemaOf(typ stages.Type, p stages.Params) (s stages.Schema, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError{v}
		}
	}()
	s, _ = stages.SchemaOf(typ, p)
	return s, nil
}

// panicError is a panic in Layout, recovered so that one broken stage type
// fails its own subtest instead of the whole test binary.
type panicError struct{ value any }

func (e panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// layout calls typ.Layout, turning a panic into a panicError.
func layout(typ stages.Type, inst *stages.Instance) (nodes []stages.Node, err error) {
	defer func() {
		if v := recover(); v != nil {
			nodes, err = nil, panicError{v}
		}
	}()
	return typ.Layout(inst)
}

// fakeType is a stage type built to break the contract in chosen ways.
type fakeType struct {
	version string
	params  []stages.Param
	layout  func(*stages.Instance) ([]stages.Node, error)
	schema  *stages.Schema // nil: gives, which keeps the contract
}

func (f fakeType) Name() string                                        { return "fake" }
func (f fakeType) Version() string                                     { return f.version }
func (f fakeType) Params() []stages.Param                              { return f.params }
func (f fakeType) Layout(inst *stages.Instance) ([]stages.Node, error) { return f.layout(inst) }

func (f fakeType) Schema(stages.Params) stages.Schema {
	if f.schema == nil {
		return gives
	}
	return *f.schema
}

// gives is a schema that keeps the contract.
var gives = stages.Schema{Gives: []stages.Field{{Name: "value", Type: stages.NumberField, Doc: "d"}}}

// bare is a stage type without a schema.
type bare struct{ t fakeType }

func (bare) Name() string                                          { return "bare" }
func (b bare) Version() string                                     { return b.t.Version() }
func (b bare) Params() []stages.Param                              { return b.t.Params() }
func (b bare) Layout(inst *stages.Instance) ([]stages.Node, error) { return b.t.Layout(inst) }

type fakeExpander struct {
	fakeType
	inputs []string
	max    int
}

func (f fakeExpander) ExpandInputs() []string          { return f.inputs }
func (f fakeExpander) MaxPerItem(*stages.Instance) int { return f.max }
func (f fakeExpander) Expand(*stages.Instance, string, []stages.In) ([]stages.Node, error) {
	return nil, nil
}

// TestContractProblems shows the checker catches each breach it looks for.
func TestContractProblems(t *testing.T) {
	refuse := func(*stages.Instance) ([]stages.Node, error) { return nil, stages.ParamErrorf("in", "in is required") }
	in := stages.Param{Name: "in", Kind: stages.Input, Required: true, Doc: "the input"}
	tests := []struct {
		name string
		typ  stages.Type
		want []string
	}{
		{"keeps the contract", fakeType{version: "1", params: []stages.Param{in,
			{Name: "n", Kind: stages.Int, Default: 3, Min: 1, Max: 10, Doc: "d"},
			{Name: "x", Kind: stages.Number, Default: 0.5, Doc: "d"},
			{Name: "s", Kind: stages.Template, Default: "t", Doc: "d"},
			{Name: "b", Kind: stages.Bool, Default: true, Doc: "d"},
			{Name: "l", Kind: stages.StringList, Default: []string{"a"}, Doc: "d"},
			{Name: "m", Kind: stages.ModelRef, Generator: true, Doc: "d"},
		}, layout: refuse}, nil},
		{"no version", fakeType{params: []stages.Param{in}, layout: refuse}, []string{"Version() is empty"}},
		{"bad params", fakeType{version: "1", params: []stages.Param{in,
			{Name: "n", Kind: stages.Int, Default: int64(3), Max: 5, Doc: "d"},
			{Name: "x", Kind: stages.Number, Default: 1, Doc: "d"},
			{Name: "l", Kind: stages.StringList, Default: []any{"a"}, Doc: "d"},
			{Name: "q", Kind: stages.QualityRef, Default: "novelty", Doc: "d"},
			{Name: "doc", Kind: stages.String, Doc: "  "},
			{Name: "req", Kind: stages.String, Required: true, Default: "a", Doc: "d"},
			{Name: "judge", Kind: stages.Input, Generator: true, Doc: "d"},
			{Name: "n", Kind: stages.Int, Doc: "d"},
			{Name: "k", Kind: stages.Int, Min: 3, Max: 2, Doc: "d"},
			{Name: "d", Kind: stages.Int, Default: 9, Min: 0, Max: 5, Doc: "d"},
			{Name: "f", Kind: stages.Number, Max: 5, Doc: "d"},
		}, layout: refuse}, []string{
			"param n (number (whole)) has Default of type int64, want int",
			"param x (number) has Default of type int, want float64",
			"param l (list of strings) has Default of type []interface {}, want []string",
			`param q (quality reference) has Default "novelty"; a quality reference param cannot have one`,
			"param doc has no Doc",
			"param req is Required and has a Default, which is never used",
			"param judge is a Generator of kind dataset or stage reference; only a model reference can be",
			"param n is declared twice",
			"param n is an unbounded number (whole); declare Min and Max (a count without a bound lets n = 1e9 through)",
			"param k has Min 3 above Max 2",
			"param d has Default 9 outside its bounds 0..5",
			"param f (number) declares Min/Max, which only Int params have",
		}},
		{"accepts empty params", fakeType{version: "1", layout: func(*stages.Instance) ([]stages.Node, error) { return []stages.Node{{}}, nil }},
			[]string{"Layout with empty Params returns 1 nodes and no error", "Layout with WithDefaults of empty Params returns 1 nodes and no error"}},
		{"panics", fakeType{version: "1", params: []stages.Param{in}, layout: func(inst *stages.Instance) ([]stages.Node, error) {
			return make([]stages.Node, inst.Params.Input("in").Nodes[0].Slot), nil // nil *Upstream
		}}, []string{
			"Layout with empty Params panics: runtime error: invalid memory address or nil pointer dereference",
			"Layout with WithDefaults of empty Params panics: runtime error: invalid memory address or nil pointer dereference",
		}},
		{"no schema", bare{fakeType{version: "1", params: []stages.Param{in}, layout: refuse}}, []string{
			"declares no schema (stages.Declarer): what its nodes give and what it reads of each input (a schema.go beside the type)",
		}},
		{"bad schema", fakeType{version: "1", params: []stages.Param{in, {Name: "n", Kind: stages.Int, Min: 1, Max: 2, Doc: "d"}}, layout: refuse, schema: &stages.Schema{
			Gives: []stages.Field{
				{Name: "idea", Type: stages.TextField, Doc: "d"}, {Name: "idea", Type: stages.TextField, Doc: "d"},
				{Name: "x", Doc: "d"}, {Name: "y", Type: stages.TextField},
				{Name: "z", Type: stages.TextField, Doc: "d", Optional: true, Only: "the scores node"},
				{Name: "w", Type: stages.TextField, Doc: "d", PerNode: 3},
			},
			Needs: []stages.Need{{Input: "n", Fields: []string{"a"}, Why: "w"}, {Input: "in", Why: "w"}, {Input: "in", Fields: []string{"a"}}},
		}}, []string{
			`Schema gives "idea" twice`, `Schema gives "x" without a Type`, `Schema gives "y" without a Doc`,
			`Schema gives "z" both Optional and Only`, `Schema gives "w" with PerNode, which only a texts field has`,
			`Schema needs [a] from "n", which is not an Input or Inputs param`, `Schema needs no field from "in" (a Need names at least one)`,
			`Schema needs [a] from "in" without a Why`,
		}},
		{"good expander", fakeExpander{fakeType: fakeType{version: "1", params: []stages.Param{in}, layout: refuse}, inputs: []string{"in"}}, nil},
		{"bad expander", fakeExpander{fakeType: fakeType{version: "1", params: []stages.Param{in,
			{Name: "all", Kind: stages.Inputs, Doc: "d"},
		}, layout: refuse}, inputs: []string{"in", "all", "nope"}, max: -1}, []string{
			"MaxPerItem = -1, want >= 0",
			`ExpandInputs names "all", which is not an Input param`,
			`ExpandInputs names "nope", which is not an Input param`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := contractProblems(tc.typ); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
