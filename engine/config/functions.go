package config

import (
	"fmt"
	"os"
	"path/filepath"

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
func functions(baseDir string, onFile func(name, text string)) map[string]function.Function {
	return map[string]function.Function{
		"file":         fileFunc(baseDir, onFile),
		"templatefile": templateFileFunc(baseDir),
		"authors_file": authorsFileFunc(baseDir),
		"setproduct":   stdlib.SetProductFunc,
		"range":        stdlib.RangeFunc,
		"jsonencode":   stdlib.JSONEncodeFunc,
		"jsondecode":   stdlib.JSONDecodeFunc,
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

func readExperimentFile(baseDir, name string) ([]byte, error) {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(baseDir, name)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("no file exists at %q (paths are relative to the experiment folder)", name)
		}
		return nil, fmt.Errorf("read %q: %w", name, err)
	}
	return b, nil
}

func fileFunc(baseDir string, onFile func(name, text string)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			b, err := readExperimentFile(baseDir, args[0].AsString())
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
func templateFileFunc(baseDir string) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{
			{Name: "path", Type: cty.String},
			{Name: "vars", Type: cty.DynamicPseudoType},
		},
		Type: function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			b, err := readExperimentFile(baseDir, name)
			if err != nil {
				return cty.NilVal, err
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
			out, diags := expr.Value(&hcl.EvalContext{Variables: vars, Functions: functions(baseDir, nil)})
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
