package config

// dataset blocks.

import (
	"math"
	"os"
	"path/filepath"

	"github.com/zclconf/go-cty/cty"
)

func (l *loader) evalDataset(d *decl) {
	a := d.content.Attributes
	ds := &Dataset{Name: d.name, DeclRange: d.declRange}
	ds.Format, _ = l.str(a, "format", nil)
	path, _ := l.str(a, "path", nil)
	if path != "" {
		ds.Path = path
		if !filepath.IsAbs(path) {
			ds.Path = filepath.Join(l.exp.Dir, path)
		}
		if _, err := os.Stat(ds.Path); err != nil {
			l.errorf(a["path"].Expr.Range().Ptr(), "Dataset file not found",
				"No file exists at %q (paths are relative to the experiment folder). Fix the path or add the file.", path)
		}
	}
	ds.IDField, _ = l.str(a, "id_field", nil)
	// A limit past what node indexes can count (int32 in the graph) is a typo.
	ds.Limit, _ = l.intIn(a, "limit", nil, 0, math.MaxInt32)
	l.exp.Datasets[d.name] = ds
	l.values.ns["dataset"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(d.addr), "name": cty.StringVal(d.name),
	})
}
