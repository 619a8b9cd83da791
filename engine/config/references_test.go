package config

import (
	"strings"
	"testing"

	_ "github.com/ideaflow/ideaflow/stages/ideabench" // filter_references, whose dataset check this tests
)

// A filter over targets without references is an error at its dataset
// attribute naming how to get references; a references file joined, then
// min_references and a seeded sample, select what the dataset yields.
func TestDatasetReferencesAndSelection(t *testing.T) {
	exp, diags := Load("testdata/references/main.hcl", Options{})
	if !diags.HasErrors() {
		t.Fatal("targets without references loaded without an error")
	}
	var b strings.Builder
	WriteDiagnostics(&b, diags, exp.Files)
	want := `testdata/references/main.hcl:16:13: error: dataset.bare cannot feed stage.filter_references.bare
    stage.filter_references.bare: dataset.bare: no target in it has any reference, so every target would be dropped at min_references and nothing generated or scored: the targets cannot run. Give them references: build them from Semantic Scholar with experiments/ideabench/build_dataset.hcl, join a references file to the target list (references = "refs.csv" on the ideabench-targets-csv dataset, one row per target and reference with a target_id column), or use format = "ideabench" with each target's references in its JSONL record.
      16 |   dataset = dataset.bare
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	items, err := exp.Datasets["joined"].Items()
	if err != nil {
		t.Fatal(err)
	}
	// t1 and t3 have two references; seed 4 samples t3.
	if len(items) != 1 || items[0].ID != "t3" {
		t.Fatalf("items %+v, want t3 alone", items)
	}
	wantRec := `{"id":"t3","title":"Target three","abstract":"Abstract three.","idea":"Idea three.","year":2023,"references":[` +
		`{"id":"r4","title":"R4","abstract":"A4","citations":10,"types":["JournalArticle"],"intents":["background"]},` +
		`{"id":"r5","title":"R5","abstract":"A5","citations":10,"types":["JournalArticle"],"intents":["background"]}]}`
	if string(items[0].Record) != wantRec {
		t.Errorf("record\n got %s\nwant %s", items[0].Record, wantRec)
	}
}

// sample_seed alone is a warning: it would choose nothing.
func TestSampleSeedAlone(t *testing.T) {
	exp, diags := Load("testdata/references/seed_alone.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var b strings.Builder
	WriteDiagnostics(&b, diags, exp.Files)
	if want := "testdata/references/seed_alone.hcl:4:17: warning: sample_seed without sample\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("got:\n%s\nwant it to start with:\n%s", b.String(), want)
	}
}
