// Package report implements the "report" stage type: a table whose rows are
// stage instances (typically one per model) and whose columns are aggregate
// metrics (any stage producing stages.Score), written as Markdown, CSV, JSON
// and LaTeX. The engine turns each HCL `report "NAME"` block into an
// instance of it and writes the files of its output.
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
		{Name: "synthetic", Kind: stages.Bool, Doc: "set by the engine when a mock model fed the report; labels every file SYNTHETIC"},
	}
}

// Output is a report node's output: file name -> content.
type Output struct {
	Files map[string]string `json:"files"`
}

// table is a report laid out: which dep feeds which cell.
type table struct {
	name      string
	title     string
	synthetic bool
	formats   []string
	rows      []string // labels
	columns   []string // labels, e.g. "insight_score.novelty"
	// source[r][c] is the dep index of the cell's score, or -1 when no
	// instance of the column's stage matches the row.
	source [][]int
}

func (reportType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	t, deps, err := layoutTable(inst)
	if err != nil {
		return nil, err
	}
	return []stages.Node{{
		Deps:         deps,
		AllowMissing: true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				out, err := t.render(in)
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
	t := &table{name: reportName(inst.Address), title: p.String("title"), synthetic: p.Bool("synthetic")}
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

	// Group column instances by stage (address without instance key); deps
	// count across the listed instances' nodes in list order.
	type group struct {
		label string
		byKey map[string]int // instance key -> dep index
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
			g = &group{label: strings.TrimPrefix(addr, "stage."), byKey: map[string]int{}}
			byAddr[addr] = g
			groups = append(groups, g)
		}
		if _, dup := g.byKey[c.Key]; dup {
			return nil, nil, stages.ParamErrorf("columns", "columns: %s is listed twice", c.Address)
		}
		g.byKey[c.Key] = len(deps)
		deps = append(deps, stages.Dep{Input: "columns", Index: offset})
		offset += len(c.Nodes)
	}
	for _, g := range groups {
		t.columns = append(t.columns, g.label)
	}
	t.source = make([][]int, len(rows))
	for r := range rows {
		t.source[r] = make([]int, len(groups))
		for c, g := range groups {
			t.source[r][c] = -1
			if d, ok := g.byKey[""]; ok && len(g.byKey) == 1 {
				t.source[r][c] = d // a column stage without instances applies to every row
			} else if d, ok := g.byKey[rowKeys[r]]; ok {
				t.source[r][c] = d
			}
		}
	}
	return t, deps, nil
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
