package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/literature/s2fake"
)

const scholarEvalDir = "../../experiments/scholareval/"

// s2FromSample serves the sample corpus's papers from the fake Semantic
// Scholar API, each abstract a snippet of its paper and every paper citing
// the two before it, so that a run asks every operation the pipeline
// uses: search, snippets, recommendations, references.
func s2FromSample(t *testing.T) *s2fake.Server {
	t.Helper()
	f, err := os.Open(scholarEvalDir + "data/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var papers []s2fake.Paper
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p struct {
			PaperID, Title, Abstract, PublicationDate, Venue string
			Year, CitationCount                              int
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		papers = append(papers, s2fake.Paper{PaperID: sp(p.PaperID), CorpusID: 100 + len(papers), Title: p.Title, Abstract: sp(p.Abstract),
			Year: ip(p.Year), PublicationDate: sp(p.PublicationDate), Venue: p.Venue, CitationCount: ip(p.CitationCount)})
	}
	srv := s2fake.New(papers)
	for i, p := range papers {
		srv.AddSnippets(s2fake.Snippet{Text: *p.Abstract, Section: "abstract", CorpusID: p.CorpusID})
		var refs []s2fake.Reference
		for j := max(0, i-2); j < i; j++ {
			refs = append(refs, s2fake.Reference{CitedPaper: papers[j], Intents: []string{"background"}})
		}
		srv.SetReferences(p.ID(), refs)
	}
	return srv
}

// TestEvidenceRecordsAndReplays: quick.hcl runs against (fake) Semantic
// Scholar (-var literature=semantic_scholar, the mock answering the
// models); `ideaflow evidence` writes its literature replies; the same
// experiment with the literature on a corpus of that file (-var
// literature=corpus -var corpus=FILE), on a fresh cache, asks Semantic
// Scholar nothing and gives the same searches, reviews, judgments and
// scores.
func TestEvidenceRecordsAndReplays(t *testing.T) {
	api := s2FromSample(t)
	defer api.Close()
	t.Setenv("S2_API_KEY", "s2-evidence-test-key")
	dir := t.TempDir()
	exp := scholarEvalDir + "quick.hcl"
	live := []string{"-var", "literature=semantic_scholar", "-var", "s2_url=" + api.URL() + s2fake.GraphPath,
		"-var", "s2_recommendations_url=" + api.URL() + s2fake.RecommendationsPath, "-var", "s2_requests_per_second=1000"}
	liveCache := filepath.Join(dir, "cache-live")
	args := append([]string{"run", exp, "--cache-dir", liveCache, "--out", filepath.Join(dir, "out-live"), "--summary-json", filepath.Join(dir, "live.json")}, live...)
	if code, stdout, stderr := cli(t, args...); code != 0 {
		t.Fatalf("live run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	asked := len(api.Requests())
	liveSum := readSummary(t, filepath.Join(dir, "live.json"))
	if asked == 0 || liveSum.Nodes.Failed != 0 {
		t.Fatalf("the live run asked %d requests, %d nodes failed", asked, liveSum.Nodes.Failed)
	}
	// Every operation the pipeline asks is in the recording.
	evidence := filepath.Join(dir, "evidence.jsonl")
	code, stdout, stderr := cli(t, append([]string{"evidence", exp, "--cache-dir", liveCache, "--out", evidence}, live...)...)
	if code != 0 || !strings.Contains(stdout, "recorded literature exchange(s) to "+evidence) || strings.Contains(stderr, "no cached reply") {
		t.Fatalf("evidence: exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(evidence)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var x struct{ Op string }
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			t.Fatal(err)
		}
		ops[x.Op]++
	}
	for _, op := range []string{"literature.search", "literature.snippets", "literature.recommend", "literature.references"} {
		if ops[op] == 0 {
			t.Errorf("no %s exchange recorded: %v", op, ops)
		}
	}
	// The replay: a fresh cache, the literature model on the recording.
	replay := []string{"-var", "literature=corpus", "-var", "corpus=" + evidence}
	replayCache := filepath.Join(dir, "cache-replay")
	args = append([]string{"run", exp, "--cache-dir", replayCache, "--out", filepath.Join(dir, "out-replay"), "--summary-json", filepath.Join(dir, "replay.json")}, replay...)
	if code, stdout, stderr := cli(t, args...); code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	replaySum := readSummary(t, filepath.Join(dir, "replay.json"))
	if got := len(api.Requests()); got != asked {
		t.Errorf("the replay asked Semantic Scholar %d requests; want 0", got-asked)
	}
	if replaySum.Nodes != liveSum.Nodes || replaySum.ServiceCalls != liveSum.ServiceCalls || replaySum.LLMCalls != liveSum.LLMCalls {
		t.Errorf("replay %+v (%d service, %d model calls); live %+v (%d, %d)", replaySum.Nodes, replaySum.ServiceCalls, replaySum.LLMCalls,
			liveSum.Nodes, liveSum.ServiceCalls, liveSum.LLMCalls)
	}
	// The same outputs, stage by stage (the export's keys aside, and who
	// answered: the recording, by its file's digest, where Semantic Scholar
	// answered the live run).
	for _, stage := range []string{"stage.literature_search.snippets", "stage.literature_search.papers", "stage.paper_augment.se",
		"stage.soundness_review.se", "stage.contribution_review.se", "stage.llm_review.baseline",
		"stage.coverage.review", "stage.coverage_score.review", "stage.preference_score.pairs"} {
		a, liveBy := exportJSONLRows(t, stage, exp, liveCache, live)
		r, replayBy := exportJSONLRows(t, stage, exp, replayCache, replay)
		for i := range liveBy {
			if liveBy[i] == "endpoint" && (i >= len(replayBy) || replayBy[i] != "corpus") {
				t.Errorf("%s row %d: answered by %q live, so by the recording (corpus) replayed; got %q", stage, i, liveBy[i], replayBy)
				break
			}
		}
		if len(a) == 0 || strings.Join(a, "\n") != strings.Join(r, "\n") {
			t.Errorf("%s: %d rows live, %d replayed, or they differ:\n%s\n---\n%s", stage, len(a), len(r), strings.Join(a, "\n"), strings.Join(r, "\n"))
		}
	}
	// A changed request is not silently answered: another as_of fails its
	// searches, naming the recording.
	code, stdout, stderr = cli(t, append([]string{"run", exp, "--cache-dir", replayCache, "--out", filepath.Join(dir, "out-replay"), "-var", "as_of=2027-01-01"}, replay...)...)
	if code == 0 || !strings.Contains(stdout+stderr, "is not in the recording") {
		t.Errorf("another as_of: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// exportJSONLRows is a stage's JSONL export with the columns that name where a
// result came from (key, answerer) dropped, and each row's answerer class.
func exportJSONLRows(t *testing.T, stage, exp, cacheDir string, vars []string) (rows, answeredBy []string) {
	t.Helper()
	code, stdout, stderr := cli(t, append([]string{"export", stage, exp, "--cache-dir", cacheDir, "--format", "jsonl"}, vars...)...)
	if code != 0 {
		t.Fatalf("export %s: exit %d\n%s", stage, code, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		class, _ := row["answerer_class"].(string)
		answeredBy = append(answeredBy, class)
		delete(row, "key")
		delete(row, "answerer_class")
		delete(row, "answerer_identity")
		b, _ := json.Marshal(row)
		rows = append(rows, string(b))
	}
	return rows, answeredBy
}
