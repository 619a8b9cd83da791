package config

// variable blocks, and the -var / -var-file values that override their defaults.

import (
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// variableOverrides reads -var-file files then -var flags; later wins.
func (l *loader) variableOverrides() map[string]cty.Value {
	out := map[string]cty.Value{}
	l.varOrigins = map[string]string{}
	for _, f := range l.opts.VarFiles {
		src, err := os.ReadFile(f)
		if err != nil {
			l.errorf(nil, "Cannot read variables file", "%s. Check the -var-file path.", err)
			continue
		}
		file, diags := hclsyntax.ParseConfig(src, f, hcl.InitialPos)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		attrs, diags := file.Body.JustAttributes()
		l.diags = append(l.diags, diags...)
		for _, a := range sortedAttrs(attrs) {
			if _, declared := l.decls["var."+a.Name]; !declared {
				l.errorf(a.NameRange.Ptr(), fmt.Sprintf("Undeclared variable %q", a.Name),
					"The variables file sets %q but the experiment declares no variable of that name. Add variable %q {} or remove the line.", a.Name, a.Name)
				continue
			}
			v, diags := a.Expr.Value(&hcl.EvalContext{Functions: l.valuesFuncs()})
			l.diags = append(l.diags, diags...)
			out[a.Name] = v
			l.varOrigins[a.Name] = fmt.Sprintf("-var-file %s:%d", f, a.NameRange.Start.Line)
		}
	}
	for _, kv := range l.opts.Vars {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			l.errorf(nil, "Malformed -var", "%q is not NAME=VALUE. Write it like -var n=5.", kv)
			continue
		}
		d, declared := l.decls["var."+name]
		if !declared {
			l.errorf(nil, fmt.Sprintf("Undeclared variable %q", name),
				"-var sets %q but the experiment declares no variable of that name. Declare it with variable %q {} or fix the name.", name, name)
			continue
		}
		out[name] = parseVarValue(raw, d)
		l.varOrigins[name] = "-var " + kv
	}
	return out
}

func (l *loader) valuesFuncs() map[string]function.Function { return functions(l.resolveRead, nil) }

// parseVarValue reads a -var value as an HCL literal (5, true, ["a"]) unless the
// variable is declared as a string, falling back to the raw string.
func parseVarValue(raw string, d *decl) cty.Value {
	if d.content != nil {
		if te, ok := d.content.Attributes["type"]; ok {
			if ty, diags := typeexpr.TypeConstraint(te.Expr); !diags.HasErrors() && ty == cty.String {
				return cty.StringVal(raw)
			}
		}
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), "-var", hcl.InitialPos)
	if !diags.HasErrors() {
		if v, diags := expr.Value(nil); !diags.HasErrors() {
			return v
		}
	}
	return cty.StringVal(raw)
}

func (l *loader) evalVariable(d *decl, overrides map[string]cty.Value) {
	attrs := d.content.Attributes
	v, given := overrides[d.name]
	if !given {
		if a, ok := attrs["default"]; ok {
			var diags hcl.Diagnostics
			v, diags = a.Expr.Value(&hcl.EvalContext{Functions: l.values.funcs})
			l.diags = append(l.diags, diags...)
		} else {
			l.errorf(d.declRange.Ptr(), fmt.Sprintf("No value for variable %q", d.name),
				"Variable %q has no default. Give one with -var %s=VALUE, in a -var-file, or add default = ... to the block.", d.name, d.name)
			v = cty.DynamicVal
		}
	}
	if a, ok := attrs["type"]; ok {
		ty, diags := typeexpr.TypeConstraint(a.Expr)
		l.diags = append(l.diags, diags...)
		if !diags.HasErrors() && v.IsKnown() {
			cv, err := convert.Convert(v, ty)
			if err != nil {
				given := ""
				if o := l.varOrigins[d.name]; o != "" {
					given = o + ": "
				}
				l.errorf(d.declRange.Ptr(), fmt.Sprintf("Wrong type for variable %q", d.name),
					"%sThe value given for %q does not fit its type %s: %s. Give a value of that type.", given, d.name, typeexpr.TypeString(ty), err)
			} else {
				v = cv
			}
		}
	}
	l.values.ns["var"][d.name] = v
	l.exp.Variables[d.name] = v
}
