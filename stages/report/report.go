// Package report implements the "report" stage type: a table laid out the
// way papers lay them out. Its rows are stage instances (typically one per
// model, or one per arm of an ablation grid) whose instance keys split into
// named row dimensions (model, scenario, number of references, ...); its
// columns are aggregate metrics (any stage producing stages.Score), one per
// column stage, optionally crossed with a dimension moved into the columns
// (a pivot). It is written as Markdown, CSV, JSON and LaTeX (booktabs).
//
// Its one node writes files (stages.Node.WritesFiles): its output is a
// stages.Files, which the engine writes to the experiment's results folder.
// A cell whose score rests on an answer of the mock (as the records it was
// computed from say: stages.In.Provenance) is synthetic. A table of only
// synthetic cells opens with the SYNTHETIC banner; a table that mixes them
// with real ones says at the top how many are synthetic and marks exactly
// those cells (MixedMark), in every format.
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

func (reportType) Name() string { return "report" }

// Version 2: row dimensions, labels, pivots, number formats, bold best,
// CIs and count footnotes changed every format's layout. Version 3:
// synthetic cells are marked one by one, from their inputs' records
// (CSV and JSON gained per-cell synthetic fields).
// Version 4: the output carries the table for the page beside the files.
// Version 5: LaTeX states its packages, fits a width, breaks long headers;
// intervals, common items, N column, extra columns, arrows, underlines.
func (reportType) Version() string { return "5" }

func (reportType) Params() []stages.Param {
	return []stages.Param{
		{Name: "rows", Kind: stages.Inputs, Required: true, Doc: "stage instances to tabulate, one row each (labelled by instance key, split into row_dims)"},
		{Name: "columns", Kind: stages.Inputs, Required: true, Doc: "aggregate stages (insight_score, ...), one column per stage, matched to rows by instance key"},
		{Name: "formats", Kind: stages.StringList, Default: []string{"markdown", "csv"}, Doc: `files to write: "markdown", "csv", "json", "latex"`},
		{Name: "title", Kind: stages.String, Doc: "table title (Markdown heading, LaTeX caption); default: the report name"},
		{Name: "row_dims", Kind: stages.StringList, Doc: `names of the parts of each row key split on key_separator, e.g. ["model", "scenario"] for keys "gpt4o/high"; a dimension named "model" shows model names; default: one unnamed dimension, the whole key`},
		{Name: "key_separator", Kind: stages.String, Default: "/", Doc: "what row keys are split on into row_dims"},
		{Name: "pivot", Kind: stages.String, Doc: "a row dimension whose values become columns: each column stage gets one column per value (IdeaBench Table 2: filtered / unfiltered)"},
		{Name: "row_order", Kind: stages.StringList, Doc: "dimension values in the order rows (and pivot columns) should come; values not listed follow, numbers ascending, else in key order"},
		{Name: "labels", Kind: stages.StringMap, Doc: `display text for column stages, dimension names and dimension values: { "insight_score.novelty" = "Novelty", model = "Model", gpt4o = "GPT-4o" }`},
		{Name: "better", Kind: stages.StringMap, Doc: `per column stage, "higher" or "lower": the best value of each column is printed bold`},
		{Name: "digits", Kind: stages.Int, Default: 3, Min: 0, Max: 12, Doc: "decimals of every value (a column's number_format overrides it)"},
		{Name: "ci_digits", Kind: stages.Int, Default: 2, Min: 0, Max: 12, Doc: "decimals of confidence interval bounds (Score extra ci_low, ci_high), printed as 0.614 [0.58, 0.65]"},
		{Name: "width", Kind: stages.String, Default: widthColumn, Doc: `what the LaTeX table is fitted to: "\\columnwidth" (one column of a two-column paper), "\\textwidth" (the page, as table*) or "natural"; a tabular wider than that is scaled down to it (graphicx's \resizebox; numbers cannot wrap), a narrower one is left as set`},
		{Name: "common_items", Kind: stages.Bool, Default: false, Doc: "score every row on the items all rows share: each value whose statistic the report can recompute (a mean or percentile of its stage's per-item values) is recomputed over the items every such cell has, stated once in a note (IdeaBench Table 1: Low rows over 435 targets, High over 461, all over the 435)"},
		{Name: "item_name", Kind: stages.String, Default: "items", Doc: `what the items are called in notes: "targets", "keywords", "ideas"`},
		{Name: "excluded_because", Kind: stages.String, Default: "that some rows lack", Doc: `with common_items, why the other items are out, as the note says it: "26 targets without filtered references excluded"`},
		{Name: "counts", Kind: stages.String, Default: "notes", Doc: `how counts are shown: "notes" (a note per column stage, a footnote on each cell whose count differs) or "column" (an N column per row, footnotes only for cells without a value)`},
		{Name: "intervals", Kind: stages.Bool, Default: true, Doc: "print a 95% percentile bootstrap interval (1000 resamples over the items, seed 0) beside each value whose stage gave none, when the value is a mean or percentile of its per-item values; false: only the stages' own intervals"},
		{Name: "extra_columns", Kind: stages.StringList, Doc: `columns of a Score's named extra values, each "STAGE:EXTRA" after its stage's column: ["position_bias.novelty:p_value", "position_bias.novelty:biased"]; labels, better and number_format take the same names`},
		{Name: "sort_by", Kind: stages.String, Doc: `a column stage ("liveideabench_score.average") to order the rows by, best first by its better direction (higher when it has none), rows without a value last: a leaderboard; default: row_order`},
		{Name: "notes_from", Kind: stages.Inputs, Doc: "aggregate stages (one instance each) whose value is stated in a note under the table rather than as a column (IdeaBench Table 1's upper limit)"},
		{Name: "number_format", Kind: stages.StringMap, Doc: `per column stage, a printf format for its values and CI bounds with one of the verbs %f %e %g: { "overlap_score.main" = "%.1f" }`},
	}
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
				table, err := t.pageTable(scores)
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(reportOutput{Files: out, Table: table})
				if err != nil {
					return nil, fmt.Errorf("encode report: %w", err)
				}
				return b, nil
			}}, nil
		},
	}}, nil
}

// reportOutput is the report node's output: the files it writes, and
// beside them its table as the JSON format lays it out (whatever formats
// the block asks for), which report.html shows (present.go): a page never
// reads a table back from its Markdown.
type reportOutput struct {
	*stages.Files
	Table json.RawMessage `json:"table"`
}

// pageTable is the table in the JSON format, rendered alone.
func (t *table) pageTable(scores map[string]*stages.In) (json.RawMessage, error) {
	only := *t
	only.formats = []string{"json"}
	f, err := only.render(scores)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(f.Files[t.name+extensions["json"]]), nil
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
		if x.Output != nil && stages.LacksField(x.Output, "value") {
			return nil, stages.MissingField(*x, "a column's score", "value")
		}
		id := sourceID(x.From, x.Node)
		if _, dup := scores[id]; dup {
			return nil, fmt.Errorf("input %d: two inputs come from %s; each column instance has one (per label)", i, id)
		}
		scores[id] = x
	}
	for _, row := range t.rows {
		for _, addr := range row.source {
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

// LayoutWarnings says when a column stage fills no cell of any row: the
// rows' instance keys match none of the column's (a report over the wrong
// stage, or keys spelt differently), so the table would print n/a throughout.
func (reportType) LayoutWarnings(inst *stages.Instance) []*stages.ParamError {
	t, _, err := layoutTable(inst)
	if err != nil {
		return nil // Layout reports it as an error
	}
	out := t.warnings
	for m, met := range t.metrics {
		filled := false
		for _, r := range t.rows {
			for c, col := range t.cols {
				if col.metric == m && r.source[c] != "" {
					filled = true
				}
			}
		}
		if !filled {
			out = append(out, &stages.ParamError{Param: "columns", Err: fmt.Errorf(
				"column %s matches no row: its instance keys (%s) are none of the rows' (%s), so every cell would be n/a; make the column stage fan out over the rows' stage",
				met.id, strings.Join(met.keys, ", "), strings.Join(t.rowKeys, ", "))})
		}
	}
	return out
}
