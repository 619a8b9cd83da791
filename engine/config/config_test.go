package config

import (
	"bufio"
	"fmt"
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
		{Name: "n", Kind: stages.Int, Default: 3, Min: 1, Max: 100},
		{Name: "prompt", Kind: stages.Template},
		{Name: "tags", Kind: stages.StringList},
	}})
	stages.Register(checkedType{testType{name: "checked", params: []stages.Param{
		{Name: "input", Kind: stages.Input, Required: true, Accepts: []string{"dataset"}},
		{Name: "intent", Kind: stages.String, Default: "unheard"},
	}}})
	stages.Register(testType{name: "report", params: []stages.Param{
		{Name: "rows", Kind: stages.Inputs},
		{Name: "columns", Kind: stages.Inputs},
		{Name: "title", Kind: stages.String},
	}})
}

// checkedType checks its intent param against the dataset's intents.
type checkedType struct{ testType }

func (checkedType) DatasetFields() []string { return []string{"references.intents"} }
func (checkedType) CheckDataset(p stages.Params, values map[string][]string) []*stages.ParamError {
	for _, v := range values["references.intents"] {
		if v == p.String("intent") {
			return nil
		}
	}
	return []*stages.ParamError{{Param: "intent", Err: fmt.Errorf("%q is not among %s", p.String("intent"), strings.Join(values["references.intents"], ", "))}}
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

// TestVarValueErrors checks that an error about a value typed on the command
// line names the -var (or -var-file line) as typed, and points at the
// attribute that uses it.
func TestVarValueErrors(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "vars.hcl")
	if err := os.WriteFile(vf, []byte("k = 1\nn = 1e9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const use = "      14 |   n     = var.n\n"
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"too big", Options{Vars: []string{"k=1", "n=1e19"}},
			"testdata/vars/main.hcl:14:11: error: Invalid n\n    -var n=1e19: n must be from 1 to 100, got 1e+19. Give a value in that range.\n" + use},
		{"not a number", Options{Vars: []string{"k=1", "n=abc"}},
			"testdata/vars/main.hcl:14:11: error: Wrong type for n\n    -var n=abc: n must be a number, got string. For example: n = 3.\n" + use},
		{"not whole", Options{Vars: []string{"k=1", "n=2.5"}},
			"testdata/vars/main.hcl:14:11: error: Wrong type for n\n    -var n=2.5: n must be a whole number, got 2.5. For example: n = 3.\n" + use},
		{"from a var file", Options{VarFiles: []string{vf}},
			"testdata/vars/main.hcl:14:11: error: Invalid n\n    -var-file " + vf + ":2: n must be from 1 to 100, got 1000000000. Give a value in that range.\n" + use},
		{"typed variable", Options{Vars: []string{"k=abc", "n=2"}},
			"testdata/vars/main.hcl:3:1: error: Wrong type for variable \"k\"\n    -var k=abc: The value given for \"k\" does not fit its type number: a number is required. Give a value of that type.\n       3 | variable \"k\" {\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := Load("testdata/vars/main.hcl", tc.opts)
			var b strings.Builder
			WriteDiagnostics(&b, diags, SourceFiles("testdata/vars/main.hcl"))
			if b.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestCheckNodes(t *testing.T) {
	si := &StageInstance{Address: `stage.echo.a["x"]`, DeclRange: hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: 3, Column: 1}}}
	tests := []struct {
		name              string
		max, have, adding int
		want              string
	}{
		{"within the default", 0, DefaultMaxNodes - 10, 10, ""},
		{"over the default", 0, 1000, DefaultMaxNodes, `stage.echo.a["x"] lays out 10000000 nodes after 1000 others: 10001000 in all, more than the limit of 10000000. Lower what multiplies them (a dataset's limit, n, permutations), or raise the limit with settings { max_nodes = 10001000 } in the experiment.`},
		{"over a setting", 5, 3, 3, `stage.echo.a["x"] lays out 3 nodes after 3 others: 6 in all, more than the limit of 5. Lower what multiplies them (a dataset's limit, n, permutations), or raise the limit with settings { max_nodes = 6 } in the experiment.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			diags := (&Experiment{MaxNodes: tc.max}).CheckNodes(si, tc.have, tc.adding)
			got := ""
			if len(diags) == 1 && diags[0].Summary == "Too many nodes" && diags[0].Subject.Start.Line == 3 {
				got = diags[0].Detail
			} else if len(diags) > 0 {
				got = diags.Error()
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exp.hcl")
	copyDir(t, "testdata/valid", filepath.Dir(path))
	src := "settings {\n  max_nodes = 20000000\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, diags := Load(filepath.Dir(path), Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if exp.MaxNodes != 20000000 {
		t.Errorf("MaxNodes = %d", exp.MaxNodes)
	}
	exp, _ = Load("testdata/valid", Options{})
	if exp.MaxNodes != DefaultMaxNodes {
		t.Errorf("default MaxNodes = %d", exp.MaxNodes)
	}
}

// TestMessagesOnce checks that a mistake is reported once: not once per
// for_each instance, and not again as follow-on errors in what reads the
// block it broke.
func TestMessagesOnce(t *testing.T) {
	tests := []struct {
		path string
		want string
	}{
		{"testdata/messages/repeated.hcl", `testdata/messages/repeated.hcl:9:14: error: Wrong type for tags
    tags must be a list of strings, got string. For example: tags = ["a", "b"].
       9 |   tags     = "one"
`},
		{"testdata/messages/followon.hcl", `testdata/messages/followon.hcl:7:14: error: Wrong type for for_each
    for_each must be a map, an object or a set of strings; got number. For example: for_each = { for m in [model.a, model.b] : m.name => m }.
       7 |   for_each = 3
`},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			_, diags := Load(tc.path, Options{})
			var b strings.Builder
			WriteDiagnostics(&b, diags, SourceFiles(tc.path))
			if b.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}

// TestTemplateFileNamed: a Template param read with file() renders with
// errors naming that file, as the user would open it.
func TestTemplateFileNamed(t *testing.T) {
	exp, diags := Load("testdata/templates/main.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, err := stages.Render("stage.echo.a prompt", exp.Stages[0].Params.String("prompt"), nil)
	want := "parse template stage.echo.a prompt: template: testdata/templates/prompts/broken.tmpl:3: unclosed action started at testdata/templates/prompts/broken.tmpl:2"
	if err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
}

// TestDatasetChecker: a stage type that checks params against its dataset's
// values gets them on loading, and its complaints are warnings at the param
// (at the block when the param was left at its default).
func TestDatasetChecker(t *testing.T) {
	exp, diags := Load("testdata/intents/main.hcl", Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var b strings.Builder
	WriteDiagnostics(&b, diags, exp.Files)
	want := `testdata/intents/main.hcl:8:12: warning: intent matches nothing in dataset.targets
    stage.checked.typo: "backgorund" is not among background, methodology, result. Use one of those values, or "" for any.
       8 |   intent = "backgorund"
testdata/intents/main.hcl:11:1: warning: intent matches nothing in dataset.targets
    stage.checked.default: "unheard" is not among background, methodology, result. Use one of those values, or "" for any.
      11 | stage "checked" "default" {
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// A quality indicator may be just its name, as the IdeaBench paper's default
// prompt has it; an empty definition is still an error.
func TestQualityNameAlone(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, "testdata/valid", dir)
	if err := os.WriteFile(filepath.Join(dir, "q.hcl"), []byte("quality \"feasibility\" {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, diags := Load(dir, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if q := exp.Qualities["feasibility"]; q == nil || q.Name != "feasibility" || q.Definition != "" {
		t.Fatalf("quality: %+v", q)
	}
	if err := os.WriteFile(filepath.Join(dir, "q.hcl"), []byte("quality \"feasibility\" {\n  definition = \"  \"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, diags := Load(dir, Options{}); !diags.HasErrors() || !strings.Contains(diags.Error(), "Empty quality definition") {
		t.Fatalf("an empty definition: %v", diags)
	}
}
