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

// Cell statuses.
const (
	statusOK     = "ok"
	statusFailed = "failed" // the column stage failed or was skipped
	statusAbsent = "absent" // the column stage has no instance for this row
)

type cell struct {
	status string
	score  *stages.Score
	note   int // 1-based footnote number, 0: none
}

// shown reports whether the cell has a value to print.
func (c *cell) shown() bool { return c.status == statusOK && c.score.Count > 0 }

// filled is the table with its cells resolved and footnotes numbered.
type filled struct {
	*table
	cells [][]cell
	notes []string
}

// fill resolves each cell from scores, the inputs by column instance address.
func (t *table) fill(scores map[string]*stages.In) (*filled, error) {
	f := &filled{table: t, cells: make([][]cell, len(t.rows))}
	for r := range t.rows {
		f.cells[r] = make([]cell, len(t.columns))
		for c := range t.columns {
			cl := &f.cells[r][c]
			addr := t.source[r][c]
			switch {
			case addr == "":
				cl.status = statusAbsent
			case scores[addr].Output == nil:
				cl.status = statusFailed
			default:
				var s stages.Score
				if err := json.Unmarshal(scores[addr].Output, &s); err != nil {
					return nil, fmt.Errorf("column %s, row %s: not a score: %w", t.columns[c], t.rows[r], err)
				}
				cl.status, cl.score = statusOK, &s
			}
			if text := noteText(cl); text != "" {
				f.notes = append(f.notes, fmt.Sprintf("%s, %s: %s", t.columns[c], t.rows[r], text))
				cl.note = len(f.notes)
			}
		}
	}
	return f, nil
}

func noteText(c *cell) string {
	switch c.status {
	case statusAbsent:
		return "the column's stage has no instance for this row."
	case statusFailed:
		return "not computed (the stage failed or was skipped)."
	}
	s := c.score
	switch {
	case s.Count == 0 && s.Missing > 0:
		return fmt.Sprintf("no items scored; %s missing (inputs failed or were skipped).", items(s.Missing))
	case s.Count == 0:
		return "no items scored."
	case s.Missing > 0:
		return fmt.Sprintf("%s missing (inputs failed or were skipped); the score covers the other %s.", items(s.Missing), items(s.Count))
	}
	return ""
}

func items(n int) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.Itoa(n) + " items"
}

// droppedText mentions items a stage excluded by design (IdeaBench targets
// left with too few references), so "4 items" over a 5-item dataset is explained.
func droppedText(s *stages.Score) string {
	if d := int(s.Extra["dropped"]); d > 0 {
		return fmt.Sprintf(", %d dropped", d)
	}
	return ""
}

// value3 prints a score to 3 decimals, never as "-0.000".
func value3(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	if s == "-0.000" {
		return "0.000"
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

func (f *filled) markdown() string {
	var b strings.Builder
	if f.synthetic {
		b.WriteString(SyntheticBanner + "\n\n")
	}
	fmt.Fprintf(&b, "# %s\n\n", f.title)
	b.WriteString("|")
	for _, c := range f.columns {
		b.WriteString(" | " + mdEscape(c))
	}
	b.WriteString(" |\n|---")
	for range f.columns {
		b.WriteString("|---:")
	}
	b.WriteString("|\n")
	for r, row := range f.rows {
		b.WriteString("| " + mdEscape(row))
		for c := range f.columns {
			cl := &f.cells[r][c]
			text := "n/a"
			if cl.shown() {
				text = fmt.Sprintf("%s (%s%s)", value3(cl.score.Value), items(cl.score.Count), droppedText(cl.score))
			}
			if cl.note > 0 {
				text += fmt.Sprintf(" [%d]", cl.note)
			}
			b.WriteString(" | " + text)
		}
		b.WriteString(" |\n")
	}
	if len(f.notes) > 0 {
		b.WriteString("\n")
		for i, n := range f.notes {
			fmt.Fprintf(&b, "- [%d] %s\n", i+1, mdEscape(n))
		}
	}
	return b.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// csv writes one line per row: the value, count, missing and dropped items of each column,
// and whether the numbers are synthetic, so a script can never lose the label.
func (f *filled) csv() (string, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	header := []string{"row"}
	for _, c := range f.columns {
		header = append(header, c, c+"_count", c+"_missing", c+"_dropped")
	}
	header = append(header, "synthetic")
	if err := w.Write(header); err != nil {
		return "", err
	}
	for r, row := range f.rows {
		rec := []string{row}
		for c := range f.columns {
			cl := &f.cells[r][c]
			switch {
			case cl.shown():
				rec = append(rec, value3(cl.score.Value), strconv.Itoa(cl.score.Count), strconv.Itoa(cl.score.Missing), strconv.Itoa(int(cl.score.Extra["dropped"])))
			case cl.status == statusOK:
				rec = append(rec, "n/a", "0", strconv.Itoa(cl.score.Missing), strconv.Itoa(int(cl.score.Extra["dropped"])))
			default:
				rec = append(rec, "n/a", "", "", "")
			}
		}
		rec = append(rec, strconv.FormatBool(f.synthetic))
		if err := w.Write(rec); err != nil {
			return "", err
		}
	}
	w.Flush()
	return buf.String(), w.Error()
}

type jsonReport struct {
	Title     string    `json:"title"`
	Synthetic bool      `json:"synthetic"`
	Columns   []string  `json:"columns"`
	Rows      []jsonRow `json:"rows"`
	Notes     []string  `json:"notes,omitempty"`
}

type jsonRow struct {
	Label string     `json:"label"`
	Cells []jsonCell `json:"cells"`
}

type jsonCell struct {
	Status string        `json:"status"`
	Score  *stages.Score `json:"score,omitempty"`
	Note   int           `json:"note,omitempty"`
}

func (f *filled) json() (string, error) {
	j := jsonReport{Title: f.title, Synthetic: f.synthetic, Columns: f.columns, Notes: f.notes}
	for r, row := range f.rows {
		jr := jsonRow{Label: row, Cells: make([]jsonCell, len(f.columns))}
		for c := range f.columns {
			cl := &f.cells[r][c]
			jr.Cells[c] = jsonCell{Status: cl.status, Score: cl.score, Note: cl.note}
		}
		j.Rows = append(j.Rows, jr)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return "", err
	}
	return string(b) + "\n", nil
}

func (f *filled) latex() string {
	var b strings.Builder
	caption := texEscape(f.title)
	if f.synthetic {
		b.WriteString("% " + SyntheticBanner + "\n")
		caption = `\textbf{SYNTHETIC (mock provider, made-up numbers):} ` + caption
	}
	b.WriteString("\\begin{table}[t]\n\\centering\n")
	fmt.Fprintf(&b, "\\caption{%s}\n", caption)
	fmt.Fprintf(&b, "\\begin{tabular}{l%s}\n\\toprule\n", strings.Repeat("r", len(f.columns)))
	for _, c := range f.columns {
		b.WriteString(" & " + texEscape(c))
	}
	b.WriteString(" \\\\\n\\midrule\n")
	for r, row := range f.rows {
		b.WriteString(texEscape(row))
		for c := range f.columns {
			cl := &f.cells[r][c]
			text := "n/a"
			if cl.shown() {
				text = value3(cl.score.Value)
			}
			if cl.note > 0 {
				text += fmt.Sprintf("$^{%d}$", cl.note)
			}
			b.WriteString(" & " + text)
		}
		b.WriteString(" \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	for i, n := range f.notes {
		fmt.Fprintf(&b, "{\\footnotesize $^{%d}$ %s\\par}\n", i+1, texEscape(n))
	}
	b.WriteString("\\end{table}\n")
	return b.String()
}

var texReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`,
	`_`, `\_`, `{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`,
)

func texEscape(s string) string { return texReplacer.Replace(s) }
