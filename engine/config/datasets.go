package config

// dataset blocks.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
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

// checkDatasets gives each stage that checks its params against its
// dataset's values (stages.DatasetChecker) those values, and reports its
// complaints as warnings at the param. The dataset is read here once more
// than Build reads it, and only for such stages; a dataset that does not load
// is left to Build to report.
func (l *loader) checkDatasets() {
	loaded := map[string]map[string][]string{}
	for _, inst := range l.exp.Stages {
		c, ok := inst.Type.(stages.DatasetChecker)
		if !ok {
			continue
		}
		for _, p := range inst.Type.Params() {
			ref, ok := inst.Params[p.Name].(InputRef)
			if !ok || !strings.HasPrefix(ref.Address, "dataset.") {
				continue
			}
			values, seen := loaded[ref.Address]
			if !seen {
				ds := l.exp.Datasets[strings.TrimPrefix(ref.Address, "dataset.")]
				if items, err := ds.Items(); err == nil {
					values = datasets.Values(items, c.DatasetFields())
				}
				loaded[ref.Address] = values
			}
			if values == nil {
				continue
			}
			for _, pe := range c.CheckDataset(inst.Params, values) {
				r := inst.DeclRange
				if pr, ok := inst.ParamRanges[pe.Param]; ok {
					r = pr
				}
				l.diags = append(l.diags, &hcl.Diagnostic{
					Severity: hcl.DiagWarning,
					Summary:  fmt.Sprintf("%s matches nothing in %s", pe.Param, ref.Address),
					Detail:   fmt.Sprintf("%s: %s. Use one of those values, or \"\" for any.", inst.Address, pe.Err),
					Subject:  &r,
				})
			}
		}
	}
}
