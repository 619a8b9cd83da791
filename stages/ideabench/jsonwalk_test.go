package ideabench

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

// Strings that trip naive scanners: escaped quotes and backslashes, braces
// and brackets inside strings, HTML characters encoding/json escapes, unicode.
var trickyStrings = []string{
	"", " ", "plain", `quote " inside`, `backslash \ inside`, `ends with backslash \`, `\"`, `\\"`,
	"braces { [ ] } inside", `"}]`, "html <b>&amp;</b>", "line\nbreak\ttab", "unicode é 漢字 \u2028", "\x01control",
}

func TestDecodePromptInputMatchesEncodingJSON(t *testing.T) {
	for i, s := range trickyStrings {
		f := FilterOutput{
			Target:     Target{ID: s, Keywords: []string{s, "k" + s}},
			References: []Ref{{ID: "r" + s, Title: s, Abstract: s + s}, {ID: s, Title: "", Abstract: "x"}},
			Dropped:    i%2 == 0,
			Reason:     s,
		}
		b := mustJSON(t, f)
		got, err := decodePromptInput(b)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if !reflect.DeepEqual(got.references, f.References) || !reflect.DeepEqual(got.keywords, f.Target.Keywords) || got.dropped != f.Dropped {
			t.Errorf("%q: decoded %+v", s, got)
		}
		ideas, dropped, err := decodeIdeas(mustJSON(t, IdeasOutput{Ideas: []string{s, s + "2"}, Dropped: f.Dropped}))
		if err != nil || !reflect.DeepEqual(ideas, []string{s, s + "2"}) || dropped != f.Dropped {
			t.Errorf("%q: ideas %q %v %v", s, ideas, dropped, err)
		}
	}
}

func TestDecodePromptInputLayouts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *promptInput
	}{
		{"spaced and reordered", ` { "references" : [ { "abstract" : "a" , "id" : "1" , "extra" : [1, {"x": "}"}] } ] , "dropped" : false , "target" : { "keywords" : null } } `,
			&promptInput{references: []Ref{{ID: "1", Abstract: "a"}}}},
		{"empty references", `{"target":{},"references":[],"dropped":true}`, &promptInput{references: []Ref{}, dropped: true}},
		{"escaped key", `{"refer\u0065nces":[{"title":"t"}]}`, &promptInput{references: []Ref{{Title: "t"}}}},
		{"numbers and literals skipped", `{"n":-1.5e3,"b":true,"z":null,"references":[{"id":"x","citations":12}]}`, &promptInput{references: []Ref{{ID: "x"}}}},
	}
	for _, tc := range tests {
		got, err := decodePromptInput([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestWalkErrors(t *testing.T) {
	for _, in := range []string{``, `[]`, `{"a":`, `{"a" 1}`, `{"a":"x}`, `{"a":1 "b":2}`, `{"references":[{"id":"x"},]}`, `{"references":{}}`, `{"references":[{"id":3}]}`, `{1:2}`} {
		if _, err := decodePromptInput([]byte(in)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestTargetTextEarlyStopAndFallbacks(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{`{"id":"p","abstract":"A","idea":"I","references":[{"abstract":"x"}]}`, "I", ""},
		// A valid record never ends mid-way, but the idea was already found, so the rest is not read.
		{`{"id":"p","idea":"I","references":[BROKEN`, "I", ""},
		{`{"id":"p","abstract":"A","idea":" ","references":[]}`, "A", ""},
		{`{"abstract":"A","references":[{"idea":"not this one"}],"idea":"late"}`, "late", ""},
		{`{"abstract":"  A  "}`, "A", ""},
		{`{"abstract":"A \"quoted\""}`, `A "quoted"`, ""},
		{`{"title":"t"}`, "", `missing field "idea" or "abstract" in dataset.targets/p (the target's text)`},
		{`{"idea":7}`, "", "decode: expected a string, got 7"},
		{`[1]`, "", "decode: expected a JSON object"},
	}
	for _, tc := range tests {
		got, err := targetText(recordIn(tc.in))
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzDecodePromptInput checks the walker against encoding/json on outputs
// built from arbitrary strings, compact and indented.
func FuzzDecodePromptInput(f *testing.F) {
	for i, s := range trickyStrings {
		f.Add(s, trickyStrings[(i+1)%len(trickyStrings)], "x", i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, a, b, c string, dropped bool) {
		out := FilterOutput{
			Target:     Target{ID: a + b, Keywords: []string{b, c}},
			References: []Ref{{ID: a, Title: b, Abstract: c}, {ID: c, Title: a, Abstract: b}},
			Dropped:    dropped,
			Reason:     c,
		}
		compact := mustJSON(t, out)
		indented, _ := json.MarshalIndent(out, " ", "\t")
		var want FilterOutput
		if err := json.Unmarshal(compact, &want); err != nil {
			t.Fatal(err)
		}
		for _, in := range [][]byte{compact, indented} {
			got, err := decodePromptInput(in)
			if err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			if !reflect.DeepEqual(got.references, want.References) || !reflect.DeepEqual(got.keywords, want.Target.Keywords) || got.dropped != want.Dropped {
				t.Fatalf("%s: walker %+v, encoding/json %+v", in, got, want)
			}
			record := mustJSON(t, map[string]string{"id": a, "idea": a + b, "abstract": c})
			text, err := targetText(stages.In{Output: record})
			if wantText := strings.TrimSpace(a + b); wantText != "" && (err != nil || text != wantText) {
				t.Fatalf("target text %q, %v; want %q", text, err, wantText)
			}
		}
	})
}

// FuzzWalkArbitraryInput: whatever the bytes, the walkers return, never panic.
func FuzzWalkArbitraryInput(f *testing.F) {
	for _, s := range []string{`{"references":[{"id":"a"}]}`, `{"a":"\\"}`, `{"ideas":["x",`, `{"idea":"\"}`, `[`, `{"a":{"b":[1,2,{"c":"]"}]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		decodePromptInput([]byte(in))
		decodeIdeas([]byte(in))
		targetText(stages.In{Output: []byte(in)})
	})
}

// recordIn is a record of item p of dataset.targets, as a node reads it.
func recordIn(record string) stages.In {
	return stages.In{Node: stages.NodeInfo{Item: "p"}, From: &stages.Upstream{Address: "dataset.targets"}, Output: []byte(record)}
}
