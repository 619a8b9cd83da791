package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

func init() {
	stages.Register(testType{name: "labelled", params: []stages.Param{
		{Name: "input", Kind: stages.Input, Required: true, Accepts: []string{"dataset"}, Doc: "what to label"},
		{Name: "labels", Kind: stages.StringMap, Doc: "display text by name"},
	}})
}

// TestStringMapParam: a map-of-strings param (report labels, better,
// number_format) takes an object whose values are strings, numbers or bools
// (converted to their text), keys quoted or not, computed per for_each
// instance; anything else is an error at the attribute.
func TestStringMapParam(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want map[string]map[string]string // instance address -> labels
		err  string                       // "file:line:col summary: detail" of the one error
	}{
		{"literal", `labels = { "insight_score.novelty" = "Novelty", model = "Model", n = 3, ok = true }`,
			map[string]map[string]string{"stage.labelled.x": {"insight_score.novelty": "Novelty", "model": "Model", "n": "3", "ok": "true"}}, ""},
		{"empty", `labels = {}`, map[string]map[string]string{"stage.labelled.x": {}}, ""},
		{"per instance", "for_each = toset([\"a\", \"b\"])\n  labels = { (each.key) = upper(each.key) }",
			map[string]map[string]string{`stage.labelled.x["a"]`: {"a": "A"}, `stage.labelled.x["b"]`: {"b": "B"}}, ""},
		{"a list", `labels = ["Novelty"]`, nil,
			`labels.hcl:3:12: Wrong type for labels: labels must be a map of strings, got tuple. For example: labels = { "X-Name" = "value" }.`},
		{"nested", `labels = { a = { b = "c" } }`, nil,
			`labels.hcl:3:12: Wrong type for labels: labels must be a map of strings, got object. For example: labels = { "X-Name" = "value" }.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, "testdata/valid", dir)
			src := "stage \"labelled\" \"x\" {\n  input  = dataset.targets\n  " + tc.src + "\n}\n"
			if err := os.WriteFile(filepath.Join(dir, "labels.hcl"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			exp, diags := Load(dir, Options{})
			if tc.err != "" {
				errs := diags.Errs()
				if len(errs) != 1 {
					t.Fatalf("%d errors, want 1: %v", len(errs), diags)
				}
				d := diags[0]
				for _, x := range diags {
					if x.Subject != nil && strings.HasSuffix(x.Subject.Filename, "labels.hcl") {
						d = x
					}
				}
				got := filepath.Base(d.Subject.Filename) + ":" + strconv.Itoa(d.Subject.Start.Line) + ":" + strconv.Itoa(d.Subject.Start.Column) + ": " + d.Summary + ": " + d.Detail
				if got != tc.err {
					t.Errorf("error\n%s\nwant\n%s", got, tc.err)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := map[string]map[string]string{}
			for _, si := range exp.Stages {
				if si.Type.Name() == "labelled" {
					got[si.Address] = si.Params.StringMap("labels")
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("labels %v, want %v", got, tc.want)
			}
		})
	}
}
