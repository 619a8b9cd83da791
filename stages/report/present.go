package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

// How a report's output reads (stages.Presenter): its export row names
// the files, and its table is the one the JSON format lays out, which the
// node's output carries whatever formats the block asks for (reportOutput)
// — the page shows that, never the Markdown read back. Cells read as the
// Markdown prints them: the formatted value, bold when best, underlined
// when the better of a pivot's pair, its interval, a header's arrow,
// "n/a" where there is none, a footnote number.

// pageReport is what the page reads of the JSON format (render.go's
// jsonReport, by its JSON names).
type pageReport struct {
	Title          string `json:"title"`
	Synthetic      bool   `json:"synthetic"`
	SyntheticCells int    `json:"synthetic_cells"`
	Cells          int    `json:"cells"`
	SyntheticNote  string `json:"synthetic_note"`
	RowDims        []struct {
		Label string `json:"label"`
	} `json:"row_dims"`
	Columns []struct {
		Label  string `json:"label"`
		Stage  string `json:"stage"`
		Better string `json:"better"`
	} `json:"columns"`
	Rows []struct {
		Values []string `json:"values"`
		Labels []string `json:"labels"`
		Cells  []struct {
			Status    string   `json:"status"`
			Text      string   `json:"text"`
			CILow     *float64 `json:"ci_low"`
			CIHigh    *float64 `json:"ci_high"`
			Best      bool     `json:"best"`
			Underline bool     `json:"underline"`
			Note      int      `json:"note"`
			Synthetic bool     `json:"synthetic"`
		} `json:"cells"`
	} `json:"rows"`
	TableNotes []string `json:"table_notes"`
	Notes      []string `json:"notes"`
}

func (t reportType) Present(out *stages.NodeOutput) (*stages.Presented, error) {
	pr, err := stages.DefaultPresent(t, out)
	if err != nil {
		return nil, err
	}
	var o struct {
		Table json.RawMessage `json:"table"`
	}
	if err := json.Unmarshal(out.Output, &o); err != nil {
		return nil, fmt.Errorf("decode report output: %w", err)
	}
	for i, c := range pr.Rows[0] {
		if c.Name == "table" {
			pr.Rows[0] = append(pr.Rows[0][:i], pr.Rows[0][i+1:]...) // the files hold it
			break
		}
	}
	if len(o.Table) == 0 {
		return pr, nil // cached before the output carried it: run the report again
	}
	var r pageReport
	if err := json.Unmarshal(o.Table, &r); err != nil {
		return nil, fmt.Errorf("decode report table: %w", err)
	}
	name := reportName("report." + strings.TrimPrefix(out.Block, "report."))
	pr.Tables = []stages.Table{r.table(name, out.Params)}
	return pr, nil
}

// table lays r out as the Markdown does; p are the report's params (the
// digits of intervals).
func (r *pageReport) table(name string, p stages.Params) stages.Table {
	t := stages.Table{Name: name, Title: r.Title, Notes: r.TableNotes, Footnotes: r.Notes}
	if r.Synthetic {
		t.Synthetic = r.SyntheticNote
		if t.Synthetic == "" {
			t.Synthetic = SyntheticBanner
		}
		t.Mixed = r.SyntheticCells < r.Cells
	}
	for _, d := range r.RowDims {
		t.Header, t.Numeric = append(t.Header, d.Label), append(t.Numeric, false)
	}
	for _, c := range r.Columns {
		l := c.Label
		if a := (&metric{better: c.Better}).arrow(); a != "" {
			l += " " + a // as the Markdown header
		}
		t.Header, t.Numeric = append(t.Header, l), append(t.Numeric, true)
	}
	formats := p.StringMap("number_format")
	ciDigits := p.Int("ci_digits")
	if !p.Has("ci_digits") {
		ciDigits = 2
	}
	for i, row := range r.Rows {
		var cells []stages.Cell
		for j, l := range row.Labels {
			if repeatedLabel(r, i, j) {
				l = ""
			}
			cells = append(cells, stages.Cell{Value: l})
		}
		for j, c := range row.Cells {
			cell := stages.Cell{Value: "n/a", Note: c.Note, Synthetic: t.Mixed && c.Synthetic && c.Text != ""}
			if c.Text != "" {
				cell.Value, cell.Bold, cell.Underline = c.Text, c.Best, c.Underline
				if c.CILow != nil && c.CIHigh != nil {
					f := ""
					if j < len(r.Columns) {
						f = formats[r.Columns[j].Stage]
					}
					cell.Rest = " [" + ciText(*c.CILow, f, ciDigits) + ", " + ciText(*c.CIHigh, f, ciDigits) + "]"
				}
			}
			cells = append(cells, cell)
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// repeatedLabel: row i's value of dimension j is the row before's, and so
// are all before it; the last dimension always prints (papers print a
// model's name once above its scenarios).
func repeatedLabel(r *pageReport, i, j int) bool {
	if i == 0 || j == len(r.RowDims)-1 {
		return false
	}
	for k := 0; k <= j; k++ {
		if k >= len(r.Rows[i].Values) || k >= len(r.Rows[i-1].Values) || r.Rows[i].Values[k] != r.Rows[i-1].Values[k] {
			return false
		}
	}
	return true
}

// ciText prints an interval bound as the column prints its values.
func ciText(v float64, printf string, digits int) string {
	var s string
	if printf != "" {
		s = fmt.Sprintf(printf, v)
	} else {
		s = strconv.FormatFloat(v, 'f', digits, 64)
	}
	if strings.HasPrefix(s, "-") && !strings.ContainsAny(s, "123456789") {
		s = s[1:]
	}
	return s
}
