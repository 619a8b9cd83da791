package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/ideabench"
)

var ideaColumns = []string{"address", "instance", "instance_key", "item", "slot", "label", "idea_index", "item_idea_index", "idea",
	"generator", "generator_family", "model", "served_model", "fingerprint", "answerer_class", "answerer_identity", "synthetic", "key"}

// cachedIdeas reads every generation record of instance from the cache:
// address -> ideas, and address -> key.
func cachedIdeas(t *testing.T, cacheDir, instance string) (map[string][]string, map[string]string) {
	t.Helper()
	st, err := cache.OpenReadOnly(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ideas, keys := map[string][]string{}, map[string]string{}
	err = st.List(func(e cache.Entry) error {
		if e.Stage != instance {
			return nil
		}
		rec, err := st.Get(e.Key)
		if err != nil {
			return err
		}
		var out struct{ Ideas []string }
		if err := json.Unmarshal(rec.Output, &out); err != nil {
			return err
		}
		ideas[e.Address], keys[e.Address] = out.Ideas, e.Key
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ideas, keys
}

// export of the generation instance has one row per cached idea, with the
// columns in order and the values the cache holds.
func TestExportIdeas(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	inst := `stage.generate_ideas.main["gen-a"]`
	out := filepath.Join(t.TempDir(), "ideas.csv")
	code, stdout, stderr := cli(t, "export", inst, exp, "--cache-dir", cacheDir, "--format", "csv", "--out", out)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	if stdout != "wrote 12 row(s) to "+out+"\n" || stderr != "note: 3 node(s) belong to items left out upstream (dropped)\n" {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(recs[0], ideaColumns) {
		t.Fatalf("header %q, want %q", recs[0], ideaColumns)
	}
	ideas, keys := cachedIdeas(t, cacheDir, inst)
	want := 0
	for _, is := range ideas {
		want += len(is)
	}
	if len(recs)-1 != want || want != 12 {
		t.Fatalf("%d rows, the cache holds %d ideas (want 12: 4 kept targets x 3 samples)", len(recs)-1, want)
	}
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, c := range ideaColumns {
			row[c] = r[i]
		}
		addr := row["address"]
		if seen[addr] {
			t.Errorf("%s has two rows; independent samples have one idea each", addr)
		}
		seen[addr] = true
		slot, _ := strconv.Atoi(row["slot"])
		wantRow := map[string]string{
			"address": addr, "instance": inst, "instance_key": "gen-a", "item": row["item"], "slot": row["slot"],
			"label": "sample " + row["slot"], "idea_index": "0", "item_idea_index": strconv.Itoa(slot), "idea": ideas[addr][0],
			"generator": "gen-a", "generator_family": "", "model": "gen-a", "served_model": "gen-a", "fingerprint": "fp_llmtest",
			"answerer_class": "endpoint", "answerer_identity": srv.URL, "synthetic": "false", "key": keys[addr],
		}
		if !reflect.DeepEqual(row, wantRow) || addr != inst+"/"+row["item"]+"/sample "+row["slot"] {
			t.Errorf("row\n%v\nwant\n%v", row, wantRow)
		}
	}

	// JSONL of the whole block: both generators, the same rows, the
	// columns in the same order, numbers as numbers.
	code, stdout, stderr = cli(t, "export", "stage.generate_ideas.main", exp, "--cache-dir", cacheDir, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export jsonl: exit %d\n%s", code, stderr)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 24 {
		t.Fatalf("%d JSONL rows, want 24", len(lines))
	}
	var fromJSONL [][]string
	for _, l := range lines {
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber()
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		var keys []string
		var vals []string
		for dec.More() {
			k, _ := dec.Token()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k.(string))
			vals = append(vals, cellText(v))
		}
		if !reflect.DeepEqual(keys, ideaColumns) {
			t.Fatalf("JSONL keys %q, want %q", keys, ideaColumns)
		}
		if strings.Contains(l, `"slot":"`) {
			t.Errorf("slot is a string in %s", l)
		}
		if vals[2] == "gen-a" {
			fromJSONL = append(fromJSONL, vals)
		}
	}
	sort.Slice(fromJSONL, func(i, j int) bool { return fromJSONL[i][0] < fromJSONL[j][0] })
	fromCSV := recs[1:]
	sort.Slice(fromCSV, func(i, j int) bool { return fromCSV[i][0] < fromCSV[j][0] })
	if !reflect.DeepEqual(fromJSONL, fromCSV) {
		t.Errorf("JSONL rows of gen-a differ from CSV:\n%v\n%v", fromJSONL, fromCSV)
	}
}

// export of rankings: one row per ranking, with the order and target rank.
func TestExportRankings(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := cli(t, "export", `stage.rank_ideas.novelty["gen-b"]/qs-membrane`, exp, "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := []string{"address", "instance", "instance_key", "item", "slot", "label", "order", "target_letter", "target_rank", "n", "labels", "dropped",
		"generator", "generator_family", "model", "served_model", "fingerprint", "answerer_class", "answerer_identity", "synthetic", "key"}
	if len(recs) != 2 || !reflect.DeepEqual(recs[0], wantHeader) {
		t.Fatalf("export:\n%s", stdout)
	}
	views := showJSON(t, `stage.rank_ideas.novelty["gen-b"]/qs-membrane/perm 0`, exp, "--cache-dir", cacheDir)
	var o struct {
		Order        []string
		TargetLetter string `json:"target_letter"`
		TargetRank   int    `json:"target_rank"`
	}
	if err := json.Unmarshal(views[0].Result.Output, &o); err != nil {
		t.Fatal(err)
	}
	r := recs[1]
	if r[6] != strings.Join(o.Order, " > ") || r[7] != o.TargetLetter || r[8] != strconv.Itoa(o.TargetRank) || r[9] != "3" || r[11] != "false" ||
		r[12] != "gen-b" || r[14] != "judge-model" || !strings.Contains(r[10], "=target") ||
		r[16] != "fp_llmtest" || r[17] != "endpoint" || r[18] != srv.URL || r[19] != "false" {
		t.Errorf("row %q for output %+v", r, o)
	}

	if code, _, stderr := cli(t, "export", "stage.rank_ideas.novelty", exp, "--cache-dir", cacheDir, "--format", "xlsx"); code != exitBadInput || !strings.Contains(stderr, `--format "xlsx": use csv or jsonl`) {
		t.Errorf("--format xlsx: exit %d\n%s", code, stderr)
	}
}

const exportSimilarity = `
model "emb" {
  provider = provider.mock
  name     = "mock-embedder"
}
stage "similarity" "bert" {
  ideas  = stage.generate_ideas.main
  method = "bertscore"
  model  = model.emb
  layer  = 24 # mock-embedder is in no bert_score table
}
stage "similarity" "emb" {
  ideas  = stage.generate_ideas.main
  method = "embedding"
  model  = model.emb
}
`

// export of similarity: one row per idea with its P/R/F1 (a dropped target
// one row saying so); an embedding item's service replies have no rows of
// their own, and a note says so.
func TestExportSimilarity(t *testing.T) {
	exp := copyQuickstart(t)
	if err := os.WriteFile(filepath.Join(exp, "sim.hcl"), []byte(exportSimilarity), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	for _, tc := range []struct {
		inst, method, note string
	}{
		{`stage.similarity.bert["mock-generator-a"]`, "bertscore", ""},
		{`stage.similarity.emb["mock-generator-a"]`, "embedding", "note: 20 service reply node(s) have no rows of their own"},
	} {
		code, stdout, stderr := cli(t, "export", tc.inst, exp, "--cache-dir", cacheDir)
		if code != 0 || !strings.Contains(stderr, tc.note) {
			t.Fatalf("export %s: exit %d\n%s", tc.inst, code, stderr)
		}
		recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		wantHeader := []string{"address", "instance", "instance_key", "item", "slot", "label", "method", "idea_index", "precision", "recall", "f1", "dropped",
			"generator", "generator_family", "model", "served_model", "fingerprint", "answerer_class", "answerer_identity", "synthetic", "key"}
		// 4 kept targets x 3 ideas, and the dropped target's row.
		if len(recs) != 1+12+1 || !reflect.DeepEqual(recs[0], wantHeader) {
			t.Fatalf("%s: %d rows, header %q\n%s", tc.inst, len(recs), recs[0], stdout)
		}
		// Each row's scores are its node's, as show reads them from the cache.
		dropped := 0
		for _, r := range recs[1:] {
			if r[11] == "true" {
				dropped++
				continue
			}
			views := showJSON(t, r[0], exp, "--cache-dir", cacheDir)
			o, ok, err := ideabench.DecodeSimilarity(views[0].Label, views[0].Result.Output)
			j, _ := strconv.Atoi(r[7])
			if err != nil || !ok || j >= len(o.Scores) {
				t.Fatalf("%s: node %s: %v %v", tc.inst, r[0], ok, err)
			}
			want := o.Scores[j]
			got := func(k int) float64 { v, _ := strconv.ParseFloat(r[k], 64); return v }
			if r[6] != tc.method || got(8) != want.Precision || got(9) != want.Recall || got(10) != want.F1 || want.F1 <= 0 {
				t.Errorf("%s: row %q, node scores %+v", tc.inst, r, want)
			}
		}
		if dropped != 1 {
			t.Errorf("%s: %d dropped rows, want 1", tc.inst, dropped)
		}
	}
}

// export keeps nested values nested: a judgement's scores are a JSON
// object in jsonl (not a string holding one), and in csv one column per
// member, parent.member, recursively (authors_parse.scores.originality),
// each cell the member's value.
func TestExportNestedValues(t *testing.T) {
	exp := "../../experiments/liveideabench/quick.hcl"
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir()); code != 0 {
		t.Fatal(stderr)
	}
	addr := `stage.judge_panel.scores["mock-generator-a"]`
	code, stdout, stderr := cli(t, "export", addr, exp, "--cache-dir", cacheDir, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export jsonl: exit %d\n%s", code, stderr)
	}
	type judged struct {
		Address string             `json:"address"`
		Scores  map[string]float64 `json:"scores"`
		Authors struct {
			Parser string `json:"parser"`
		} `json:"authors_parse"`
	}
	byAddr := map[string]judged{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var j judged
		if err := json.Unmarshal([]byte(line), &j); err != nil {
			t.Fatalf("a JSONL row whose scores are no object: %v\n%s", err, line)
		}
		if len(j.Scores) != 3 || j.Authors.Parser == "" {
			t.Fatalf("row %s: scores %v, authors_parse.parser %q; want the three judged dimensions and the parser", j.Address, j.Scores, j.Authors.Parser)
		}
		byAddr[j.Address] = j
	}
	// 20 keywords x 2 ideas x 2 judges.
	if len(byAddr) != 80 {
		t.Fatalf("%d JSONL rows, want 80", len(byAddr))
	}
	code, stdout, stderr = cli(t, "export", addr, exp, "--cache-dir", cacheDir, "--format", "csv")
	if code != 0 {
		t.Fatalf("export csv: exit %d\n%s", code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, want := range []string{"scores.clarity", "scores.feasibility", "scores.originality", "authors_parse.parser", "authors_parse.valid", "mean", "reasoning"} {
		if _, ok := col[want]; !ok {
			t.Fatalf("csv header %q lacks %q", recs[0], want)
		}
	}
	if _, ok := col["scores"]; ok {
		t.Errorf("csv has a scores column beside its members: %q", recs[0])
	}
	if len(recs)-1 != len(byAddr) {
		t.Fatalf("%d csv rows, %d JSONL rows", len(recs)-1, len(byAddr))
	}
	for _, r := range recs[1:] {
		j := byAddr[r[col["address"]]]
		for _, dim := range []string{"clarity", "feasibility", "originality"} {
			if got := r[col["scores."+dim]]; got != strconv.FormatFloat(j.Scores[dim], 'g', -1, 64) {
				t.Errorf("%s: scores.%s = %q in csv, %v in jsonl", r[0], dim, got, j.Scores[dim])
			}
		}
		if r[col["authors_parse.parser"]] != j.Authors.Parser {
			t.Errorf("%s: authors_parse.parser %q, jsonl %q", r[0], r[col["authors_parse.parser"]], j.Authors.Parser)
		}
	}
}
