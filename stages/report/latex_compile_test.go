package report_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/internal/shareddata"
	_ "github.com/ideaflow/ideaflow/stages/all"
)

// shippedRuns is how each shipped experiment runs offline here: on the
// mock provider, the LiveIdeaBench boards over three keywords
// (testdata/latex_keywords.csv) so their 20 rows come in a second.
func shippedRuns(t *testing.T) map[string][]string {
	// The authors' LiveIdeaBench files, found as every data-reading test
	// finds them (internal/shareddata: the clone may be anywhere).
	board := []string{"offline=true", "keywords=" + abs(t, "testdata/latex_keywords.csv"),
		"categories=" + shareddata.Path(t, "liveideabench", "csvs/keyword_classifications.csv"),
		"published=" + shareddata.Path(t, "liveideabench", "results/LiveIdeaBench-202412.csv")}
	v2 := board[:3] // the v2 boards have no published one
	offline := []string{"offline=true"}
	return map[string][]string{
		"ideabench/ablation_n.debiased.hcl":         offline,
		"ideabench/ablation_n.hcl":                  offline,
		"ideabench/ablation_refs.debiased.hcl":      offline,
		"ideabench/ablation_refs.hcl":               offline,
		"ideabench/main.debiased.hcl":               offline,
		"ideabench/main.hcl":                        offline,
		"ideabench/position_bias.hcl":               offline,
		"ideabench/sanity.hcl":                      offline,
		"liveideabench/adaptive.hcl":                nil,
		"liveideabench/leaderboard.debiased.hcl":    board,
		"liveideabench/leaderboard.hcl":             board,
		"liveideabench/leaderboard_v2.debiased.hcl": v2,
		"liveideabench/leaderboard_v2.hcl":          v2,
		"liveideabench/quick.hcl":                   nil,
		"quickstart/main.hcl":                       nil,
		"scholareval/coverage.hcl":                  offline,
		"scholareval/coverage.ideaflow.hcl":         offline,
		"scholareval/quick.hcl":                     offline,
		"scholareval/quick.ideaflow.hcl":            offline,
	}
}

func abs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// documents are the two classes every table must fit: a one-column
// article and a two-column one (a paper's column is about 240 pt).
var documents = map[string]string{"onecolumn": `\documentclass{article}`, "twocolumn": `\documentclass[twocolumn]{article}`}

var requires = regexp.MustCompile(`(?m)^% requires (\\usepackage(\[[^]]*\])?\{[^}]+\})$`)

// TestShippedTablesCompile runs every shipped experiment that has a report
// offline, and compiles each LaTeX table it writes with pdflatex in a
// one-column and a two-column article whose preamble is exactly what the
// table's "% requires" lines name. Any error, and any overfull \hbox, fails.
// Without pdflatex it skips, unless IDEAFLOW_REQUIRE_LATEX is set (CI,
// after make latex) where it fails.
func TestShippedTablesCompile(t *testing.T) {
	pdflatex, err := exec.LookPath("pdflatex")
	if err != nil {
		if os.Getenv("IDEAFLOW_REQUIRE_LATEX") != "" {
			t.Fatal("pdflatex is not installed and IDEAFLOW_REQUIRE_LATEX is set: run `make latex`")
		}
		t.Skip("pdflatex is not installed (make latex installs it)")
	}
	runs := shippedRuns(t)
	files, err := filepath.Glob("../../experiments/*/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(filepath.ToSlash(f), "../../experiments/")
		if _, ok := runs[rel]; !ok && regexp.MustCompile(`(?m)^report "`).Match(b) {
			t.Errorf("%s has a report but no entry in shippedRuns: add how it runs offline", rel)
		}
	}
	for _, rel := range sortedKeys(runs) {
		t.Run(rel, func(t *testing.T) {
			dir := t.TempDir()
			runShipped(t, "../../experiments/"+rel, runs[rel], dir)
			var texs []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".tex") {
					texs = append(texs, p)
				}
				return nil
			})
			if len(texs) == 0 && rel == "quickstart/main.hcl" {
				return // the tutorial's table is Markdown and CSV (the engine's tests count its files)
			}
			if len(texs) == 0 {
				t.Fatal("no LaTeX table written: give its report formats \"latex\"")
			}
			for _, tex := range texs {
				for _, class := range sortedKeys(documents) {
					if msg := compile(t, pdflatex, tex, documents[class]); msg != "" {
						t.Errorf("%s in a %s article: %s", filepath.Base(tex), class, msg)
					}
				}
			}
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func runShipped(t *testing.T, file string, vars []string, reportDir string) {
	t.Helper()
	exp, diags := config.Load(file, config.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	e := &engine.Engine{Store: cache.NewMemory(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: reportDir})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failures) != 0 {
		t.Fatalf("failures: %+v", sum.Failures)
	}
}

// compile sets tex in a document of class with the packages its header
// names, and returns what went wrong ("" when nothing did).
func compile(t *testing.T, pdflatex, tex, class string) string {
	t.Helper()
	body, err := os.ReadFile(tex)
	if err != nil {
		t.Fatal(err)
	}
	var pre []string
	for _, m := range requires.FindAllStringSubmatch(string(body), -1) {
		pre = append(pre, m[1])
	}
	if len(pre) == 0 {
		return "no \"% requires \\usepackage{...}\" line"
	}
	dir := t.TempDir()
	doc := fmt.Sprintf("%s\n%s\n\\begin{document}\n\\input{%s}\n\\end{document}\n", class, strings.Join(pre, "\n"), filepath.ToSlash(tex))
	if err := os.WriteFile(filepath.Join(dir, "doc.tex"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pdflatex, "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
	cmd.Dir = dir
	out, runErr := cmd.CombinedOutput()
	log, err := os.ReadFile(filepath.Join(dir, "doc.log"))
	if err != nil {
		return fmt.Sprintf("pdflatex wrote no log (%v): %s", runErr, out)
	}
	var bad []string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.HasPrefix(l, "Overfull \\hbox") || strings.HasPrefix(l, "! ") {
			bad = append(bad, l)
		}
	}
	if runErr != nil && len(bad) == 0 {
		bad = append(bad, runErr.Error())
	}
	return strings.Join(bad, "; ")
}

// TestCompileFindsOverfull: the check above sees an overfull box, so its
// passing means something. A natural-width tabular wider than the column
// sticks out; the same rows at the default width fit.
func TestCompileFindsOverfull(t *testing.T) {
	pdflatex, err := exec.LookPath("pdflatex")
	if err != nil {
		if os.Getenv("IDEAFLOW_REQUIRE_LATEX") != "" {
			t.Fatal("pdflatex is not installed and IDEAFLOW_REQUIRE_LATEX is set: run `make latex`")
		}
		t.Skip("pdflatex is not installed (make latex installs it)")
	}
	row := strings.Repeat(" & 0.123 [0.10, 0.15]", 12)
	wide := "% requires \\usepackage{booktabs}\n\\begin{tabular}{l" + strings.Repeat("r", 12) + "}\\toprule\nmodel" + row + " \\\\\n\\bottomrule\\end{tabular}\n"
	tex := filepath.Join(t.TempDir(), "wide.tex")
	if err := os.WriteFile(tex, []byte(wide), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := compile(t, pdflatex, tex, documents["twocolumn"]); !strings.Contains(msg, "Overfull \\hbox") {
		t.Errorf("a 12-column tabular in a two-column article: %q, want an overfull box", msg)
	}
}
