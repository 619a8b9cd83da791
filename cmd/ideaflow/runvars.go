package main

// The variable values of a run: what `run` records with the run record and
// in the reports' provenance, and how show, export and report describe the
// last run's configuration again when no -var says otherwise.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
)

// A variable whose value holds the value of a secret environment variable
// (secretEnvName, as crash reports mask them) is never recorded: a key
// pasted into -var must not reach the cache or a report.

// minSecretLen keeps short values (a "1" in FOO_TOKEN_LIMIT) from withholding
// every variable whose value contains them.
const minSecretLen = 8

// secretIn returns the name of the secret environment variable whose value
// s holds, or "".
func secretIn(s string) string {
	for _, kv := range os.Environ() {
		name, val, _ := strings.Cut(kv, "=")
		if len(val) >= minSecretLen && secretEnvName.MatchString(name) && strings.Contains(s, val) {
			return name
		}
	}
	return ""
}

// withheld is what Variables records instead of a value that holds a secret.
func withheld(env string) string { return "(withheld: holds the value of $" + env + ")" }

// runVars are a loaded experiment's variable values as a run records them.
type runVars struct {
	Strings map[string]string // for people (Variables)
	Values  map[string]string // HCL literals (VarValues)
	Files   []cache.VarFile
}

// variablesOf returns the values of g's variables; Values holds those that
// vars and varFiles (the -var and -var-file flags) gave, the ones a later
// command must give again to describe the same configuration (the others
// are the experiment's defaults, which an edit of the file may change on
// purpose).
func variablesOf(g *engine.Graph, vars, varFiles []string) runVars {
	rv := runVars{Strings: map[string]string{}, Values: map[string]string{}}
	given := givenNames(vars, varFiles)
	for name, v := range g.Exp.Variables {
		text := config.ValueString(v)
		lit := hclLiteral(v)
		if env := secretIn(text + "\x00" + lit); env != "" {
			rv.Strings[name] = withheld(env)
			continue
		}
		rv.Strings[name] = text
		if lit != "" && given[name] {
			rv.Values[name] = lit
		}
	}
	for _, f := range varFiles {
		vf := cache.VarFile{Path: f}
		if abs, err := filepath.Abs(f); err == nil {
			vf.Path = abs
		}
		if b, err := os.ReadFile(f); err == nil {
			sum := sha256.Sum256(b)
			vf.SHA256 = hex.EncodeToString(sum[:])
		}
		rv.Files = append(rv.Files, vf)
	}
	return rv
}

// givenNames are the variables that -var flags and -var-file files set
// (files that do not parse set none: loading said why).
func givenNames(vars, varFiles []string) map[string]bool {
	out := map[string]bool{}
	for _, kv := range vars {
		if name, _, ok := strings.Cut(kv, "="); ok {
			out[name] = true
		}
	}
	for _, f := range varFiles {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		file, diags := hclsyntax.ParseConfig(src, f, hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		attrs, _ := file.Body.JustAttributes()
		for name := range attrs {
			out[name] = true
		}
	}
	return out
}

// hclLiteral writes v as an HCL expression that evaluates to v ("" for a
// value that is not wholly known, which a run never records).
func hclLiteral(v cty.Value) string {
	if !v.IsWhollyKnown() {
		return ""
	}
	var b strings.Builder
	if !writeLiteral(&b, v) {
		return ""
	}
	return b.String()
}

func writeLiteral(b *strings.Builder, v cty.Value) bool {
	ty := v.Type()
	switch {
	case v.IsNull():
		b.WriteString("null")
	case ty == cty.String:
		// Quoted as HCL reads it back: "${" and "%{" would start a template.
		q := strconv.Quote(v.AsString())
		q = strings.NewReplacer("${", "$${", "%{", "%%{").Replace(q)
		b.WriteString(q)
	case ty == cty.Number:
		b.WriteString(v.AsBigFloat().Text('g', -1))
	case ty == cty.Bool:
		b.WriteString(strconv.FormatBool(v.True()))
	case ty.IsListType(), ty.IsTupleType(), ty.IsSetType():
		b.WriteByte('[')
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, e := it.Element()
			if i > 0 {
				b.WriteString(", ")
			}
			if !writeLiteral(b, e) {
				return false
			}
		}
		b.WriteByte(']')
	case ty.IsMapType(), ty.IsObjectType():
		b.WriteByte('{')
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			k, e := it.Element()
			if i > 0 {
				b.WriteString(", ")
			}
			writeLiteral(b, k)
			b.WriteString(" = ")
			if !writeLiteral(b, e) {
				return false
			}
		}
		b.WriteByte('}')
	default:
		return false
	}
	return true
}

// lastRun returns the last run of the experiment g in store: the last one
// under its identity, else from its path, else (a bundle from another
// machine, a moved folder) the last one of the same name with at least half
// its blocks in common. nil if none.
func lastRun(store cache.Store, g *engine.Graph) *cache.RunRecord {
	runs, err := store.Runs() // oldest first
	if err != nil {
		return nil
	}
	var byID, byPath, byName *cache.RunRecord
	for _, r := range runs {
		switch {
		case r.ExperimentID != "" && r.ExperimentID == g.Exp.ID:
			byID = r
		case r.ExperimentPath != "" && r.ExperimentPath == g.Exp.Path:
			byPath = r
		case r.Experiment == g.Exp.Name && jaccard(r.Blocks, g.Exp.Blocks) >= 0.5:
			byName = r
		}
	}
	for _, r := range []*cache.RunRecord{byID, byPath, byName} {
		if r != nil {
			return r
		}
	}
	return nil
}

func jaccard(a, b []string) float64 {
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	both, union := 0, len(in)
	for _, x := range b {
		if in[x] {
			both++
		} else {
			union++
		}
	}
	if union == 0 {
		return 0
	}
	return float64(both) / float64(union)
}

// loadLastRun loads the experiment at path for a command that describes
// what was run (show, export, report): variables that the last run of the
// experiment in the cache gave with -var or -var-file, and that no flag
// gives now, take that run's values, and the command says so; values given
// now that differ from that run's are warned about, and so are defaults
// changed since. The cache it opens stays open for the command (a.shared).
func (a *app) loadLastRun(path string) (*engine.Graph, error) {
	var diags bytes.Buffer // the first load's warnings, printed if it is the one kept
	g, err := a.loadQuiet(path, a.vars, a.varFiles, &diags)
	keep := func(g *engine.Graph, err error) (*engine.Graph, error) {
		io.Copy(a.stderr, &diags)
		return g, err
	}
	if err != nil {
		return keep(nil, err)
	}
	store := a.sharedStore()
	if store == nil {
		return keep(g, nil)
	}
	run := lastRun(store, g)
	if run == nil {
		return keep(g, nil)
	}
	when := run.Started.UTC().Format(time.DateTime + " UTC")
	final := g
	if file, cleanup := lastRunVarFile(run, g); file != "" {
		defer cleanup()
		// The last run's values first: the files and flags given now,
		// read after them, win.
		var diags2 bytes.Buffer
		g2, err := a.loadQuiet(path, a.vars, append([]string{file}, a.varFiles...), &diags2)
		if err != nil {
			fmt.Fprintf(a.stderr, "warning: the variables of the last run of %s at %s no longer fit the experiment; describing the values given and the defaults instead\n", g.Exp.Name, when)
			return keep(g, nil)
		}
		final, diags = g2, diags2
	}
	io.Copy(a.stderr, &diags)
	before := variablesOf(g, nil, nil).Strings
	now := variablesOf(final, nil, nil).Strings
	asked := givenNames(a.vars, a.varFiles)
	var used, differ, changed []string
	for _, name := range slices.Sorted(maps.Keys(run.Variables)) {
		was := run.Variables[name]
		cur, declared := now[name]
		switch {
		case !declared || strings.HasPrefix(was, "(withheld"):
		case cur != was && asked[name]:
			differ = append(differ, fmt.Sprintf("%s=%s (last run: %s)", name, cur, was))
		case cur != was:
			changed = append(changed, fmt.Sprintf("%s=%s (last run: %s)", name, cur, was))
		case before[name] != was:
			used = append(used, name+"="+was)
		}
	}
	if len(used) > 0 {
		fmt.Fprintf(a.stderr, "note: using the variables of the last run of %s at %s: %s (give -var to describe another configuration)\n",
			g.Exp.Name, when, strings.Join(used, ", "))
	}
	if len(differ) > 0 {
		fmt.Fprintf(a.stderr, "warning: the values given differ from the last run of %s at %s: %s; describing the configuration given, whose nodes that run did not compute\n",
			g.Exp.Name, when, strings.Join(differ, ", "))
	}
	if len(changed) > 0 {
		fmt.Fprintf(a.stderr, "note: defaults changed since the last run of %s at %s: %s; describing the experiment as it is now\n",
			g.Exp.Name, when, strings.Join(changed, ", "))
	}
	return final, nil
}

// loadQuiet is loadWith with its diagnostics written to diags.
func (a *app) loadQuiet(path string, vars, varFiles []string, diags io.Writer) (*engine.Graph, error) {
	stderr := a.stderr
	a.stderr = diags
	defer func() { a.stderr = stderr }()
	return a.loadWith(path, vars, varFiles)
}

// lastRunVarFile writes the values run's flags gave, of variables g still
// declares, as a temporary -var-file ("" when there are none).
func lastRunVarFile(run *cache.RunRecord, g *engine.Graph) (path string, cleanup func()) {
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(run.VarValues)) {
		if _, declared := g.Exp.Variables[name]; declared && run.VarValues[name] != "" {
			lines = append(lines, name+" = "+run.VarValues[name])
		}
	}
	if len(lines) == 0 {
		return "", nil
	}
	tmp, err := os.CreateTemp("", "ideaflow-last-run-*.hcl")
	if err != nil {
		return "", nil
	}
	_, werr := tmp.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return "", nil
	}
	return tmp.Name(), func() { os.Remove(tmp.Name()) }
}
