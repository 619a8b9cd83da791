// Package report implements the "report" stage type: a table whose rows are
// stage instances (typically one per model) and whose columns are aggregate
// metrics (any stage producing stages.Score), written as Markdown, CSV, JSON
// and LaTeX. Its one node writes files (stages.Node.WritesFiles): its output
// is a stages.Files, which the engine writes to the experiment's results
// folder. Files of an instance fed by a mock provider (Instance.Synthetic)
// are labelled SYNTHETIC.
package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

func init() { stages.Register(reportType{}) }

// extensions maps each format a report can be written in to its file extension.
var extensions = map[string]string{"markdown": ".md", "csv": ".csv", "json": ".json", "latex": ".tex"}

type reportType struct{}

func (reportType) Name() string    { return "report" }
func (reportType) Version() string { return "1" }

func (reportType) Params() []stages.Param {
	return []stages.Param{
		{Name: "rows", Kind: stages.Inputs, Required: true, Doc: "stage instances to tabulate, one row each (labelled by instance key)"},
		{Name: "columns", Kind: stages.Inputs, Required: true, Doc: "aggregate stages (insight_score, ...), one column per stage"},
		{Name: "formats", Kind: stages.StringList, Default: []string{"markdown", "csv"}, Doc: `files to write: "markdown", "csv", "json", "latex"`},
		{Name: "title", Kind: stages.String, Doc: "table title; default: the report name"},
	}
}

// table is a report laid out: which dep feeds which cell.
type table struct {
	name      string
	title     string
	synthetic bool
	formats   []string
	rows      []string // labels
	columns   []string // labels, e.g. "insight_score.novelty"
	// source[r][c] is the address of the column instance whose score fills
	// the cell, or "" when no instance of the column's stage matches the row.
	// Inputs are matched to it by In.From, never by their position.
	source [][]string
	// inputs counts the column instances, one dep each.
	inputs int
}

func (reportType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	t, deps, err := layoutTable(inst)
	if err != nil {
		return nil, err
	}
	return []stages.Node{{
		Deps:         deps,
		AllowMissing: true,
		WritesFiles:  true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			scores, err := t.index(in)
			if err != nil {
				return nil, err
			}
			return &stages.Work{Compute: func() ([]byte, error) {
				out, err := t.render(scores)
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(out)
				if err != nil {
					return nil, fmt.Errorf("encode report: %w", err)
				}
				return b, nil
			}}, nil
		},
	}}, nil
}

func layoutTable(inst *stages.Instance) (*table, []stages.Dep, error) {
	p := inst.Params
	t := &table{name: reportName(inst.Address), title: p.String("title"), synthetic: inst.Synthetic}
	if t.title == "" {
		t.title = t.name
	}
	t.formats = p.Strings("formats")
	if len(t.formats) == 0 {
		return nil, nil, stages.ParamErrorf("formats", "formats is empty; give at least one of %s", formatList())
	}
	for _, f := range t.formats {
		if _, ok := extensions[f]; !ok {
			return nil, nil, stages.ParamErrorf("formats", "formats: unknown format %q (known: %s)", f, formatList())
		}
	}
	rows, cols := p.Inputs("rows"), p.Inputs("columns")
	if len(rows) == 0 {
		return nil, nil, stages.ParamErrorf("rows", "rows is empty; give the stage whose instances are the rows")
	}
	if len(cols) == 0 {
		return nil, nil, stages.ParamErrorf("columns", "columns is empty; give at least one aggregate stage")
	}

	rowKeys := make([]string, len(rows))
	seenRow := map[string]bool{}
	for i, r := range rows {
		label := r.Key
		if label == "" {
			label = r.Address
		}
		if seenRow[label] {
			return nil, nil, stages.ParamErrorf("rows", "rows: two rows are labelled %q; list each instance once", label)
		}
		seenRow[label] = true
		t.rows = append(t.rows, label)
		rowKeys[i] = r.Key
	}

	// Group column instances by stage (address without instance key). Each
	// instance has one node and gets one dep; Dep.Index counts across the
	// listed instances' nodes in list order, as the Dep contract says.
	type group struct {
		label string
		byKey map[string]string // instance key -> instance address
	}
	var groups []*group
	byAddr := map[string]*group{}
	var deps []stages.Dep
	offset := 0
	for _, c := range cols {
		if len(c.Nodes) != 1 || c.Nodes[0].Item != "" {
			return nil, nil, stages.ParamErrorf("columns", "columns: %s has %d nodes; a column must be an aggregate stage with one node (insight_score, ...)", c.Address, len(c.Nodes))
		}
		addr := stageAddress(c.Address)
		g := byAddr[addr]
		if g == nil {
			g = &group{label: strings.TrimPrefix(addr, "stage."), byKey: map[string]string{}}
			byAddr[addr] = g
			groups = append(groups, g)
		}
		if _, dup := g.byKey[c.Key]; dup {
			return nil, nil, stages.ParamErrorf("columns", "columns: %s is listed twice", c.Address)
		}
		g.byKey[c.Key] = c.Address
		deps = append(deps, stages.Dep{Input: "columns", Index: offset})
		offset += len(c.Nodes)
	}
	for _, g := range groups {
		t.columns = append(t.columns, g.label)
	}
	t.inputs = len(deps)
	t.source = make([][]string, len(rows))
	for r := range rows {
		t.source[r] = make([]string, len(groups))
		for c, g := range groups {
			if a, ok := g.byKey[""]; ok && len(g.byKey) == 1 {
				t.source[r][c] = a // a column stage without instances applies to every row
			} else if a, ok := g.byKey[rowKeys[r]]; ok {
				t.source[r][c] = a
			}
		}
	}
	return t, deps, nil
}

// index maps each column instance's address to its input, by In.From: the
// engine names the upstream every input belongs to, so the report need not
// work it out again from dep offsets. An input without From, or one the
// layout did not ask for, is an engine error and is reported as such.
func (t *table) index(in []stages.In) (map[string]*stages.In, error) {
	if len(in) != t.inputs {
		return nil, fmt.Errorf("report got %d inputs, want %d (one per column instance)", len(in), t.inputs)
	}
	scores := make(map[string]*stages.In, len(in))
	for i := range in {
		x := &in[i]
		if x.From == nil {
			return nil, fmt.Errorf("input %d (%s node %d) does not say which column instance it comes from (In.From is nil)", i, x.Input, x.Index)
		}
		if _, dup := scores[x.From.Address]; dup {
			return nil, fmt.Errorf("input %d: two inputs come from %s; each column instance has one", i, x.From.Address)
		}
		scores[x.From.Address] = x
	}
	for _, row := range t.source {
		for _, addr := range row {
			if _, ok := scores[addr]; addr != "" && !ok {
				return nil, fmt.Errorf("no input comes from column instance %s", addr)
			}
		}
	}
	return scores, nil
}

// reportName is NAME in "report.NAME", used for file names.
func reportName(address string) string {
	name := strings.TrimPrefix(address, "report.")
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == '"' || r == ' ' {
			return '_'
		}
		return r
	}, name)
}

// stageAddress strips the instance key: `stage.x.y["k"]` -> `stage.x.y`.
func stageAddress(address string) string {
	if i := strings.IndexByte(address, '['); i >= 0 {
		return address[:i]
	}
	return address
}

func formatList() string {
	names := make([]string, 0, len(extensions))
	for f := range extensions {
		names = append(names, fmt.Sprintf("%q", f))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// LayoutWarnings says when a column fills no cell of any row: the rows'
// instance keys match none of the column's (a report over the wrong stage,
// or keys spelt differently), so the table would print n/a throughout.
func (reportType) LayoutWarnings(inst *stages.Instance) []*stages.ParamError {
	t, _, err := layoutTable(inst)
	if err != nil {
		return nil // Layout reports it as an error
	}
	var out []*stages.ParamError
	for c, col := range t.columns {
		filled := false
		for r := range t.rows {
			if t.source[r][c] != "" {
				filled = true
				break
			}
		}
		if !filled {
			out = append(out, &stages.ParamError{Param: "columns", Err: fmt.Errorf(
				"column %s matches no row: its instance keys (%s) are none of the rows' (%s), so every cell would be n/a; make the column stage fan out over the rows' stage",
				col, strings.Join(columnKeys(inst, col), ", "), strings.Join(t.rows, ", "))})
		}
	}
	return out
}

// columnKeys lists the instance keys of a column stage, as its block names them.
func columnKeys(inst *stages.Instance, col string) []string {
	var keys []string
	for _, c := range inst.Params.Inputs("columns") {
		if strings.TrimPrefix(stageAddress(c.Address), "stage.") == col {
			k := c.Key
			if k == "" {
				k = `""`
			}
			keys = append(keys, k)
		}
	}
	return keys
}
