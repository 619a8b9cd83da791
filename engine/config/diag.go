package config

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// MaxPrinted caps the diagnostics WriteDiagnostics prints: past the first
// few, more of them tell nothing new (a binary or garbled file gave 2 MB of
// "Invalid character"), and the first ones are what to fix.
const MaxPrinted = 20

// maxSourceLine caps the source line printed under a diagnostic.
const maxSourceLine = 200

// WriteDiagnostics prints diagnostics as `file:line:col: error: summary`
// followed by the detail (which always says how to fix it) and the source
// line; past MaxPrinted it says how many more there are.
func WriteDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File) {
	diags = Dedupe(diags)
	lines := map[string][]string{}
	for i, d := range diags {
		if i == MaxPrinted {
			errs, warns := 0, 0
			for _, d := range diags[i:] {
				if d.Severity == hcl.DiagError {
					errs++
				} else {
					warns++
				}
			}
			fmt.Fprintf(w, "ideaflow: ... and %d more error(s) and %d more warning(s), not shown: fix the ones above first\n", errs, warns)
			return
		}
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		loc := "ideaflow"
		if d.Subject != nil {
			loc = fmt.Sprintf("%s:%d:%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		fmt.Fprintf(w, "%s: %s: %s\n", loc, sev, d.Summary)
		if d.Detail != "" {
			fmt.Fprintf(w, "    %s\n", strings.TrimSpace(d.Detail))
		}
		if d.Subject != nil && files != nil {
			if f := files[d.Subject.Filename]; f != nil {
				ls, ok := lines[d.Subject.Filename]
				if !ok {
					ls = strings.Split(string(f.Bytes), "\n")
					lines[d.Subject.Filename] = ls
				}
				if n := d.Subject.Start.Line; n >= 1 && n <= len(ls) {
					fmt.Fprintf(w, "    %4d | %s\n", n, clip(ls[n-1], maxSourceLine))
				}
			}
		}
	}
}

// clip cuts s to about n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " ..."
}

// SourceFiles parses the experiment's files for showing source lines in
// diagnostics when loading stopped before the experiment was built.
func SourceFiles(path string) map[string]*hcl.File {
	files, _, _ := parseFiles(path)
	out := map[string]*hcl.File{}
	for _, f := range files {
		out[f.name] = f.file
	}
	return out
}

// ValueString renders a variable's value for run records.
func ValueString(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	if !v.IsWhollyKnown() {
		return "(unknown)"
	}
	if v.Type() == cty.String {
		return v.AsString()
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return v.GoString()
	}
	return string(b)
}
