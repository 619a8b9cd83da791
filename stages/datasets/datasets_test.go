package datasets

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ideaflow/ideaflow/internal/shareddata"
)

func read(t *testing.T, format, text string, opts Options) []Item {
	t.Helper()
	items, err := Read(format, "t", strings.NewReader(text), opts)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func ids(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func TestIdeaBenchJSONL(t *testing.T) {
	const text = `{"id":"p1","title":"T1","abstract":"A1","year":2024,"references":[{"id":"r1","title":"R1","abstract":"RA1","citations":12,"types":["JournalArticle"],"intents":["background","methodology"]},{"id":"r2","title":"R2","abstract":"","citations":0,"types":[],"intents":null}]}

{"references":[],"abstract":"A2","title":"T2","id":"p2","idea":"I2","keywords":["k1","k2"]}
`
	items := read(t, "ideabench", text, Options{})
	if got, want := ids(items), []string{"p1", "p2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
	// Records come back canonical: struct field order, empty lists dropped.
	want0 := `{"id":"p1","title":"T1","abstract":"A1","year":2024,"references":[{"id":"r1","title":"R1","abstract":"RA1","citations":12,"types":["JournalArticle"],"intents":["background","methodology"]},{"id":"r2","title":"R2","abstract":"","citations":0}]}`
	if string(items[0].Record) != want0 {
		t.Errorf("record 0:\n got %s\nwant %s", items[0].Record, want0)
	}
	want1 := `{"id":"p2","title":"T2","abstract":"A2","idea":"I2","keywords":["k1","k2"]}`
	if string(items[1].Record) != want1 {
		t.Errorf("record 1:\n got %s\nwant %s", items[1].Record, want1)
	}
	var p Paper
	if err := json.Unmarshal(items[1].Record, &p); err != nil {
		t.Fatal(err)
	}
	if p.TargetIdea() != "I2" {
		t.Errorf("TargetIdea = %q, want the idea", p.TargetIdea())
	}
	var p0 Paper
	if err := json.Unmarshal(items[0].Record, &p0); err != nil {
		t.Fatal(err)
	}
	if p0.TargetIdea() != "A1" {
		t.Errorf("TargetIdea = %q, want the abstract", p0.TargetIdea())
	}
}

func TestCanonicalRecordsIgnoreLayout(t *testing.T) {
	a := read(t, "ideabench", `{"id":"p","title":"t","abstract":"a","references":[{"id":"r","title":"x","abstract":"y","citations":5}]}`, Options{})
	b := read(t, "ideabench", "\ufeff{ \"references\" : [ {\"citations\":5, \"abstract\":\"y\",\"title\":\"x\",\"id\":\"r\"} ], \"abstract\":\"a\", \"title\":\"t\", \"id\":\"p\" }\r\n", Options{})
	if string(a[0].Record) != string(b[0].Record) {
		t.Errorf("same paper, different bytes:\n%s\n%s", a[0].Record, b[0].Record)
	}
	g1 := read(t, "jsonl", `{"id":"x","b":1.50,"a":[1,2]}`, Options{})
	g2 := read(t, "jsonl", `{ "a":[1, 2], "b":1.50, "id":"x" }`, Options{})
	if string(g1[0].Record) != `{"a":[1,2],"b":1.50,"id":"x"}` || string(g1[0].Record) != string(g2[0].Record) {
		t.Errorf("generic records not canonical: %s / %s", g1[0].Record, g2[0].Record)
	}
}

func TestGenericFormats(t *testing.T) {
	tests := []struct {
		name    string
		format  string
		text    string
		opts    Options
		ids     []string
		record0 string
	}{
		{"jsonl string ids", "jsonl", "{\"id\":\"a\",\"v\":1}\n{\"id\":\"b\"}\n", Options{}, []string{"a", "b"}, `{"id":"a","v":1}`},
		{"jsonl numeric id field", "jsonl", "{\"key\":7,\"v\":\"x\"}\n{\"key\":8}\n", Options{IDField: "key"}, []string{"7", "8"}, `{"key":7,"v":"x"}`},
		{"jsonl limit", "jsonl", "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n", Options{Limit: 2}, []string{"a", "b"}, `{"id":"a"}`},
		{"csv", "csv", "id,keyword,n\nk1,\"dark matter, halos\",3\nk2,graphene,\n", Options{}, []string{"k1", "k2"}, `{"id":"k1","keyword":"dark matter, halos","n":"3"}`},
		{"csv id field and limit", "csv", "kw,x\nalpha,1\nbeta,2\n", Options{IDField: "kw", Limit: 1}, []string{"alpha"}, `{"kw":"alpha","x":"1"}`},
		{"csv multi-line cell", "csv", "id,text\na,\"line1\nline2\"\nb,z\n", Options{}, []string{"a", "b"}, `{"id":"a","text":"line1\nline2"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := read(t, tc.format, tc.text, tc.opts)
			if got := ids(items); !reflect.DeepEqual(got, tc.ids) {
				t.Errorf("ids %v, want %v", got, tc.ids)
			}
			if string(items[0].Record) != tc.record0 {
				t.Errorf("record 0 = %s, want %s", items[0].Record, tc.record0)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name   string
		format string
		text   string
		opts   Options
		want   string
	}{
		{"duplicate id", "ideabench", `{"id":"p1","title":"t","abstract":"a"}` + "\n\n" + `{"id":"p3","title":"t","abstract":"a"}` + "\n" + `{"id":"p3","title":"t","abstract":"a"}`,
			Options{}, `targets.jsonl:4: duplicate id "p3" (first on line 3)`},
		{"empty id", "ideabench", `{"id":" ","title":"t","abstract":"a"}`, Options{}, `targets.jsonl:1: empty id`},
		{"malformed json", "ideabench", `{"id":"p1","title":"t","abstract":"a"}` + "\n" + `{"id":"p2",`, Options{}, `targets.jsonl:2: invalid JSON: unexpected EOF`},
		{"unknown field", "ideabench", `{"id":"p1","title":"t","abstarct":"a"}`, Options{}, `targets.jsonl:1: invalid JSON: unknown field "abstarct"`},
		{"wrong type", "ideabench", `{"id":"p1","title":"t","abstract":"a","year":"2024"}`, Options{}, `targets.jsonl:1: invalid JSON: cannot unmarshal string into Go struct field Paper.year of type int`},
		{"two values", "ideabench", `{"id":"p1","title":"t","abstract":"a"} {}`, Options{}, `targets.jsonl:1: invalid JSON: more than one value on the line`},
		{"nothing to rank against", "ideabench", `{"id":"p1","title":"t","abstract":" "}`, Options{}, `targets.jsonl:1: paper "p1" has neither an abstract nor an idea to rank against`},
		{"no items", "ideabench", "\n\n", Options{}, `targets.jsonl: no items`},
		{"negative limit", "jsonl", `{"id":"a"}`, Options{Limit: -1}, `targets.jsonl: limit -1 is negative`},
		{"jsonl missing id", "jsonl", `{"name":"a"}`, Options{}, `targets.jsonl:1: no "id" field`},
		{"jsonl bad id type", "jsonl", `{"id":["a"]}`, Options{}, `targets.jsonl:1: field "id" must be a string or a number`},
		{"jsonl null", "jsonl", `null`, Options{}, `targets.jsonl:1: expected a JSON object, got null`},
		{"jsonl array", "jsonl", `[1]`, Options{}, `targets.jsonl:1: invalid JSON: cannot unmarshal array into Go value of type map[string]interface {}`},
		{"csv no id column", "csv", "name,x\na,1\n", Options{}, `targets.jsonl:1: no "id" column for item ids (have "name", "x"); set the id field`},
		{"csv duplicate", "csv", "id,x\na,1\nb,2\na,3\n", Options{}, `targets.jsonl:4: duplicate id "a" (first on line 2)`},
		{"csv field count", "csv", "id,x\na,1\nb\n", Options{}, `targets.jsonl:3: wrong number of fields`},
		{"csv bad quote", "csv", "id,x\na,1\nb,x\"y\n", Options{}, `targets.jsonl:3: bare " in non-quoted-field`},
		{"csv duplicate column", "csv", "id,x,x\n", Options{}, `targets.jsonl:1: duplicate column "x"`},
		{"csv empty", "csv", "", Options{}, `targets.jsonl: empty file, expected a header row`},
		{"targets csv missing column", "ideabench-targets-csv", "paperId,title\na,b\n", Options{}, `targets.jsonl:1: no "abstract" column (have "paperId", "title")`},
		{"targets csv bad year", "ideabench-targets-csv", "paperId,title,abstract,year\na,t,x,20x4\n", Options{}, `targets.jsonl:2: year "20x4" is not a whole number`},
		{"unknown format", "yaml", "", Options{}, `unknown dataset format "yaml" (known: csv, ideabench, ideabench-targets-csv, jsonl, keywords, liveideabench-keywords, liveideabench-leaderboard, scholarideas)`},
		{"ideabench not utf-8", "ideabench", `{"id":"p1","title":"t","abstract":"a"}` + "\n" + `{"id":"p2","title":"caf` + "\xe9" + `","abstract":"a"}`, Options{},
			`targets.jsonl:2: byte 0xe9 at column 24 is not UTF-8; save the file as UTF-8`},
		{"jsonl truncated utf-8 at end", "jsonl", `{"id":"a"}` + "\n" + `{"id":"b","x":"` + "\xe2\x82", Options{}, `targets.jsonl:2: byte 0xe2 at column 16 is not UTF-8; save the file as UTF-8`},
		{"csv not utf-8", "csv", "id,x\na,1\nb,\xff\n", Options{}, `targets.jsonl:3: byte 0xff at column 3 is not UTF-8; save the file as UTF-8`},
		{"targets csv not utf-8 header", "ideabench-targets-csv", "paperId,t\x80itle\n", Options{}, `targets.jsonl:1: byte 0x80 at column 10 is not UTF-8; save the file as UTF-8`},
		{"line too long", "ideabench", `{"id":"p1","title":"t","abstract":"a"}` + "\n" + `{"id":"p2","title":"t","abstract":"` + strings.Repeat("x", MaxLineBytes) + `"}`, Options{},
			`targets.jsonl:2: line is longer than 8 MiB, the limit for one dataset line; shorten the record (e.g. trim its abstracts) or split it`},
		{"csv line too long", "csv", "id,x\na," + strings.Repeat("y", MaxLineBytes) + "\n", Options{},
			`targets.jsonl:2: line is longer than 8 MiB, the limit for one dataset line; shorten the record (e.g. trim its abstracts) or split it`},
		{"earlier error wins", "jsonl", "{\"id\":\"a\"}\n{\"id\":\n{\"id\":\"\xff\"}\n", Options{}, `targets.jsonl:2: invalid JSON: unexpected EOF`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(tc.format, "targets.jsonl", strings.NewReader(tc.text), tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %q\nwant %q", err, tc.want)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "targets.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"p1","title":"t","abstract":"a"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	items, err := Load("ideabench", path, Options{})
	if err != nil || len(items) != 1 || items[0].ID != "p1" {
		t.Fatalf("Load = %v, %v", items, err)
	}
	_, err = Load("ideabench", filepath.Join(dir, "missing.jsonl"), Options{})
	if err == nil || err.Error() != "no file exists at "+filepath.Join(dir, "missing.jsonl") {
		t.Errorf("missing file error = %v", err)
	}
}

// TestCheckedReaderSplitsRunes reads valid multi-byte text one byte at a
// time, so every sequence straddles reads; and a line of exactly
// MaxLineBytes passes.
func TestCheckedReaderSplitsRunes(t *testing.T) {
	text := `{"id":"é","x":"日本語 ✓"}` + "\n" + `{"id":"b"}` + "\r\n"
	items, err := Read("jsonl", "t", iotest.OneByteReader(strings.NewReader(text)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(items); !reflect.DeepEqual(got, []string{"é", "b"}) {
		t.Fatalf("ids %v", got)
	}
	if string(items[0].Record) != `{"id":"é","x":"日本語 ✓"}` {
		t.Errorf("record 0 = %s", items[0].Record)
	}
	long := `{"id":"b","x":"` + strings.Repeat("x", MaxLineBytes-len(`{"id":"b","x":""}`)) + `"}`
	if _, err := Read("jsonl", "t", strings.NewReader(long+"\n"), Options{}); err != nil {
		t.Errorf("a line of exactly MaxLineBytes: %v", err)
	}
}

// ideabenchTargets is the published IdeaBench target list, read in place from
// the authors' data folder.
func ideabenchTargets(t testing.TB) string {
	t.Helper()
	return shareddata.Path(t, "ideabench/data/dataset/ablation_target_papers.csv")
}

func TestIdeaBenchTargetsCSV(t *testing.T) {
	targetsCSV := ideabenchTargets(t)
	items, err := Load("ideabench-targets-csv", targetsCSV, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 461 {
		t.Fatalf("%d items, want 461", len(items))
	}
	if items[0].ID != "a5127a1e16b659e65ba8360b719c9f64c08fb12d" || items[1].ID != "02e0f3ebafdd9bd1af8ff7a24544a9b98cf45691" {
		t.Errorf("first ids %q, %q", items[0].ID, items[1].ID)
	}
	var p Paper
	if err := json.Unmarshal(items[0].Record, &p); err != nil {
		t.Fatal(err)
	}
	if p.Title != "Force-triggered hypso- and bathochromic bidirectional fluorescence switching beyond 120 nm and its anticounterfeiting applications" {
		t.Errorf("title %q", p.Title)
	}
	if p.Year != 2024 || len(p.References) != 0 {
		t.Errorf("year %d, %d refs", p.Year, len(p.References))
	}
	if !strings.HasPrefix(p.Abstract, "Achieving high-contrast tricolor emissive regulation") {
		t.Errorf("abstract %.60q", p.Abstract)
	}
	if !strings.HasPrefix(p.Idea, "Given that achieving high-contrast tricolor emissive regulation") || p.TargetIdea() != p.Idea {
		t.Errorf("idea %.60q", p.Idea)
	}
	limited, err := Load("ideabench-targets-csv", targetsCSV, Options{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(limited) != 10 || limited[9].ID != items[9].ID || string(limited[9].Record) != string(items[9].Record) {
		t.Errorf("limit 10 gave %d items", len(limited))
	}
}

func TestValues(t *testing.T) {
	items := read(t, "ideabench", `{"id":"p1","title":"t","abstract":"a","references":[{"id":"r1","title":"R","abstract":"A","citations":1,"intents":["methodology","background"]},{"id":"r2","title":"R","abstract":"A","citations":1}]}
{"id":"p2","title":"t","abstract":"a","keywords":["k"],"references":[{"id":"r3","title":"R","abstract":"A","citations":1,"intents":["result","background"],"types":["Review"]}]}
`, Options{})
	got := Values(items, []string{"references.intents", "references.types", "keywords", "title", "nope.x"})
	want := map[string][]string{
		"references.intents": {"background", "methodology", "result"},
		"references.types":   {"Review"},
		"keywords":           {"k"},
		"title":              {"t"},
		"nope.x":             {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// A field with more distinct values than MaxValues (reference ids) gives
// MaxValues of them, the same ones on every call, sorted; the others are
// whole.
func TestValuesCapped(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1500; i++ {
		fmt.Fprintf(&b, `{"id":"p%d","title":"t","abstract":"a","references":[{"id":"r%04d","title":"R","abstract":"A","citations":1,"intents":["background"]}]}`+"\n", i, i)
	}
	items := read(t, "ideabench", b.String(), Options{})
	first := Values(items, []string{"references.id", "references.intents"})
	if n := len(first["references.id"]); n != MaxValues || !sort.StringsAreSorted(first["references.id"]) {
		t.Fatalf("%d reference ids (sorted: %v), want %d", n, sort.StringsAreSorted(first["references.id"]), MaxValues)
	}
	if !reflect.DeepEqual(first["references.intents"], []string{"background"}) {
		t.Errorf("intents %v", first["references.intents"])
	}
	for i := 0; i < 5; i++ {
		if again := Values(items, []string{"references.id", "references.intents"}); !reflect.DeepEqual(again, first) {
			t.Fatalf("call %d kept other values", i+2)
		}
	}
}
