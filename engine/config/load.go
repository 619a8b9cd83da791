package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/ideaflow/ideaflow/stages/datasets"
)

// Options are the values given on the command line.
type Options struct {
	Vars     []string // "name=value", in order; later wins
	VarFiles []string // HCL files of name = value; applied before Vars
	// Confine refuses every read of the experiment (file(), templatefile,
	// dataset, references, categories and provider file paths, a folder
	// dataset's files) that does not resolve inside the experiment folder
	// or one of ConfineAlso (the user cache): for running experiments from
	// others. The -var-file files themselves, which the user names, are
	// read wherever they are.
	Confine     bool
	ConfineAlso []string
}

// rootSchema lists the top-level blocks of the language.
var rootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"},
	{Type: "provider", LabelNames: []string{"name"}},
	{Type: "model", LabelNames: []string{"name"}},
	{Type: "dataset", LabelNames: []string{"name"}},
	{Type: "quality", LabelNames: []string{"name"}},
	{Type: "stage", LabelNames: []string{"type", "name"}},
	{Type: "report", LabelNames: []string{"name"}},
	{Type: "expect", LabelNames: []string{"name"}},
	{Type: "settings"},
	{Type: "stop_when"},
}}

const topLevelHint = "The top-level blocks are variable, locals, provider, model, dataset, quality, stage, report, expect, settings and stop_when."

// Load reads the experiment at path (a folder of .hcl files, or one .hcl file)
// and decodes it. It returns every problem found, not just the first; with
// errors, the experiment it returns (nil only when no file parsed) is
// partial: what failed and what reads it are left out.
func Load(path string, opts Options) (*Experiment, hcl.Diagnostics) {
	files, dir, diags := parseFiles(path)
	if diags.HasErrors() {
		return nil, diags
	}
	name := filepath.Base(dir)
	results := filepath.Join(dir, "results")
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		results = filepath.Join(results, name)
	}
	l := &loader{
		exp: &Experiment{
			Name: name, Dir: dir, ResultsDir: results, Files: map[string]*hcl.File{},
		},
		opts: opts,
	}
	if opts.Confine {
		l.confine = newConfinement(dir, opts.ConfineAlso)
	}
	for _, f := range files {
		l.exp.Files[f.name] = f.file
	}
	l.exp.Source = sourceDigest(files)
	l.load(files)
	l.identify(path)
	l.exp.ReadFiles = slices.Sorted(maps.Keys(l.read))
	l.diags = Dedupe(l.diags)
	// With errors the experiment is partial (what failed, and what reads
	// it, is left out), returned so a caller can run the checks that come
	// after decoding (datasets, layout) on the rest in the same pass.
	return l.exp, l.diags
}

type parsedFile struct {
	name string
	src  []byte
	file *hcl.File
}

func parseFiles(path string) ([]parsedFile, string, hcl.Diagnostics) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Experiment not found",
			Detail:   fmt.Sprintf("%s. Give the path of an experiment folder (holding .hcl files) or of one .hcl file.", err),
		}}
	}
	var names []string
	dir := path
	if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, "", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read experiment folder", Detail: err.Error()}}
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".hcl") {
				names = append(names, filepath.Join(path, e.Name()))
			}
		}
		if len(names) == 0 {
			return nil, "", hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "No experiment files",
				Detail:   fmt.Sprintf("The folder %s holds no .hcl files. Put the experiment's blocks in one or more .hcl files there.", path),
			}}
		}
	} else {
		names = []string{path}
		dir = filepath.Dir(path)
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		dir = abs
	}
	sort.Strings(names)
	p := hclparse.NewParser()
	var out []parsedFile
	var diags hcl.Diagnostics
	for _, n := range names {
		src, err := datasets.ReadRegular(n, MaxExperimentFileBytes)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read file",
				Detail: n + ": " + err.Error() + ". An experiment file is a regular UTF-8 text file of HCL."})
			continue
		}
		if d := checkSource(n, src); d != nil {
			diags = append(diags, d)
			continue
		}
		// Diagnostics name files relative to the working directory, as the user typed them.
		f, d := p.ParseHCL(src, n)
		diags = append(diags, d...)
		if f != nil {
			out = append(out, parsedFile{name: n, src: src, file: f})
		}
	}
	return out, dir, diags
}

func sourceDigest(files []parsedFile) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(f.name), len(f.src))
		h.Write(f.src)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkHasStage refuses an experiment without a stage or report block: it
// would plan and run nothing and exit 0, which hides an empty or misnamed
// file. Checked only when nothing else is wrong, since a file that failed to
// decode may have held the stages.
func (l *loader) checkHasStage(files []parsedFile) {
	for _, d := range l.decls {
		if d.kind == "stage" || d.kind == "report" {
			return
		}
	}
	r := hcl.Range{Start: hcl.InitialPos, End: hcl.InitialPos}
	if len(files) > 0 {
		r.Filename = files[0].name
	}
	l.errorf(&r, "Experiment declares no stage",
		"There is nothing to plan or run. Add a stage block, e.g. stage \"generate_ideas\" \"main\" { ... }, or point ideaflow at the experiment's folder.")
}

// Dedupe drops repeated diagnostics: the same severity, message and source
// range. An attribute is evaluated once per for_each instance, so one mistake
// in it would otherwise print once per instance.
func Dedupe(diags hcl.Diagnostics) hcl.Diagnostics {
	type key struct {
		sev                   hcl.DiagnosticSeverity
		summary, detail, file string
		start, end            int
	}
	seen := make(map[key]bool, len(diags))
	out := diags[:0:0]
	for _, d := range diags {
		k := key{sev: d.Severity, summary: d.Summary, detail: d.Detail}
		if s := d.Subject; s != nil {
			k.file, k.start, k.end = s.Filename, s.Start.Byte, s.End.Byte
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}
