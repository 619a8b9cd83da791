package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
	"github.com/ideaflow/ideaflow/stages/report"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// Who answers is key material, and labels come from the records read: these
// tests switch the scenario's provider between the mock and fake
// OpenAI-compatible endpoints and assert, through the CLI, how many calls
// each switch makes and what every output says about who answered.
//
// The scenario (helpers_test.go) has 32 model nodes: 2 generators x 4 kept
// targets x 3 samples, and 2 x 4 rankings (the dropped target's nodes make
// no call).
const modelNodes = 32

var providerBlock = regexp.MustCompile(`(?s)provider "fake" \{.*?\n\}\n`)

// mockProvider and endpointProvider are the scenario's provider "fake" on
// the mock, or on an endpoint (declaring identity when it is not "").
func mockProvider() string { return "provider \"fake\" {\n  kind = \"mock\"\n  seed = 7\n}\n" }

func endpointProvider(url, identity string) string {
	b := fmt.Sprintf("provider \"fake\" {\n  kind        = \"openai\"\n  base_url    = %q\n  api_key_env = \"SWITCH_KEY\"\n  max_retries = 2\n", url)
	if identity != "" {
		b += fmt.Sprintf("  endpoint_identity = %q\n", identity)
	}
	return b + "}\n"
}

// switchExperiment writes the scenario with the given provider block and a
// report in every format.
func switchExperiment(t *testing.T, dir, provider string) {
	t.Helper()
	writeExperiment(t, dir, scenario{BaseURL: "http://unused.invalid", KeyEnv: "SWITCH_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5})
	path := filepath.Join(dir, "main.hcl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := providerBlock.ReplaceAllLiteralString(string(b), provider)
	s = strings.Replace(s, "  columns = [stage.insight_score.novelty]\n", "  columns = [stage.insight_score.novelty]\n  formats = [\"markdown\", \"csv\", \"latex\", \"json\"]\n", 1)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runSwitch runs exp and returns its summary.
func runSwitch(t *testing.T, step, exp, cacheDir string) engine.Summary {
	t.Helper()
	sumPath := filepath.Join(t.TempDir(), "summary.json")
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath); code != 0 {
		t.Fatalf("%s: run exit %d\n%s%s", step, code, stdout, stderr)
	}
	return readSummary(t, sumPath)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exportRows exports address as CSV and returns its rows as maps.
func exportRows(t *testing.T, address, exp, cacheDir string) []map[string]string {
	t.Helper()
	code, stdout, stderr := cli(t, "export", address, exp, "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("export %s: exit %d\n%s", address, code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// checkLabels asserts that every output of the scenario says its results
// are synthetic exactly when synthetic, and that who answered is who.
func checkLabels(t *testing.T, step, exp, cacheDir string, synthetic bool, who string) {
	t.Helper()
	res := filepath.Join(exp, "results")
	md := readFile(t, filepath.Join(res, "table1.md"))
	if strings.HasPrefix(md, report.SyntheticBanner) != synthetic || strings.Contains(md, report.MixedPrefix) || strings.Contains(md, report.MixedMark) {
		t.Errorf("%s: table1.md, synthetic %v:\n%s", step, synthetic, md)
	}
	if !strings.Contains(md, "Answered by: "+who+" ("+fmt.Sprint(modelNodes)+" node(s))") {
		t.Errorf("%s: table1.md's footer does not name %s as the answerer of every model node:\n%s", step, who, md)
	}
	recs, err := csv.NewReader(strings.NewReader(readFile(t, filepath.Join(res, "table1.csv")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		if got := r[len(r)-1]; got != fmt.Sprint(synthetic) || r[len(r)-2] != fmt.Sprint(synthetic) {
			t.Errorf("%s: table1.csv row %q: synthetic %s, want %v", step, r, got, synthetic)
		}
	}
	tex := readFile(t, filepath.Join(res, "table1.tex"))
	if strings.Contains(tex, `\textbf{SYNTHETIC`) != synthetic || strings.Contains(tex, "PARTLY") {
		t.Errorf("%s: table1.tex, synthetic %v:\n%s", step, synthetic, tex)
	}
	var j struct {
		Synthetic      bool `json:"synthetic"`
		SyntheticCells int  `json:"synthetic_cells"`
		Cells          int  `json:"cells"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(res, "table1.json"))), &j); err != nil {
		t.Fatal(err)
	}
	if want := map[bool]int{true: 2, false: 0}[synthetic]; j.Synthetic != synthetic || j.SyntheticCells != want || j.Cells != 2 {
		t.Errorf("%s: table1.json says %+v", step, j)
	}
	html := readFile(t, filepath.Join(res, "report.html"))
	if strings.Contains(html, `id="synthetic-banner"`) != synthetic || strings.Contains(html, `synthetic-cell"`) {
		t.Errorf("%s: report.html: synthetic banner %v (want %v), or a cell marked", step, strings.Contains(html, `id="synthetic-banner"`), synthetic)
	}
	if !strings.Contains(html, "<td>"+who+"</td><td>"+fmt.Sprint(modelNodes)) {
		t.Errorf("%s: report.html does not say %s answered", step, who)
	}
	var prov engine.Provenance
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(res, "table1.provenance.json"))), &prov); err != nil {
		t.Fatal(err)
	}
	if prov.Synthetic != synthetic || len(prov.Answered) != 1 || prov.Answered[0].Name() != who || prov.Answered[0].Nodes != modelNodes {
		t.Errorf("%s: provenance %+v", step, prov)
	}
	class, identity, _ := strings.Cut(who, " ")
	for _, addr := range []string{"stage.rank_ideas.novelty", "stage.insight_score.novelty", "stage.generate_ideas.main"} {
		for _, r := range exportRows(t, addr, exp, cacheDir) {
			if r["dropped"] == "true" {
				continue // a dropped target's rows rest on no call
			}
			if r["synthetic"] != fmt.Sprint(synthetic) || r["answerer_class"] != class || r["answerer_identity"] != identity {
				t.Errorf("%s: export %s row %s: synthetic %s, answerer %s %s; want %v, %s", step, addr, r["address"], r["synthetic"],
					r["answerer_class"], r["answerer_identity"], synthetic, who)
			}
		}
	}
	code, stdout, stderr := cli(t, "show", `stage.rank_ideas.novelty["gen-a"]/qs-membrane/perm 0`, exp, "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stdout, "answered by: "+who+" (class "+class+", identity "+identity+")") {
		t.Errorf("%s: show does not name %s:\n%s%s", step, who, stdout, stderr)
	}
}

// TestSwitchingWhoAnswersReAsksEveryModelNode: the mock's answers never
// serve an endpoint's nodes, nor the reverse, nor one endpoint's another's;
// the labels follow the records; an endpoint declared the same as another
// is served the other's answers, and says so.
func TestSwitchingWhoAnswersReAsksEveryModelNode(t *testing.T) {
	a, b, c := llmtest.New(llmtest.WithResponder(responder)), llmtest.New(llmtest.WithResponder(responder)), llmtest.New(llmtest.WithResponder(responder))
	defer a.Close()
	defer b.Close()
	defer c.Close()
	t.Setenv("SWITCH_KEY", "sk-switch-test")
	dir := t.TempDir()
	exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
	count := func() [3]int { return [3]int{a.Count(), b.Count(), c.Count()} }

	switchExperiment(t, exp, mockProvider())
	if s := runSwitch(t, "mock", exp, cacheDir); s.LLMCalls != modelNodes || count() != [3]int{} || !s.Synthetic {
		t.Fatalf("mock: %d calls, servers %v, synthetic %v", s.LLMCalls, count(), s.Synthetic)
	}
	checkLabels(t, "mock", exp, cacheDir, true, "mock seed 7")

	// The mock's answers are cached, and none of them serves endpoint A.
	switchExperiment(t, exp, endpointProvider(a.URL, ""))
	code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		fmt.Sprintf("%d cached answers are the mock's (seed 7); provider.fake will be asked (endpoint %s).", modelNodes-8, a.URL),
		fmt.Sprintf("      12  answerer changed (mock seed 7 -> endpoint %s)\n", a.URL),
		"48 nodes: 13 cached, 35 to run.",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan after the switch lacks %q:\n%s", want, stdout)
		}
	}
	if s := runSwitch(t, "mock -> A", exp, cacheDir); s.LLMCalls != modelNodes || count() != [3]int{modelNodes, 0, 0} || s.Synthetic {
		t.Fatalf("mock -> A: %d calls, servers %v, synthetic %v", s.LLMCalls, count(), s.Synthetic)
	}
	checkLabels(t, "mock -> A", exp, cacheDir, false, "endpoint "+a.URL)

	// Back on the mock: its answers are still cached under its own keys.
	switchExperiment(t, exp, mockProvider())
	if s := runSwitch(t, "A -> mock", exp, cacheDir); s.LLMCalls != 0 || count() != [3]int{modelNodes, 0, 0} || !s.Synthetic {
		t.Fatalf("A -> mock: %d calls, servers %v, synthetic %v", s.LLMCalls, count(), s.Synthetic)
	}
	checkLabels(t, "A -> mock", exp, cacheDir, true, "mock seed 7")

	// Endpoint B serves the same model names: none of A's answers serves it.
	switchExperiment(t, exp, endpointProvider(b.URL, ""))
	if s := runSwitch(t, "A -> B", exp, cacheDir); s.LLMCalls != modelNodes || count() != [3]int{modelNodes, modelNodes, 0} {
		t.Fatalf("A -> B: %d calls, servers %v", s.LLMCalls, count())
	}
	checkLabels(t, "A -> B", exp, cacheDir, false, "endpoint "+b.URL)

	// Endpoint C declared to answer as A (spelt otherwise: normalised) is
	// served A's answers: no call, and every label names A, as the
	// records do.
	declared := "HTTP" + strings.TrimPrefix(a.URL, "http") + "/"
	switchExperiment(t, exp, endpointProvider(c.URL, declared))
	if s := runSwitch(t, "B -> C as A", exp, cacheDir); s.LLMCalls != 0 || count() != [3]int{modelNodes, modelNodes, 0} || s.Nodes.Cached != 48 {
		t.Fatalf("C as A: %d calls, servers %v, %d cached", s.LLMCalls, count(), s.Nodes.Cached)
	}
	checkLabels(t, "B -> C as A", exp, cacheDir, false, "endpoint "+a.URL)
}

// TestSwitchingFromAnEndpointToTheMock: an endpoint's answers never serve
// the mock's nodes: every model node is asked of the mock, and every label
// says SYNTHETIC again.
func TestSwitchingFromAnEndpointToTheMock(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	defer srv.Close()
	t.Setenv("SWITCH_KEY", "sk-switch-test")
	dir := t.TempDir()
	exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
	switchExperiment(t, exp, endpointProvider(srv.URL, ""))
	if s := runSwitch(t, "endpoint", exp, cacheDir); s.LLMCalls != modelNodes || srv.Count() != modelNodes || s.Synthetic {
		t.Fatalf("endpoint: %d calls, %d requests, synthetic %v", s.LLMCalls, srv.Count(), s.Synthetic)
	}
	checkLabels(t, "endpoint", exp, cacheDir, false, "endpoint "+srv.URL)
	switchExperiment(t, exp, mockProvider())
	code, stdout, _ := cli(t, "plan", exp, "--cache-dir", cacheDir)
	if want := fmt.Sprintf("%d cached answers came from endpoint %s; provider.fake will be asked (mock seed 7).", modelNodes-8, srv.URL); code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("plan lacks %q:\n%s", want, stdout)
	}
	if s := runSwitch(t, "endpoint -> mock", exp, cacheDir); s.LLMCalls != modelNodes || srv.Count() != modelNodes || !s.Synthetic {
		t.Fatalf("endpoint -> mock: %d calls, %d requests, synthetic %v", s.LLMCalls, srv.Count(), s.Synthetic)
	}
	checkLabels(t, "endpoint -> mock", exp, cacheDir, true, "mock seed 7")
}

// TestMixedReportMarksExactlyTheMockCells: gen-a on the mock and gen-b on
// an endpoint, judged by the endpoint. gen-a's Insight Score rests on the
// mock's ideas (a real judge ranked made-up ideas), gen-b's does not: the
// table says 1 of 2 cells is synthetic and marks that one, in every
// format, and so do the page and the export.
func TestMixedReportMarksExactlyTheMockCells(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	defer srv.Close()
	t.Setenv("SWITCH_KEY", "sk-switch-test")
	dir := t.TempDir()
	exp, cacheDir := filepath.Join(dir, "exp"), filepath.Join(dir, "cache")
	switchExperiment(t, exp, endpointProvider(srv.URL, "")+"\nprovider \"m\" {\n  kind = \"mock\"\n  seed = 7\n}\n")
	path := filepath.Join(exp, "main.hcl")
	editOnce(t, path, "model \"gen-a\" {\n  provider    = provider.fake", "model \"gen-a\" {\n  provider    = provider.m")
	s := runSwitch(t, "mixed", exp, cacheDir)
	// gen-a's 12 generations are the mock's; gen-b's 12 and the 8 rankings the endpoint's.
	if s.LLMCalls != modelNodes || srv.Count() != 20 || !s.Synthetic {
		t.Fatalf("mixed: %d calls, %d requests, synthetic %v", s.LLMCalls, srv.Count(), s.Synthetic)
	}
	res := filepath.Join(exp, "results")
	md := readFile(t, filepath.Join(res, "table1.md"))
	table, _, _ := strings.Cut(md, "\n---\n")
	golden(t, "mixed_table1.md", table)
	golden(t, "mixed_table1.csv", readFile(t, filepath.Join(res, "table1.csv")))
	tex := readFile(t, filepath.Join(res, "table1.tex"))
	if strings.Count(tex, `$^\dagger$`) != 2 || !strings.Contains(tex, "PARTLY SYNTHETIC (1 of 2 cells") {
		t.Errorf("table1.tex does not mark the one mixed cell:\n%s", tex)
	}
	html := readFile(t, filepath.Join(res, "report.html"))
	if strings.Count(html, `synthetic-cell"`) != 1 || !strings.Contains(html, "PARTLY SYNTHETIC: 1 of 2 cells") ||
		!strings.Contains(html, "PARTLY SYNTHETIC: some results on this page come from the mock provider (12 of 32 model and service nodes were answered by the mock)") {
		t.Errorf("report.html does not mark exactly one cell")
	}
	got := map[string]string{}
	for _, r := range exportRows(t, "stage.insight_score.novelty", exp, cacheDir) {
		got[r["instance_key"]] = r["synthetic"] + " " + r["answerer_identity"]
	}
	if want := map[string]string{"gen-a": "true " + srv.URL + "; seed 7", "gen-b": "false " + srv.URL}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("export of the scores: %v, want %v", got, want)
	}
}

// editOnce replaces old by new in path, which must hold it.
func editOnce(t *testing.T, path, old, new string) {
	t.Helper()
	s := readFile(t, path)
	if !strings.Contains(s, old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(s, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// golden compares got with testdata/name (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from its golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestCacheAdoptCommand: the command's plumbing (the adoption itself is
// engine.TestAdoptKeepsOnlyWhatItMay): a provider is required and must be
// declared; on a cache of the current scheme there is nothing to adopt.
func TestCacheAdoptCommand(t *testing.T) {
	exp := copyQuickstart(t)
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := cli(t, "cache", "adopt", exp, "--cache-dir", cacheDir); code != exitBadInput || !strings.Contains(stderr, "--provider NAME") {
		t.Errorf("no --provider: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := cli(t, "cache", "adopt", exp, "--provider", "gw", "--cache-dir", cacheDir); code != exitBadInput ||
		!strings.Contains(stderr, `no such provider "gw" in quickstart; it declares mock`) {
		t.Errorf("unknown provider: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := cli(t, "cache", "adopt", exp, "--provider", "provider.mock", "--dry-run", "--cache-dir", cacheDir)
	want := "provider.mock (mock seed 7): would adopt 0 record(s) cached before answers were keyed by who gave them; they are marked adopted.\n" +
		"32 node(s) were already cached under the new scheme.\n"
	if code != 0 || stdout != want {
		t.Errorf("adopt on a current cache: exit %d\n%s\nwant\n%s%s", code, stdout, want, stderr)
	}
}
