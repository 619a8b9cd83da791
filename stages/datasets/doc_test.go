package datasets

import (
	"reflect"
	"strings"
	"testing"
)

// Every format has its documentation, and nothing else does.
func TestEveryFormatIsDocumented(t *testing.T) {
	for _, d := range Docs() {
		if strings.TrimSpace(d.Doc) == "" || d.ID == "" {
			t.Errorf("format %q has no documentation in formatDocs", d.Name)
		}
	}
	for name := range formatDocs {
		if _, ok := readers[name]; !ok {
			t.Errorf("formatDocs documents %q, which no reader reads", name)
		}
	}
}

// jsonFields lists the JSON names of a struct's fields, nested structs of
// slices as "field[].name", in declaration order.
func jsonFields(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, prefix+name)
		if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type.Elem(), prefix+name+"[].")...)
		}
	}
	return out
}

// The documented fields of a Paper are exactly its JSON fields, so a field
// added to the loader cannot go undocumented.
func TestPaperFieldsMatchTheRecord(t *testing.T) {
	want := jsonFields(reflect.TypeFor[Paper](), "")
	var got []string
	for _, f := range paperFields {
		got = append(got, f.Name)
		if f.Type == "" || f.Doc == "" {
			t.Errorf("field %s has no type or doc", f.Name)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("documented fields %v, Paper has %v", got, want)
	}
}

// The CSV target list's documented record fields are what its reader fills in.
func TestTargetsCSVFields(t *testing.T) {
	items, err := Read("ideabench-targets-csv", "t.csv", strings.NewReader("paperId,title,abstract,year,abstract_summary,extra\np1,T,A,2020,I,x\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range formatDocs["ideabench-targets-csv"].Fields {
		got = append(got, f.Name)
	}
	if want := `{"id":"p1","title":"T","abstract":"A","idea":"I","year":2020}`; string(items[0].Record) != want {
		t.Errorf("record %s, want %s", items[0].Record, want)
	}
	// The references fields are filled in when a references file is joined
	// (references_test.go).
	want := []string{"id", "title", "abstract", "idea", "year", "references", "references[].id", "references[].title",
		"references[].abstract", "references[].citations", "references[].types", "references[].intents"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("documented fields %v, want %v", got, want)
	}
}
