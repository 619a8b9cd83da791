package ideabench

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

// The authors' filter on a table of crafted references, one per rule
// (testdata/filter_decisions/references.csv, in the shape of the authors'
// raw_references.csv, targetPaperId column included). Each row's
// authors_decision was computed from filter_references.py at 9dbd125 as
// pandas evaluates it on the file: an empty cell is NaN; dropna on abstract
// and publicationTypes; citationCount >= 5 (NaN fails); an excluded type a
// substring of the publicationTypes text; the intents text not exactly
// "[]", "['result']" or "['methodology']"; then a target left with fewer
// than 3 references loses them all. The rule column says which rule the
// row exercises. The stage's defaults must make the same decision for
// every row.
func TestFilterDecisionsGolden(t *testing.T) {
	const dir = "testdata/filter_decisions/"
	f, err := os.Open(dir + "references.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	want := map[string][]string{} // target -> kept reference ids
	rules := map[string]string{}
	for _, r := range recs[1:] {
		rules[r[col["paperId"]]] = r[col["rule"]]
		if r[col["authors_decision"]] == "keep" {
			want[r[col["targetPaperId"]]] = append(want[r[col["targetPaperId"]]], r[col["paperId"]])
		}
	}
	if len(recs)-1 < 30 {
		t.Fatalf("%d crafted references, want the whole table", len(recs)-1)
	}
	items, err := datasets.Load("ideabench-targets-csv", dir+"targets.csv", datasets.Options{References: dir + "references.csv"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeFilter(stages.WithDefaults(filterType{}, stages.Params{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		var p datasets.Paper
		if err := json.Unmarshal(it.Record, &p); err != nil {
			t.Fatal(err)
		}
		out := s.apply(&p)
		got := []string{}
		if !out.Dropped {
			for _, r := range out.References {
				got = append(got, r.ID)
			}
		}
		sort.Strings(got)
		w := append([]string{}, want[p.ID]...)
		sort.Strings(w)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: kept %v, want %v", p.ID, got, w)
			for _, r := range p.References {
				kept := s.passes(&r)
				t.Logf("  %s passes=%v (%s)", r.ID, kept, rules[r.ID])
			}
		}
		if p.ID == "T2" && (!out.Dropped || out.Reason != "2 of 3 references kept, fewer than min_references = 3") {
			t.Errorf("T2: dropped %v %q", out.Dropped, out.Reason)
		}
	}
}
