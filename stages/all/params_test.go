package all

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

const module = "github.com/ideaflow/ideaflow"

// TestStagesReadOnlyDeclaredParams reads the source of every package under
// stages/ and fails on a param accessor call (p.Int("n"), inst.Params.String
// ("prompt"), stages.Declared's alike) whose name no stage type registered
// by that package declares with a kind the accessor reads: a misspelt or
// undeclared name would read as the zero value, silently. A package that
// registers no type (shared helpers) is checked against every type's params.
func TestStagesReadOnlyDeclaredParams(t *testing.T) {
	byPkg := map[string]map[string][]stages.Kind{} // package -> param -> kinds declared
	all := map[string][]stages.Kind{}
	for _, name := range stages.Names() {
		typ, _ := stages.Lookup(name)
		pkg := reflect.TypeOf(typ).PkgPath()
		if byPkg[pkg] == nil {
			byPkg[pkg] = map[string][]stages.Kind{}
		}
		for _, p := range typ.Params() {
			byPkg[pkg][p.Name] = append(byPkg[pkg][p.Name], p.Kind)
			all[p.Name] = append(all[p.Name], p.Kind)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(filepath.Join(root, "stages"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// stages/llm is provider kinds: their settings (c.p.Int("max_batch"))
			// are checked against llm's own registry, not stage params.
			// stages/stagetest's types are test-only, registered only in the
			// binaries of the tests that import them (not this one).
			if d.Name() == "testdata" || path == filepath.Join(root, "stages", "llm") || path == filepath.Join(root, "stages", "stagetest") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		declared := byPkg[module+"/"+filepath.ToSlash(rel)]
		if declared == nil {
			declared = all
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if filepath.ToSlash(rel) == "stages" && (f.Name.Name != "stages" || strings.HasSuffix(path, "params.go") || strings.HasSuffix(path, "stage.go")) {
			return nil // the accessors themselves
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			kinds, isAccessor := stages.AccessorKinds[sel.Sel.Name]
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !isAccessor || !ok || lit.Kind != token.STRING {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "strings" || id.Name == "strconv" || id.Name == "fmt") {
				return true
			}
			name, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			checked++
			at := fset.Position(call.Pos())
			at.Filename, _ = filepath.Rel(root, at.Filename)
			got, ok := declared[name]
			switch {
			case !ok:
				t.Errorf("%s: %s(%q) reads a param no stage type of the package declares", at, sel.Sel.Name, name)
			case kinds != nil && !slices.ContainsFunc(got, func(k stages.Kind) bool { return slices.Contains(kinds, k) }):
				t.Errorf("%s: %s(%q) reads a param declared as %v, which %s does not read", at, sel.Sel.Name, name, got, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("only %d accessor calls found: the scan missed the stage packages", checked)
	}
}
