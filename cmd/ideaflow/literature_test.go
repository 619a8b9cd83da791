package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/internal/shareddata"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/literature"
	"github.com/ideaflow/ideaflow/stages/literature/s2fake"
)

// ablationCSV is IdeaBench's published target list in the authors' data
// folder (see its PROVENANCE.txt).
func ablationCSV(t testing.TB) string {
	t.Helper()
	return shareddata.Path(t, "ideabench/data/dataset/ablation_target_papers.csv")
}

func sp(s string) *string { return &s }
func ip(n int) *int       { return &n }

// ablationIDs reads the paperId column of the published target list.
func ablationIDs(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(ablationCSV(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "paperId" {
			col = i
		}
	}
	var ids []string
	for _, r := range rows[1:] {
		ids = append(ids, r[col])
	}
	return ids
}

// fakeRefs are n references of a target: every seventh unresolved (null
// paperId), every fifth without an abstract, every third without contexts.
func fakeRefs(target string, n int) []s2fake.Reference {
	out := make([]s2fake.Reference, n)
	for i := range out {
		p := s2fake.Paper{PaperID: sp(fmt.Sprintf("%s-r%d", target[:8], i)), Title: fmt.Sprintf("Reference %d of %s", i, target[:8]),
			Abstract: sp("An abstract."), Year: ip(2015), CitationCount: ip(i), PublicationTypes: []string{"JournalArticle"}}
		if i%7 == 6 {
			p.PaperID = nil
		}
		if i%5 == 4 {
			p.Abstract = nil
		}
		r := s2fake.Reference{CitedPaper: p, Intents: []string{"background"}, Contexts: []string{"as shown [1]"}, IsInfluential: i%2 == 0}
		if i%3 == 2 {
			r.Contexts = []string{}
			r.Intents = []string{}
		}
		out[i] = r
	}
	return out
}

func buildExperiment(name string) string {
	return filepath.Join("..", "..", "experiments", "ideabench", name)
}

// TestBuildDatasetOnFakeS2 runs experiments/ideabench/build_dataset.hcl on
// the published 461 targets against the fake Semantic Scholar API: one
// references request per target and one more per page past 1,000, the key
// sent on each and written nowhere, files the IdeaBench dataset formats
// load, and a re-run that asks nothing.
func TestBuildDatasetOnFakeS2(t *testing.T) {
	ids := ablationIDs(t)
	if len(ids) != 461 {
		t.Fatalf("%d targets in %s", len(ids), ablationCSV(t))
	}
	const key = "s2-CANARY-7d1f0c9e"
	srv := s2fake.New(nil)
	defer srv.Close()
	srv.APIKey = key
	want := 0 // reference rows expected
	for i, id := range ids {
		srv.AddPaper(s2fake.Paper{PaperID: sp(id), Title: "t"})
		n := i % 4 // 0..3 references
		switch i {
		case 0:
			n = 1234 // past the 1,000 of a page: two requests
		case 1:
			n = 350 // past the 300 the original code stopped at
		}
		srv.SetReferences(id, fakeRefs(id, n))
		want += n
	}
	srv.FailNext(s2fake.Failure{Status: 429, RetryAfter: "0"}, s2fake.Failure{Status: 429}, s2fake.Failure{Status: 502})

	dir := t.TempDir()
	cacheDir, out := filepath.Join(dir, "cache"), filepath.Join(dir, "results")
	t.Setenv("CANARY_S2_KEY", key)
	authorsDataDir(t, "ideabench") // the default targets_csv: the authors' file, as `ideaflow data get ideabench` puts it
	args := []string{"run", buildExperiment("build_dataset.hcl"), "--cache-dir", cacheDir, "--out", out,
		"--log-level", "debug", "--log-format", "json", "--summary-json", filepath.Join(dir, "summary.json"),
		"-var", "s2_url=" + srv.URL() + s2fake.GraphPath, "-var", "s2_key_env=CANARY_S2_KEY", "-var", "s2_requests_per_second=1000"}
	code, stdout, stderr := cli(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	logs := stdout + stderr
	reqs := srv.Requests()
	// 461 targets, one more page for the target with 1,234 references, 3 retried failures.
	if len(reqs) != 461+1+3 {
		t.Errorf("%d requests, want 465", len(reqs))
	}
	for _, r := range reqs {
		if r.APIKey != key {
			t.Fatalf("request %s without the key", r.Path)
		}
	}
	s := readSummary(t, filepath.Join(dir, "summary.json"))
	if s.Nodes.Total != 462 || s.Nodes.Ran != 462 || s.ServiceCalls != 461 {
		t.Errorf("summary: %+v, %d service calls", s.Nodes, s.ServiceCalls)
	}

	files := map[string]string{}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files[filepath.Base(p)] = p
		}
		return nil
	})
	refsPath := files[literature.ReferencesFile]
	if refsPath == "" || files[literature.IdeaBenchFile] == "" || files[literature.ReportFile] == "" || files[literature.TargetsFile] != "" {
		t.Fatalf("files written: %v", files)
	}
	// The published list joined to the references written: every target and reference.
	items, err := datasets.Load("ideabench-targets-csv", ablationCSV(t), datasets.Options{References: refsPath})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	var first datasets.Paper
	for i, it := range items {
		var p datasets.Paper
		json.Unmarshal(it.Record, &p)
		total += len(p.References)
		if i == 0 {
			first = p
		}
	}
	if len(items) != 461 || total != want || len(first.References) != 1234 {
		t.Errorf("%d targets, %d references (want %d), first has %d", len(items), total, want, len(first.References))
	}
	if r := first.References[6]; r.ID != "" || r.Citations != 6 || strings.Join(r.Types, ",") != "JournalArticle" || strings.Join(first.References[0].Intents, ",") != "background" {
		t.Errorf("reference rows: %+v %+v", first.References[0], r)
	}
	ib, err := datasets.Load("ideabench", files[literature.IdeaBenchFile], datasets.Options{})
	if err != nil || len(ib) != 461 {
		t.Fatalf("ideabench.jsonl: %d items, %v", len(ib), err)
	}
	var p datasets.Paper
	json.Unmarshal(ib[0].Record, &p)
	if p.Idea == "" || len(p.References) != 1234 {
		t.Errorf("ideabench record: idea %q, %d references", p.Idea, len(p.References))
	}
	var rep literature.BuildReport
	b, _ := os.ReadFile(files[literature.ReportFile])
	json.Unmarshal(b, &rep)
	if rep.Targets != 461 || rep.References != want || len(rep.TargetsNoReferences) != 115 || len(rep.TargetsFailed) != 0 {
		t.Errorf("report: %d targets, %d references, %d without references, %d failed", rep.Targets, rep.References, len(rep.TargetsNoReferences), len(rep.TargetsFailed))
	}

	// A re-run with the same as_of asks nothing.
	srv.Reset()
	if code, stdout, stderr := cli(t, args...); code != 0 || len(srv.Requests()) != 0 {
		t.Errorf("re-run: exit %d, %d requests\n%s\n%s", code, len(srv.Requests()), stdout, stderr)
	} else {
		logs += stdout + stderr
	}

	// The key is in no file ideaflow wrote, no log line, no cache record.
	if strings.Contains(logs, key) {
		t.Error("the key is in the output")
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) {
				t.Errorf("the key is in %s", p)
			}
		}
		return nil
	})
	store, err := cache.Open(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var bundle bytes.Buffer
	if _, err := store.Export(&bundle, nil); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(bundle.Bytes(), []byte(key)) {
		t.Error("the key is in the cache")
	}
}

// TestBuildRenewedOnFakeS2 runs build_dataset_renewed.hcl with its shipped
// queries: top venues with >= 1 citation, other venues with >= 20, from
// 2025; exact node counts, and targets without an abstract left out.
func TestBuildRenewedOnFakeS2(t *testing.T) {
	srv := s2fake.New(nil)
	defer srv.Close()
	srv.BulkPage = 3 // force the continuation token
	add := func(id, venue, date string, cites int, abstract bool, fields ...string) {
		p := s2fake.Paper{PaperID: sp(id), Title: "Paper " + id, Venue: venue, PublicationDate: sp(date), Year: ip(2025),
			CitationCount: ip(cites), FieldsOfStudy: fields}
		if date < "2025" {
			p.Year = ip(2024)
		}
		if abstract {
			p.Abstract = sp("What " + id + " found.")
		}
		srv.AddPaper(p)
		srv.SetReferences(id, fakeRefs(id+"-padding", 2))
	}
	for i := 0; i < 5; i++ {
		add(fmt.Sprintf("cell%d", i), "Cell", "2025-02-01", 1, true, "Biology")
	}
	add("cell-noabs", "Cell", "2025-03-01", 9, false, "Biology")
	add("cell-cited", "Cell", "2025-04-01", 30, true, "Biology") // also found by the other-venues query, and dropped there
	add("cell-2024", "Cell", "2024-12-31", 50, true, "Biology")
	add("cell-physics", "Cell", "2025-03-01", 50, true, "Physics")
	add("cell-uncited", "Cell", "2025-03-01", 0, true, "Medicine")
	for i := 0; i < 3; i++ {
		add(fmt.Sprintf("other%d", i), "Some Journal", "2025-05-01", 25, true, "Medicine")
	}
	add("other-few", "Some Journal", "2025-05-01", 19, true, "Medicine")

	dir := t.TempDir()
	st, err := cache.Create(filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	args := []string{"--cache-dir", filepath.Join(dir, "cache"), "-var", "s2_url=" + srv.URL() + s2fake.GraphPath, "-var", "s2_requests_per_second=1000"}
	code, stdout, stderr := cli(t, append([]string{"plan", buildExperiment("build_dataset_renewed.hcl")}, args...)...)
	if code != 0 || !strings.Contains(stdout, "2 nodes: 0 cached, 2 to run") || len(srv.Requests()) != 0 {
		t.Fatalf("plan: exit %d, %d requests\n%s\n%s", code, len(srv.Requests()), stdout, stderr)
	}
	code, stdout, stderr = cli(t, append([]string{"run", buildExperiment("build_dataset_renewed.hcl"), "--out", filepath.Join(dir, "out"),
		"--summary-json", filepath.Join(dir, "summary.json")}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, filepath.Join(dir, "summary.json"))
	// 2 searches, 7 + 3 references requests (the one without an abstract is fetched too), 1 writer.
	if s.Nodes.Total != 13 || s.ServiceCalls != 12 {
		t.Errorf("summary: %+v, %d service calls", s.Nodes, s.ServiceCalls)
	}
	var bulk []string
	for _, r := range srv.Requests() {
		if r.Path == "/paper/search/bulk" {
			bulk = append(bulk, r.Query.Get("token"))
		}
	}
	// Top venues: 7 papers at 3 a page; other venues: the server's 4 (cell-cited and the
	// three others; exclude_venues is applied by the client) at 3 a page. The two
	// searches run concurrently, so their pages interleave.
	sort.Strings(bulk)
	if strings.Join(bulk, ",") != ",,tok3,tok3,tok6" {
		t.Errorf("bulk pages (tokens): %q", bulk)
	}
	var targetsCSV, refsPath string
	filepath.WalkDir(filepath.Join(dir, "out"), func(p string, d fs.DirEntry, err error) error {
		switch filepath.Base(p) {
		case literature.TargetsFile:
			targetsCSV = p
		case literature.ReferencesFile:
			refsPath = p
		}
		return nil
	})
	items, err := datasets.Load("ideabench-targets-csv", targetsCSV, datasets.Options{References: refsPath})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		var p datasets.Paper
		json.Unmarshal(it.Record, &p)
		got = append(got, fmt.Sprintf("%s:%d", p.ID, len(p.References)))
	}
	if strings.Join(got, " ") != "cell0:2 cell1:2 cell2:2 cell3:2 cell4:2 cell-cited:2 other0:2 other1:2 other2:2" {
		t.Errorf("targets: %s", got)
	}
}

// TestBuilderOnCorpus runs the builder offline on the corpus kind, whose
// path is relative to the experiment file (not to the working directory).
func TestBuilderOnCorpus(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	os.MkdirAll(exp, 0o755)
	copyFile(t, "../../stages/literature/testdata/corpus.jsonl", filepath.Join(exp, "papers.jsonl"))
	os.WriteFile(filepath.Join(exp, "queries.jsonl"), []byte(`{"id": "mol", "query": "graph molecules", "venues": ["NeurIPS"]}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(exp, "main.hcl"), []byte(`
provider "lit" {
  kind = "corpus"
  path = "papers.jsonl"
}
model "lit" {
  provider = provider.lit
  name     = "test-corpus"
}
dataset "q" {
  format = "jsonl"
  path   = "queries.jsonl"
}
stage "find_targets" "t" {
  queries    = dataset.q
  literature = model.lit
  as_of      = "2026-12-01"
}
stage "fetch_references" "t" {
  targets    = stage.find_targets.t
  literature = model.lit
  as_of      = "2026-12-01"
}
stage "write_ideabench_dataset" "t" {
  targets    = stage.find_targets.t
  references = stage.fetch_references.t
}
`), 0o644)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "cache"), "--out", out, "--summary-json", filepath.Join(dir, "s.json"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if s := readSummary(t, filepath.Join(dir, "s.json")); s.Nodes.Total != 4 || s.ServiceCalls != 3 || s.Synthetic {
		t.Errorf("summary %+v, %d service calls, synthetic %v", s.Nodes, s.ServiceCalls, s.Synthetic)
	}
	var refs []byte
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if filepath.Base(p) == literature.ReferencesFile {
			refs, _ = os.ReadFile(p)
		}
		return nil
	})
	want := `{"target_id":"p1","paperId":"p2","title":"Molecular fingerprints for virtual screening","abstract":"Fingerprints encode molecules as bit vectors for screening.","year":2010,"citationCount":40,"publicationTypes":null,"intents":null,"contexts":null,"isInfluential":false}
{"target_id":"p1","paperId":"p3","title":"Neural message passing for quantum chemistry","abstract":"Message passing neural networks predict quantum properties of molecules. We unify graph neural networks as message passing.","year":2017,"citationCount":5000,"publicationTypes":null,"intents":["methodology"],"contexts":["we follow [3]"],"isInfluential":true}
{"target_id":"p1","paperId":null,"title":"An unresolved thesis","abstract":null,"year":null,"citationCount":0,"publicationTypes":null,"intents":null,"contexts":null,"isInfluential":false}
{"target_id":"p1","paperId":"p5","title":"Graph transformers for molecules","abstract":"Transformers with graph attention predict molecule properties.","year":2023,"citationCount":3,"publicationTypes":null,"intents":null,"contexts":null,"isInfluential":false}
`
	if string(refs) != want {
		t.Errorf("references.jsonl:\n%s", refs)
	}

	// A corpus reply is keyed on the file's contents, not its path: the
	// same file elsewhere is asked nothing; an edited one is asked afresh.
	rerun := func(step string) engine.Summary {
		t.Helper()
		code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "cache"), "--out", out, "--summary-json", filepath.Join(dir, "s.json"))
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", step, code, stdout, stderr)
		}
		return readSummary(t, filepath.Join(dir, "s.json"))
	}
	copyFile(t, "../../stages/literature/testdata/corpus.jsonl", filepath.Join(exp, "moved.jsonl"))
	hcl, _ := os.ReadFile(filepath.Join(exp, "main.hcl"))
	os.WriteFile(filepath.Join(exp, "main.hcl"), []byte(strings.Replace(string(hcl), `path = "papers.jsonl"`, `path = "moved.jsonl"`, 1)), 0o644)
	if s := rerun("moved"); s.ServiceCalls != 0 || s.Nodes.Cached != 4 {
		t.Errorf("the same corpus under another path: %d service calls, %d cached; want 0 and 4", s.ServiceCalls, s.Nodes.Cached)
	}
	f, _ := os.OpenFile(filepath.Join(exp, "moved.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"paperId": "p9", "title": "A paper added later", "abstract": "Added.", "year": 2024}` + "\n")
	f.Close()
	if s := rerun("edited"); s.ServiceCalls != 3 {
		t.Errorf("an edited corpus: %d service calls, want 3 (its every query asked afresh)", s.ServiceCalls)
	}
	views := showJSON(t, "stage.find_targets.t", exp, "--cache-dir", filepath.Join(dir, "cache"))
	if a := views[0].Result.Answerer; a == nil || a.Class != "corpus" || !strings.HasPrefix(a.Identity, "sha256:") {
		t.Errorf("a corpus reply names its answerer %+v", a)
	}
}

// TestBuilderFromIDList: a bare list of paper ids, looked up in one batch,
// each target's references fetched, targets.csv written from the look-up
// (an unknown id reported, not written).
func TestBuilderFromIDList(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	os.MkdirAll(exp, 0o755)
	copyFile(t, "../../stages/literature/testdata/corpus.jsonl", filepath.Join(exp, "papers.jsonl"))
	os.WriteFile(filepath.Join(exp, "ids.csv"), []byte("paperId,note\np3,x\np1,y\nnope,z\n"), 0o644)
	os.WriteFile(filepath.Join(exp, "main.hcl"), []byte(`
provider "lit" {
  kind = "corpus"
  path = "papers.jsonl"
}
model "lit" {
  provider = provider.lit
  name     = "test-corpus"
}
dataset "ids" {
  format   = "csv"
  path     = "ids.csv"
  id_field = "paperId"
}
stage "lookup_papers" "t" {
  ids        = dataset.ids
  literature = model.lit
  as_of      = "2026-12-01"
}
stage "fetch_references" "t" {
  targets    = dataset.ids
  literature = model.lit
  as_of      = "2026-12-01"
}
stage "write_ideabench_dataset" "t" {
  targets    = stage.lookup_papers.t
  references = stage.fetch_references.t
}
`), 0o644)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "cache"), "--out", out, "--summary-json", filepath.Join(dir, "s.json"))
	// The unknown id's references request fails (not in the corpus): exit 1, the rest written.
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if s := readSummary(t, filepath.Join(dir, "s.json")); s.Nodes.Total != 5 || s.Nodes.Failed != 1 || s.Nodes.Ran != 4 {
		t.Errorf("summary %+v", s.Nodes)
	}
	files := map[string]string{}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			files[filepath.Base(p)] = string(b)
		}
		return nil
	})
	if want := "paperId,title,abstract,year,venue,citationCount,publicationTypes,publicationDate\n" +
		"p3,Neural message passing for quantum chemistry,Message passing neural networks predict quantum properties of molecules. We unify graph neural networks as message passing.,2017,ICML,5000,[],2017-04-04\n" +
		"p1,Graph neural networks for molecule property prediction,We train graph neural networks on molecules. Message passing improves property prediction over fingerprints.,2019,NeurIPS,120,['Conference'],2019-05-01\n"; files[literature.TargetsFile] != want {
		t.Errorf("targets.csv:\n%s", files[literature.TargetsFile])
	}
	var rep literature.BuildReport
	json.Unmarshal([]byte(files[literature.ReportFile]), &rep)
	if rep.Targets != 2 || strings.Join(rep.TargetsNotFound, ",") != "nope" || strings.Join(rep.TargetsNoReferences, ",") != "p3" || rep.References != 4 {
		t.Errorf("report %+v", rep)
	}
}
