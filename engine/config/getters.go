package config

// Typed getters: each evaluates one attribute and reports a located error
// on a wrong type.

import (
	"fmt"
	"math/big"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

func (l *loader) typeError(a *hcl.Attribute, want, example string, got cty.Value) {
	gotName := "null"
	if !got.IsNull() {
		gotName = got.Type().FriendlyName()
	}
	l.errorf(a.Expr.Range().Ptr(), fmt.Sprintf("Wrong type for %s", a.Name),
		"%s must be %s, got %s. For example: %s = %s.", a.Name, want, gotName, a.Name, example)
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

func (l *loader) int(attrs hcl.Attributes, name string, each map[string]cty.Value) (int, bool) {
	n, a := l.num(attrs, name, each)
	if n == nil {
		return 0, false
	}
	if !n.IsInt() {
		l.errorf(a.Expr.Range().Ptr(), fmt.Sprintf("Wrong type for %s", name),
			"%s must be a whole number, got %s. For example: %s = 3.", name, n.Text('g', 10), name)
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
	v, a := l.eval(attrs, name, nil)
	if a == nil || v.IsNull() {
		return nil
	}
	mv, err := convert.Convert(v, cty.Map(cty.String))
	if err != nil {
		l.typeError(a, "a map of strings", `{ "X-Name" = "value" }`, v)
		return nil
	}
	out := map[string]string{}
	_ = gocty.FromCtyValue(mv, &out)
	return out
}
