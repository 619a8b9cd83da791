package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions returns the function table of the experiment language. file and
// templatefile resolve paths against the experiment folder, so moving the
// folder changes nothing: only the file contents reach a key. onFile, when
// set, hears of every file() read (its path as written, and its text).
func functions(resolve func(string) (string, error), onFile func(name, text string)) map[string]function.Function {
	fs := baseFunctions(resolve, onFile)
	pre := map[string]func([]cty.Value) error{
		"replace": checkReplace, "format": checkFormat, "formatlist": checkFormat,
		"setproduct": checkSetProduct,
	}
	for name, f := range fs {
		fs[name] = bounded(f, pre[name])
	}
	return fs
}

// baseFunctions is the function table before bounds (see bounds.go).
func baseFunctions(resolve func(string) (string, error), onFile func(name, text string)) map[string]function.Function {
	return map[string]function.Function{
		"file":         fileFunc(resolve, onFile),
		"templatefile": templateFileFunc(resolve),
		"authors_file": authorsFileFunc(resolve),
		"setproduct":   stdlib.SetProductFunc,
		"range":        stdlib.RangeFunc,
		"jsonencode":   stdlib.JSONEncodeFunc,
		"jsondecode":   stdlib.JSONDecodeFunc,
		"csvdecode":    stdlib.CSVDecodeFunc, // a published table's rows: csvdecode(file("board.csv"))
		"format":       stdlib.FormatFunc,
		"formatlist":   stdlib.FormatListFunc,
		"concat":       stdlib.ConcatFunc,
		"merge":        stdlib.MergeFunc,
		"keys":         stdlib.KeysFunc,
		"values":       stdlib.ValuesFunc,
		"length":       stdlib.LengthFunc,
		"lookup":       stdlib.LookupFunc,
		"element":      stdlib.ElementFunc,
		"flatten":      stdlib.FlattenFunc,
		"distinct":     stdlib.DistinctFunc,
		"contains":     stdlib.ContainsFunc,
		"zipmap":       stdlib.ZipmapFunc,
		"slice":        stdlib.SliceFunc,
		"join":         stdlib.JoinFunc,
		"split":        stdlib.SplitFunc,
		"lower":        stdlib.LowerFunc,
		"upper":        stdlib.UpperFunc,
		"title":        stdlib.TitleFunc,
		"trimspace":    stdlib.TrimSpaceFunc,
		"replace":      stdlib.ReplaceFunc,
		"min":          stdlib.MinFunc,
		"max":          stdlib.MaxFunc,
		"tostring":     stdlib.MakeToFunc(cty.String),
		"tonumber":     stdlib.MakeToFunc(cty.Number),
		"tolist":       stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"toset":        stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tomap":        stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
	}
}

func fileFunc(resolve func(string) (string, error), onFile func(name, text string)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			b, err := readExperimentFile(resolve, args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			if onFile != nil {
				onFile(args[0].AsString(), string(b))
			}
			return cty.StringVal(string(b)), nil
		},
	})
}

// templateFileFunc renders a file with HCL template syntax (${...}, %{for}),
// with only the variables passed in the second argument in scope.
func templateFileFunc(resolve func(string) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{
			{Name: "path", Type: cty.String},
			{Name: "vars", Type: cty.DynamicPseudoType},
		},
		Type: function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			b, err := readExperimentFile(resolve, name)
			if err != nil {
				return cty.NilVal, err
			}
			if d := checkText(name, b, true); d != nil {
				return cty.NilVal, fmt.Errorf("template %q, line %d: %s", name, d.Subject.Start.Line, d.Detail)
			}
			expr, diags := hclsyntax.ParseTemplate(b, name, hcl.Pos{Line: 1, Column: 1, Byte: 0})
			if diags.HasErrors() {
				return cty.NilVal, fmt.Errorf("template %q: %s", name, diags.Error())
			}
			vars := map[string]cty.Value{}
			if v := args[1]; !v.IsNull() {
				if !v.Type().IsObjectType() && !v.Type().IsMapType() {
					return cty.NilVal, fmt.Errorf("templatefile vars must be an object or map")
				}
				for it := v.ElementIterator(); it.Next(); {
					k, ev := it.Element()
					vars[k.AsString()] = ev
				}
			}
			out, diags := expr.Value(&hcl.EvalContext{Variables: vars, Functions: functions(resolve, nil)})
			if diags.HasErrors() {
				return cty.NilVal, fmt.Errorf("template %q: %s", name, diags.Error())
			}
			if out.Type() != cty.String {
				return cty.NilVal, fmt.Errorf("template %q did not produce a string", name)
			}
			return out, nil
		},
	})
}
