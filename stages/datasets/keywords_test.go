package datasets

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/internal/shareddata"
	"github.com/ideaflow/ideaflow/stages"
)

func keywordOf(t *testing.T, it Item) Keyword {
	t.Helper()
	var k Keyword
	if err := json.Unmarshal(it.Record, &k); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestLiveIdeaBenchKeywords(t *testing.T) {
	// LiveIdeaBench's published keyword list and its domain labels, read in
	// place from the authors' data folder.
	kwsCSV := shareddata.Path(t, "liveideabench/csvs/kws.csv")
	kwsCategories := shareddata.Path(t, "liveideabench/csvs/keyword_classifications.csv")
	items, err := Load("liveideabench-keywords", kwsCSV, Options{Categories: kwsCategories})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1180 {
		t.Fatalf("%d keywords, want 1180", len(items))
	}
	if got := keywordOf(t, items[0]); items[0].ID != "meteorology" || got != (Keyword{Keyword: "meteorology", Domain: "Earth science"}) {
		t.Errorf("first item %q %+v", items[0].ID, got)
	}
	if got := keywordOf(t, items[3]); got != (Keyword{Keyword: "earthquakes", Domain: "Pharmacy"}) {
		t.Errorf("fourth item %+v (the file's own label, however odd)", got)
	}
	perDomain := map[string]int{}
	for _, it := range items {
		perDomain[keywordOf(t, it).Domain]++
	}
	want := map[string]int{
		"Physics": 210, "Biology": 195, "Systems engineering": 143, "Earth science": 90, "Pharmacy": 61,
		"Finance": 60, "Accounting": 55, "Anthropology": 53, "Chemistry": 46, "Astronomy": 34,
		"Political science": 27, "Data engineering": 27, "Systems science": 26, "Pedagogy": 24,
		"Medicine": 23, "Agricultural science": 23, "Data science": 22, "Statistics": 15,
		"Psychology": 14, "Sociology": 11, "Mathematics and Logic": 11, "Economics": 10,
	}
	if len(perDomain) != 22 || !reflect.DeepEqual(perDomain, want) {
		t.Errorf("per domain %v", perDomain)
	}
	if u := Unlabelled(items); len(u) != 0 {
		t.Errorf("%d unlabelled: %v", len(u), u[:min(5, len(u))])
	}
	// Without categories every keyword is unlabelled; limit reads the first rows only.
	plain, err := Load("liveideabench-keywords", kwsCSV, Options{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 20 || len(Unlabelled(plain)) != 20 || plain[19].ID != items[19].ID {
		t.Errorf("limit 20: %d items, %d unlabelled", len(plain), len(Unlabelled(plain)))
	}
}

func TestKeywordLines(t *testing.T) {
	items, err := Load("keywords", "testdata/keywords.txt", Options{Categories: "testdata/categories.csv"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var recs []Keyword
	for _, it := range items {
		ids = append(ids, it.ID)
		recs = append(recs, keywordOf(t, it))
	}
	if !reflect.DeepEqual(ids, []string{"meteorology", "periodic table", "quantum dots"}) {
		t.Errorf("ids %q", ids)
	}
	want := []Keyword{{"Meteorology", "Earth science"}, {"periodic table", "Chemistry"}, {"quantum dots", ""}}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("records %+v", recs)
	}
	if u := Unlabelled(items); !reflect.DeepEqual(u, []string{"quantum dots"}) {
		t.Errorf("unlabelled %q", u)
	}
	if string(items[2].Record) != `{"keyword":"quantum dots"}` {
		t.Errorf("record without a domain: %s", items[2].Record)
	}
}

func TestKeywordErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	conflict := write("conflict.csv", "keyword,category\nsoil,Biology\nSoil,Physics\n")
	nocol := write("nocol.csv", "kw,domain\nsoil,Biology\n")
	tests := []struct {
		name, format, text string
		opts               Options
		want               string
	}{
		{"duplicate after normalising", "keywords", "Soil\nsoil\n", Options{}, `k.txt:2: duplicate id "soil" (first on line 1)`},
		{"no Keyword column", "liveideabench-keywords", ",Term\n0,soil\n", Options{}, `k.txt:1: no Keyword column (have "", "Term")`},
		{"empty keyword", "liveideabench-keywords", ",Keyword\n0,soil\n1, \n", Options{}, `k.txt:3: empty keyword`},
		{"conflicting categories", "keywords", "soil\n", Options{Categories: conflict}, `conflict.csv:3: keyword "Soil" is in category "Physics" here and "Biology" on line 2`},
		{"categories without its columns", "keywords", "soil\n", Options{Categories: nocol}, `needs keyword and category columns (have "kw", "domain")`},
		{"categories on a generic format", "csv", "id\nsoil\n", Options{Categories: nocol}, `k.txt: categories labels the keywords of format liveideabench-keywords or keywords, not csv`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(tc.format, "k.txt", strings.NewReader(tc.text), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// Generic records reach templates as .Item; a field the record lacks is an
// error naming the fields it has.
func TestRecordFieldsInTemplates(t *testing.T) {
	type data struct {
		ID   string
		Item map[string]any
	}
	csvItems, err := Read("csv", "kw.csv", strings.NewReader("id,keyword,Search Volume\nk1,soil health,1200\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	jsonItems, err := Read("jsonl", "kw.jsonl", strings.NewReader(`{"id":"k1","keyword":"soil health","volume":1200.50,"tags":["a","b"]}`+"\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tmpl string
		item       Item
		want       string
	}{
		{"csv column", `{{ .Item.keyword }} ({{ .ID }})`, csvItems[0], "soil health (k1)"},
		{"csv column with a space", `{{ index .Item "Search Volume" }}`, csvItems[0], "1200"},
		{"jsonl number as written", `{{ .Item.volume }}`, jsonItems[0], "1200.50"},
		{"jsonl list", `{{ range .Item.tags }}[{{ . }}]{{ end }}`, jsonItems[0], "[a][b]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := RecordFields(tc.item.Record)
			if err != nil {
				t.Fatal(err)
			}
			got, err := stages.Render("p", tc.tmpl, &data{ID: tc.item.ID, Item: rec})
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	rec, _ := RecordFields(csvItems[0].Record)
	_, err = stages.Render("p", `{{ .Item.Keyword }}`, &data{Item: rec})
	want := `render template p: template: p:1:8: executing "p" at <.Item.Keyword>: .Item.Keyword is not a field here; available: (index .Item "Search Volume") .Item.id .Item.keyword`
	if err == nil || err.Error() != want {
		t.Errorf("missing field:\n got %v\nwant %s", err, want)
	}
}
