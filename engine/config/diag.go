package config

import (
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// WriteDiagnostics prints diagnostics as `file:line:col: error: summary`
// followed by the detail (which always says how to fix it) and the source line.
func WriteDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File) {
	for _, d := range Dedupe(diags) {
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
				lines := strings.Split(string(f.Bytes), "\n")
				if n := d.Subject.Start.Line; n >= 1 && n <= len(lines) {
					fmt.Fprintf(w, "    %4d | %s\n", n, lines[n-1])
				}
			}
		}
	}
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
