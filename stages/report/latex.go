package report

import (
	"fmt"
	"strings"
)

// latex writes the table as the papers set theirs: booktabs rules
// (\toprule, \midrule, \bottomrule; the preamble needs \usepackage{booktabs}),
// every text escaped, the best value of a column in \textbf, a pivot as a
// spanning header over its values with \cmidrule under it, and the notes
// below the tabular.
func (f *filled) latex() string {
	var b strings.Builder
	caption := texEscape(f.title)
	switch {
	case f.allSynthetic():
		b.WriteString("% " + SyntheticBanner + "\n")
		caption = `\textbf{SYNTHETIC (mock provider, made-up numbers):} ` + caption
	case f.mixed():
		b.WriteString("% " + MixedNote(f.synthetic, f.values) + "\n")
		caption = fmt.Sprintf(`\textbf{PARTLY SYNTHETIC (%d of %d cells, marked $^\dagger$: mock provider, made-up numbers):} `, f.synthetic, f.values) + caption
	}
	b.WriteString("\\begin{table}[t]\n\\centering\n")
	fmt.Fprintf(&b, "\\caption{%s}\n", caption)
	fmt.Fprintf(&b, "\\begin{tabular}{%s%s}\n\\toprule\n", strings.Repeat("l", len(f.dims)), strings.Repeat("r", len(f.cols)))
	lead := len(f.dims)
	if f.pivot != "" {
		// First header row: each column stage over its pivot values.
		cells := make([]string, lead)
		var rules []string
		at := lead + 1
		for m, met := range f.metrics {
			n := 0
			for _, col := range f.cols {
				if col.metric == m {
					n++
				}
			}
			cells = append(cells, fmt.Sprintf("\\multicolumn{%d}{c}{%s}", n, texEscape(met.label)))
			rules = append(rules, fmt.Sprintf("\\cmidrule(lr){%d-%d}", at, at+n-1))
			at += n
		}
		b.WriteString(strings.Join(cells, " & ") + " \\\\\n")
		b.WriteString(strings.Join(rules, " ") + "\n")
	}
	var head []string
	for _, l := range f.dimLabels {
		head = append(head, texEscape(l))
	}
	for _, col := range f.cols {
		if f.pivot != "" {
			head = append(head, texEscape(f.pivotLabels[col.pivot]))
		} else {
			head = append(head, texEscape(f.colLabel(col)))
		}
	}
	b.WriteString(strings.Join(head, " & ") + " \\\\\n\\midrule\n")
	for r, row := range f.rows {
		var cells []string
		for j, l := range row.labels {
			if f.repeated(r, j) {
				l = ""
			}
			cells = append(cells, texEscape(l))
		}
		for c := range f.cols {
			cl := &f.cells[r][c]
			text := "n/a"
			if cl.shown() {
				text = texEscape(cl.value)
				if cl.best {
					text = `\textbf{` + text + `}`
				}
				if cl.hasCI() {
					text += " [" + texEscape(cl.low) + ", " + texEscape(cl.high) + "]"
				}
			}
			if f.marked(cl) {
				text += `$^\dagger$`
			}
			if cl.note > 0 {
				text += fmt.Sprintf("$^{%d}$", cl.note)
			}
			cells = append(cells, text)
		}
		b.WriteString(strings.Join(cells, " & ") + " \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	for _, n := range f.general {
		fmt.Fprintf(&b, "{\\footnotesize %s\\par}\n", texEscape(n))
	}
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
