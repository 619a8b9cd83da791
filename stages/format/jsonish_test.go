package format

import (
	"reflect"
	"strings"
	"testing"
)

func obj(kv ...any) *jsonObject {
	o := &jsonObject{}
	for i := 0; i < len(kv); i += 2 {
		o.keys = append(o.keys, kv[i].(string))
		o.vals = append(o.vals, kv[i+1])
	}
	return o
}

func TestParseJSONPrefix(t *testing.T) {
	cases := []struct {
		in   string
		want any
		end  int
	}{
		{`{"a": 1, "b": [true, null, "x"]} tail`, obj("a", jsonNumber("1"), "b", []any{true, nil, "x"}), 32},
		{"{\n // c\n a: 'x', /* d */ \"b\": 2.50, # e\n}", obj("a", "x", "b", jsonNumber("2.50")), 41},
		{`[1, 2,]`, []any{jsonNumber("1"), jsonNumber("2")}, 7},
		{`{"a": True, "b": None, "c": False}`, obj("a", true, "b", nil, "c", false), 34},
		{`{"a": "x" "b": "y"}`, obj("a", "x", "b", "y"), 19},
		{`"tab\tquote\" \u00e9 \ud83d\ude00 \/"`, "tab\tquote\" é 😀 /", 37},
		{`"lone \ud83d surrogate"`, "lone \uFFFD surrogate", 23},
		{"'multi\nline'", "multi\nline", 12},
		{`+7`, jsonNumber("7"), 2},
		{`[]`, []any{}, 2},
	}
	for _, tc := range cases {
		got, end, err := parseJSONPrefix(tc.in)
		if err != nil {
			t.Errorf("parseJSONPrefix(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) || end != tc.end {
			t.Errorf("parseJSONPrefix(%q) = %#v, %d; want %#v, %d", tc.in, got, end, tc.want, tc.end)
		}
	}
}

func TestParseJSONPrefixRejects(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"a" 1}`, `{"a": }`, `[1 2]`, `"open`, `{"a": nope}`, `-`, `1e`,
		strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1),
	} {
		if v, _, err := parseJSONPrefix(in); err == nil {
			t.Errorf("parseJSONPrefix(%q) = %#v, want an error", in, v)
		}
	}
}

func TestJSONValues(t *testing.T) {
	fenced := "Intro {not json}\n```json\n{\"a\": 1}\n```\nand ```{\"b\": 2}``` inline"
	if got := jsonValues(fenced); !reflect.DeepEqual(got, []any{obj("a", jsonNumber("1")), obj("b", jsonNumber("2"))}) {
		t.Errorf("fenced: got %#v", got)
	}
	prose := `Scores {"a": 1} then [2, 3] and {broken`
	if got := jsonValues(prose); !reflect.DeepEqual(got, []any{obj("a", jsonNumber("1")), []any{jsonNumber("2"), jsonNumber("3")}}) {
		t.Errorf("prose: got %#v", got)
	}
	cut := "```json\n{\"a\": [1, 2"
	if got := jsonValues(cut); got != nil {
		t.Errorf("cut-off fence: got %#v, want nothing", got)
	}
}

func TestNormKey(t *testing.T) {
	for in, want := range map[string]string{"Originality_Score": "originalityscore", "feasibility score": "feasibilityscore", "idea-1": "idea1", "Été 2": "été2", "--": ""} {
		if got := normKey(in); got != want {
			t.Errorf("normKey(%q) = %q, want %q", in, got, want)
		}
	}
}
