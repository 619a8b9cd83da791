package config

// Typed getters: each evaluates one attribute and reports a located error
// on a wrong type.

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"

	"github.com/ideaflow/ideaflow/stages"
)

// givenBy names the -var flags and -var-file lines that set the variables
// expr reads, as a prefix for an error about its value ("-var n=abc: "): the
// mistake is in what was typed on the command line, not in the line using it.
func (l *loader) givenBy(expr hcl.Expression) string {
	var out []string
	for _, tr := range expr.Variables() {
		if tr.RootName() != "var" || len(tr) < 2 {
			continue
		}
		a, ok := tr[1].(hcl.TraverseAttr)
		if !ok {
			continue
		}
		if o := l.varOrigins[a.Name]; o != "" && !containsString(out, o) {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, ", ") + ": "
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (l *loader) typeError(a *hcl.Attribute, want, example string, got cty.Value) {
	gotName := "null"
	if !got.IsNull() {
		gotName = got.Type().FriendlyName()
	}
	l.errorf(a.Expr.Range().Ptr(), fmt.Sprintf("Wrong type for %s", a.Name),
		"%s%s must be %s, got %s. For example: %s = %s.", l.givenBy(a.Expr), a.Name, want, gotName, a.Name, example)
}

// Each reports a clear error on a wrong type and returns ok=false.
func (l *loader) str(attrs hcl.Attributes, name string, each map[string]cty.Value) (string, bool) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return "", false
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil || !s.IsKnown() {
		l.typeError(a, "a string", `"text"`, v)
		return "", false
	}
	return s.AsString(), true
}

func (l *loader) num(attrs hcl.Attributes, name string, each map[string]cty.Value) (*big.Float, *hcl.Attribute) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return nil, nil
	}
	n, err := convert.Convert(v, cty.Number)
	if err != nil || !n.IsKnown() {
		l.typeError(a, "a number", "3", v)
		return nil, nil
	}
	return n.AsBigFloat(), a
}

func (l *loader) float(attrs hcl.Attributes, name string, each map[string]cty.Value) (float64, bool) {
	n, _ := l.num(attrs, name, each)
	if n == nil {
		return 0, false
	}
	f, _ := n.Float64()
	return f, true
}

// int reads a whole number that fits an int.
func (l *loader) int(attrs hcl.Attributes, name string, each map[string]cty.Value) (int, bool) {
	return l.intIn(attrs, name, each, math.MinInt, math.MaxInt)
}

// param reads an Int param, refusing a value outside its declared bounds.
func (l *loader) param(attrs hcl.Attributes, p stages.Param, each map[string]cty.Value) (int, bool) {
	if !p.Bounded() {
		return l.int(attrs, p.Name, each)
	}
	return l.intIn(attrs, p.Name, each, p.Min, p.Max)
}

// intIn reads a whole number in lo..hi. The range is checked on the exact
// value, before it becomes an int: 1e19 would otherwise saturate, and pass
// a bound as 9223372036854775807.
func (l *loader) intIn(attrs hcl.Attributes, name string, each map[string]cty.Value, lo, hi int) (int, bool) {
	n, a := l.num(attrs, name, each)
	if n == nil {
		return 0, false
	}
	if !n.IsInt() {
		l.errorf(a.Expr.Range().Ptr(), fmt.Sprintf("Wrong type for %s", name),
			"%s%s must be a whole number, got %s. For example: %s = 3.", l.givenBy(a.Expr), name, n.Text('g', 10), name)
		return 0, false
	}
	if n.Cmp(new(big.Float).SetInt64(int64(lo))) < 0 || n.Cmp(new(big.Float).SetInt64(int64(hi))) > 0 {
		l.errorf(a.Expr.Range().Ptr(), "Invalid "+name,
			"%s%s must be from %d to %d, got %s. Give a value in that range.", l.givenBy(a.Expr), name, lo, hi, n.Text('g', 15))
		return 0, false
	}
	i, _ := n.Int64()
	return int(i), true
}

func (l *loader) boolean(attrs hcl.Attributes, name string, each map[string]cty.Value) (bool, bool) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return false, false
	}
	b, err := convert.Convert(v, cty.Bool)
	if err != nil {
		l.typeError(a, "true or false", "true", v)
		return false, false
	}
	return b.True(), true
}

func (l *loader) strings(attrs hcl.Attributes, name string, each map[string]cty.Value) ([]string, bool) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return nil, false
	}
	lv, err := convert.Convert(v, cty.List(cty.String))
	if err != nil {
		l.typeError(a, "a list of strings", `["a", "b"]`, v)
		return nil, false
	}
	var out []string
	if err := gocty.FromCtyValue(lv, &out); err != nil {
		l.typeError(a, "a list of strings", `["a", "b"]`, v)
		return nil, false
	}
	return out, true
}

func (l *loader) stringMap(attrs hcl.Attributes, name string) map[string]string {
	m, _ := l.stringMapParam(attrs, name, nil)
	return m
}

// stringMapParam evaluates a map-of-strings attribute (an object whose
// values are strings, numbers or bools converts too).
// numberMapParam reads a map of numbers ({ "gpt-4o" = 0.61 }). A value
// that is not a number (a quoted "0.61" converts; "high" does not) is a
// type error at the attribute.
func (l *loader) numberMapParam(attrs hcl.Attributes, name string, each map[string]cty.Value) (map[string]float64, bool) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return nil, false
	}
	mv, err := convert.Convert(v, cty.Map(cty.Number))
	if err != nil || !mv.IsWhollyKnown() {
		l.typeError(a, "a map of numbers", `{ "gpt-4o" = 0.61 }`, v)
		return nil, false
	}
	out := map[string]float64{}
	if err := gocty.FromCtyValue(mv, &out); err != nil {
		l.typeError(a, "a map of numbers", `{ "gpt-4o" = 0.61 }`, v)
		return nil, false
	}
	return out, true
}

func (l *loader) stringMapParam(attrs hcl.Attributes, name string, each map[string]cty.Value) (map[string]string, bool) {
	v, a := l.eval(attrs, name, each)
	if a == nil || v.IsNull() {
		return nil, false
	}
	mv, err := convert.Convert(v, cty.Map(cty.String))
	if err != nil || !mv.IsWhollyKnown() {
		l.typeError(a, "a map of strings", `{ "X-Name" = "value" }`, v)
		return nil, false
	}
	out := map[string]string{}
	if err := gocty.FromCtyValue(mv, &out); err != nil {
		l.typeError(a, "a map of strings", `{ "X-Name" = "value" }`, v)
		return nil, false
	}
	return out, true
}
