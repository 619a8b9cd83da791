package report

import (
	"regexp"
	"strconv"
	"strings"
)

// PageTable is one report table as report.html shows it: read back from the
// report's Markdown file (its labels, formatted numbers, bold best values,
// notes and footnotes, as the researcher laid the table out), else from its
// CSV file (raw values); Markdown holds a file that reads as neither.
type PageTable struct {
	Name      string
	Title     string
	Header    []string
	Numeric   []bool // per column: right-aligned (a score column)
	Rows      [][]PageCell
	Notes     []string // the table's general notes
	Footnotes []string // footnote i+1's text
	Markdown  string
	// Synthetic is the sentence the table opens with when some of its
	// values are synthetic (SyntheticBanner, or MixedNote); Mixed says
	// only some are, each cell marked (PageCell.Synthetic).
	Synthetic string
	Mixed     bool
}

// IsNumeric reports whether column i is right-aligned (false past Numeric).
func (t PageTable) IsNumeric(i int) bool { return i < len(t.Numeric) && t.Numeric[i] }

// PageCell is one table cell: Value (bold when it is the column's best),
// then Rest (an interval), then footnote Note (0: none). Synthetic marks a
// value of a partly synthetic table that comes from the mock.
type PageCell struct {
	Value     string
	Bold      bool
	Rest      string
	Note      int
	Synthetic bool
}

var (
	mdNoteRef  = regexp.MustCompile(`\[\^(\d+)\]$`)
	mdFootnote = regexp.MustCompile(`^\[\^(\d+)\]: (.*)$`)
	mdRule     = regexp.MustCompile(`^:?-+:?$`)
)

// TableFromMarkdown reads a table the report stage wrote as Markdown (see
// filled.markdown, the one writer it has to read): the title, the table,
// the "- " notes and the "[^n]: " footnotes; the provenance after "---" is
// left to the page's own section. ok is false when md has no such table.
func TableFromMarkdown(name, md string) (t PageTable, ok bool) {
	t = PageTable{Name: name}
	inTable, ruled := false, false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case line == "---" && ruled:
			return t, true
		case strings.HasPrefix(line, "|"):
			if ruled && !inTable {
				return t, false // a second table: not ours
			}
			inTable = true
			cells := splitMarkdownRow(line)
			switch {
			case t.Header == nil:
				t.Header = cells
			case !ruled:
				if len(cells) != len(t.Header) {
					return t, false
				}
				for _, c := range cells {
					if !mdRule.MatchString(c) {
						return t, false
					}
					t.Numeric = append(t.Numeric, strings.HasSuffix(c, ":"))
				}
				ruled = true
			default:
				if len(cells) != len(t.Header) {
					return t, false
				}
				row := make([]PageCell, len(cells))
				for i, c := range cells {
					row[i] = markdownCell(c)
				}
				t.Rows = append(t.Rows, row)
			}
		case inTable:
			inTable = false
			fallthrough
		default:
			switch {
			case t.Header == nil && t.Title == "" && (line == SyntheticBanner || strings.HasPrefix(line, MixedPrefix)):
				t.Synthetic, t.Mixed = unescapeMarkdown(line), line != SyntheticBanner
			case t.Header == nil && strings.HasPrefix(line, "# ") && t.Title == "":
				t.Title = strings.TrimPrefix(line, "# ")
			case ruled && strings.HasPrefix(line, "- "):
				t.Notes = append(t.Notes, unescapeMarkdown(strings.TrimPrefix(line, "- ")))
			case ruled && mdFootnote.MatchString(line):
				m := mdFootnote.FindStringSubmatch(line)
				if n, _ := strconv.Atoi(m[1]); n == len(t.Footnotes)+1 {
					t.Footnotes = append(t.Footnotes, unescapeMarkdown(m[2]))
				}
			}
		}
	}
	return t, ruled
}

// splitMarkdownRow splits "| a | b \| c |" into ["a", "b | c"].
func splitMarkdownRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func unescapeMarkdown(s string) string { return strings.ReplaceAll(s, `\|`, "|") }

// markdownCell reads "**0.614** [0.58, 0.65]†[^2]" (bold, interval, mark
// and note each optional).
func markdownCell(c string) PageCell {
	var cell PageCell
	if m := mdNoteRef.FindStringSubmatchIndex(c); m != nil {
		cell.Note, _ = strconv.Atoi(c[m[2]:m[3]])
		c = c[:m[0]]
	}
	c, cell.Synthetic = strings.CutSuffix(c, MixedMark)
	if rest, ok := strings.CutPrefix(c, "**"); ok {
		if i := strings.Index(rest, "**"); i >= 0 {
			cell.Value, cell.Bold, cell.Rest = rest[:i], true, rest[i+2:]
			return cell
		}
	}
	cell.Value = c
	return cell
}
