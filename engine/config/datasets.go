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
		ds.Path = l.inputPath(a["path"], path, datasets.IsFolderFormat(ds.Format), "Dataset file")
		ds.refused = !l.pathOK[ds.Path]
	}
	if l.confine != nil {
		ds.Select.Confine = l.confine.check
	}
	ds.IDField, _ = l.str(a, "id_field", nil)
	// A limit past what node indexes can count (int32 in the graph) is a typo.
	ds.Limit, _ = l.intIn(a, "limit", nil, 0, math.MaxInt32)
	l.evalSelection(a, ds)
	l.evalCategories(a, ds)
	l.exp.Datasets[d.name] = ds
	l.values.ns["dataset"][d.name] = cty.ObjectVal(map[string]cty.Value{
		refAttr: cty.StringVal(d.addr), "name": cty.StringVal(d.name),
	})
}

// inputPath resolves a file (or, for a folder format, a folder) a dataset
// reads, as written at attribute a, and checks it now, at a: it exists, is a
// regular file within datasets.MaxDatasetBytes (a named pipe would block the
// load, a device never end it) or a folder, and --confine allows it. It
// returns the path to read; l.pathOK says whether the checks passed.
func (l *loader) inputPath(a *hcl.Attribute, name string, folder bool, what string) string {
	at := a.Expr.Range().Ptr()
	path, err := l.resolve(name)
	if err != nil {
		l.errorf(at, what+" not allowed", "%s.", err)
		return name
	}
	if folder {
		err = datasets.CheckFolder(path)
	} else {
		err = checkFile(name, path, datasets.MaxDatasetBytes)
	}
	if err != nil {
		summary := what + " not found"
		if _, serr := os.Stat(path); serr == nil {
			summary = what + " cannot be read"
		}
		l.errorf(at, summary, "%s: %s. Fix the path or add the file.", what, err)
		return path
	}
	if l.pathOK == nil {
		l.pathOK = map[string]bool{}
	}
	l.pathOK[path] = true
	return path
}

// maxDatasetReferences bounds min_references: far past any paper's
// reference list, so only a typo meets it (filter_references' bound too).
const maxDatasetReferences = 100_000

// evalSelection reads the attributes that join references to the targets and
// select among them. Each is refused at its attribute for a format it means
// nothing to, rather than ignored: a min_references on a generic CSV would
// otherwise keep every row and look applied.
func (l *loader) evalSelection(a hcl.Attributes, ds *Dataset) {
	ideabench := strings.HasPrefix(ds.Format, "ideabench")
	if refs, ok := l.str(a, "references", nil); ok && refs != "" {
		at := a["references"].Expr.Range().Ptr()
		ext := strings.ToLower(filepath.Ext(refs))
		switch {
		case ds.Format != "ideabench-targets-csv":
			l.errorf(at, "references needs format ideabench-targets-csv",
				"A references file is joined to the published target list (format \"ideabench-targets-csv\"); format %q carries its references in each record. Remove references, or change the format.", ds.Format)
		case ext != ".csv" && ext != ".jsonl":
			l.errorf(at, "Unknown references file type",
				"A references file is read by its extension, .csv or .jsonl; %q has neither. Rename the file.", refs)
		default:
			ds.Select.References = l.inputPath(a["references"], refs, false, "References file")
			ds.refused = ds.refused || !l.pathOK[ds.Select.References]
		}
	}
	if n, ok := l.intIn(a, "min_references", nil, 0, maxDatasetReferences); ok && n > 0 {
		if !ideabench {
			l.errorf(a["min_references"].Expr.Range().Ptr(), "min_references needs an IdeaBench format",
				"min_references counts each target's references; format %q has none. Remove min_references, or use format \"ideabench\" or \"ideabench-targets-csv\" with references.", ds.Format)
		}
		ds.Select.MinReferences = n
	}
	ds.Select.Sample, _ = l.intIn(a, "sample", nil, 0, math.MaxInt32)
	ds.Select.SampleSeed, _ = l.intIn(a, "sample_seed", nil, 0, math.MaxInt32)
	if _, ok := a["sample_seed"]; ok && ds.Select.Sample == 0 {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "sample_seed without sample",
			Detail:   "sample_seed chooses the items sample = k keeps; without sample every item is kept. Add sample = k, or remove sample_seed.",
			Subject:  a["sample_seed"].Expr.Range().Ptr(),
		})
	}
}

// options are the dataset's load options.
func (d *Dataset) options() datasets.Options {
	o := d.Select
	o.IDField, o.Limit = d.IDField, d.Limit
	return o
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
				d := &hcl.Diagnostic{
					Severity: hcl.DiagWarning,
					Summary:  fmt.Sprintf("%s matches nothing in %s", pe.Param, ref.Address),
					Detail:   fmt.Sprintf("%s: %s. Use one of those values, or \"\" for any.", inst.Address, pe.Err),
					Subject:  &r,
				}
				if pe.Param == p.Name {
					// A complaint about the dataset itself, not a value
					// checked against it: the stage cannot run on it at
					// all (targets without references), so it is an
					// error, and the stage's message says what to do.
					d.Severity = hcl.DiagError
					d.Summary = fmt.Sprintf("%s cannot feed %s", ref.Address, inst.Block)
					d.Detail = fmt.Sprintf("%s: %s: %s.", inst.Address, ref.Address, pe.Err)
				}
				l.diags = append(l.diags, d)
			}
		}
	}
}

// evalCategories reads the categories file that labels a keyword list with
// domains, and warns at it about the keywords it does not list: they load
// without a domain, so the per-domain results leave them out. The dataset
// is loaded here only when the attribute is set (Build reads the same load).
func (l *loader) evalCategories(a hcl.Attributes, ds *Dataset) {
	cats, ok := l.str(a, "categories", nil)
	if !ok || cats == "" {
		return
	}
	at := a["categories"].Expr.Range().Ptr()
	if !datasets.IsKeywordFormat(ds.Format) {
		l.errorf(at, "categories needs a keyword format",
			"A categories file labels keywords with their domain (formats \"liveideabench-keywords\" and \"keywords\"); format %q has no keywords. Remove categories, or change the format.", ds.Format)
		return
	}
	if ds.Select.Categories = l.inputPath(a["categories"], cats, false, "Categories file"); !l.pathOK[ds.Select.Categories] {
		ds.refused = true
		return
	}
	if ds.Path == "" {
		return
	}
	items, err := ds.Items()
	if err != nil {
		return // Build reports it at the dataset
	}
	if missing := datasets.Unlabelled(items); len(missing) > 0 {
		shown := missing[:min(5, len(missing))]
		more := ""
		if len(missing) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
		}
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  fmt.Sprintf("%d of %d keywords have no category", len(missing), len(items)),
			Detail:   fmt.Sprintf("%s does not list %q%s; they load without a domain and the per-domain results leave them out. Add them to the file if they belong to a domain.", cats, shown, more),
			Subject:  at,
		})
	}
}
