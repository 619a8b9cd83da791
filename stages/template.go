package stages

import (
	"bytes"
	"cmp"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/template"
)

// templateFuncs are the helpers every prompt template may use. They are kept
// few and pure: a template's text is key material, so a helper that changed
// behaviour would silently change what a cached request meant.
var templateFuncs = template.FuncMap{
	// numbered renders items as "1. a\n2. b".
	"numbered": func(items []string) string {
		var b strings.Builder
		for i, s := range items {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strconv.Itoa(i + 1))
			b.WriteString(". ")
			b.WriteString(s)
		}
		return b.String()
	},
	// join takes the separator first so that it reads well in a pipeline:
	// {{ .Keywords | join ", " }}.
	"join":  func(sep string, items []string) string { return strings.Join(items, sep) },
	"trim":  strings.TrimSpace,
	"upper": strings.ToUpper,
	"lower": strings.ToLower,
	// inc turns a 0-based index into a 1-based number for humans.
	"inc": func(i int) int { return i + 1 },
}

type templateKey struct{ name, text string }

type parsedTemplate struct {
	t   *template.Template
	err error
}

// templates caches parsed templates: a stage renders the same template once
// per node, and parsing dominated rendering when there are 200k nodes.
var templates sync.Map // templateKey -> *parsedTemplate

func parseTemplate(name, text string) (*template.Template, error) {
	return parseTemplateAs(name, name, text)
}

// parseTemplateAs parses text under tmplName, the name text/template's own
// errors give; name is the one this package's errors give.
func parseTemplateAs(name, tmplName, text string) (*template.Template, error) {
	k := templateKey{name + "\x00" + tmplName, text}
	if v, ok := templates.Load(k); ok {
		p := v.(*parsedTemplate)
		return p.t, p.err
	}
	t, err := template.New(tmplName).Option("missingkey=error").Funcs(templateFuncs).Parse(text)
	if err != nil {
		err = fmt.Errorf("parse template %s: %w", name, err)
	}
	v, _ := templates.LoadOrStore(k, &parsedTemplate{t: t, err: err})
	p := v.(*parsedTemplate)
	return p.t, p.err
}

// templateFiles maps a template's text to the file it was read from (see
// NoteTemplateFile).
var templateFiles sync.Map // text -> file name

// NoteTemplateFile records that text was read from file, so that Render's
// errors give the file and line ("prompts/gen.tmpl:3") where the template is
// that file's text. engine/config calls it for Template params written as
// file("..."). It only changes messages: the text alone is key material.
func NoteTemplateFile(text, file string) { templateFiles.Store(text, file) }

// Render executes the Go text/template text with data. name identifies the
// template in errors (e.g. `stage.generate_ideas.main: prompt`). A reference to
// a field or map key that data lacks is an error, not an empty string, so a
// typo in a prompt cannot silently send a request with a hole in it.
func Render(name, text string, data any) (string, error) {
	tmplName := name
	if f, ok := templateFiles.Load(text); ok {
		// text/template puts its own name before the line: "template: prompts/gen.tmpl:3: ...".
		tmplName = f.(string)
	}
	t, err := parseTemplateAs(name, tmplName, text)
	if err != nil {
		return "", err
	}
	b := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		b.Reset()
		renderBuffers.Put(b)
	}()
	if err := t.Execute(b, data); err != nil {
		return "", fmt.Errorf("render template %s: %w", name, explainKey(explainField(err, data), data))
	}
	return b.String(), nil
}

// renderBuffers keep rendering from regrowing a buffer to prompt size (often
// 10 kB of abstracts) on every node.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

var (
	unknownField = regexp.MustCompile(`can't evaluate field (\w+) in type (\S+)`)
	identifier   = regexp.MustCompile(`^[\pL_][\pL\pN_]*$`)
	missingKey   = regexp.MustCompile(`at <(\.[\w.]+)>: map has no entry for key "([^"]*)"`)
)

// explainKey rewrites text/template's "at <.Item.titel>: map has no entry
// for key "titel"" for a map in data (a dataset record as .Item): which
// field is missing and which the record has (".Item.keyword .Item.title"),
// found by following the path through data.
func explainKey(err error, data any) error {
	m := missingKey.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	path := strings.Split(strings.TrimPrefix(m[1], "."), ".")
	v := reflect.ValueOf(data)
	for _, name := range path[:len(path)-1] {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			v = v.FieldByName(name)
		case reflect.Map:
			v = v.MapIndex(reflect.ValueOf(name))
		default:
			return err
		}
		if !v.IsValid() {
			return err
		}
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() != reflect.Map || v.Type().Key().Kind() != reflect.String {
		return err
	}
	prefix := ""
	if len(path) > 1 {
		prefix = "." + strings.Join(path[:len(path)-1], ".")
	}
	var keys []string
	for _, k := range v.MapKeys() {
		if identifier.MatchString(k.String()) {
			keys = append(keys, prefix+"."+k.String())
		} else { // a csv column like "Search Volume" is reached with index
			keys = append(keys, fmt.Sprintf("(index %s %q)", cmp.Or(prefix, "."), k.String()))
		}
	}
	sort.Strings(keys)
	where := strings.SplitN(err.Error(), "map has no entry", 2)[0]
	have := strings.Join(keys, " ")
	if have == "" {
		have = "none"
	}
	return fmt.Errorf("%s%s is not a field here; available: %s", where, m[1], have)
}

// explainField rewrites text/template's "can't evaluate field ID in type
// *ideabench.GenerateData" in the template's own terms: which field is
// unknown and which the data has (".References .N .Sample ..."), found by
// walking data's type for the type the error names.
func explainField(err error, data any) error {
	m := unknownField.FindStringSubmatch(err.Error())
	if m == nil || data == nil {
		return err
	}
	t := findType(reflect.TypeOf(data), m[2], map[reflect.Type]bool{})
	if t == nil {
		return err
	}
	var fields []string
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() {
			fields = append(fields, "."+f.Name)
		}
	}
	where := strings.SplitN(err.Error(), "can't evaluate", 2)[0]
	return fmt.Errorf("%s.%s is not a field here; available: %s", where, m[1], strings.Join(fields, " "))
}

// findType finds, in t or the types it holds, the struct type named name
// (as reflect prints it, with or without its pointer star).
func findType(t reflect.Type, name string, seen map[reflect.Type]bool) reflect.Type {
	if t == nil || seen[t] {
		return nil
	}
	seen[t] = true
	for t.Kind() == reflect.Pointer {
		if t.String() == name {
			return t.Elem()
		}
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.String() == name || "*"+t.String() == name {
			return t
		}
		for i := 0; i < t.NumField(); i++ {
			if r := findType(t.Field(i).Type, name, seen); r != nil {
				return r
			}
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		return findType(t.Elem(), name, seen)
	}
	return nil
}
