package config

import (
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/ideaflow/ideaflow/datafetch"
)

// authorsFileFunc is authors_file(set, path): where `ideaflow data get SET`
// put the authors' file or folder path (its path in their repository), in
// the data folder ($IDEAFLOW_DATA_DIR, else the user's cache folder +
// /ideaflow-data). It fails, saying what to run or download, unless every
// file at or under path is there with its pinned sha256, so an experiment
// reads the authors' bytes or nothing. A variable's default may call it:
// a -var that sets the variable skips it.
func authorsFileFunc(resolve func(string) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{
			{Name: "set", Type: cty.String},
			{Name: "path", Type: cty.String},
		},
		Type: function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			baseDir, err := resolve(".") // the experiment folder
			if err != nil {
				return cty.NilVal, err
			}
			p, err := datafetch.Find(datafetch.DefaultDir(baseDir), args[0].AsString(), args[1].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(p), nil
		},
	})
}
