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
		check := func(pos token.Pos, accessor, name string) {
			checked++
			at := fset.Position(pos)
			at.Filename, _ = filepath.Rel(root, at.Filename)
			kinds := stages.AccessorKinds[accessor]
			got, ok := declared[name]
			switch {
			case !ok:
				t.Errorf("%s: %s(%q) reads a param no stage type of the package declares", at, accessor, name)
			case kinds != nil && !slices.ContainsFunc(got, func(k stages.Kind) bool { return slices.Contains(kinds, k) }):
				t.Errorf("%s: %s(%q) reads a param declared as %v, which %s does not read", at, accessor, name, got, accessor)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if accessor, _, ok := accessorCall(n); ok {
					if lit, ok := stringLit(n.Args[0]); ok {
						check(n.Pos(), accessor, lit)
					}
				}
				// Helpers that read the param their second argument names.
				if fn := funcName(n.Fun); helperReads[fn] != "" && len(n.Args) >= 2 {
					if lit, ok := stringLit(n.Args[1]); ok {
						check(n.Pos(), helperReads[fn], lit)
					}
				}
			case *ast.RangeStmt:
				// for _, name := range []string{"a", "b"} { p.Input(name) }:
				// every listed name is read.
				v, ok := n.Value.(*ast.Ident)
				lits, isList := stringList(n.X)
				if !ok || !isList {
					return true
				}
				ast.Inspect(n.Body, func(m ast.Node) bool {
					call, ok := m.(*ast.CallExpr)
					if !ok {
						return true
					}
					accessor, _, isAcc := accessorCall(call)
					fn := funcName(call.Fun)
					var arg ast.Expr
					switch {
					case isAcc:
						arg = call.Args[0]
					case helperReads[fn] != "" && len(call.Args) >= 2:
						accessor, arg = helperReads[fn], call.Args[1]
					default:
						return true
					}
					if id, ok := arg.(*ast.Ident); ok && id.Name == v.Name {
						for _, l := range lits {
							check(call.Pos(), accessor, l)
						}
					}
					return true
				})
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

// helperReads are the stage packages' helpers that read the param named by
// their second argument, with the accessor each reads it through.
var helperReads = map[string]string{"RequireInput": "Input", "requireModel": "Model", "scoreNeed": "Has"}

// accessorCall reports a call of a Params accessor with one argument.
func accessorCall(call *ast.CallExpr) (accessor string, recv ast.Expr, ok bool) {
	sel, isSel := call.Fun.(*ast.SelectorExpr)
	if !isSel || len(call.Args) != 1 {
		return "", nil, false
	}
	if _, isAcc := stages.AccessorKinds[sel.Sel.Name]; !isAcc {
		return "", nil, false
	}
	if id, isID := sel.X.(*ast.Ident); isID && (id.Name == "strings" || id.Name == "strconv" || id.Name == "fmt" || id.Name == "sort") {
		return "", nil, false
	}
	return sel.Sel.Name, sel.X, true
}

func funcName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// stringList reads a []string{"a", "b"} literal.
func stringList(e ast.Expr) ([]string, bool) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	at, ok := cl.Type.(*ast.ArrayType)
	if !ok {
		return nil, false
	}
	if id, ok := at.Elt.(*ast.Ident); !ok || id.Name != "string" {
		return nil, false
	}
	var out []string
	for _, el := range cl.Elts {
		s, ok := stringLit(el)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
