package report

import (
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// table is a report laid out: its rows (distinct values of the row
// dimensions that stay in rows), its columns (column stages, crossed with
// the pivot's values) and, for each cell, the column instance whose score
// fills it. Inputs are matched to cells by In.From, never by position.
type table struct {
	name, title string
	formats     []string
	// width is what a LaTeX table is fitted to (widths).
	width string
	// common: score every row on the items all rows share (common_items);
	// itemName names them in notes, excludedBecause says why the others
	// are out.
	common                    bool
	itemName, excludedBecause string
	// countsColumn: a per-row N column instead of footnotes on counts.
	countsColumn bool
	// intervals: bootstrap an interval for each value its stage gave none.
	intervals bool
	// sortBy is the column stage rows are sorted by, "" for layout order.
	sortBy string
	// noteMetrics are the notes_from stages, stated in a note each.
	noteMetrics []*metric

	// dims are the row dimensions shown as leading columns (the pivot
	// excluded); "" names the default dimension, the whole key.
	dims      []string
	dimLabels []string
	// pivot is the dimension moved into the columns, "" when none.
	pivot       string
	pivotLabel  string
	pivotValues []string
	pivotLabels []string

	metrics []*metric
	cols    []column
	rows    []*tableRow
	// rowKeys are the row instances' keys (or addresses), as given.
	rowKeys []string
	// inputs counts the column instances, one dep each.
	inputs           int
	digits, ciDigits int
	// warnings are complaints that do not stop the report (an unknown
	// label key may come from labels shared by several reports).
	warnings []*stages.ParamError
}

// metric is one column stage (block): its instances by key.
type metric struct {
	id     string            // "insight_score.novelty"
	label  string            // labels[id], else id
	byKey  map[string]string // instance key -> instance address
	keys   []string          // instance keys as written, for warnings
	better string            // "higher", "lower" or ""
	printf string            // number_format, "" for digits
	// extra names the Score extra this column shows (extra_columns:
	// "position_bias.novelty:p_value"), "" for the score's value.
	extra string
}

// column is one column of numbers: a metric, at one pivot value.
type column struct {
	metric int
	pivot  int    // index into pivotValues; -1 without a pivot
	id     string // "insight_score.novelty", or "insight_score.novelty[filtered]"
}

type tableRow struct {
	values []string // raw values of the row dimensions
	labels []string // their display text
	// source[c] is the address of the column instance filling column c, ""
	// when none; noRow[c] says no row instance has this row's values at
	// column c's pivot value.
	source []string
	noRow  []bool
}

// rowInst is one row instance, its key split into dimension values.
type rowInst struct {
	key   string
	parts []string
	gen   *stages.Model
}

// printfVerb is the one number verb a number_format may hold.
var printfVerb = regexp.MustCompile(`%[-+ #0]*[0-9]*(\.[0-9]+)?[eEfFgG]`)

func layoutTable(inst *stages.Instance) (*table, []stages.Dep, error) {
	p := inst.Params
	t := &table{name: reportName(inst.Address), title: p.String("title"),
		digits: p.Int("digits"), ciDigits: p.Int("ci_digits")}
	if t.title == "" {
		t.title = t.name
	}
	t.width = p.String("width")
	if !slices.Contains(widths, t.width) {
		return nil, nil, stages.ParamErrorf("width", "width = %q; use %s (fit the table to a column, the default), %s (the page, in table*) or %q (as set)", t.width, widthColumn, widthText, widthNatural)
	}
	t.common, t.intervals = p.Bool("common_items"), p.Bool("intervals")
	t.itemName, t.excludedBecause = p.String("item_name"), p.String("excluded_because")
	switch c := p.String("counts"); c {
	case "notes":
	case "column":
		t.countsColumn = true
	default:
		return nil, nil, stages.ParamErrorf("counts", `counts = %q; use "notes" (a note per column stage, a footnote per cell that differs) or "column" (an N column per row; footnotes only for missing cells)`, c)
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
	labels := p.StringMap("labels")

	insts, dimNames, err := splitRows(t, rows, p.Strings("row_dims"), p.String("key_separator"))
	if err != nil {
		return nil, nil, err
	}
	metrics, deps, err := groupColumns(cols, "columns")
	if err != nil {
		return nil, nil, err
	}
	if t.metrics, err = withExtras(metrics, p.Strings("extra_columns")); err != nil {
		return nil, nil, err
	}
	if nf := p.Inputs("notes_from"); len(nf) > 0 {
		nm, ndeps, err := groupColumns(nf, "notes_from")
		if err != nil {
			return nil, nil, err
		}
		for _, m := range nm {
			if l, ok := labels[m.id]; ok {
				m.label = l
			}
			if len(m.byKey) != 1 {
				return nil, nil, stages.ParamErrorf("notes_from", "notes_from: %s has %d instances; a note states one value, so give one instance (stage.x.y[\"key\"])", m.id, len(m.byKey))
			}
		}
		t.noteMetrics = nm
		deps = append(deps, ndeps...)
	}
	t.inputs = len(deps)
	if err := t.metricOptions(p.StringMap("better"), p.StringMap("number_format"), labels); err != nil {
		return nil, nil, err
	}

	if sb := p.String("sort_by"); sb != "" {
		if !slices.ContainsFunc(t.metrics, func(m *metric) bool { return m.id == sb }) {
			return nil, nil, stages.ParamErrorf("sort_by", "sort_by %q is not a column stage of this report; name one of %s", sb, t.metricIDs())
		}
		if p.String("pivot") != "" {
			return nil, nil, stages.ParamErrorf("sort_by", "sort_by sorts rows by one column; with a pivot a column stage has several, so leave sort_by out or the pivot")
		}
		t.sortBy = sb
	}
	pivot := -1
	if pv := p.String("pivot"); pv != "" {
		for d, name := range dimNames {
			if name == pv && name != "" {
				pivot = d
			}
		}
		if pivot < 0 {
			return nil, nil, stages.ParamErrorf("pivot", "pivot %q is not a row dimension; name one of row_dims (%s)", pv, quoteList(dimNames))
		}
	}

	values := orderValues(insts, len(dimNames), p.Strings("row_order"))
	t.warnUnknownOrder(p.Strings("row_order"), values)
	display := displayNames(insts, dimNames, labels)
	t.warnUnknownLabels(labels, dimNames, values, insts)

	for d, name := range dimNames {
		if d == pivot {
			t.pivot, t.pivotLabel = name, labelOf(labels, name)
			t.pivotValues = values[d]
			for _, v := range values[d] {
				t.pivotLabels = append(t.pivotLabels, display[d][v])
			}
			continue
		}
		t.dims = append(t.dims, name)
		t.dimLabels = append(t.dimLabels, labelOf(labels, name))
	}

	for m, met := range t.metrics {
		if pivot < 0 {
			t.cols = append(t.cols, column{metric: m, pivot: -1, id: met.id})
			continue
		}
		for v, val := range t.pivotValues {
			t.cols = append(t.cols, column{metric: m, pivot: v, id: met.id + "[" + val + "]"})
		}
	}

	// Rows: the distinct values of the dimensions that stay in rows, each
	// dimension in its order, the first dimension first.
	rank := make([]map[string]int, len(dimNames))
	for d := range dimNames {
		rank[d] = map[string]int{}
		for i, v := range values[d] {
			rank[d][v] = i
		}
	}
	byParts := map[string]*rowInst{}
	seen := map[string]*tableRow{}
	for i := range insts {
		in := &insts[i]
		byParts[strings.Join(in.parts, "\x00")] = in
		var vals []string
		for d, v := range in.parts {
			if d != pivot {
				vals = append(vals, v)
			}
		}
		k := strings.Join(vals, "\x00")
		if seen[k] != nil {
			continue
		}
		r := &tableRow{values: vals}
		for d, v := range in.parts {
			if d != pivot {
				r.labels = append(r.labels, display[d][v])
			}
		}
		seen[k] = r
		t.rows = append(t.rows, r)
	}
	shown := make([]int, 0, len(dimNames))
	for d := range dimNames {
		if d != pivot {
			shown = append(shown, d)
		}
	}
	sort.SliceStable(t.rows, func(a, b int) bool {
		for j, d := range shown {
			ra, rb := rank[d][t.rows[a].values[j]], rank[d][t.rows[b].values[j]]
			if ra != rb {
				return ra < rb
			}
		}
		return false
	})

	for _, r := range t.rows {
		r.source = make([]string, len(t.cols))
		r.noRow = make([]bool, len(t.cols))
		for c, col := range t.cols {
			parts := r.values
			if pivot >= 0 {
				parts = make([]string, 0, len(dimNames))
				parts = append(parts, r.values[:pivot]...)
				parts = append(parts, t.pivotValues[col.pivot])
				parts = append(parts, r.values[pivot:]...)
			}
			in := byParts[strings.Join(parts, "\x00")]
			if in == nil {
				r.noRow[c] = true
				continue
			}
			met := t.metrics[col.metric]
			if a, ok := met.byKey[""]; ok && len(met.byKey) == 1 {
				r.source[c] = a // a column stage without instances applies to every row
			} else if a, ok := met.byKey[in.key]; ok {
				r.source[c] = a
			}
		}
	}
	return t, deps, nil
}

// splitRows names each row instance and splits its key into the values of
// the row dimensions. Without row_dims there is one unnamed dimension: the
// whole key (the address of an instance without one).
func splitRows(t *table, rows []*stages.Upstream, dims []string, sep string) ([]rowInst, []string, error) {
	seenDim := map[string]bool{}
	for _, d := range dims {
		switch {
		case strings.TrimSpace(d) == "":
			return nil, nil, stages.ParamErrorf("row_dims", "row_dims: a dimension has an empty name; name every part of the row keys")
		case seenDim[d]:
			return nil, nil, stages.ParamErrorf("row_dims", "row_dims: %q is named twice; each part of the row keys needs its own name", d)
		}
		seenDim[d] = true
	}
	if len(dims) > 1 && sep == "" {
		return nil, nil, stages.ParamErrorf("key_separator", `key_separator is empty; give the text row keys are split on into row_dims (e.g. "/")`)
	}
	var insts []rowInst
	seen := map[string]bool{}
	for _, r := range rows {
		label := r.Key
		if label == "" {
			label = r.Address
		}
		if seen[label] {
			return nil, nil, stages.ParamErrorf("rows", "rows: two rows are labelled %q; list each instance once", label)
		}
		seen[label] = true
		t.rowKeys = append(t.rowKeys, label)
		parts := []string{label}
		switch {
		case len(dims) > 0 && r.Key == "":
			return nil, nil, stages.ParamErrorf("row_dims", "row_dims: %s has no instance key to split; row_dims needs rows from a stage with for_each (or one that fans out)", r.Address)
		case len(dims) > 1:
			parts = strings.Split(r.Key, sep)
			if len(parts) != len(dims) {
				return nil, nil, stages.ParamErrorf("row_dims", "row_dims: row key %q splits on %q into %d part(s), but row_dims names %d (%s); make the for_each keys like %q or set key_separator",
					r.Key, sep, len(parts), len(dims), quoteList(dims), strings.Join(dims, sep))
			}
		}
		insts = append(insts, rowInst{key: r.Key, parts: parts, gen: r.Generator})
	}
	if len(dims) == 0 {
		dims = []string{""}
	}
	return insts, dims, nil
}

// groupColumns groups column instances by stage (address without instance
// key). An instance with one node gives one dep; an instance whose several
// aggregate nodes are labelled (coverage_score: "overall", "domain=ai", ...)
// gives one column stage per label, "STAGE/LABEL", and a dep per node.
// Dep.Index counts across the listed instances' nodes in list order, as the
// Dep contract says.
func groupColumns(cols []*stages.Upstream, input string) ([]*metric, []stages.Dep, error) {
	var metrics []*metric
	byAddr := map[string]*metric{}
	var deps []stages.Dep
	offset := 0
	for _, c := range cols {
		if err := checkColumn(c); err != nil {
			return nil, nil, err
		}
		addr := stageAddress(c.Address)
		for j, n := range c.Nodes {
			id, src := strings.TrimPrefix(addr, "stage."), c.Address
			if len(c.Nodes) > 1 {
				id, src = id+"/"+n.Label, sourceID(c, n)
			}
			m := byAddr[id]
			if m == nil {
				m = &metric{id: id, label: id, byKey: map[string]string{}}
				byAddr[id] = m
				metrics = append(metrics, m)
			}
			if _, dup := m.byKey[c.Key]; dup {
				return nil, nil, stages.ParamErrorf("columns", "columns: %s is listed twice", c.Address)
			}
			m.byKey[c.Key] = src
			k := c.Key
			if k == "" {
				k = `""`
			}
			m.keys = append(m.keys, k)
			deps = append(deps, stages.Dep{Input: input, Index: offset + j})
		}
		offset += len(c.Nodes)
	}
	return metrics, deps, nil
}

// withExtras puts after each column stage the columns of its Score
// extras that extra_columns names ("STAGE:EXTRA", e.g.
// "position_bias.novelty:p_value"), each read from the same inputs.
func withExtras(metrics []*metric, extras []string) ([]*metric, error) {
	if len(extras) == 0 {
		return metrics, nil
	}
	byBase := map[string][]*metric{}
	for _, e := range extras {
		base, name, ok := strings.Cut(e, ":")
		i := slices.IndexFunc(metrics, func(m *metric) bool { return m.id == base })
		switch {
		case !ok || name == "":
			return nil, stages.ParamErrorf("extra_columns", `extra_columns: %q is not "STAGE:EXTRA"; write e.g. "position_bias.novelty:p_value"`, e)
		case i < 0:
			ids := make([]string, len(metrics))
			for j, m := range metrics {
				ids[j] = m.id
			}
			return nil, stages.ParamErrorf("extra_columns", "extra_columns: %q names no column stage of this report (columns: %s)", base, quoteList(ids))
		}
		b := metrics[i]
		byBase[base] = append(byBase[base], &metric{id: e, label: e, byKey: b.byKey, keys: b.keys, extra: name})
	}
	var out []*metric
	for _, m := range metrics {
		out = append(out, m)
		out = append(out, byBase[m.id]...)
	}
	return out, nil
}

// checkColumn refuses a column instance that is not aggregates: one node,
// or several whose labels tell them apart.
func checkColumn(c *stages.Upstream) error {
	labels := map[string]bool{}
	for _, n := range c.Nodes {
		if n.Item != "" || (len(c.Nodes) > 1 && (n.Label == "" || labels[n.Label])) {
			return stages.ParamErrorf("columns", "columns: %s has %d nodes; a column must be an aggregate stage with one node (insight_score, ...), or with several labelled ones (coverage_score)", c.Address, len(c.Nodes))
		}
		labels[n.Label] = true
	}
	if len(c.Nodes) == 0 {
		return stages.ParamErrorf("columns", "columns: %s has no nodes; a column must be an aggregate stage (insight_score, ...)", c.Address)
	}
	return nil
}

// sourceID names the score a cell reads: its instance's address, with the
// node's label when the instance has several.
func sourceID(from *stages.Upstream, n stages.NodeInfo) string {
	if len(from.Nodes) > 1 {
		return from.Address + "#" + n.Label
	}
	return from.Address
}

// labelledElsewhere says id is "STAGE/LABEL" for a column stage of this
// report whose nodes are labelled (coverage_score's "overall",
// "domain=ai"), though none is labelled LABEL here: which labels a stage
// gives can depend on the data (a discipline the ideas do not cover), so a
// shared labels map naming one is no mistake. A misspelt STAGE still warns.
func (t *table) labelledElsewhere(id string) bool {
	base, label, ok := strings.Cut(id, "/")
	if !ok || label == "" {
		return false
	}
	return slices.ContainsFunc(t.metrics, func(m *metric) bool { return strings.HasPrefix(m.id, base+"/") })
}

// metricOptions applies labels, better and number_format to the column
// stages. A key that names no column stage is a warning (the map may be
// shared by several reports); a value that cannot be used is an error.
func (t *table) metricOptions(better, formats, labels map[string]string) error {
	byID := map[string]*metric{}
	for _, m := range t.metrics {
		byID[m.id] = m
		if l, ok := labels[m.id]; ok {
			m.label = l
		}
	}
	for _, id := range slices.Sorted(maps.Keys(better)) {
		m := byID[id]
		if m == nil {
			if t.labelledElsewhere(id) {
				continue
			}
			t.warnf("better", "better: %q is not a column stage of this report (columns: %s); it is ignored", id, t.metricIDs())
			continue
		}
		switch v := better[id]; v {
		case "higher", "lower":
			m.better = v
		default:
			return stages.ParamErrorf("better", `better: %q = %q; use "higher" or "lower"`, id, v)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(formats)) {
		m := byID[id]
		if m == nil {
			if t.labelledElsewhere(id) {
				continue
			}
			t.warnf("number_format", "number_format: %q is not a column stage of this report (columns: %s); it is ignored", id, t.metricIDs())
			continue
		}
		f := formats[id]
		rest := strings.ReplaceAll(f, "%%", "")
		if len(printfVerb.FindAllString(rest, -1)) != 1 || strings.Count(rest, "%") != 1 {
			return stages.ParamErrorf("number_format", `number_format: %q = %q; give a printf format with exactly one of the verbs %%f, %%e, %%g (e.g. "%%.2f"; %%%% for a literal percent sign)`, id, f)
		}
		m.printf = f
	}
	return nil
}

func (t *table) metricIDs() string {
	ids := make([]string, len(t.metrics))
	for i, m := range t.metrics {
		ids[i] = m.id
	}
	return quoteList(ids)
}

func (t *table) warnf(param, format string, args ...any) {
	t.warnings = append(t.warnings, stages.ParamErrorf(param, format, args...).(*stages.ParamError))
}

// orderValues lists each dimension's distinct values in table order: those
// named in rowOrder first, in its order; then the rest, ascending when they
// are all numbers (1, 3, 5, 10: not as text, where 10 sorts before 3), else
// in the order the rows came (by key).
func orderValues(insts []rowInst, ndims int, rowOrder []string) [][]string {
	pos := map[string]int{}
	for i, v := range rowOrder {
		if _, dup := pos[v]; !dup {
			pos[v] = i
		}
	}
	out := make([][]string, ndims)
	for d := 0; d < ndims; d++ {
		var listed, rest []string
		seen := map[string]bool{}
		for _, in := range insts {
			v := in.parts[d]
			if seen[v] {
				continue
			}
			seen[v] = true
			if _, ok := pos[v]; ok {
				listed = append(listed, v)
			} else {
				rest = append(rest, v)
			}
		}
		sort.SliceStable(listed, func(a, b int) bool { return pos[listed[a]] < pos[listed[b]] })
		if allNumbers(rest) {
			sort.SliceStable(rest, func(a, b int) bool {
				x, _ := strconv.ParseFloat(rest[a], 64)
				y, _ := strconv.ParseFloat(rest[b], 64)
				return x < y
			})
		}
		out[d] = append(listed, rest...)
	}
	return out
}

func allNumbers(vs []string) bool {
	for _, v := range vs {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
	}
	return len(vs) > 0
}

// displayNames gives each dimension value its display text: its label;
// else, in a dimension named "model" (or the default one), the name of the
// model that generated the row when the value names it (by block name or by
// name), so rows read "gpt-4o-2024-08-06" rather than "gpt4o"; else the value.
func displayNames(insts []rowInst, dims []string, labels map[string]string) []map[string]string {
	out := make([]map[string]string, len(dims))
	for d, name := range dims {
		out[d] = map[string]string{}
		for _, in := range insts {
			v := in.parts[d]
			if _, done := out[d][v]; done {
				continue
			}
			text := v
			if l, ok := labels[v]; ok {
				text = l
			} else if (name == "model" || name == "") && in.gen != nil && (v == in.gen.Name || v == blockName(in.gen)) {
				text = in.gen.Name
				if l, ok := labels[blockName(in.gen)]; ok {
					text = l
				} else if l, ok := labels[in.gen.Name]; ok {
					text = l
				}
			}
			out[d][v] = text
		}
	}
	return out
}

func blockName(m *stages.Model) string { return strings.TrimPrefix(m.Address, "model.") }

func labelOf(labels map[string]string, name string) string {
	if l, ok := labels[name]; ok {
		return l
	}
	return name
}

// warnUnknownLabels warns about label keys that name nothing in this table
// (a typo, or labels shared with another report).
func (t *table) warnUnknownLabels(labels map[string]string, dims []string, values [][]string, insts []rowInst) {
	known := map[string]bool{}
	for _, m := range t.metrics {
		known[m.id] = true
	}
	for _, m := range t.noteMetrics {
		known[m.id] = true
	}
	for d, name := range dims {
		known[name] = true
		for _, v := range values[d] {
			known[v] = true
		}
	}
	for _, in := range insts {
		if in.gen != nil {
			known[in.gen.Name], known[blockName(in.gen)] = true, true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if !known[k] && !t.labelledElsewhere(k) {
			t.warnf("labels", "labels: %q names no column stage (%s), row dimension or dimension value of this report; it is ignored", k, t.metricIDs())
		}
	}
}

func (t *table) warnUnknownOrder(order []string, values [][]string) {
	known := map[string]bool{}
	for _, vs := range values {
		for _, v := range vs {
			known[v] = true
		}
	}
	for _, v := range order {
		if !known[v] {
			t.warnf("row_order", "row_order: %q is no value of the row dimensions (row keys: %s); it is ignored", v, strings.Join(t.rowKeys, ", "))
		}
	}
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// colLabel describes a column for notes: "Novelty" or "Novelty (filtered)",
// on one line (a label's "\n" is where a LaTeX header breaks).
func (t *table) colLabel(c column) string {
	l := t.metrics[c.metric].label
	if c.pivot >= 0 {
		l += " (" + t.pivotLabels[c.pivot] + ")"
	}
	return oneLine(l)
}

// headerLabel is a column's header in LaTeX, which sets a pivot's values
// under a spanning header of the column stage: the pivot value, else the
// column stage's label.
func (t *table) headerLabel(c column) string {
	if c.pivot >= 0 {
		return t.pivotLabels[c.pivot]
	}
	return t.metricHeader(t.metrics[c.metric])
}

// metricHeader is a column stage's header text, with its better
// direction's arrow added by each format (texArrow, arrow).
func (t *table) metricHeader(m *metric) string { return m.label }

// arrow is the mark a header carries for its better direction: ↑ where
// higher is better, ↓ where lower is.
func (m *metric) arrow() string {
	switch m.better {
	case "higher":
		return "↑"
	case "lower":
		return "↓"
	}
	return ""
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// rowLabel describes a row for notes: its dimension labels joined.
func (r *tableRow) rowLabel() string { return strings.Join(r.labels, " / ") }
