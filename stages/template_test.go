package stages

import (
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestRender(t *testing.T) {
	type data struct {
		Items []string
		N     int
	}
	tests := []struct {
		name string
		text string
		data any
		want string
	}{
		{"numbered", "{{numbered .Items}}", data{Items: []string{"a", "b", "c"}}, "1. a\n2. b\n3. c"},
		{"numbered empty", "[{{numbered .Items}}]", data{}, "[]"},
		{"join pipeline", `{{.Items | join ", "}}`, data{Items: []string{"x", "y"}}, "x, y"},
		{"trim", `<{{trim "  hi \n"}}>`, nil, "<hi>"},
		{"upper lower", `{{upper "ab"}}{{lower "CD"}}`, nil, "ABcd"},
		{"inc", `{{inc .N}}`, data{N: 4}, "5"},
		{"map value", `{{.a}}`, map[string]string{"a": "v"}, "v"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render("t", tc.text, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		data    any
		wantErr []string
	}{
		{"parse error names template", "{{.A", nil, []string{"parse template prompt.tmpl:", "prompt.tmpl:1"}},
		{"unknown function", "{{nope .A}}", nil, []string{"parse template prompt.tmpl:", `function "nope" not defined`}},
		{"missing map key", "{{.b}}", map[string]string{"a": "v"}, []string{"render template prompt.tmpl:", `.b is not a field here; available: .a`}},
		{"missing struct field", "{{.Missing}}", struct{ A int }{1}, []string{"render template prompt.tmpl:", "can't evaluate field Missing"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render("prompt.tmpl", tc.text, tc.data)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestRenderCachesParsedTemplate(t *testing.T) {
	const text = "cached {{.}}"
	a, err := parseTemplate("c", text)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := parseTemplate("c", text)
	if a != b {
		t.Error("the same name and text parsed twice")
	}
	// A parse error is cached too, and still names the template.
	_, err1 := parseTemplate("bad", "{{")
	_, err2 := parseTemplate("bad", "{{")
	if err1 == nil || err1 != err2 {
		t.Errorf("parse errors not cached: %v / %v", err1, err2)
	}
}

func TestRenderConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				got, err := Render("conc", "{{.}}-{{inc .}}", i)
				if err != nil {
					t.Error(err)
					return
				}
				want := strconv.Itoa(i) + "-" + strconv.Itoa(i+1)
				if got != want {
					t.Errorf("got %q want %q", got, want)
					return
				}
			}
		}(i)
	}
	wg.Wait()
}

// TestRenderNamesTemplateFile: a template read from a file gives errors with
// that file and line, after the stage's own name.
func TestRenderNamesTemplateFile(t *testing.T) {
	const parseText = "line one\n{{.A\n"
	const execText = "line one\nline two {{.b}}\n"
	NoteTemplateFile(parseText, "prompts/broken.tmpl")
	NoteTemplateFile(execText, "prompts/keys.tmpl")
	tests := []struct {
		name, text string
		data       any
		want       string
	}{
		{"parse", parseText, nil, `parse template stage.g.main prompt: template: prompts/broken.tmpl:3: unclosed action started at prompts/broken.tmpl:2`},
		{"exec", execText, map[string]string{"a": "v"}, `render template stage.g.main prompt: template: prompts/keys.tmpl:2:11: executing "prompts/keys.tmpl" at <.b>: .b is not a field here; available: .a`},
		{"inline text keeps the stage's name", "{{.A", nil, `parse template stage.g.main prompt: template: stage.g.main prompt:1: unclosed action`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render("stage.g.main prompt", tc.text, tc.data)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// A template naming a field the data lacks says which fields it has, in the
// template's terms, not Go's.
func TestRenderNamesTheAvailableFields(t *testing.T) {
	type ref struct {
		Number   int
		Abstract string
	}
	type data struct {
		References []ref
		N          int
		Keywords   []string
	}
	d := &data{References: []ref{{1, "a"}}, N: 1}
	_, err := Render("stage.x: prompt", "{{.ID}}", d)
	if err == nil || !strings.Contains(err.Error(), ".ID is not a field here; available: .References .N .Keywords") || strings.Contains(err.Error(), "in type") {
		t.Fatalf("top-level field: %v", err)
	}
	_, err = Render("stage.x: prompt", "{{range .References}}{{.Title}}{{end}}", d)
	if err == nil || !strings.Contains(err.Error(), ".Title is not a field here; available: .Number .Abstract") {
		t.Fatalf("nested field: %v", err)
	}
}
