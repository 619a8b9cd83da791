package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// SyntheticBanner opens every synthetic Markdown report, so that numbers made
// up by the mock provider cannot be mistaken for results.
const SyntheticBanner = "SYNTHETIC RESULTS: every number in this report comes from the mock provider. They are made up and say nothing about any model."

// MixedMark follows each synthetic value of a table that also holds real
// ones (Markdown, LaTeX as a dagger, the page); MixedNote, at the top,
// says how many there are.
const MixedMark = "†"

// MixedPrefix starts the note a partly synthetic table opens with.
const MixedPrefix = "PARTLY SYNTHETIC: "

// MixedNote is the note opening a table of which synthetic of values values
// come from the mock provider.
func MixedNote(synthetic, values int) string {
	cells := "cells"
	if values == 1 {
		cells = "cell"
	}
	return fmt.Sprintf("%s%d of %d %s (marked %s) come from the mock provider: their numbers are made up and say nothing about any model.",
		MixedPrefix, synthetic, values, cells, MixedMark)
}

// Cell statuses, as the JSON format names them.
const (
	statusOK     = "ok"
	statusFailed = "failed" // the column stage failed or was skipped
	statusAbsent = "absent" // the column stage has no instance for this row
	statusNoRow  = "no_row" // no row instance has this row's values at this pivot value
)

type cell struct {
	status string
	score  *stages.Score
	// value, low and high are the printed value and CI bounds ("" when the
	// cell shows no value, or has no CI).
	value, low, high string
	best             bool
	note             int // 1-based footnote number, 0: none
	// synthetic: the score rests on an answer of the mock, as the records
	// its input was computed from say.
	synthetic bool
}

// shown reports whether the cell has a value to print.
func (c *cell) shown() bool { return c.status == statusOK && c.score.Count > 0 }

func (c *cell) hasCI() bool { return c.low != "" }

// filled is the table with its cells resolved and its notes written.
type filled struct {
	*table
	cells [][]cell
	// general are the table's unnumbered notes: what each column's values
	// are over, what bold and brackets mean.
	general []string
	// notes are the numbered footnotes of single cells, in reading order.
	notes []string
	// ci[c] says column c has a CI in some cell (CSV and JSON add its bounds).
	ci []bool
	// values counts the cells that show a value; synthetic those of them
	// that are synthetic.
	values, synthetic int
}

// allSynthetic: every value is synthetic (the table opens with
// SyntheticBanner and marks no cell); mixed: some are, and each is marked.
func (f *filled) allSynthetic() bool { return f.synthetic > 0 && f.synthetic == f.values }
func (f *filled) mixed() bool        { return f.synthetic > 0 && f.synthetic < f.values }

// marked says whether cell cl carries MixedMark.
func (f *filled) marked(cl *cell) bool { return f.mixed() && cl.shown() && cl.synthetic }

// syntheticNote is the sentence a synthetic or partly synthetic table
// opens with, "" for a real one.
func (f *filled) syntheticNote() string {
	switch {
	case f.allSynthetic():
		return SyntheticBanner
	case f.mixed():
		return MixedNote(f.synthetic, f.values)
	}
	return ""
}

// countKey is what a value is over: the items that contributed and the
// items a stage dropped by design before scoring.
type countKey struct{ count, dropped int }

func keyOf(s *stages.Score) countKey { return countKey{s.Count, int(s.Extra["dropped"])} }

// fill resolves each cell from scores, the inputs by column instance address.
func (t *table) fill(scores map[string]*stages.In) (*filled, error) {
	f := &filled{table: t, cells: make([][]cell, len(t.rows)), ci: make([]bool, len(t.cols))}
	for r, row := range t.rows {
		f.cells[r] = make([]cell, len(t.cols))
		for c, col := range t.cols {
			cl := &f.cells[r][c]
			addr := row.source[c]
			switch {
			case row.noRow[c]:
				cl.status = statusNoRow
			case addr == "":
				cl.status = statusAbsent
			case scores[addr].Output == nil:
				cl.status = statusFailed
			default:
				var s stages.Score
				if err := json.Unmarshal(scores[addr].Output, &s); err != nil {
					return nil, fmt.Errorf("column %s, row %s: not a score: %w", t.colLabel(col), row.rowLabel(), err)
				}
				cl.status, cl.score = statusOK, &s
				cl.synthetic = scores[addr].Provenance.IsSynthetic()
			}
			if !cl.shown() {
				continue
			}
			f.values++
			if cl.synthetic {
				f.synthetic++
			}
			m := t.metrics[col.metric]
			cl.value = formatNumber(m, cl.score.Value, t.digits)
			lo, okLo := cl.score.Extra["ci_low"]
			hi, okHi := cl.score.Extra["ci_high"]
			if okLo && okHi {
				cl.low, cl.high = formatNumber(m, lo, t.ciDigits), formatNumber(m, hi, t.ciDigits)
				f.ci[c] = true
			}
		}
	}
	f.markBest()
	f.writeNotes()
	return f, nil
}

// markBest bolds, in each column whose stage has a better direction, the
// best value and every value that prints the same (a tie at the printed
// precision is a tie to the reader). A column with one value has no best.
func (f *filled) markBest() {
	for c, col := range f.cols {
		better := f.metrics[col.metric].better
		if better == "" {
			continue
		}
		best, n := -1, 0
		for r := range f.rows {
			cl := &f.cells[r][c]
			if !cl.shown() {
				continue
			}
			n++
			if best < 0 {
				best = r
				continue
			}
			v, b := cl.score.Value, f.cells[best][c].score.Value
			if (better == "higher" && v > b) || (better == "lower" && v < b) {
				best = r
			}
		}
		if n < 2 {
			continue
		}
		for r := range f.rows {
			if cl := &f.cells[r][c]; cl.shown() && cl.value == f.cells[best][c].value {
				cl.best = true
			}
		}
	}
}

// writeNotes says, once per column stage, how many items its values are
// over (numbers stay numbers: no counts in cells), and numbers a footnote
// for each cell that differs: missing items, a failed or absent stage, a
// different count.
func (f *filled) writeNotes() {
	usual := make([]countKey, len(f.metrics))
	for m, met := range f.metrics {
		freq := map[countKey]int{}
		var order []countKey
		differs := false
		for r := range f.rows {
			for c, col := range f.cols {
				cl := &f.cells[r][c]
				if col.metric != m || !cl.shown() || cl.score.Missing > 0 {
					continue
				}
				k := keyOf(cl.score)
				if freq[k] == 0 {
					order = append(order, k)
				}
				freq[k]++
			}
		}
		if len(order) == 0 {
			usual[m] = countKey{-1, -1}
			continue
		}
		u := order[0]
		for _, k := range order[1:] {
			if freq[k] > freq[u] {
				u = k
			}
		}
		usual[m] = u
		for r := range f.rows {
			for c, col := range f.cols {
				cl := &f.cells[r][c]
				if col.metric == m && cl.status == statusOK && (cl.score.Missing > 0 || keyOf(cl.score) != u) {
					differs = true
				}
			}
		}
		text := fmt.Sprintf("%s: each value is over %s", met.label, items(u.count))
		if u.dropped > 0 {
			text += "; " + moreDropped(u.dropped)
		}
		if differs {
			text += ", except where a note says otherwise"
		}
		f.general = append(f.general, text+".")
	}
	var higher, lower []string
	for _, m := range f.metrics {
		switch m.better {
		case "higher":
			higher = append(higher, m.label)
		case "lower":
			lower = append(lower, m.label)
		}
	}
	if len(higher)+len(lower) > 0 {
		var parts []string
		if len(higher) > 0 {
			parts = append(parts, "higher is better for "+strings.Join(higher, ", "))
		}
		if len(lower) > 0 {
			parts = append(parts, "lower is better for "+strings.Join(lower, ", "))
		}
		f.general = append(f.general, "Bold: the best value of each column ("+strings.Join(parts, "; ")+").")
	}
	if level, any := f.ciLevel(); any {
		what := "confidence intervals"
		if level > 0 {
			what = strconv.FormatFloat(level*100, 'g', -1, 64) + "% confidence intervals"
		}
		f.general = append(f.general, "In brackets: "+what+" [low, high], as the column's stage computed them.")
	}

	for r, row := range f.rows {
		for c, col := range f.cols {
			cl := &f.cells[r][c]
			if text := noteText(cl, usual[col.metric]); text != "" {
				f.notes = append(f.notes, fmt.Sprintf("%s, %s: %s", f.colLabel(col), row.rowLabel(), text))
				cl.note = len(f.notes)
			}
		}
	}
}

// ciLevel is the confidence level every CI shares (Score extra ci_level,
// e.g. 0.95), 0 when they do not say or differ; any says some cell has a CI.
func (f *filled) ciLevel() (level float64, any bool) {
	first := true
	for r := range f.rows {
		for c := range f.cols {
			cl := &f.cells[r][c]
			if !cl.hasCI() {
				continue
			}
			l := cl.score.Extra["ci_level"]
			if first {
				level, first = l, false
			} else if l != level {
				level = 0
			}
		}
	}
	return level, !first
}

func noteText(c *cell, usual countKey) string {
	switch c.status {
	case statusAbsent:
		return "the column's stage has no instance for this row."
	case statusNoRow:
		return "no row instance has these values."
	case statusFailed:
		return "not computed (the stage failed or was skipped)."
	}
	s := c.score
	k := keyOf(s)
	dropped := ""
	if k.dropped != usual.dropped && k.dropped > 0 {
		dropped = "; " + moreDropped(k.dropped)
	}
	switch {
	case s.Count == 0 && s.Missing > 0:
		return fmt.Sprintf("no items scored; %s missing (inputs failed or were skipped)%s.", items(s.Missing), dropped)
	case s.Count == 0:
		return "no items scored" + dropped + "."
	case s.Missing > 0:
		return fmt.Sprintf("%s missing (inputs failed or were skipped); the value is over the other %s%s.", items(s.Missing), items(s.Count), dropped)
	case k != usual:
		return fmt.Sprintf("the value is over %s%s.", items(s.Count), dropped)
	}
	return ""
}

func items(n int) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.Itoa(n) + " items"
}

// moreDropped says how many items a stage excluded by design (IdeaBench
// targets left with too few references), so "4 items" over a 5-item dataset
// is explained.
func moreDropped(n int) string {
	if n == 1 {
		return "1 more item was dropped before scoring"
	}
	return strconv.Itoa(n) + " more items were dropped before scoring"
}

// formatNumber prints v with the column's number_format, else to digits
// decimals, never as "-0.000".
func formatNumber(m *metric, v float64, digits int) string {
	var s string
	if m.printf != "" {
		s = fmt.Sprintf(m.printf, v)
	} else {
		s = strconv.FormatFloat(v, 'f', digits, 64)
	}
	if strings.HasPrefix(s, "-") && !strings.ContainsAny(s, "123456789") {
		s = s[1:]
	}
	return s
}

func (t *table) render(scores map[string]*stages.In) (*stages.Files, error) {
	f, err := t.fill(scores)
	if err != nil {
		return nil, err
	}
	out := &stages.Files{Files: map[string]string{}}
	for _, format := range t.formats {
		var text string
		switch format {
		case "markdown":
			text = f.markdown()
		case "csv":
			text, err = f.csv()
		case "json":
			text, err = f.json()
		case "latex":
			text = f.latex()
		}
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", format, err)
		}
		out.Files[t.name+extensions[format]] = text
	}
	return out, nil
}

// repeated reports whether row r's value of dimension j is the previous
// row's and so are all values before it: papers print a model's name once
// above its scenarios. The last dimension always prints.
func (f *filled) repeated(r, j int) bool {
	if r == 0 || j == len(f.dims)-1 {
		return false
	}
	for k := 0; k <= j; k++ {
		if f.rows[r].values[k] != f.rows[r-1].values[k] {
			return false
		}
	}
	return true
}

func (f *filled) markdown() string {
	var b strings.Builder
	if note := f.syntheticNote(); note != "" {
		b.WriteString(mdEscape(note) + "\n\n")
	}
	fmt.Fprintf(&b, "# %s\n\n", f.title)
	var head, rule []string
	for _, l := range f.dimLabels {
		head, rule = append(head, mdEscape(l)), append(rule, "---")
	}
	for _, col := range f.cols {
		head, rule = append(head, mdEscape(f.colLabel(col))), append(rule, "---:")
	}
	b.WriteString(mdRow(head) + "|" + strings.Join(rule, "|") + "|\n")
	for r, row := range f.rows {
		var cells []string
		for j, l := range row.labels {
			if f.repeated(r, j) {
				l = ""
			}
			cells = append(cells, mdEscape(l))
		}
		for c := range f.cols {
			cl := &f.cells[r][c]
			text := "n/a"
			if cl.shown() {
				text = cl.value
				if cl.best {
					text = "**" + text + "**"
				}
				if cl.hasCI() {
					text += " [" + cl.low + ", " + cl.high + "]"
				}
				text = mdEscape(text)
			}
			if f.marked(cl) {
				text += MixedMark
			}
			if cl.note > 0 {
				text += fmt.Sprintf("[^%d]", cl.note)
			}
			cells = append(cells, text)
		}
		b.WriteString(mdRow(cells))
	}
	if len(f.general) > 0 {
		b.WriteString("\n")
		for _, n := range f.general {
			b.WriteString("- " + mdEscape(n) + "\n")
		}
	}
	if len(f.notes) > 0 {
		b.WriteString("\n")
		for i, n := range f.notes {
			fmt.Fprintf(&b, "[^%d]: %s\n", i+1, mdEscape(n))
		}
	}
	return b.String()
}

func mdRow(cells []string) string {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cells {
		if c == "" {
			b.WriteString(" |")
			continue
		}
		b.WriteString(" " + c + " |")
	}
	return b.String() + "\n"
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// csv writes one line per row: the raw values of the row dimensions (stable
// for scripts, whatever the labels), then for each column its value at full
// precision (15 significant digits), its CI bounds when the column has any, and the items it is over,
// missing and dropped, and whether it is synthetic; and whether any value of
// the row is synthetic, so a script can never lose the label. A cell
// without a value leaves its fields empty (NA to pandas and R).
func (f *filled) csv() (string, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	var header []string
	for _, d := range f.dims {
		if d == "" {
			d = "row"
		}
		header = append(header, d)
	}
	for c, col := range f.cols {
		header = append(header, col.id)
		if f.ci[c] {
			header = append(header, col.id+"_ci_low", col.id+"_ci_high")
		}
		header = append(header, col.id+"_count", col.id+"_missing", col.id+"_dropped", col.id+"_synthetic")
	}
	header = append(header, "synthetic")
	if err := w.Write(header); err != nil {
		return "", err
	}
	for r, row := range f.rows {
		rec := append([]string(nil), row.values...)
		rowSynthetic := false
		for c := range f.cols {
			cl := &f.cells[r][c]
			value, lo, hi, count, missing, dropped, synthetic := "", "", "", "", "", "", ""
			if cl.status == statusOK {
				s := cl.score
				count, missing, dropped = strconv.Itoa(s.Count), strconv.Itoa(s.Missing), strconv.Itoa(int(s.Extra["dropped"]))
				synthetic = strconv.FormatBool(cl.synthetic)
				rowSynthetic = rowSynthetic || cl.synthetic
				if cl.shown() {
					value = fullPrecision(s.Value)
					if cl.hasCI() {
						lo, hi = fullPrecision(s.Extra["ci_low"]), fullPrecision(s.Extra["ci_high"])
					}
				}
			}
			rec = append(rec, value)
			if f.ci[c] {
				rec = append(rec, lo, hi)
			}
			rec = append(rec, count, missing, dropped, synthetic)
		}
		rec = append(rec, strconv.FormatBool(rowSynthetic))
		if err := w.Write(rec); err != nil {
			return "", err
		}
	}
	w.Flush()
	return buf.String(), w.Error()
}

// fullPrecision prints 15 significant digits: all a float64 carries
// reliably, so an average of 0.5 reads 0.5 and not 0.49999999999999994 (the
// JSON keeps the exact bits).
func fullPrecision(v float64) string { return strconv.FormatFloat(v, 'g', 15, 64) }

type jsonReport struct {
	Title string `json:"title"`
	// Synthetic says some value is synthetic; SyntheticCells of Cells
	// (the cells with a value) are, each with its own "synthetic", and
	// SyntheticNote is the sentence the Markdown opens with.
	Synthetic      bool         `json:"synthetic"`
	SyntheticCells int          `json:"synthetic_cells"`
	Cells          int          `json:"cells"`
	SyntheticNote  string       `json:"synthetic_note,omitempty"`
	RowDims        []jsonDim    `json:"row_dims"`
	Pivot          *jsonDim     `json:"pivot,omitempty"`
	Columns        []jsonColumn `json:"columns"`
	Rows           []jsonRow    `json:"rows"`
	// TableNotes are the unnumbered notes (counts per column, bold, CIs);
	// Notes the numbered footnotes cells point at.
	TableNotes []string `json:"table_notes,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

type jsonDim struct {
	Name        string   `json:"name"`
	Label       string   `json:"label"`
	Values      []string `json:"values,omitempty"`       // the pivot's, in column order
	ValueLabels []string `json:"value_labels,omitempty"` // their display text
}

type jsonColumn struct {
	ID         string `json:"id"`
	Label      string `json:"label"`
	Stage      string `json:"stage"`
	PivotValue string `json:"pivot_value,omitempty"`
	Better     string `json:"better,omitempty"`
}

type jsonRow struct {
	Values []string   `json:"values"` // raw values of row_dims, in order
	Labels []string   `json:"labels"` // their display text
	Cells  []jsonCell `json:"cells"`
}

type jsonCell struct {
	Status  string             `json:"status"`
	Value   *float64           `json:"value,omitempty"`
	CILow   *float64           `json:"ci_low,omitempty"`
	CIHigh  *float64           `json:"ci_high,omitempty"`
	Text    string             `json:"text,omitempty"` // as Markdown and LaTeX print the value
	Count   *int               `json:"count,omitempty"`
	Missing *int               `json:"missing,omitempty"`
	Dropped int                `json:"dropped,omitempty"`
	Extra   map[string]float64 `json:"extra,omitempty"` // the score's other named values
	Best    bool               `json:"best,omitempty"`
	Note    int                `json:"note,omitempty"`
	// Synthetic: the score rests on an answer of the mock.
	Synthetic bool `json:"synthetic,omitempty"`
}

func (f *filled) json() (string, error) {
	j := jsonReport{Title: f.title, Synthetic: f.synthetic > 0, SyntheticCells: f.synthetic, Cells: f.values,
		SyntheticNote: f.syntheticNote(), RowDims: []jsonDim{}, TableNotes: f.general, Notes: f.notes}
	for i, d := range f.dims {
		j.RowDims = append(j.RowDims, jsonDim{Name: d, Label: f.dimLabels[i]})
	}
	if f.pivot != "" {
		j.Pivot = &jsonDim{Name: f.pivot, Label: f.pivotLabel, Values: f.pivotValues, ValueLabels: f.pivotLabels}
	}
	for _, col := range f.cols {
		m := f.metrics[col.metric]
		jc := jsonColumn{ID: col.id, Label: f.colLabel(col), Stage: m.id, Better: m.better}
		if col.pivot >= 0 {
			jc.PivotValue = f.pivotValues[col.pivot]
		}
		j.Columns = append(j.Columns, jc)
	}
	for r, row := range f.rows {
		jr := jsonRow{Values: row.values, Labels: row.labels, Cells: make([]jsonCell, len(f.cols))}
		if jr.Values == nil {
			jr.Values, jr.Labels = []string{}, []string{}
		}
		for c := range f.cols {
			cl := &f.cells[r][c]
			jc := jsonCell{Status: cl.status, Best: cl.best, Note: cl.note, Synthetic: cl.status == statusOK && cl.synthetic}
			if s := cl.score; s != nil {
				jc.Count, jc.Missing, jc.Dropped = &s.Count, &s.Missing, int(s.Extra["dropped"])
				if cl.shown() {
					jc.Value, jc.Text = &s.Value, cl.value
				}
				for k, v := range s.Extra {
					switch k {
					case "ci_low":
						if cl.hasCI() {
							jc.CILow = ptr(v)
						}
					case "ci_high":
						if cl.hasCI() {
							jc.CIHigh = ptr(v)
						}
					case "dropped":
					default:
						if jc.Extra == nil {
							jc.Extra = map[string]float64{}
						}
						jc.Extra[k] = v
					}
				}
			}
			jr.Cells[c] = jc
		}
		j.Rows = append(j.Rows, jr)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return "", err
	}
	return string(b) + "\n", nil
}

func ptr(v float64) *float64 { return &v }
