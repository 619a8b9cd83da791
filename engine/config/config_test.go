package config

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/stages"
)

// testType is a stage type for decoding tests; config never lays stages out.
type testType struct {
	name   string
	params []stages.Param
}

func (t testType) Name() string                                   { return t.name }
func (t testType) Version() string                                { return "1" }
func (t testType) Params() []stages.Param                         { return t.params }
func (t testType) Layout(*stages.Instance) ([]stages.Node, error) { return nil, nil }

func init() {
	stages.Register(testType{name: "echo", params: []stages.Param{
		{Name: "input", Kind: stages.Input, Required: true, Accepts: []string{"dataset", "echo"}, Doc: "what to echo"},
		{Name: "model", Kind: stages.ModelRef},
		{Name: "quality", Kind: stages.QualityRef},
		{Name: "n", Kind: stages.Int, Default: 3},
		{Name: "prompt", Kind: stages.Template},
		{Name: "tags", Kind: stages.StringList},
	}})
	stages.Register(testType{name: "report", params: []stages.Param{
		{Name: "rows", Kind: stages.Inputs},
		{Name: "columns", Kind: stages.Inputs},
		{Name: "title", Kind: stages.String},
		{Name: "synthetic", Kind: stages.Bool},
	}})
}

var errorMarker = regexp.MustCompile(`#\s*ERROR:\s*(.+)$`)

// expectedErrors reads `# ERROR: summary` markers: each marks an error whose
// summary contains the text, on the marker's line.
func expectedErrors(t *testing.T, path string) map[int][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int][]string{}
	s := bufio.NewScanner(f)
	for line := 1; s.Scan(); line++ {
		if m := errorMarker.FindStringSubmatch(s.Text()); m != nil {
			for _, want := range strings.Split(m[1], ";") {
				out[line] = append(out[line], strings.TrimSpace(want))
			}
		}
	}
	return out
}

// TestErrors loads every testdata/errors file and checks that exactly the
// marked errors are reported, each on its line, each with a fix in its detail.
func TestErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.hcl")
	if len(files) < 8 {
		t.Fatalf("expected at least 8 error fixtures, found %d", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := expectedErrors(t, path)
			if len(want) == 0 {
				t.Fatalf("%s has no # ERROR: markers", path)
			}
			_, diags := Load(path, Options{})
			got := map[int][]*hcl.Diagnostic{}
			for _, d := range diags.Errs() {
				hd := d.(*hcl.Diagnostic)
				if hd.Subject == nil {
					t.Errorf("error without a source range: %s", hd.Error())
					continue
				}
				if !strings.Contains(hd.Subject.Filename, filepath.Base(path)) {
					t.Errorf("error names file %q, want %s", hd.Subject.Filename, path)
				}
				if strings.TrimSpace(hd.Detail) == "" {
					t.Errorf("line %d: %q has no detail saying how to fix it", hd.Subject.Start.Line, hd.Summary)
				}
				got[hd.Subject.Start.Line] = append(got[hd.Subject.Start.Line], hd)
			}
			for line, summaries := range want {
				for _, s := range summaries {
					found := false
					for _, d := range got[line] {
						if strings.Contains(d.Summary, s) {
							found = true
						}
					}
					if !found {
						t.Errorf("line %d: want error %q; got %s", line, s, describe(got[line]))
					}
				}
			}
			for line, ds := range got {
				if _, ok := want[line]; !ok {
					t.Errorf("line %d: unexpected %s", line, describe(ds))
				}
			}
		})
	}
}

func describe(ds []*hcl.Diagnostic) string {
	if len(ds) == 0 {
		return "no error"
	}
	var s []string
	for _, d := range ds {
		s = append(s, d.Summary+" ("+d.Detail+")")
	}
	sort.Strings(s)
	return strings.Join(s, "; ")
}

func TestMissingAPIKey(t *testing.T) {
	t.Setenv("IDEAFLOW_TEST_UNSET_KEY", "")
	exp, diags := Load("testdata/missing_key.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := exp.MissingKeys([]string{"remote"})
	if len(got) != 1 {
		t.Fatalf("want 1 diagnostic, got %v", got)
	}
	d := got[0]
	if d.Summary != "Missing API key" || d.Subject == nil || d.Subject.Start.Line != 4 || d.Subject.Start.Column != 17 {
		t.Fatalf("got %s at %v", d.Summary, d.Subject)
	}
	if !strings.Contains(d.Detail, "IDEAFLOW_TEST_UNSET_KEY") {
		t.Fatalf("detail does not name the variable: %s", d.Detail)
	}
	t.Setenv("IDEAFLOW_TEST_UNSET_KEY", "sk-something")
	if got := exp.MissingKeys([]string{"remote"}); len(got) != 0 {
		t.Fatalf("key is set, want no diagnostic, got %v", got)
	}
}

func TestValidExperiment(t *testing.T) {
	exp, diags := Load("testdata/valid", Options{Vars: []string{"n=5"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var addrs []string
	for _, s := range exp.Stages {
		addrs = append(addrs, s.Address)
	}
	want := []string{
		`stage.echo.gen["alpha"]`, `stage.echo.gen["beta"]`,
		`stage.echo.judge["alpha"]`, `stage.echo.judge["beta"]`,
		`stage.echo.grid["alpha/0.2"]`, `stage.echo.grid["alpha/0.7"]`, `stage.echo.grid["beta/0.2"]`, `stage.echo.grid["beta/0.7"]`,
		`report.table`,
	}
	if strings.Join(addrs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("instances:\n%s\nwant:\n%s", strings.Join(addrs, "\n"), strings.Join(want, "\n"))
	}
	gen := exp.Stages[0]
	if gen.Params.Int("n") != 5 {
		t.Errorf("-var n=5: n = %d", gen.Params.Int("n"))
	}
	if m := gen.Params.Model("model"); m == nil || m.Name != "model-alpha" || *m.Temperature != 0.7 {
		t.Errorf("each.value model: %+v", m)
	}
	if got := gen.Params.String("prompt"); got != "Ideas about Graphs, please.\n" {
		t.Errorf("templatefile prompt = %q", got)
	}
	judge := exp.Stages[2]
	if ref, ok := judge.Params["input"].(InputRef); !ok || ref.Address != `stage.echo.gen["alpha"]` {
		t.Errorf("fan-out input = %#v", judge.Params["input"])
	}
	if judge.Key != "alpha" || judge.Params.Quality("quality").Definition != "new methods" {
		t.Errorf("judge: key %q quality %+v", judge.Key, judge.Params.Quality("quality"))
	}
	if tags := exp.Stages[4].Params.Strings("tags"); strings.Join(tags, ",") != "alpha,0.2,a-0.2" {
		t.Errorf("setproduct/format tags = %v", tags)
	}
	rep := exp.Stages[8]
	cols, _ := rep.Params["columns"].([]InputRef)
	if len(cols) != 2 || cols[0].Address != `stage.echo.judge["alpha"]` {
		t.Errorf("report columns = %#v", cols)
	}
	if len(rep.Deps) != 4 {
		t.Errorf("report deps = %v", rep.Deps)
	}
	if exp.Name != "valid" || exp.Source == "" {
		t.Errorf("name %q source %q", exp.Name, exp.Source)
	}
	if got, want := ValueString(exp.Variables["n"]), "5"; got != want {
		t.Errorf("variable n = %s", got)
	}
}

func TestVarFile(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "vars.hcl")
	if err := os.WriteFile(vf, []byte("n = 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, diags := Load("testdata/valid", Options{VarFiles: []string{vf}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if n := exp.Stages[0].Params.Int("n"); n != 9 {
		t.Fatalf("n = %d, want 9 from the var file", n)
	}
	_, diags = Load("testdata/valid", Options{Vars: []string{"nope=1"}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `Undeclared variable "nope"`) {
		t.Fatalf("want undeclared variable error, got %v", diags)
	}
}

// TestSourceDigestIgnoresFolder checks that moving the experiment folder
// leaves its digest unchanged.
func TestSourceDigestIgnoresFolder(t *testing.T) {
	a, diags := Load("testdata/valid", Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	dir := filepath.Join(t.TempDir(), "elsewhere")
	copyDir(t, "testdata/valid", dir)
	b, diags := Load(dir, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if a.Source != b.Source {
		t.Fatal("source digest depends on the folder's path")
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
