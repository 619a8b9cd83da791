package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
)

// lineOf is the 1-based line of the first line of file holding text.
func lineOf(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("%s holds no %q", file, text)
	return 0
}

// TestMaxCostRefusesUnpricedModels gives --max-cost to a run whose judge has
// no price block: the budget could not bind its calls, so the run is refused
// with exit 2 before any request, at the model's block, naming the price
// block to add; --allow-unpriced starts it, and the budget then stops it.
func TestMaxCostRefusesUnpricedModels(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--max-cost", "0.000001")
	if code != exitBadInput || srv.Count() != 0 {
		t.Fatalf("exit %d after %d requests; want 2 and none\n%s\n%s", code, srv.Count(), stdout, stderr)
	}
	at := fmt.Sprintf("main.hcl:%d:", lineOf(t, filepath.Join(exp, "main.hcl"), `model "judge"`))
	for _, want := range []string{at, "No price for model.judge", "price { input_per_mtok", "--allow-unpriced", "nothing was run"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "model.gen_a") || strings.Contains(stderr, "model.gen-a") {
		t.Errorf("a priced generator is named as unpriced:\n%s", stderr)
	}
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--max-cost", "0.000001", "--allow-unpriced")
	if code != exitBudget {
		t.Fatalf("--allow-unpriced: exit %d, want %d\n%s\n%s", code, exitBudget, stdout, stderr)
	}
	// A fully cached run makes no call: nothing for a budget to bind.
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	n := srv.Count()
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--max-cost", "0.000001"); code != 0 || srv.Count() != n {
		t.Fatalf("cached run with --max-cost: exit %d, %d requests\n%s", code, srv.Count()-n, stderr)
	}
}

// TestUnknownCostIsNeverZero runs the scenario, whose judge has no price:
// the run summary, the summary JSON and report.html give the generators'
// cost and say the judge's is unknown; on the mock, where no model has a
// price, no $0.0000 is printed anywhere.
func TestUnknownCostIsNeverZero(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	if st, err := cache.Create(cacheDir); err != nil {
		t.Fatal(err)
	} else {
		st.Close()
	}
	code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir, "--json")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	var plan struct {
		Estimate struct {
			CostUSD       *float64 `json:"cost_usd"`
			CostUSDPriced *float64 `json:"cost_usd_priced"`
			Unpriced      []string `json:"unpriced"`
		} `json:"estimate"`
	}
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatal(err)
	}
	if e := plan.Estimate; e.CostUSD != nil || e.CostUSDPriced == nil || *e.CostUSDPriced <= 0 || strings.Join(e.Unpriced, ",") != "model.judge" {
		t.Errorf("plan --json estimate: cost_usd %v, cost_usd_priced %v, unpriced %v", e.CostUSD, e.CostUSDPriced, e.Unpriced)
	}
	sumPath := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--summary-json", sumPath)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, " for priced models, cost unknown (no price for model.judge)") || strings.Contains(stdout, "$0.0000") {
		t.Errorf("run summary:\n%s", stdout)
	}
	raw, err := os.ReadFile(sumPath)
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		CostUSD       *float64 `json:"cost_usd"`
		CostUSDPriced *float64 `json:"cost_usd_priced"`
		Unpriced      []string `json:"unpriced"`
		Models        map[string]struct {
			CostUSD  *float64 `json:"cost_usd"`
			Unpriced bool     `json:"unpriced"`
		} `json:"models"`
		Stages map[string]json.RawMessage `json:"stages"`
	}
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatal(err)
	}
	if js.CostUSD != nil || js.CostUSDPriced == nil || *js.CostUSDPriced <= 0 || strings.Join(js.Unpriced, ",") != "model.judge" {
		t.Errorf("summary JSON: cost_usd %v, cost_usd_priced %v, unpriced %v", js.CostUSD, js.CostUSDPriced, js.Unpriced)
	}
	if j := js.Models["judge-model"]; j.CostUSD != nil || !j.Unpriced {
		t.Errorf("the judge's usage: %+v", j)
	}
	if g := js.Models["gen-a"]; g.CostUSD == nil || *g.CostUSD <= 0 || g.Unpriced {
		t.Errorf("a generator's usage: %+v", g)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, js.Stages[stage(rank, "gen-a")])
	if rank := compact.String(); strings.Contains(rank, `"cost_usd"`) || !strings.Contains(rank, `"unpriced":["model.judge"]`) {
		t.Errorf("the ranking stage's summary: %s", rank)
	}
	// Decoding gives the priced sum back.
	if s := readSummary(t, sumPath); s.CostUSD != *js.CostUSDPriced {
		t.Errorf("decoded cost %v, want %v", s.CostUSD, *js.CostUSDPriced)
	}
	page, err := os.ReadFile(filepath.Join(exp, "results", "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "for priced models; unknown (no price for model.judge)") {
		t.Errorf("report.html does not say the judge's cost is unknown")
	}

	// The quickstart: every model on the mock, none priced.
	out := t.TempDir()
	code, stdout, stderr = cli(t, "run", "../../experiments/quickstart", "--cache-dir", t.TempDir(), "--out", out)
	if code != 0 {
		t.Fatalf("quickstart: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "cost unknown (no price for model.generator_a, model.generator_b, model.judge)") || strings.Contains(stdout, "$0.0000") {
		t.Errorf("quickstart summary:\n%s", stdout)
	}
	page, err = os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "$0.0000") || !strings.Contains(string(page), "unknown (no price for model.generator_a") {
		t.Errorf("quickstart's report.html prints a zero cost or no unknown cost")
	}
}
