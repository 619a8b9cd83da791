package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/adaptive"
	"github.com/ideaflow/ideaflow/stages/stats"
)

// loadStopWhen loads testdata/valid with one more file holding src.
func loadStopWhen(t *testing.T, src string) (*Experiment, []string) {
	t.Helper()
	dir := t.TempDir()
	copyDir(t, "testdata/valid", dir)
	var kw strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&kw, "{\"id\": \"k%02d\", \"keyword\": \"w%d\"}\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "kw.jsonl"), []byte(kw.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stop.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, diags := Load(dir, Options{})
	var errs []string
	for _, d := range diags.Errs() {
		d := d.(interface{ Error() string })
		errs = append(errs, d.Error())
	}
	for _, d := range diags {
		if d.Severity == 1 && (d.Subject == nil || !strings.HasSuffix(d.Subject.Filename, "stop.hcl") || strings.TrimSpace(d.Detail) == "") {
			t.Errorf("diagnostic without a range in stop.hcl or a fix: %s", d.Error())
		}
	}
	return exp, errs
}

func TestStopWhen(t *testing.T) {
	exp, errs := loadStopWhen(t, `
stop_when {
  items      = dataset.targets
  scores     = stage.echo.gen
  round      = 25
  seed       = 3
  separated  = 0.95
  tie        = 0.5
  half_width = 0.2
  max_calls  = 9000
  method     = "betting"
  range      = [0, 1]
  field      = "value"
}
`)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	want := StopWhen{Items: "targets", Scores: "stage.echo.gen", Field: "value", Seed: 3,
		Rule: adaptive.Rule{Separated: 0.95, Tie: 0.5, HalfWidth: 0.2, MaxCalls: 9000, Round: 25, Lo: 0, Hi: 1, Method: stats.CSBetting}}
	got := *exp.StopWhen
	got.DeclRange = want.DeclRange
	if got != want {
		t.Errorf("StopWhen = %+v\nwant %+v", got, want)
	}
	// Defaults: scores on LiveIdeaBench's 1-10, the mean field, Bernstein.
	exp, errs = loadStopWhen(t, "stop_when {\n  items = dataset.targets\n  scores = stage.echo.gen\n  round = 10\n  max_calls = 100\n}\n")
	if len(errs) != 0 || exp.StopWhen.Rule.Lo != 1 || exp.StopWhen.Rule.Hi != 10 || exp.StopWhen.Field != "mean" || exp.StopWhen.Rule.Method != stats.CSBernstein {
		t.Errorf("defaults: %v %+v", errs, exp.StopWhen)
	}
	// Without a stop_when block there is none.
	if exp, _ := Load("testdata/valid", Options{}); exp.StopWhen != nil {
		t.Errorf("StopWhen without a block = %+v", exp.StopWhen)
	}
}

func TestStopWhenErrors(t *testing.T) {
	base := "  items = dataset.targets\n  scores = stage.echo.gen\n  round = 10\n"
	for _, c := range []struct {
		name, body, want string
	}{
		{"no condition", base, "stop_when without a condition"},
		{"items not a dataset", "  items = stage.echo.judge\n  scores = stage.echo.gen\n  round = 10\n  max_calls = 5\n", "items must be a dataset"},
		{"scores not a stage", "  items = dataset.targets\n  scores = dataset.targets\n  round = 10\n  max_calls = 5\n", "scores must be a stage"},
		{"round 0", "  items = dataset.targets\n  scores = stage.echo.gen\n  round = 0\n  max_calls = 5\n", "round"},
		{"level", base + "  separated = 95\n", "separated out of range"},
		{"tie alone", base + "  tie = 0.5\n  max_calls = 5\n", "tie without separated"},
		{"half width", base + "  half_width = -1\n", "half_width must be positive"},
		{"method", base + "  separated = 0.9\n  method = \"hoeffding\"\n", "Unknown stop_when method"},
		{"range", base + "  separated = 0.9\n  range = [10, 1]\n", "Invalid stop_when range"},
		{"unknown attribute", base + "  separated = 0.9\n  rounds = 3\n", "Unsupported argument"},
		{"missing items", "  scores = stage.echo.gen\n  round = 10\n  max_calls = 5\n", "Missing required argument"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs := loadStopWhen(t, "stop_when {\n"+c.body+"}\n")
			if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), c.want) {
				t.Errorf("errors %q; want one containing %q", errs, c.want)
			}
		})
	}
	_, errs := loadStopWhen(t, "stop_when {\n"+base+"  max_calls = 5\n}\nstop_when {\n"+base+"  max_calls = 6\n}\n")
	if !strings.Contains(strings.Join(errs, "\n"), "Duplicate stop_when block") {
		t.Errorf("two blocks: %q", errs)
	}
}

// Each round's dataset keeps a prefix of the seeded order: round k's
// items are among round k+1's.
func TestSampledIsAPrefix(t *testing.T) {
	exp, errs := loadStopWhen(t, "dataset \"kw\" {\n  format = \"jsonl\"\n  path = \"kw.jsonl\"\n}\n")
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	ds := exp.Datasets["kw"]
	all, err := ds.Items()
	if err != nil || len(all) < 3 {
		t.Fatalf("%d items, %v", len(all), err)
	}
	seen := map[string]bool{}
	for k := 1; k <= len(all); k++ {
		items, err := ds.Sampled(k, 7).Items()
		if err != nil || len(items) != k {
			t.Fatalf("k=%d: %d items, %v", k, len(items), err)
		}
		in := map[string]bool{}
		for _, it := range items {
			in[it.ID] = true
		}
		for id := range seen {
			if !in[id] {
				t.Errorf("k=%d lost item %s of k=%d", k, id, k-1)
			}
		}
		seen = in
	}
}
