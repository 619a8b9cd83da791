package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Widths a LaTeX table can be set to (the width param).
const (
	widthColumn  = `\columnwidth`
	widthText    = `\textwidth`
	widthNatural = "natural"
)

// widths lists the width param's values, the default first.
var widths = []string{widthColumn, widthText, widthNatural}

// latex writes the table as the papers set theirs: booktabs rules
// (\toprule, \midrule, \bottomrule), every text escaped, the best value of
// a column in \textbf, a pivot as a spanning header over its values with
// \cmidrule under it, long headers on two lines, and the notes below the
// tabular. Its first lines say which packages the preamble needs.
//
// Fitting: numbers cannot wrap, so neither tabularx (which wraps only its X
// columns' text) nor tabular* (which only stretches the space between
// columns, never shrinks it) can make a table of numbers narrower than its
// widest row. The tabular is therefore set in a box and, only when that box
// is wider than the width asked for (\columnwidth by default, so a table
// fits one column of a two-column paper; \textwidth sets it in table*),
// scaled down to it with graphicx's \resizebox: a table that fits keeps its
// type size. Two-line headers keep the scaling small. width = "natural" sets the tabular as it is.
func (f *filled) latex() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%% ideaflow report %s; in the preamble:\n", f.name)
	b.WriteString("% requires \\usepackage{booktabs}\n")
	if f.width != widthNatural {
		b.WriteString("% requires \\usepackage{graphicx}\n")
	}
	caption := texEscape(f.title)
	switch {
	case f.allSynthetic():
		b.WriteString("% " + SyntheticBanner + "\n")
		caption = `\textbf{SYNTHETIC (mock provider, made-up numbers):} ` + caption
	case f.mixed():
		b.WriteString("% " + MixedNote(f.synthetic, f.values) + "\n")
		caption = fmt.Sprintf(`\textbf{PARTLY SYNTHETIC (%d of %d cells, marked $^\dagger$: mock provider, made-up numbers):} `, f.synthetic, f.values) + caption
	}
	env := "table"
	if f.width == widthText {
		env = "table*"
	}
	fmt.Fprintf(&b, "\\begin{%s}[t]\n\\centering\n", env)
	fmt.Fprintf(&b, "\\caption{%s}\n\\label{tab:%s}\n", caption, f.name)
	if f.width != widthNatural {
		// A box of its own, allocated once however many tables a document inputs.
		b.WriteString("\\ifdefined\\ideaflowtablebox\\else\\newsavebox{\\ideaflowtablebox}\\fi\n")
		b.WriteString("\\begin{lrbox}{\\ideaflowtablebox}\n")
	}
	lead := len(f.dims)
	nCol := 0
	if f.countsColumn {
		nCol = 1
	}
	fmt.Fprintf(&b, "\\begin{tabular}{%s%s}\n\\toprule\n", strings.Repeat("l", lead), strings.Repeat("r", nCol+len(f.cols)))

	// The cells first: a header's width is judged against its column's.
	body := make([][]string, len(f.rows))
	widest := make([]int, lead+nCol+len(f.cols))
	for r, row := range f.rows {
		for j, l := range row.labels {
			if f.repeated(r, j) {
				l = ""
			}
			body[r] = append(body[r], texEscape(l))
			widest[j] = max(widest[j], utf8.RuneCountInString(l))
		}
		if f.countsColumn {
			body[r] = append(body[r], texEscape(f.rowN[r]))
		}
		for c := range f.cols {
			text, width := f.texCell(&f.cells[r][c])
			body[r] = append(body[r], text)
			widest[lead+nCol+c] = max(widest[lead+nCol+c], width)
		}
	}

	if f.pivot != "" {
		// First header row: each column stage over its pivot values.
		cells := make([]string, lead+nCol)
		var rules []string
		at := lead + nCol + 1
		for m, met := range f.metrics {
			n := 0
			for _, col := range f.cols {
				if col.metric == m {
					n++
				}
			}
			cells = append(cells, fmt.Sprintf("\\multicolumn{%d}{c}{%s%s}", n, texEscape(oneLine(met.label)), texArrow(met)))
			rules = append(rules, fmt.Sprintf("\\cmidrule(lr){%d-%d}", at, at+n-1))
			at += n
		}
		b.WriteString(strings.Join(cells, " & ") + " \\\\\n")
		b.WriteString(strings.Join(rules, " ") + "\n")
	}
	var head []string
	for j, l := range f.dimLabels {
		head = append(head, texHeader(l, widest[j], "l"))
	}
	if f.countsColumn {
		head = append(head, "$N$")
	}
	for c, col := range f.cols {
		h := texHeader(f.headerLabel(col), widest[lead+nCol+c], "r")
		if col.pivot < 0 {
			h += texArrow(f.metrics[col.metric])
		}
		head = append(head, h)
	}
	b.WriteString(strings.Join(head, " & ") + " \\\\\n\\midrule\n")
	for _, cells := range body {
		b.WriteString(strings.Join(cells, " & ") + " \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	if f.width != widthNatural {
		fmt.Fprintf(&b, "\\end{lrbox}\n\\ifdim\\wd\\ideaflowtablebox>%[1]s\\resizebox{%[1]s}{!}{\\usebox{\\ideaflowtablebox}}\\else\\usebox{\\ideaflowtablebox}\\fi\n", f.width)
	}
	if len(f.general)+len(f.notes) > 0 {
		// Ragged right: a long name in a note breaks the line before it
		// rather than sticking out of the column.
		b.WriteString("\\par\\smallskip\n{\\footnotesize\\raggedright\\sloppy\n")
		for _, n := range f.general {
			fmt.Fprintf(&b, "%s\\par\n", texEscape(n))
		}
		for i, n := range f.notes {
			fmt.Fprintf(&b, "$^{%d}$ %s\\par\n", i+1, texEscape(n))
		}
		b.WriteString("}\n")
	}
	fmt.Fprintf(&b, "\\end{%s}\n", env)
	return b.String()
}

// texCell is a cell as LaTeX prints it, and about how many characters wide
// it reads.
func (f *filled) texCell(cl *cell) (string, int) {
	text, width := "n/a", 3
	if cl.shown() {
		text, width = texEscape(cl.value), utf8.RuneCountInString(cl.value)
		if cl.underline {
			text = `\underline{` + text + `}`
		}
		if cl.best {
			text = `\textbf{` + text + `}`
		}
		if cl.hasCI() {
			ci := "[" + cl.low + ", " + cl.high + "]"
			text += " " + texEscape(ci)
			width += 1 + utf8.RuneCountInString(ci)
		}
	}
	if f.marked(cl) {
		text += `$^\dagger$`
	}
	if cl.note > 0 {
		text += fmt.Sprintf("$^{%d}$", cl.note)
		width++
	}
	return text, width
}

// texHeader sets a header: on two lines (a nested tabular, no package
// needed) when it holds a line break ("\n" in a label) or is longer than
// its column's widest cell and has a space to break at, balanced at the
// space nearest its middle.
func texHeader(label string, widest int, align string) string {
	lines := headerLines(label, widest)
	if len(lines) == 1 {
		return texEscape(lines[0])
	}
	for i := range lines {
		lines[i] = texEscape(lines[i])
	}
	return fmt.Sprintf(`\begin{tabular}[b]{@{}%s@{}}%s\end{tabular}`, align, strings.Join(lines, `\\`))
}

// headerLines splits a header into the lines it is printed on.
func headerLines(label string, widest int) []string {
	if strings.Contains(label, "\n") {
		return strings.SplitN(label, "\n", 2)
	}
	n := utf8.RuneCountInString(label)
	if n <= max(widest, 10) {
		return []string{label}
	}
	best := -1
	for i, r := range label {
		if r != ' ' {
			continue
		}
		at := utf8.RuneCountInString(label[:i])
		if best < 0 || abs(2*at-n) < abs(2*best-n) {
			best = at
		}
	}
	if best < 0 {
		return []string{label}
	}
	rs := []rune(label)
	return []string{string(rs[:best]), string(rs[best+1:])}
}

// texArrow is a header's better-direction mark, in math mode (pdflatex
// has no ↑ in text).
func texArrow(m *metric) string {
	switch m.better {
	case "higher":
		return ` $\uparrow$`
	case "lower":
		return ` $\downarrow$`
	}
	return ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

var texReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`,
	`_`, `\_`, `{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`,
	"\n", " ", "–", "--", "↑", `$\uparrow$`, "↓", `$\downarrow$`,
)

func texEscape(s string) string { return texReplacer.Replace(s) }
