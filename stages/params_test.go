package stages

import (
	"strings"
	"testing"
)

type declType struct{ Type }

func (declType) Name() string { return "decl_test" }
func (declType) Params() []Param {
	return []Param{{Name: "n", Kind: Int}, {Name: "prompt", Kind: Template}, {Name: "label", Kind: String}}
}

// Read serves declared names through the accessor of their kind and panics,
// naming the type and param, on any other read.
func TestDeclaredReads(t *testing.T) {
	d := Read(declType{}, Params{"n": 3, "prompt": "p", "label": "l"})
	cases := []struct {
		name  string
		read  func() any
		want  any
		panic string
	}{
		{"int", func() any { return d.Int("n") }, 3, ""},
		{"template as string", func() any { return d.String("prompt") }, "p", ""},
		{"string", func() any { return d.String("label") }, "l", ""},
		{"has", func() any { return d.Has("n") }, true, ""},
		{"misspelt", func() any { return d.Int("nn") }, nil, `stage type decl_test reads param "nn", which it does not declare`},
		{"undeclared has", func() any { return d.Has("limit") }, nil, `reads param "limit", which it does not declare`},
		{"wrong kind", func() any { return d.Number("n") }, nil, `reads param "n" (number (whole)) with Number`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got any
			msg := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg, _ = r.(string)
					}
				}()
				got = c.read()
				return ""
			}()
			switch {
			case c.panic == "" && (msg != "" || got != c.want):
				t.Errorf("got %v (panic %q), want %v", got, msg, c.want)
			case c.panic != "" && !strings.Contains(msg, c.panic):
				t.Errorf("panic %q, want it to contain %q", msg, c.panic)
			}
		})
	}
}
