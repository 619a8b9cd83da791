package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
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
	statusOK      = "ok"
	statusFailed  = "failed"   // the column stage failed or was skipped
	statusAbsent  = "absent"   // the column stage has no instance for this row
	statusNoRow   = "no_row"   // no row instance has this row's values at this pivot value
	statusNoExtra = "no_extra" // the score has no such extra value (extra_columns)
)

type cell struct {
	status string
	score  *stages.Score
	// value, low and high are the printed value and CI bounds ("" when the
	// cell shows no value, or has no CI).
	value, low, high string
	// best: the best of its column stage (bold); underline: the better of
	// its row's pivot values of that stage (Table 2's filtered/unfiltered).
	best, underline bool
	note            int // 1-based footnote number, 0: none
	// synthetic: the score rests on an answer of the mock, as the records
	// its input was computed from say.
	synthetic bool
	// stat is the statistic the value is of its per-item values (nil:
	// not one the report can recompute); restricted says the value was
	// recomputed over the items every row shares; ownCI that the report
	// bootstrapped its interval.
	stat       *statistic
	restricted bool
	ownCI      bool
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
	// shared and excluded count the items every restricted cell is over and
	// those left out (common_items); noCommon says no item is shared.
	shared, excluded int
	noCommon         bool
	// rowN is each row's N (counts = "column").
	rowN []string
	// noteCells are the notes_from values, one per note metric.
	noteCells []cell
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
	tc := *t // sort_by reorders the rows of this rendering alone
	tc.rows = slices.Clone(t.rows)
	t = &tc
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
			default:
				if err := resolve(cl, scores[addr]); err != nil {
					return nil, fmt.Errorf("column %s, row %s: %w", t.colLabel(col), row.rowLabel(), err)
				}
				if x := t.metrics[col.metric].extra; x != "" && cl.score != nil {
					// An extra's column: that value alone, over the same items.
					v, ok := cl.score.Extra[x]
					cl.score = &stages.Score{Value: v, Count: cl.score.Count, Missing: cl.score.Missing, Extra: map[string]float64{"dropped": cl.score.Extra["dropped"]}}
					if !ok {
						cl.status, cl.score = statusNoExtra, nil
					}
				}
			}
		}
	}
	f.noteCells = make([]cell, len(t.noteMetrics))
	for i, m := range t.noteMetrics {
		for _, addr := range m.byKey {
			if err := resolve(&f.noteCells[i], scores[addr]); err != nil {
				return nil, fmt.Errorf("notes_from %s: %w", m.label, err)
			}
		}
	}
	f.prepareItems()
	for r := range f.rows {
		for c := range f.cols {
			if cl := &f.cells[r][c]; cl.shown() {
				f.values++
				if cl.synthetic {
					f.synthetic++
				}
			}
		}
	}
	f.sortRows()
	f.format()
	f.markBest()
	f.writeNotes()
	return f, nil
}

// sortRows orders the rows by sort_by's column, best first (its better
// direction; higher without one), rows without a value last, ties as laid
// out: a leaderboard.
func (f *filled) sortRows() {
	if f.sortBy == "" {
		return
	}
	c := slices.IndexFunc(f.cols, func(col column) bool { return f.metrics[col.metric].id == f.sortBy })
	if c < 0 {
		return
	}
	dir := f.metrics[f.cols[c].metric].better
	if dir == "" {
		dir = "higher"
	}
	idx := make([]int, len(f.rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ca, cb := &f.cells[idx[a]][c], &f.cells[idx[b]][c]
		if ca.shown() != cb.shown() {
			return ca.shown()
		}
		return ca.shown() && better(dir, ca.score.Value, cb.score.Value)
	})
	rows, cells := make([]*tableRow, len(idx)), make([][]cell, len(idx))
	for i, j := range idx {
		rows[i], cells[i] = f.rows[j], f.cells[j]
	}
	f.rows, f.cells = rows, cells
}

// resolve reads a cell's score from its input.
func resolve(cl *cell, in *stages.In) error {
	if in.Output == nil {
		cl.status = statusFailed
		return nil
	}
	var s stages.Score
	if err := json.Unmarshal(in.Output, &s); err != nil {
		return fmt.Errorf("not a score: %w", err)
	}
	cl.status, cl.score = statusOK, &s
	cl.synthetic = in.Provenance.IsSynthetic()
	return nil
}

// prepareItems finds each value's statistic, scores every row on the
// items all share (common_items) and bootstraps the intervals the stages
// gave none of (intervals).
func (f *filled) prepareItems() {
	var known []*cell
	for r := range f.rows {
		for c := range f.cols {
			if cl := &f.cells[r][c]; cl.shown() {
				if cl.stat = inferStatistic(cl.score); cl.stat != nil {
					known = append(known, cl)
				}
			}
		}
	}
	if f.common && len(known) > 0 {
		seen := map[string]int{}
		for _, cl := range known {
			for it := range cl.score.PerItem {
				seen[it]++
			}
		}
		var shared []string
		for it, n := range seen {
			if n == len(known) {
				shared = append(shared, it)
			}
		}
		sort.Strings(shared)
		f.shared, f.excluded = len(shared), len(seen)-len(shared)
		if len(shared) == 0 {
			f.noCommon = true
		} else {
			for _, cl := range known {
				level, hadCI := cl.score.Extra["ci_level"], hasCI(cl.score)
				cl.score, cl.restricted = restrict(cl.score, cl.stat, shared), true
				if hadCI || f.intervals {
					cl.ownCI = addInterval(cl.score, cl.stat, level)
				}
			}
		}
	}
	if f.intervals {
		// All or nothing per column stage: a column whose values are not
		// all statistics of their items shows no report interval at all,
		// rather than brackets on some rows.
		for m := range f.metrics {
			var cells []*cell
			all := true
			for r := range f.rows {
				for c, col := range f.cols {
					if cl := &f.cells[r][c]; col.metric == m && cl.shown() && !hasCI(cl.score) {
						cells = append(cells, cl)
						all = all && cl.stat != nil
					}
				}
			}
			if !all {
				continue
			}
			for _, cl := range cells {
				cl.ownCI = addInterval(cl.score, cl.stat, 0)
			}
		}
		for i := range f.noteCells {
			cl := &f.noteCells[i]
			if cl.shown() && !hasCI(cl.score) {
				if cl.stat = inferStatistic(cl.score); cl.stat != nil {
					cl.ownCI = addInterval(cl.score, cl.stat, 0)
				}
			}
		}
	}
}

func hasCI(s *stages.Score) bool {
	_, lo := s.Extra["ci_low"]
	_, hi := s.Extra["ci_high"]
	return lo && hi
}

// format prints each value and interval: with the column stage's
// number_format, else as an integer where every value of the stage is one
// and is not a mean that came out whole by chance (an 80th percentile of
// 1-10 ratings prints 8, not 8.000; a mean rubric score of 4 prints 4.000
// beside 3.143; so does a whole value whose interval is not), else to
// digits decimals.
func (f *filled) format() {
	for m, met := range f.metrics {
		var vals, bounds []float64
		mean := false
		for r := range f.rows {
			for c, col := range f.cols {
				if cl := &f.cells[r][c]; col.metric == m && cl.shown() {
					mean = mean || (cl.stat != nil && cl.stat.name == "mean" && !constant(cl.score.PerItem))
					vals = append(vals, cl.score.Value)
					if hasCI(cl.score) {
						bounds = append(bounds, cl.score.Extra["ci_low"], cl.score.Extra["ci_high"])
					}
				}
			}
		}
		digits, ciDigits := f.digits, f.ciDigits
		if integral(vals) && !mean && (len(bounds) == 0 || integral(bounds)) {
			digits, ciDigits = 0, 0
		}
		for r := range f.rows {
			for c, col := range f.cols {
				if cl := &f.cells[r][c]; col.metric == m && cl.shown() {
					f.formatCell(cl, met, digits, ciDigits)
					if cl.hasCI() {
						f.ci[c] = true
					}
				}
			}
		}
	}
	for i, met := range f.noteMetrics {
		if cl := &f.noteCells[i]; cl.shown() {
			digits := f.digits
			if integral([]float64{cl.score.Value}) {
				digits = 0
			}
			f.formatCell(cl, met, digits, f.ciDigits)
		}
	}
}

func (f *filled) formatCell(cl *cell, m *metric, digits, ciDigits int) {
	cl.value = formatNumber(m, cl.score.Value, digits)
	if hasCI(cl.score) {
		cl.low, cl.high = formatNumber(m, cl.score.Extra["ci_low"], ciDigits), formatNumber(m, cl.score.Extra["ci_high"], ciDigits)
	}
}

// better reports whether v beats w in direction dir.
func better(dir string, v, w float64) bool {
	return (dir == "higher" && v > w) || (dir == "lower" && v < w)
}

// markBest bolds, per column stage with a better direction (a measure
// group: all its pivot columns together, as IdeaBench Table 2 bolds the
// highest of each measure), the best value and every value that prints the
// same (a tie at the printed precision is a tie to the reader); with a
// pivot it underlines, in each row, the better of the stage's pivot values
// (Table 2's filtered against unfiltered), none on a printed tie. A group
// with one value has no best.
func (f *filled) markBest() {
	for m, met := range f.metrics {
		if met.better == "" {
			continue
		}
		var best *cell
		n := 0
		for r := range f.rows {
			for c, col := range f.cols {
				cl := &f.cells[r][c]
				if col.metric != m || !cl.shown() {
					continue
				}
				n++
				if best == nil || better(met.better, cl.score.Value, best.score.Value) {
					best = cl
				}
			}
		}
		if n < 2 {
			continue
		}
		for r := range f.rows {
			var top *cell
			shown, tie := 0, false
			for c, col := range f.cols {
				cl := &f.cells[r][c]
				if col.metric != m || !cl.shown() {
					continue
				}
				if cl.value == best.value {
					cl.best = true
				}
				shown++
				switch {
				case top == nil || better(met.better, cl.score.Value, top.score.Value) && cl.value != top.value:
					top, tie = cl, false
				case cl.value == top.value:
					tie = true
				}
			}
			if f.pivot != "" && shown > 1 && !tie {
				top.underline = true
			}
		}
	}
}

// writeNotes says, once per column stage, how many items its values are
// over (numbers stay numbers: no counts in cells), and numbers a footnote
// for each cell that differs: missing items, a failed or absent stage, a
// different count. With common_items one note says what every restricted
// value is over; with counts = "column" each row's N says it, and only
// cells without a value get a footnote.
func (f *filled) writeNotes() {
	if f.common {
		switch {
		case f.noCommon:
			f.general = append(f.general, fmt.Sprintf("No %s is scored in every row, so each value is over its own %s.", singular(f.itemName), f.itemName))
		case f.shared > 0:
			text := fmt.Sprintf("Each value is over the %s every row has", plural(f.shared, f.itemName))
			if f.excluded > 0 {
				text += fmt.Sprintf("; %d %s excluded", f.excluded, f.excludedBecause)
			}
			f.general = append(f.general, text+".")
		}
	}
	usual := make([]countKey, len(f.metrics))
	for m, met := range f.metrics {
		freq := map[countKey]int{}
		var order []countKey
		differs, allRestricted := false, true
		for r := range f.rows {
			for c, col := range f.cols {
				cl := &f.cells[r][c]
				if col.metric != m || !cl.shown() || cl.score.Missing > 0 {
					continue
				}
				allRestricted = allRestricted && cl.restricted
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
		if f.countsColumn || (allRestricted && f.shared > 0) || met.extra != "" {
			continue // the N column, or the common-items note, says it
		}
		for r := range f.rows {
			for c, col := range f.cols {
				cl := &f.cells[r][c]
				if col.metric == m && cl.status == statusOK && (cl.score.Missing > 0 || keyOf(cl.score) != u) {
					differs = true
				}
			}
		}
		text := fmt.Sprintf("%s: each value is over %s", oneLine(met.label), plural(u.count, f.itemName))
		if u.dropped > 0 {
			text += "; " + moreDropped(u.dropped, f.itemName)
		}
		if differs {
			text += ", except where a note says otherwise"
		}
		f.general = append(f.general, text+".")
	}
	if f.countsColumn {
		f.general = append(f.general, fmt.Sprintf("N: the %s each row's values are over.", f.itemName))
	}
	var higher, lower []string
	for _, m := range f.metrics {
		switch m.better {
		case "higher":
			higher = append(higher, oneLine(m.label))
		case "lower":
			lower = append(lower, oneLine(m.label))
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
		what := "Bold: the best value of each column"
		if f.pivot != "" {
			what = "Bold: the best value of each measure; underlined: the better of its row's " + strings.Join(f.pivotLabels, "/") + " values"
		}
		f.general = append(f.general, what+" ("+strings.Join(parts, "; ")+").")
	}
	f.intervalNotes()
	for i, m := range f.noteMetrics {
		cl := &f.noteCells[i]
		text := oneLine(m.label) + ": "
		switch {
		case cl.shown():
			text += cl.value
			if cl.hasCI() {
				text += " [" + cl.low + ", " + cl.high + "]"
			}
			text += ", over " + plural(cl.score.Count, f.itemName)
		case cl.status == statusFailed:
			text += "not computed (the stage failed or was skipped)"
		default:
			text += "no " + singular(f.itemName) + " scored"
		}
		f.general = append(f.general, text+".")
	}

	for r, row := range f.rows {
		for c, col := range f.cols {
			cl := &f.cells[r][c]
			if f.countsColumn && cl.shown() {
				continue
			}
			if text := f.noteText(cl, usual[col.metric]); text != "" {
				f.notes = append(f.notes, fmt.Sprintf("%s, %s: %s", f.colLabel(col), row.rowLabel(), text))
				cl.note = len(f.notes)
			}
		}
	}
	if f.countsColumn {
		f.rowN = make([]string, len(f.rows))
		for r := range f.rows {
			lo, hi := -1, -1
			for c := range f.cols {
				if cl := &f.cells[r][c]; cl.shown() {
					n := cl.score.Count
					if lo < 0 || n < lo {
						lo = n
					}
					hi = max(hi, n)
				}
			}
			switch {
			case lo < 0:
				f.rowN[r] = "n/a"
			case lo == hi:
				f.rowN[r] = strconv.Itoa(lo)
			default:
				f.rowN[r] = strconv.Itoa(lo) + "–" + strconv.Itoa(hi)
			}
		}
	}
}

// intervalNotes says what the brackets are: the stages' intervals, the
// report's bootstrap, or both.
func (f *filled) intervalNotes() {
	own, staged := false, false
	cells := append([]cell(nil), f.noteCells...)
	for r := range f.rows {
		cells = append(cells, f.cells[r]...)
	}
	for i := range cells {
		if cl := &cells[i]; cl.hasCI() {
			own, staged = own || cl.ownCI, staged || !cl.ownCI
		}
	}
	if staged {
		level, _ := f.ciLevel(false)
		what := "confidence intervals"
		if level > 0 {
			what = strconv.FormatFloat(level*100, 'g', -1, 64) + "% confidence intervals"
		}
		f.general = append(f.general, "In brackets: "+what+" [low, high], as the column's stage computed them.")
	}
	if own {
		level, _ := f.ciLevel(true)
		text := fmt.Sprintf("In brackets: %s%% bootstrap intervals [low, high] over the %s (%d resamples, percentile method, seed 0)",
			strconv.FormatFloat(level*100, 'g', -1, 64), f.itemName, intervalResamples)
		if staged {
			text += ", where the stage gave none"
		}
		f.general = append(f.general, text+".")
	}
}

// ciLevel is the confidence level the intervals of one kind (the
// report's own, or the stages') share (Score extra ci_level, e.g. 0.95), 0
// when they do not say or differ; any says some cell has one.
func (f *filled) ciLevel(own bool) (level float64, any bool) {
	first := true
	cells := append([]cell(nil), f.noteCells...)
	for r := range f.rows {
		cells = append(cells, f.cells[r]...)
	}
	for i := range cells {
		cl := &cells[i]
		if !cl.hasCI() || cl.ownCI != own {
			continue
		}
		l := cl.score.Extra["ci_level"]
		if first {
			level, first = l, false
		} else if l != level {
			level = 0
		}
	}
	return level, !first
}

func (f *filled) noteText(c *cell, usual countKey) string {
	switch c.status {
	case statusAbsent:
		return "the column's stage has no instance for this row."
	case statusNoExtra:
		return "its stage's score has no such value for this row."
	case statusNoRow:
		return "no row instance has these values."
	case statusFailed:
		return "not computed (the stage failed or was skipped)."
	}
	s, noun := c.score, f.itemName
	k := keyOf(s)
	dropped := ""
	if k.dropped != usual.dropped && k.dropped > 0 {
		dropped = "; " + moreDropped(k.dropped, noun)
	}
	own := ""
	if f.shared > 0 && !c.restricted {
		own = " (its stage gives no per-item values the report can restrict to the shared " + noun + ")"
	}
	switch {
	case s.Count == 0 && s.Missing > 0:
		return fmt.Sprintf("no %s scored; %s missing (inputs failed or were skipped)%s.", noun, plural(s.Missing, noun), dropped)
	case s.Count == 0:
		return "no " + noun + " scored" + dropped + "."
	case s.Missing > 0:
		return fmt.Sprintf("%s missing (inputs failed or were skipped); the value is over the other %s%s%s.", plural(s.Missing, noun), plural(s.Count, noun), dropped, own)
	case k != usual:
		return fmt.Sprintf("the value is over %s%s%s.", plural(s.Count, noun), dropped, own)
	}
	return ""
}

// moreDropped says how many items a stage excluded by design (IdeaBench
// targets left with too few references), so "4 items" over a 5-item dataset
// is explained.
func moreDropped(n int, noun string) string {
	if n == 1 {
		return "1 more " + singular(noun) + " was dropped before scoring"
	}
	return strconv.Itoa(n) + " more " + noun + " were dropped before scoring"
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
	if f.countsColumn {
		head, rule = append(head, "N"), append(rule, "---:")
	}
	// A header carries its better direction's arrow, as in LaTeX (the
	// notes say what it marks).
	for _, col := range f.cols {
		l := f.colLabel(col)
		if a := f.metrics[col.metric].arrow(); a != "" {
			l += " " + a
		}
		head, rule = append(head, mdEscape(l)), append(rule, "---:")
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
		if f.countsColumn {
			cells = append(cells, f.rowN[r])
		}
		for c := range f.cols {
			cl := &f.cells[r][c]
			text := "n/a"
			if cl.shown() {
				text = cl.value
				if cl.underline {
					// Markdown has no underline: the HTML tag, which
					// GitHub and pandoc render (the notes say what it marks).
					text = "<u>" + text + "</u>"
				}
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

func mdEscape(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

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
	// SharedItems and ExcludedItems: with common_items, the items every
	// restricted value is over and those left out.
	SharedItems   int `json:"shared_items,omitempty"`
	ExcludedItems int `json:"excluded_items,omitempty"`
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
	Values []string   `json:"values"`      // raw values of row_dims, in order
	Labels []string   `json:"labels"`      // their display text
	N      string     `json:"n,omitempty"` // the N column's text (counts = "column")
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
	// Underline: the better of its row's pivot values of its stage.
	Underline bool `json:"underline,omitempty"`
	// OverSharedItems: recomputed over the items every row shares
	// (common_items); IntervalByReport: the report bootstrapped its interval.
	OverSharedItems  bool `json:"over_shared_items,omitempty"`
	IntervalByReport bool `json:"interval_by_report,omitempty"`
	Note             int  `json:"note,omitempty"`
	// Synthetic: the score rests on an answer of the mock.
	Synthetic bool `json:"synthetic,omitempty"`
}

func (f *filled) json() (string, error) {
	j := jsonReport{Title: f.title, Synthetic: f.synthetic > 0, SyntheticCells: f.synthetic, Cells: f.values,
		SyntheticNote: f.syntheticNote(), RowDims: []jsonDim{}, TableNotes: f.general, Notes: f.notes,
		SharedItems: f.shared, ExcludedItems: f.excluded}
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
		if f.countsColumn {
			jr.N = f.rowN[r]
		}
		if jr.Values == nil {
			jr.Values, jr.Labels = []string{}, []string{}
		}
		for c := range f.cols {
			cl := &f.cells[r][c]
			jc := jsonCell{Status: cl.status, Best: cl.best, Underline: cl.underline, OverSharedItems: cl.restricted, IntervalByReport: cl.ownCI,
				Note: cl.note, Synthetic: cl.status == statusOK && cl.synthetic}
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
