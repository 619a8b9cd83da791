package datasets

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParsePyList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "", want: nil},
		{in: "None", want: nil},
		{in: " [] ", want: []string{}},
		{in: "['Review', 'JournalArticle']", want: []string{"Review", "JournalArticle"}},
		{in: `["it's", 'say "hi"']`, want: []string{"it's", `say "hi"`}},
		{in: `['O\'Brien', 'a\\b', 'tab\there', '\x41\u00e9\U0001F600', '\q']`, want: []string{"O'Brien", `a\b`, "tab\there", "Aé😀", `\q`}},
		{in: "['a',]", want: []string{"a"}},
		{in: "['a', 'b'", err: "list is not closed with ]"},
		{in: "['a", err: "string starting at column 2 is not closed"},
		{in: "Review", err: `expected a list like ['a', 'b'], [] or None, got "Review"`},
		{in: "['a' 'b']", err: "expected , or ] at column 6, got '\\''"},
		{in: "[1, 2]", err: `expected a quoted string at column 2, got "1, 2]"`},
		{in: "['a'] x", err: `unexpected text after the list at column 7: "x"`},
		{in: `['\u12']`, err: `escape \u at column 3 needs 4 hex digits`},
		{in: `['\U00110000']`, err: `escape \U00110000 at column 3 is not a character`},
	} {
		got, err := parsePyList(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parsePyList(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("parsePyList(%q) = %#v, %v; want %#v", c.in, got, err, c.want)
		}
	}
}

// The published targets joined to a references file, CSV and JSONL alike:
// the same records, references in file order, rows of other targets skipped.
func TestTargetsWithReferences(t *testing.T) {
	targetsCSV := ideabenchTargets(t)
	const want0 = `{"id":"a5127a1e16b659e65ba8360b719c9f64c08fb12d","title":"Force-triggered`
	const refs0 = `"references":[{"id":"r1","title":"Mechanochromic luminogens","abstract":"Force changes the colour of emission.","citations":120,"types":["JournalArticle"],"intents":["background","methodology"]},{"id":"r2","title":"A review of AIE","abstract":"Aggregation-induced emission reviewed.","citations":45,"types":["Review","JournalArticle"],"intents":["background"]},{"id":"","title":"Unresolved reference","abstract":"","citations":0}]}`
	const refs1 = `"references":[{"id":"r9","title":"Neutrophils, a \"review\"","abstract":"Neutrophil diversity in tumours.","citations":3,"types":["JournalArticle"],"intents":["result"]}]}`
	var first []Item
	for _, refs := range []string{"testdata/refs_ablation.csv", "testdata/refs_ablation.jsonl"} {
		items, err := Load("ideabench-targets-csv", targetsCSV, Options{References: refs})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 461 {
			t.Fatalf("%s: %d items, want 461", refs, len(items))
		}
		r0, r1, r2 := string(items[0].Record), string(items[1].Record), string(items[2].Record)
		if !strings.HasPrefix(r0, want0) || !strings.HasSuffix(r0, refs0) || !strings.Contains(r0, `"idea":"Given that achieving high-contrast`) {
			t.Errorf("%s: record 0 %s", refs, r0)
		}
		if !strings.HasSuffix(r1, refs1) || strings.Contains(r2, "references") {
			t.Errorf("%s: records 1, 2:\n%s\n%s", refs, r1, r2)
		}
		if first != nil && !reflect.DeepEqual(items, first) {
			t.Errorf("%s gives other records than the CSV", refs)
		}
		first = items
	}
	// Selection: min_references, then a sample of what is left.
	kept, err := Load("ideabench-targets-csv", targetsCSV, Options{References: "testdata/refs_ablation.csv", MinReferences: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(kept), []string{"a5127a1e16b659e65ba8360b719c9f64c08fb12d", "02e0f3ebafdd9bd1af8ff7a24544a9b98cf45691"}; !reflect.DeepEqual(got, want) {
		t.Errorf("min_references = 1 kept %v, want %v", got, want)
	}
	_, err = Load("ideabench-targets-csv", targetsCSV, Options{MinReferences: 15})
	if want := "min_references = 15 keeps none of the 461 targets (the most references a target has is 0)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	s1, err := Load("ideabench-targets-csv", targetsCSV, Options{Sample: 5, SampleSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s1again, _ := Load("ideabench-targets-csv", targetsCSV, Options{Sample: 5, SampleSeed: 1})
	s2, _ := Load("ideabench-targets-csv", targetsCSV, Options{Sample: 5, SampleSeed: 2})
	if len(s1) != 5 || !reflect.DeepEqual(ids(s1), ids(s1again)) || reflect.DeepEqual(ids(s1), ids(s2)) {
		t.Errorf("samples %v, %v, %v", ids(s1), ids(s1again), ids(s2))
	}
}

// The sample is the k items with the lowest SHA-256("seed\x00id"), in file
// order: independent of the file's order, and a new item changes at most one
// member.
func TestSampleItems(t *testing.T) {
	var items []Item
	for _, id := range strings.Fields("a b c d e f g h") {
		items = append(items, Item{ID: id})
	}
	for _, c := range []struct {
		k, seed int
		want    string
	}{
		{0, 0, "a b c d e f g h"},
		{8, 0, "a b c d e f g h"},
		{20, 0, "a b c d e f g h"},
		{3, 0, "c d f"},
		{3, 1, "a e h"},
		{1, 7, "a"},
	} {
		if got := strings.Join(ids(sampleItems(items, c.k, c.seed)), " "); got != c.want {
			t.Errorf("sample %d seed %d = %q, want %q", c.k, c.seed, got, c.want)
		}
	}
	rev := make([]Item, len(items))
	for i := range items {
		rev[len(items)-1-i] = items[i]
	}
	if got := strings.Join(ids(sampleItems(rev, 3, 0)), " "); got != "f d c" {
		t.Errorf("reversed file sample %q, want the same members in file order", got)
	}
}

// Malformed references files fail at the offending line and say what is wrong.
func TestReferencesErrors(t *testing.T) {
	const targets = "paperId,title,abstract\np1,T1,A1\np2,T2,A2\n"
	const header = "target_id,paperId,title,abstract,year,citationCount,publicationTypes,intents,contexts,isInfluential\n"
	for _, c := range []struct{ name, file, want string }{
		{"refs.csv", header + "p1,r1,R,A,2020,5,['JournalArticle'],[],[],True\np1,r2,R,A,2020,many,[],[],[],True\n", "refs.csv:3: column citationCount: \"many\" is not a whole number"},
		{"refs.csv", header + "p1,r1,R,A,2020,5,['Review' 'Book'],[],[],True\n", "refs.csv:2: column publicationTypes: expected , or ] at column 11, got '\\''"},
		{"refs.csv", header + "p1,r1,R,A,2020,5,[],\"['background'\",[],True\n", "refs.csv:2: column intents: list is not closed with ]"},
		{"refs.csv", header + "p1,r1,R,A,2020,5,[],[],\"['it\\'s]\",True\n", "refs.csv:2: column contexts: string starting at column 2 is not closed"},
		{"refs.csv", header + "p1,r1,R,A,2020,5,[],[],[],yes\n", `refs.csv:2: column isInfluential: "yes" is not True or False`},
		{"refs.csv", header + "p1,r1,R,A,20.5,5,[],[],[],True\n", `refs.csv:2: column year: "20.5" is not a whole number`},
		{"refs.csv", header + "p1,r1,R,A,2020,5,[],[],[],True\np1,r1,R,A,2020,5,[],[],[],True\n", `refs.csv:3: reference "r1" of target "p1" is listed twice (first on line 2); remove one row`},
		{"refs.csv", header + ",r1,R,A,2020,5,[],[],[],True\n", "refs.csv:2: empty target_id"},
		{"refs.csv", header + "x1,r1,R,A,2020,5,[],[],[],True\n", `refs.csv: no row's target_id is the id of a target in t.csv (first row: "x1", first target: "p1")`},
		{"refs.csv", "paperId,title,abstract\nr1,R,A\n", `refs.csv:1: no "target_id" column`},
		{"refs.csv", header + "p1,r1,R,A,2020,5,[],[],[],True,extra\n", "refs.csv:2: wrong number of fields"},
		{"refs.jsonl", `{"target_id":"p1","paperId":"r1","title":"R","abstarct":"A"}` + "\n", `refs.jsonl:1: invalid JSON: unknown field "abstarct"`},
		{"refs.jsonl", `{"target_id":"p1","paperId":"r1"}` + "\n" + `{"paperId":"r2"}` + "\n", `refs.jsonl:2: no "target_id" member`},
		{"refs.jsonl", `{"target_id":"p1","citationCount":"5"}` + "\n", "refs.jsonl:1: invalid JSON: cannot unmarshal string"},
		{"refs.tsv", "x", "a references file is read by its extension, .csv or .jsonl; rename the file"},
	} {
		path := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read("ideabench-targets-csv", "t.csv", strings.NewReader(targets), Options{References: path})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.file, err, c.want)
		}
	}
	for _, c := range []struct {
		format string
		opts   Options
		want   string
	}{
		{"ideabench", Options{References: "r.csv"}, "references joins a references file to format ideabench-targets-csv, not ideabench"},
		{"csv", Options{MinReferences: 3}, "min_references counts the references of IdeaBench targets; format csv has none"},
		{"ideabench-targets-csv", Options{Sample: -1}, "t: sample -1 is negative"},
	} {
		_, err := Read(c.format, "t", strings.NewReader(targets), c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: error %v, want %q", c.format, c.opts, err, c.want)
		}
	}
}
