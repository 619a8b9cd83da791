package literature

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

func out(v any) []byte { b, _ := json.Marshal(v); return b }

// TestBuildFiles: duplicates across queries keep the first, an unknown id
// and a target without an abstract are reported and left out, a failed
// references request leaves its target without references and is listed.
func TestBuildFiles(t *testing.T) {
	a := &Paper{PaperID: "a", Title: "A, \"quoted\"", Abstract: "Abs a.", Year: 2024, Venue: "Cell", CitationCount: 3, PublicationTypes: []string{"JournalArticle", "Review"}}
	b := &Paper{PaperID: "b", Title: "B", Abstract: "Abs b."}
	noAbs := &Paper{PaperID: "c", Title: "C"}
	in := []stages.In{
		{Dep: stages.Dep{Input: "targets"}, Output: out(Papers{Papers: []*Paper{a, nil, noAbs}, Retrieved: "2026-12-01T10:00:00Z"})},
		{Dep: stages.Dep{Input: "targets"}, Output: out(Papers{Papers: []*Paper{b, a}, Retrieved: "2026-12-01T10:00:05Z"})},
		{Dep: stages.Dep{Input: "references"}, Output: out(TargetReferences{PaperID: "a", Retrieved: "2026-12-01T10:01:00Z", References: []Reference{
			{Paper: Paper{PaperID: "r1", Title: "R1", Abstract: "x", CitationCount: 7, Year: 2020}, Intents: []string{"background"}, Contexts: []string{"c1"}},
			{Paper: Paper{Title: "Unresolved"}},
		}})},
		{Dep: stages.Dep{Input: "references"}, Output: nil}, // b's request failed
		{Dep: stages.Dep{Input: "references"}, Output: out(TargetReferences{PaperID: "c", References: []Reference{}})},
	}
	files, err := buildFiles(in, false)
	if err != nil {
		t.Fatal(err)
	}
	wantCSV := "paperId,title,abstract,year,venue,citationCount,publicationTypes,publicationDate\n" +
		"a,\"A, \"\"quoted\"\"\",Abs a.,2024,Cell,3,\"['JournalArticle', 'Review']\",\n" +
		"b,B,Abs b.,,,0,[],\n"
	if files[TargetsFile] != wantCSV {
		t.Errorf("targets.csv:\n%s", files[TargetsFile])
	}
	wantRefs := `{"target_id":"a","paperId":"r1","title":"R1","abstract":"x","year":2020,"citationCount":7,"publicationTypes":null,"intents":["background"],"contexts":["c1"],"isInfluential":false}
{"target_id":"a","paperId":null,"title":"Unresolved","abstract":null,"year":null,"citationCount":0,"publicationTypes":null,"intents":null,"contexts":null,"isInfluential":false}
`
	if files[ReferencesFile] != wantRefs {
		t.Errorf("references.jsonl:\n%s", files[ReferencesFile])
	}
	wantIB := `{"id":"a","title":"A, \"quoted\"","abstract":"Abs a.","year":2024,"references":[{"id":"r1","title":"R1","abstract":"x","citations":7,"intents":["background"]},{"id":"","title":"Unresolved","abstract":"","citations":0}]}
{"id":"b","title":"B","abstract":"Abs b."}
`
	if files[IdeaBenchFile] != wantIB {
		t.Errorf("ideabench.jsonl:\n%s", files[IdeaBenchFile])
	}
	var rep BuildReport
	json.Unmarshal([]byte(files[ReportFile]), &rep)
	got, _ := json.Marshal(rep)
	want := `{"targets":2,"targets_no_abstract":["c"],"targets_not_found":["#2"],"targets_no_references":[],"targets_failed":["b"],"references":2,"references_unresolved":1,"references_no_abstract":1,"references_with_intents":1,"retrieved":["2026-12-01T10:00:00Z","2026-12-01T10:01:00Z"]}`
	if string(got) != want {
		t.Errorf("report %s", got)
	}
	// From a dataset: the records keep their idea, and no targets.csv.
	files, err = buildFiles([]stages.In{
		{Dep: stages.Dep{Input: "targets"}, Node: stages.NodeInfo{Item: "d"}, Output: []byte(`{"id":"d","title":"D","abstract":"","idea":"The idea."}`)},
		{Dep: stages.Dep{Input: "references"}, Output: out(TargetReferences{PaperID: "d", References: []Reference{}})},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files[TargetsFile]; ok || files[IdeaBenchFile] != `{"id":"d","title":"D","abstract":"","idea":"The idea."}`+"\n" {
		t.Errorf("from a dataset: %v", files)
	}
}

func TestBuilderLayout(t *testing.T) {
	m := &stages.Model{Name: "s2", Provider: "s2"}
	ids := &stages.Upstream{Address: "dataset.ids", Type: "dataset", Nodes: []stages.NodeInfo{{Item: "x"}, {Item: "y"}}}
	ids.Source = ids
	nodes, err := lookupPapersType{}.Layout(&stages.Instance{Params: stages.Params{"ids": ids, "literature": m, "as_of": "2026-12-01"}})
	if err != nil || len(nodes) != 1 {
		t.Fatalf("lookup_papers: %d nodes, %v", len(nodes), err)
	}
	w, _ := nodes[0].Prepare(nil)
	if r := w.Service.Request; r.Op != OpBatch || string(r.Body) != `{"as_of":"2026-12-01","ids":["x","y"]}` || r.Model != "s2" {
		t.Errorf("lookup request %s %s", r.Op, r.Body)
	}
	if b, err := w.Service.Output([]byte(`{"papers":[null,{"paperId":"y","title":"Y","citationCount":0}]}`)); err != nil ||
		string(b) != `{"ids":["x","y"],"papers":[null,{"paperId":"y","title":"Y","citationCount":0}]}` {
		t.Errorf("lookup output %s %v", b, err)
	}
	if _, err := (lookupPapersType{}).Layout(&stages.Instance{Params: stages.Params{"ids": ids, "literature": m, "as_of": " "}}); err == nil || !strings.Contains(err.Error(), "as_of is empty") {
		t.Errorf("empty as_of: %v", err)
	}

	// find_targets: a query record decoded strictly, the limit defaulted.
	queries := &stages.Upstream{Address: "dataset.q", Type: "dataset", Nodes: []stages.NodeInfo{{Item: "q1"}}}
	p := stages.WithDefaults(findTargetsType{}, stages.Params{"queries": queries, "literature": m, "as_of": "v1"})
	nodes, err = findTargetsType{}.Layout(&stages.Instance{Params: p})
	if err != nil || len(nodes) != 1 {
		t.Fatal(err)
	}
	w, err = nodes[0].Prepare([]stages.In{{Output: []byte(`{"id":"q1","venues":["Cell"],"min_citations":20,"exclude_venues":["Nature"]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if r := w.Service.Request; r.Op != OpBulkSearch || string(r.Body) != `{"as_of":"v1","query":"","limit":1000,"min_citation_count":20,"venues":["Cell"],"exclude_venues":["Nature"]}` {
		t.Errorf("find_targets request %s", r.Body)
	}
	for rec, want := range map[string]string{
		`{"id":"q1","venue":["Cell"]}`:                 `missing field "query", "venues", "fields_of_study", "year" or "publication_date_or_year" in item "" (the query's criterion; query "q1": json: unknown field "venue"`,
		`{"id":"q1","min_citations":5}`:                `(the query's criterion; query "q1" has no criterion`,
		`{"id":"q1","year":"2024","limit":100001}`:     `limit 0 to 100000`,
		`{"id":"q1","year":"2024","min_citations":-1}`: `min_citations must be 0 or more`,
	} {
		if _, err := nodes[0].Prepare([]stages.In{{Output: []byte(rec)}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", rec, err, want)
		}
	}

	// fetch_references: one child per distinct paper with an id; too many fail the query.
	ft := &stages.Upstream{Address: "stage.find_targets.t", Type: "find_targets"}
	inst := &stages.Instance{Params: stages.Params{"targets": ft, "literature": m, "as_of": "v1", "max_per_query": 3}}
	found := out(Papers{Papers: []*Paper{{PaperID: "a"}, {PaperID: ""}, {PaperID: "b"}, {PaperID: "a"}}})
	kids, err := fetchReferencesType{}.Expand(inst, "q1", []stages.In{{Output: found}})
	if err != nil || len(kids) != 2 || kids[0].Label != "references a" || kids[1].Label != "references b" || kids[1].Item != "q1" {
		t.Fatalf("expand: %+v %v", kids, err)
	}
	w, _ = kids[1].Prepare(nil)
	if string(w.Service.Request.Body) != `{"as_of":"v1","paper_id":"b"}` {
		t.Errorf("references request %s", w.Service.Request.Body)
	}
	body, err := w.Service.Output([]byte(`{"references":null,"retrieved":"T"}`))
	if err != nil || string(body) != `{"paper_id":"b","references":[],"retrieved":"T"}` {
		t.Errorf("output %s %v", body, err)
	}
	many := out(Papers{Papers: []*Paper{{PaperID: "a"}, {PaperID: "b"}, {PaperID: "c"}, {PaperID: "d"}}})
	if _, err := (fetchReferencesType{}).Expand(inst, "q1", []stages.In{{Output: many}}); err == nil || !strings.Contains(err.Error(), "found 4 targets, more than max_per_query = 3") {
		t.Errorf("too many: %v", err)
	}
	if kids, err := (fetchReferencesType{}).Expand(inst, "q1", []stages.In{{Output: nil}}); err != nil || len(kids) != 0 {
		t.Errorf("failed search: %v %v", kids, err)
	}
	// From a dataset: the item is the paper.
	inst.Params["targets"] = ids
	if kids, err := (fetchReferencesType{}).Expand(inst, "x", []stages.In{{Output: []byte(`{}`)}}); err != nil || len(kids) != 1 || kids[0].Label != "references x" {
		t.Errorf("dataset expand: %+v %v", kids, err)
	}
	if (fetchReferencesType{}).MaxPerItem(inst) != 1 {
		t.Error("MaxPerItem from a dataset")
	}
}
