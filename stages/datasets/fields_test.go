package datasets

import (
	"encoding/json"
	"strings"
	"testing"
)

// samples is a file of each format whose records declare their fields
// (FormatFields), from the shipped experiments and the wiring harness.
var samples = map[string]struct {
	path string
	opts Options
}{
	"ideabench":                 {"../../experiments/quickstart/data/targets.jsonl", Options{}},
	"ideabench-targets-csv":     {"../all/testdata/wiring/data/targets.csv", Options{References: "../all/testdata/wiring/data/references.csv"}},
	"keywords":                  {"../../experiments/liveideabench/data/quick_keywords.txt", Options{Categories: "../../experiments/liveideabench/data/quick_categories.csv"}},
	"liveideabench-keywords":    {"../all/testdata/wiring/data/kws.csv", Options{}},
	"liveideabench-leaderboard": {"../all/testdata/wiring/data/board.csv", Options{}},
	"scholarideas":              {"../../experiments/scholareval/data/ideas", Options{}},
}

// TestRecordsHaveTheDeclaredFields: every record a format loads has only
// the fields the format declares, and every Required one, non-empty (a
// field not Required is optional per item: validate accepts reading it and
// plan counts the records without it). Open formats (jsonl, csv) declare
// none: their records are the file's.
func TestRecordsHaveTheDeclaredFields(t *testing.T) {
	for _, format := range Formats() {
		t.Run(format, func(t *testing.T) {
			fields, open, ok := FormatFields(format)
			if !ok {
				t.Fatalf("FormatFields does not know %s", format)
			}
			if open {
				if fields != nil {
					t.Fatalf("open format %s declares fields", format)
				}
				return
			}
			s, ok := samples[format]
			if !ok {
				t.Fatalf("no sample of format %s to check its declared fields against", format)
			}
			items, err := Load(format, s.path, s.opts)
			if err != nil {
				t.Fatal(err)
			}
			declared, required := map[string]bool{}, map[string]bool{}
			for _, f := range fields {
				if strings.Contains(f.Name, "[]") {
					continue
				}
				declared[f.Name] = true
				required[f.Name] = f.Required
			}
			for _, it := range items {
				var rec map[string]json.RawMessage
				if err := json.Unmarshal(it.Record, &rec); err != nil {
					t.Fatalf("%s: %v", it.ID, err)
				}
				for k := range rec {
					if !declared[k] {
						t.Errorf("%s: record has %q, which the format does not declare", it.ID, k)
					}
				}
				for k, req := range required {
					v, ok := rec[k]
					if req && (!ok || string(v) == `""` || string(v) == "null") {
						t.Errorf("%s: record lacks %q, which the format declares Required", it.ID, k)
					}
				}
			}
			if len(items) == 0 {
				t.Fatal("the sample has no items")
			}
		})
	}
}
