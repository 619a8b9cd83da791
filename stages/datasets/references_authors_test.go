package datasets

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The IdeaBench authors' reference files name the target column
// targetPaperId (retrieve_references.py); a references file may use it in
// place of target_id, in CSV and JSONL, but not both at once.
func TestReferencesAuthorsTargetColumn(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	targets := write("targets.csv", "paperId,title,abstract\nT1,Target,An abstract.\n")
	for _, tc := range []struct {
		name, text string
		err        string
	}{
		{"refs.csv", "targetPaperId,paperId,title,abstract,citationCount,publicationTypes,intents,venue,externalIds\n" +
			"T1,r1,Ref,An abstract.,12.0,['JournalArticle'],['background'],A venue,{'DOI': 'x'}\n", ""},
		{"refs.jsonl", `{"targetPaperId": "T1", "paperId": "r1", "title": "Ref", "abstract": "An abstract.", "citationCount": 12, "publicationTypes": ["JournalArticle"], "intents": ["background"]}` + "\n", ""},
		{"both.csv", "target_id,targetPaperId,paperId,title,abstract\nT1,T1,r1,Ref,An abstract.\n", `both.csv:1: both "target_id" and "targetPaperId" columns name the target; keep one`},
		{"both.jsonl", `{"target_id": "T1", "targetPaperId": "T1", "paperId": "r1", "title": "Ref", "abstract": "x"}` + "\n", `both.jsonl:1: both "target_id" and "targetPaperId" name the target; keep one`},
		{"neither.csv", "paperId,title,abstract\nr1,Ref,An abstract.\n", `neither.csv:1: no "target_id" column (or "targetPaperId")`},
		{"neither.jsonl", `{"paperId": "r1", "title": "Ref", "abstract": "x"}` + "\n", `neither.jsonl:1: no "target_id" member (or "targetPaperId")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := Load("ideabench-targets-csv", targets, Options{References: write(tc.name, tc.text)})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var p Paper
			if err := json.Unmarshal(items[0].Record, &p); err != nil {
				t.Fatal(err)
			}
			if len(p.References) != 1 || p.References[0].ID != "r1" || p.References[0].Citations != 12 ||
				p.References[0].Types[0] != "JournalArticle" || p.References[0].Intents[0] != "background" {
				t.Errorf("references %+v", p.References)
			}
		})
	}
}
