package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/stages"
)

// decl is one named thing an expression can refer to: a variable, a local,
// or a block. Its address is what references spell ("model.gpt4o").
type decl struct {
	addr      string
	kind      string // variable, local, provider, model, dataset, quality, stage, report
	name      string
	stageType stages.Type // stage and report only
	block     *hcl.Block
	attr      *hcl.Attribute // locals
	content   *hcl.BodyContent
	forEach   *hcl.Attribute
	checked   bool // provider: the attributes were checked against the kind's settings
	declRange hcl.Range
	refs      []ref
	order     int
}

// sourceRange is the whole declaration in its file: the block, or the
// local's attribute.
func (d *decl) sourceRange() hcl.Range {
	switch {
	case d.block != nil:
		if b, ok := d.block.Body.(interface{ Range() hcl.Range }); ok {
			return hcl.RangeBetween(d.block.DefRange, b.Range())
		}
		return d.block.DefRange
	case d.attr != nil:
		return d.attr.Range
	}
	return d.declRange
}

// ref is one reference found in an expression.
type ref struct {
	to  string
	rng hcl.Range
}

type loader struct {
	exp   *Experiment
	opts  Options
	diags hcl.Diagnostics

	decls  map[string]*decl
	sorted []*decl
	values *values
	// varOrigins names where each variable given on the command line was
	// set ("-var n=abc", "-var-file vars.hcl:2"), for errors about its value.
	varOrigins map[string]string
	// fileTexts maps the text of each file() read to its path as written.
	fileTexts map[string]string
	// read holds the absolute path of every file file() and templatefile()
	// resolved (Experiment.ReadFiles).
	read map[string]bool
	// confine is --confine's roots; nil: reads are not confined.
	confine *confinement
	// pathOK marks the input paths inputPath checked and found readable.
	pathOK map[string]bool
}

func (l *loader) noteFile(name, text string) {
	if l.fileTexts == nil {
		l.fileTexts = map[string]string{}
	}
	l.fileTexts[text] = name
}

func (l *loader) errorf(rng *hcl.Range, summary, detailFormat string, args ...any) {
	l.diags = append(l.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(detailFormat, args...),
		Subject:  rng,
	})
}

var blockSchemas = map[string]*hcl.BodySchema{
	"variable": {Attributes: []hcl.AttributeSchema{{Name: "default"}, {Name: "description"}, {Name: "type"}}},
	"model": {
		Attributes: []hcl.AttributeSchema{
			{Name: "provider", Required: true}, {Name: "name", Required: true}, {Name: "family"},
			{Name: "temperature"}, {Name: "top_p"}, {Name: "max_tokens"}, {Name: "seed"}, {Name: "stop"}, {Name: "json_mode"},
			{Name: "knowledge_cutoff"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "price"}},
	},
	"dataset": {Attributes: []hcl.AttributeSchema{
		{Name: "format", Required: true}, {Name: "path", Required: true}, {Name: "id_field"}, {Name: "limit"},
		{Name: "references"}, {Name: "min_references"}, {Name: "sample"}, {Name: "sample_seed"},
		{Name: "categories"},
	}},
	"quality":   {Attributes: []hcl.AttributeSchema{{Name: "definition"}, {Name: "name"}}},
	"settings":  {Attributes: []hcl.AttributeSchema{{Name: "max_nodes"}, {Name: "name"}}},
	"stop_when": stopWhenSchema,
}

var priceSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "input_per_mtok"}, {Name: "output_per_mtok"},
	{Name: "batch_input_per_mtok"}, {Name: "batch_output_per_mtok"}, {Name: "cached_input_per_mtok"}, {Name: "batch_cached_input_per_mtok"}}}

// stageSchema is the body schema of a stage type: its params plus for_each.
func stageSchema(t stages.Type, kind string) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	if kind == "stage" || kind == "expect" {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: "for_each"})
	}
	for _, p := range t.Params() {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: p.Name, Required: p.Required})
	}
	return s
}

// collect turns the files' blocks into declarations, decoding each body
// against its schema and reporting duplicates, unknown blocks and attributes.
func (l *loader) collect(files []parsedFile) {
	l.decls = map[string]*decl{}
	order := 0
	add := func(d *decl) {
		if prev, dup := l.decls[d.addr]; dup {
			l.errorf(&d.declRange, "Duplicate "+d.kind+" "+fmt.Sprintf("%q", d.name),
				"%s is also declared at %s. Names must be unique within an experiment: rename one of them.",
				d.addr, rangeString(prev.declRange))
			return
		}
		d.order = order
		order++
		l.decls[d.addr] = d
	}
	for _, f := range files {
		content, diags := f.file.Body.Content(rootSchema)
		for _, d := range diags {
			if d.Summary == "Unsupported block type" {
				d.Detail = strings.TrimSpace(d.Detail) + " " + topLevelHint
			}
		}
		l.diags = append(l.diags, diags...)
		for _, b := range content.Blocks {
			switch b.Type {
			case "locals":
				attrs, diags := b.Body.JustAttributes()
				l.diags = append(l.diags, diags...)
				names := make([]string, 0, len(attrs))
				for n := range attrs {
					names = append(names, n)
				}
				sort.Slice(names, func(i, j int) bool {
					return attrs[names[i]].Range.Start.Byte < attrs[names[j]].Range.Start.Byte
				})
				for _, n := range names {
					a := attrs[n]
					add(&decl{addr: "local." + n, kind: "local", name: n, attr: a, declRange: a.NameRange})
				}
			case "stage", "report", "expect":
				l.collectStage(b, add)
			case "provider": // its schema depends on its kind: see providers.go
				l.collectProvider(b, add)
			case "settings":
				if prev, dup := l.decls["settings"]; dup {
					l.errorf(&b.DefRange, "Duplicate settings block",
						"An experiment has one settings block and another is at %s; merge them into one.", rangeString(prev.declRange))
					continue
				}
				content, diags := b.Body.Content(blockSchemas["settings"])
				l.diags = append(l.diags, diags...)
				add(&decl{addr: "settings", kind: "settings", name: "settings", block: b, content: content, declRange: b.DefRange})
			case "stop_when":
				if prev, dup := l.decls["stop_when"]; dup {
					l.errorf(&b.DefRange, "Duplicate stop_when block",
						"An experiment has one stop_when block and another is at %s; merge them into one.", rangeString(prev.declRange))
					continue
				}
				content, diags := b.Body.Content(stopWhenSchema)
				l.diags = append(l.diags, diags...)
				add(&decl{addr: "stop_when", kind: "stop_when", name: "stop_when", block: b, content: content, declRange: b.DefRange})
			default:
				kind := b.Type
				prefix := kind
				if kind == "variable" {
					prefix = "var"
				}
				d := &decl{addr: prefix + "." + b.Labels[0], kind: kind, name: b.Labels[0], block: b, declRange: b.DefRange}
				content, diags := b.Body.Content(blockSchemas[kind])
				l.diags = append(l.diags, diags...)
				d.content = content
				if kind == "model" {
					l.checkPriceBlocks(content)
				}
				add(d)
			}
		}
	}
}

func (l *loader) checkPriceBlocks(content *hcl.BodyContent) {
	if content == nil {
		return
	}
	if len(content.Blocks) > 1 {
		r := content.Blocks[1].DefRange
		l.errorf(&r, "Duplicate price block", "A model has at most one price block; merge them into one.")
	}
	for _, pb := range content.Blocks {
		_, diags := pb.Body.Content(priceSchema)
		l.diags = append(l.diags, diags...)
	}
}

func (l *loader) collectStage(b *hcl.Block, add func(*decl)) {
	var typeName, name, addr string
	if b.Type == "stage" {
		typeName, name = b.Labels[0], b.Labels[1]
		addr = "stage." + typeName + "." + name
	} else {
		// report and expect blocks are stages of the type of their name.
		typeName, name = b.Type, b.Labels[0]
		addr = b.Type + "." + name
	}
	t, ok := stages.Lookup(typeName)
	if b.Type == "stage" && (typeName == "report" || typeName == "expect") {
		r := b.LabelRanges[0]
		l.errorf(&r, fmt.Sprintf("%s is a block of its own", typeName),
			"Write %s \"%s\" { ... } at the top level, not as a stage block.", typeName, b.Labels[1])
		return
	}
	if !ok {
		r := b.LabelRanges[0]
		l.errorf(&r, fmt.Sprintf("Unknown stage type %q", typeName),
			"ideaflow has no stage type %q. Use one of: %s.", typeName, strings.Join(stageTypeNames(), ", "))
		return
	}
	d := &decl{addr: addr, kind: b.Type, name: name, stageType: t, block: b, declRange: b.DefRange}
	content, diags := b.Body.Content(stageSchema(t, b.Type))
	for _, dg := range diags {
		if dg.Summary == "Unsupported argument" || dg.Summary == "Unsupported block type" {
			dg.Detail = strings.TrimSpace(dg.Detail) + fmt.Sprintf(" Stage type %q accepts: %s.", typeName, paramList(t, b.Type))
		}
		if dg.Summary == "Missing required argument" {
			dg.Detail = strings.TrimSpace(dg.Detail) + " " + paramDoc(t, dg.Detail)
		}
	}
	l.diags = append(l.diags, diags...)
	d.content = content
	if content != nil {
		d.forEach = content.Attributes["for_each"]
	}
	add(d)
}

func stageTypeNames() []string {
	var out []string
	for _, n := range stages.Names() {
		if n != "report" && n != "expect" {
			out = append(out, n)
		}
	}
	return out
}

func paramList(t stages.Type, kind string) string {
	var names []string
	if kind == "stage" {
		names = append(names, "for_each")
	}
	for _, p := range t.Params() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// paramDoc finds the param a "missing argument" detail names and returns its doc line.
func paramDoc(t stages.Type, detail string) string {
	for _, p := range t.Params() {
		if strings.Contains(detail, fmt.Sprintf("%q", p.Name)) && p.Doc != "" {
			return fmt.Sprintf("Add %s = ... (%s).", p.Name, p.Doc)
		}
	}
	return ""
}

func rangeString(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

// expressions lists every expression of a declaration, for reference analysis.
func (d *decl) expressions() []hcl.Expression {
	if d.attr != nil {
		return []hcl.Expression{d.attr.Expr}
	}
	if d.content == nil {
		return nil
	}
	var out []hcl.Expression
	for _, a := range sortedAttrs(d.content.Attributes) {
		if d.kind == "variable" && a.Name == "type" {
			continue // a type constraint (number, list(string)), not an expression
		}
		out = append(out, a.Expr)
	}
	for _, b := range d.content.Blocks {
		attrs, _ := b.Body.JustAttributes()
		for _, a := range sortedAttrs(attrs) {
			out = append(out, a.Expr)
		}
	}
	return out
}

func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}

// emptyObject is cty's empty object, used where a namespace has no members yet.
var emptyObject = cty.EmptyObjectVal
