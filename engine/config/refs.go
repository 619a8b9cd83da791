package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// referenceRoots maps the first name of a reference to the kind it names.
var referenceRoots = map[string]string{
	"var": "variable", "local": "local", "provider": "provider", "model": "model",
	"dataset": "dataset", "quality": "quality", "stage": "stage",
}

// analyse finds every reference in every declaration, checks it points at
// something declared, and orders the declarations so that each comes after
// what it references (the block-level DAG). Cycles are errors.
func (l *loader) analyse() {
	for _, d := range l.decls {
		for _, e := range d.expressions() {
			inForEach := d.forEach != nil && e == d.forEach.Expr
			for _, tr := range e.Variables() {
				if r, ok := l.resolveTraversal(d, tr, inForEach); ok {
					d.refs = append(d.refs, r)
				}
			}
		}
	}
	l.sortDecls()
}

func (l *loader) resolveTraversal(d *decl, tr hcl.Traversal, inForEach bool) (ref, bool) {
	root := tr.RootName()
	rng := tr.SourceRange()
	if root == "each" {
		switch {
		case (d.kind != "stage" && d.kind != "expect") || d.forEach == nil:
			l.errorf(&rng, "Reference to each outside for_each",
				"each.key and each.value exist only in a stage or expect block that sets for_each. Add for_each to %s or use a direct reference.", d.addr)
		case inForEach:
			l.errorf(&rng, "each in its own for_each",
				"for_each cannot refer to each: it is what defines it. Use a variable, a local or a literal collection.")
		}
		return ref{}, false
	}
	kind, known := referenceRoots[root]
	if !known {
		l.errorf(&rng, fmt.Sprintf("Unknown reference %q", root),
			"A reference starts with var., local., provider., model., dataset., quality. or stage.; %q is none of these. Fix the name, or quote it if you meant a string.", root)
		return ref{}, false
	}
	names := traversalNames(tr)
	want := 2
	if kind == "stage" {
		want = 3
	}
	if len(names) < want {
		example := root + ".NAME"
		if kind == "stage" {
			example = "stage.TYPE.NAME"
		}
		l.errorf(&rng, "Incomplete reference", "A %s reference has the form %s.", kind, example)
		return ref{}, false
	}
	addr := strings.Join(names[:want], ".")
	if _, ok := l.decls[addr]; !ok {
		l.errorf(&rng, "Reference to undeclared "+kind,
			"%s is not declared in this experiment.%s", addr, l.suggest(kind, addr))
		return ref{}, false
	}
	if addr == d.addr {
		l.errorf(&rng, "Self reference", "%s refers to itself. A block cannot use its own value.", d.addr)
		return ref{}, false
	}
	return ref{to: addr, rng: rng}, true
}

// traversalNames returns the leading attribute names of a traversal.
func traversalNames(tr hcl.Traversal) []string {
	var out []string
	for _, step := range tr {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			out = append(out, s.Name)
		case hcl.TraverseAttr:
			out = append(out, s.Name)
		default:
			return out
		}
	}
	return out
}

func (l *loader) suggest(kind, addr string) string {
	prefix := addr[:strings.LastIndex(addr, ".")+1]
	var same []string
	for a, d := range l.decls {
		if d.kind == kind || (kind == "variable" && d.kind == "variable") {
			if strings.HasPrefix(a, prefix) || kind != "stage" {
				same = append(same, a)
			}
		}
	}
	sort.Strings(same)
	if len(same) == 0 {
		return fmt.Sprintf(" Declare it (e.g. a %s block) or fix the name.", kind)
	}
	if len(same) > 8 {
		same = append(same[:8], "...")
	}
	return fmt.Sprintf(" Declare it or use one that exists: %s.", strings.Join(same, ", "))
}

// sortDecls orders declarations topologically (file order among equals) and
// reports every cycle once, at the reference that closes it.
func (l *loader) sortDecls() {
	all := make([]*decl, 0, len(l.decls))
	for _, d := range l.decls {
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].order < all[j].order })

	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var stack []*decl
	var visit func(d *decl)
	visit = func(d *decl) {
		state[d.addr] = visiting
		stack = append(stack, d)
		for _, r := range d.refs {
			next := l.decls[r.to]
			switch state[r.to] {
			case unvisited:
				visit(next)
			case visiting:
				l.reportCycle(stack, next, r)
			}
		}
		stack = stack[:len(stack)-1]
		state[d.addr] = done
		l.sorted = append(l.sorted, d)
	}
	for _, d := range all {
		if state[d.addr] == unvisited {
			visit(d)
		}
	}
}

func (l *loader) reportCycle(stack []*decl, to *decl, closing ref) {
	start := 0
	for i, d := range stack {
		if d == to {
			start = i
		}
	}
	var path []string
	for _, d := range stack[start:] {
		path = append(path, d.addr)
	}
	path = append(path, to.addr)
	l.errorf(&closing.rng, "Dependency cycle",
		"%s. Each block must come after what it refers to: remove one of these references.", strings.Join(path, " -> "))
}
