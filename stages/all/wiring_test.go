package all_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	_ "github.com/ideaflow/ideaflow/stages/all"
)

// The wiring harness: testdata/wiring holds a minimal instance of every
// registered stage type (stages/TYPE.hcl, named "x", fed by other files'
// instances) and a dataset of every format (datasets/), over a shared
// preamble of mock models. An experiment is the preamble and the closure
// of the blocks it references, written to a folder of its own.

const wiringDir = "testdata/wiring"

// block is one block of the harness: its address and source.
type block struct {
	addr string
	src  []byte
	refs []string // the stage and dataset addresses its expressions name
}

type harness struct {
	preamble []byte
	blocks   map[string]*block
	data     string // testdata/wiring/data, absolute
	repo     string // the repository root, absolute
	store    cache.Store
	// runs memoises a run's outcome per experiment text: pairs that build
	// the same experiment (a param set to its example's own upstream) run
	// once.
	mu   sync.Mutex
	runs map[string]*outcome
}

func loadHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{blocks: map[string]*block{}, store: cache.NewMemory(), runs: map[string]*outcome{}}
	var err error
	if h.preamble, err = os.ReadFile(filepath.Join(wiringDir, "preamble.hcl")); err != nil {
		t.Fatal(err)
	}
	if h.data, err = filepath.Abs(filepath.Join(wiringDir, "data")); err != nil {
		t.Fatal(err)
	}
	if h.repo, err = filepath.Abs("../.."); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"datasets", "stages"} {
		files, err := filepath.Glob(filepath.Join(wiringDir, sub, "*.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b, err := parseBlock(f, src)
			if err != nil {
				t.Fatal(err)
			}
			if h.blocks[b.addr] != nil {
				t.Fatalf("%s: %s is declared twice", f, b.addr)
			}
			h.blocks[b.addr] = b
		}
	}
	return h
}

// parseBlock reads a file holding one dataset, stage or report block.
func parseBlock(name string, src []byte) (*block, error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	body := f.Body.(*hclsyntax.Body)
	if len(body.Blocks) != 1 {
		return nil, fmt.Errorf("%s: %d blocks, want one", name, len(body.Blocks))
	}
	b := body.Blocks[0]
	addr := b.Type + "." + strings.Join(b.Labels, ".")
	out := &block{addr: addr, src: src}
	seen := map[string]bool{}
	var walk func(*hclsyntax.Body)
	walk = func(body *hclsyntax.Body) {
		for _, a := range body.Attributes {
			for _, tr := range a.Expr.Variables() {
				if r := refOf(tr); r != "" && !seen[r] {
					seen[r] = true
					out.refs = append(out.refs, r)
				}
			}
		}
		for _, nb := range body.Blocks {
			walk(nb.Body)
		}
	}
	walk(b.Body)
	sort.Strings(out.refs)
	return out, nil
}

// refOf is the block address a traversal names: stage.T.N or dataset.N.
func refOf(tr hcl.Traversal) string {
	var parts []string
	for _, s := range tr {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			parts = append(parts, s.Name)
		case hcl.TraverseAttr:
			parts = append(parts, s.Name)
		}
		if len(parts) == 3 {
			break
		}
	}
	switch {
	case len(parts) >= 3 && parts[0] == "stage":
		return strings.Join(parts[:3], ".")
	case len(parts) >= 2 && parts[0] == "dataset":
		return strings.Join(parts[:2], ".")
	}
	return ""
}

// example is the address of type name's minimal instance.
func example(name string) string {
	if name == "report" || name == "expect" {
		return name + ".x" // a top-level block of its own
	}
	return "stage." + name + ".x"
}

// experiment is the preamble, then extra, then every block the roots and
// extra reference, transitively, in address order.
func (h *harness) experiment(extra *block, roots ...string) (string, error) {
	need := map[string]bool{}
	var visit func(addr string) error
	visit = func(addr string) error {
		if need[addr] {
			return nil
		}
		b := h.blocks[addr]
		if b == nil {
			return fmt.Errorf("no harness block %s", addr)
		}
		need[addr] = true
		for _, r := range b.refs {
			if err := visit(r); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := visit(r); err != nil {
			return "", err
		}
	}
	if extra != nil {
		for _, r := range extra.refs {
			if err := visit(r); err != nil {
				return "", err
			}
		}
	}
	addrs := make([]string, 0, len(need))
	for a := range need {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	var sb strings.Builder
	sb.Write(h.preamble)
	for _, a := range addrs {
		sb.WriteString("\n")
		sb.Write(h.blocks[a].src)
	}
	if extra != nil {
		sb.WriteString("\n")
		sb.Write(extra.src)
	}
	return sb.String(), nil
}

// rewired is type name's example renamed "under_test", with param set to
// upstream (a list of it for an Inputs param), edited in its source.
func (h *harness) rewired(name string, p stages.Param, upstream string) (*block, string, error) {
	ex := h.blocks[example(name)]
	f, diags := hclsyntax.ParseConfig(ex.src, ex.addr, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, "", diags
	}
	b := f.Body.(*hclsyntax.Body).Blocks[0]
	value := upstream
	if p.Kind == stages.Inputs {
		value = "[" + upstream + "]"
	}
	type edit struct {
		from, to int
		text     string
	}
	lr := b.LabelRanges[len(b.LabelRanges)-1]
	edits := []edit{{lr.Start.Byte, lr.End.Byte, `"under_test"`}}
	if a, ok := b.Body.Attributes[p.Name]; ok {
		r := a.Expr.Range()
		edits = append(edits, edit{r.Start.Byte, r.End.Byte, value})
	} else {
		at := b.CloseBraceRange.Start.Byte
		edits = append(edits, edit{at, at, "  " + p.Name + " = " + value + "\n"})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	src := append([]byte(nil), ex.src...)
	for _, e := range edits {
		src = append(src[:e.from], append([]byte(e.text), src[e.to:]...)...)
	}
	nb, err := parseBlock(ex.addr, src)
	if err != nil {
		return nil, "", err
	}
	return nb, strings.TrimSuffix(ex.addr, ".x") + ".under_test", nil
}

// outcome is what validate and a run said of one experiment.
type outcome struct {
	loadErr   string // the experiment did not load (a param's Accepts refuses the upstream)
	layoutErr string // Build refused it for another reason than its wiring
	refused   string // the wiring error validate gives, "" when it accepts
	// buildErr is Build's error about another block of the experiment than
	// the instance under test (its upstreams'): a harness block that does
	// not lay out, which no pair can be judged on.
	buildErr string
	// mayFail is validate's warning that the upstream gives the field on
	// some nodes only: the run may or may not fail some.
	mayFail string
	// upstreamNodes are the nodes of the upstream in the run.
	upstreamNodes int
	// willFail is the plan's count of the instance's items that will fail
	// for a field some dataset records lack.
	willFail int
	// missing are the items of the instance whose nodes failed for a
	// missing field in the run (layout errors of it included, as item "").
	missing map[string]bool
	// laidOutLate is a layout error of the instance when a refused wiring
	// is laid out anyway (at Build, or in the run after its expanding
	// inputs ran), other than a missing field.
	laidOutLate string
	// nodes are the instance's nodes in the run.
	nodes int
	// failures are every failure of the instance, for messages.
	failures []string
}

// wiringErrorSummary marks a wiring error (engine/schema.go's needError).
const wiringErrorSummary = "cannot read what"

// outcome validates and runs the experiment src; inst is the address whose
// failures count.
func (h *harness) outcome(t *testing.T, src, inst string, upstream ...string) *outcome {
	h.mu.Lock()
	if o, ok := h.runs[src+"\x00"+inst]; ok {
		h.mu.Unlock()
		return o
	}
	h.mu.Unlock()
	o := &outcome{missing: map[string]bool{}}
	defer func() {
		h.mu.Lock()
		h.runs[src+"\x00"+inst] = o
		h.mu.Unlock()
	}()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := []string{"data=" + h.data, "repo=" + h.repo}
	exp, diags := config.Load(dir, config.Options{Vars: vars})
	if diags.HasErrors() {
		o.loadErr = diags.Error()
		return o
	}
	g, diags := engine.Build(exp)
	willFail := false
	var others []string
	for _, d := range diags {
		if !strings.Contains(d.Summary, inst) {
			if d.Severity == hcl.DiagError {
				others = append(others, d.Summary+": "+d.Detail)
			}
			continue // about another instance of the experiment
		}
		switch {
		case d.Severity == hcl.DiagError && strings.Contains(d.Summary, wiringErrorSummary):
			o.refused = d.Summary + ": " + d.Detail
		case d.Severity == hcl.DiagError:
			o.layoutErr = d.Summary + ": " + d.Detail
		case strings.Contains(d.Summary, "may fail"):
			o.mayFail = d.Summary + ": " + d.Detail
		case strings.Contains(d.Summary, "will fail"):
			willFail = true
		}
	}
	if len(others) > 0 {
		o.buildErr = strings.Join(others, "\n")
		return o
	}
	if o.layoutErr != "" {
		return o
	}
	if o.refused != "" {
		// Lay the refused wiring out anyway, to see what a run does.
		if g, diags = engine.BuildWith(exp, engine.BuildOptions{SkipWiringCheck: true}); diags.HasErrors() {
			o.laidOutLate = diags.Error()
			return o
		}
	}
	e := &engine.Engine{Store: h.store, Exec: engine.NewLocalExecutor(exp.LLMProviders(), zerolog.Nop())}
	if willFail {
		for _, n := range e.Plan(g).Summary.Stages[inst].WillFail {
			o.willFail += n
		}
		// A graph walks once: build it again for the run.
		if g, diags = engine.BuildWith(exp, engine.BuildOptions{SkipWiringCheck: true}); diags.HasErrors() {
			t.Fatalf("the second Build of an experiment the first laid out: %s", diags.Error())
		}
	}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
	var ie *engine.InputError
	switch {
	case err != nil && asInputError(err, &ie):
		for _, d := range ie.Diags {
			msg := d.Summary + ": " + d.Detail
			o.failures = append(o.failures, msg)
			switch {
			case strings.Contains(msg, stages.ErrMissingField.Error()):
				o.missing[""] = true
			case strings.Contains(d.Summary, strings.TrimPrefix(inst, "stage.")) || strings.Contains(d.Summary, inst):
				o.laidOutLate = msg
			}
		}
	case err != nil:
		t.Fatalf("run: %v", err)
	}
	if sum == nil {
		return o
	}
	o.nodes = sum.Stages[inst].Total
	for _, u := range upstream {
		o.upstreamNodes += sum.Stages[u].Total
	}
	for _, f := range sum.Failures {
		if !strings.HasPrefix(f.Address, inst+"/") {
			continue
		}
		o.failures = append(o.failures, f.Address+": "+f.Error)
		if strings.Contains(f.Error, stages.ErrMissingField.Error()) {
			item, _, _ := strings.Cut(strings.TrimPrefix(f.Address, inst+"/"), "/")
			o.missing[item] = true
		}
	}
	return o
}

func asInputError(err error, target **engine.InputError) bool {
	ie, ok := err.(*engine.InputError)
	if ok {
		*target = ie
	}
	return ok
}

// upstreams lists the candidates for an input: every stage type's
// example (a report is no input) and every dataset.
func (h *harness) upstreams() []string {
	var out []string
	for _, name := range stages.Names() {
		if name != "report" && name != "expect" { // no input: nothing reads them
			out = append(out, example(name))
		}
	}
	for addr := range h.blocks {
		if strings.HasPrefix(addr, "dataset.") {
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out
}

func admits(p stages.Param, upstream string) bool {
	if len(p.Accepts) == 0 {
		return true
	}
	kind := "dataset"
	if strings.HasPrefix(upstream, "stage.") {
		kind = strings.Split(upstream, ".")[1]
	}
	for _, a := range p.Accepts {
		if a == kind {
			return true
		}
	}
	return false
}

// TestWiringHarnessIsComplete: every registered stage type has a minimal
// instance, and each one runs on the mock without a failure.
func TestWiringHarnessIsComplete(t *testing.T) {
	h := loadHarness(t)
	for _, name := range stages.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr := example(name)
			if h.blocks[addr] == nil {
				t.Fatalf("no minimal instance of %s: add %s/stages/%s.hcl with a block named \"x\"", name, wiringDir, name)
			}
			src, err := h.experiment(nil, addr)
			if err != nil {
				t.Fatal(err)
			}
			o := h.outcome(t, src, addr)
			if o.loadErr != "" || o.buildErr != "" || o.layoutErr != "" || o.refused != "" || len(o.failures) > 0 {
				t.Fatalf("the minimal %s does not run cleanly:\nload: %s\nupstream layout: %s\nlayout: %s\nwiring: %s\nfailures:\n%s", name, o.loadErr, o.buildErr, o.layoutErr, o.refused, strings.Join(o.failures, "\n"))
			}
		})
	}
}

// TestValidateAcceptsWhatRuns is the table-driven test over every pair of
// registered stage types (and dataset formats): for each stage type, each
// of its Input and Inputs params, and each candidate upstream that the
// param's Accepts admits, validate refuses the wiring (an error at the
// param) if and only if the run on the mock fails a node of the instance
// for a missing field; where it warns that some items will fail (a field
// some dataset records lack), exactly the items the plan counted fail.
// Pairs Build refuses for another reason (a layout error) cannot run and
// are counted, not judged.
func TestValidateAcceptsWhatRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every admitted pair of stage types on the mock")
	}
	h := loadHarness(t)
	var mu sync.Mutex
	counts := map[string]int{}
	verbose := os.Getenv("WIRING_VERBOSE") != ""
	count := func(k string) {
		mu.Lock()
		counts[k]++
		mu.Unlock()
	}
	names := stages.Names()
	for _, name := range names {
		typ, _ := stages.Lookup(name)
		for _, p := range typ.Params() {
			if p.Kind != stages.Input && p.Kind != stages.Inputs {
				continue
			}
			for _, up := range h.upstreams() {
				if !admits(p, up) {
					count("not admitted by Accepts")
					continue
				}
				t.Run(name+"."+p.Name+"<-"+up, func(t *testing.T) {
					t.Parallel()
					b, inst, err := h.rewired(name, p, up)
					if err != nil {
						t.Fatal(err)
					}
					src, err := h.experiment(b, up)
					if err != nil {
						t.Fatal(err)
					}
					o := h.outcome(t, src, inst, up)
					if verbose {
						t.Logf("PAIR %s load %q layout %q refused %q mayFail %q willFail %d missing %v late %q", t.Name(), o.loadErr, o.layoutErr, o.refused, o.mayFail, o.willFail, keys(o.missing), o.laidOutLate)
					}
					switch {
					case o.buildErr != "":
						t.Fatalf("Build refuses an upstream block of the experiment (a harness block that does not lay out):\n%s", o.buildErr)
					case o.loadErr != "":
						count("refused at load") // a dataset check (no target has references)
						return
					case o.layoutErr != "":
						count("refused at layout")
						return
					case o.refused != "" && len(o.missing) > 0:
						count("refused: the run fails for a missing field")
					case o.refused != "" && o.laidOutLate != "":
						// The run lays it out only once its upstream ran, and
						// then refuses it: validate says so before any call.
						count("refused: the run refuses it at layout")
					case o.refused != "" && (o.nodes == 0 || o.upstreamNodes == 0 && !strings.HasPrefix(up, "dataset.")):
						count("refused: no node reads the upstream on the mock")
					case o.refused != "" && typeMismatch(o.failures):
						// The field is there under another JSON type
						// (soundness_methods' "dropped" counts methods;
						// a judgement's is true or absent): a decode error.
						count("refused: the run fails to decode it")
					case o.refused != "":
						t.Errorf("validate refuses the wiring, but the run fails no node for a missing field:\n%s\nfailures:\n%s", o.refused, strings.Join(o.failures, "\n"))
					case o.mayFail != "":
						count("accepted with a warning: the upstream gives the field on some nodes only")
					case o.willFail > 0:
						count("accepted, some items will fail")
						if len(o.missing) != o.willFail {
							t.Errorf("plan says %d item(s) will fail; the run failed %d for a missing field: %v\n%s", o.willFail, len(o.missing), keys(o.missing), strings.Join(o.failures, "\n"))
						}
					default:
						count("accepted")
						if len(o.missing) > 0 {
							t.Errorf("validate accepts the wiring, but the run fails for a missing field:\n%s", strings.Join(o.failures, "\n"))
						}
					}
				})
			}
		}
	}
	t.Cleanup(func() {
		b, _ := json.Marshal(counts)
		t.Logf("pairs: %s", b)
	})
}

// typeMismatch reports a failure that decodes a field of another type.
func typeMismatch(failures []string) bool {
	for _, f := range failures {
		if strings.Contains(f, "cannot unmarshal") {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestStagesGiveWhatTheyDeclare runs every type's minimal instance and
// compares its nodes' outputs with its schema's Gives: every top-level
// field an output has is declared (unless the schema is Open), and every
// field not marked Optional is in every output of an item not dropped.
func TestStagesGiveWhatTheyDeclare(t *testing.T) {
	h := loadHarness(t)
	for _, name := range stages.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr := example(name)
			src, err := h.experiment(nil, addr)
			if err != nil {
				t.Fatal(err)
			}
			if o := h.outcome(t, src, addr); len(o.failures) > 0 || o.buildErr != "" || o.layoutErr != "" || o.loadErr != "" {
				t.Fatalf("the minimal %s does not run: %v %s %s %s", name, o.failures, o.buildErr, o.layoutErr, o.loadErr)
			}
			outs := h.outputs(t, src, addr)
			if len(outs) == 0 && !zeroOnTheMock[name] {
				t.Fatalf("the minimal %s has no outputs to check", name)
			}
			seen := map[string]int{}
			for _, out := range outs {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(out, &m); err != nil {
					t.Fatalf("an output is not a JSON object: %.80s", out)
				}
				for k := range m {
					seen[k]++
				}
			}
			exp, diags := config.Load(h.dirOf(t, src), config.Options{Vars: h.vars()})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			g, diags := engine.Build(exp)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			sch, ok := g.SchemaOf(addr)
			if !ok {
				t.Fatalf("%s declares no schema (stages.Declarer); its outputs have %v", name, keysOf(seen))
			}
			declared := map[string]stages.Field{}
			for _, f := range sch.Gives {
				declared[f.Name] = f
			}
			for k := range seen {
				if _, ok := declared[k]; !ok && !sch.Open {
					t.Errorf("outputs have %q, which the schema does not give (it gives %v)", k, fieldNames(sch.Gives))
				}
			}
			for _, f := range sch.Gives {
				if f.Only != "" && seen[f.Name] == 0 {
					t.Errorf("no output has %q, which the schema gives on %s", f.Name, f.Only)
				}
			}
			for _, out := range outs {
				if stages.HasField(out, "dropped") && string(mustMember(out, "dropped")) == "true" {
					continue
				}
				for _, f := range sch.Gives {
					if !f.Optional && f.Only == "" && !hasMember(out, f.Name) {
						t.Errorf("an output lacks %q, which the schema gives without Optional: %.200s", f.Name, out)
					}
				}
			}
		})
	}
}

// zeroOnTheMock are the types whose minimal instance has no node on the
// mock, so their Gives go unchecked here: resolve_references expands each
// review's References section, which the mock's reviews do not write
// (stages/scholareval's tests check it against scripted reviews).
var zeroOnTheMock = map[string]bool{"resolve_references": true}

func keysOf(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func fieldNames(fs []stages.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func hasMember(doc []byte, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(doc, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

func mustMember(doc []byte, name string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(doc, &m)
	return m[name]
}

func (h *harness) vars() []string { return []string{"data=" + h.data, "repo=" + h.repo} }

// dirOf writes src to a folder of its own.
func (h *harness) dirOf(t *testing.T, src string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// outputs reads every node output of instance addr from the harness's
// cache, after a run of src.
func (h *harness) outputs(t *testing.T, src, addr string) [][]byte {
	exp, diags := config.Load(h.dirOf(t, src), config.Options{Vars: h.vars()})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.Build(exp)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	e := &engine.Engine{Store: h.store}
	views, err := e.Inspect(e.Plan(g), addr, engine.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, v := range views {
		if v.Result == nil {
			t.Fatalf("%s is not cached after its run (%s)", v.Address, v.Status)
		}
		out = append(out, v.Result.Output)
	}
	return out
}

// TestStagesReadOnlyWhatTheyDeclare runs every type's minimal instance
// twice: as it is, and with each node handed only the fields its stage's
// schema reads of each input, needed or optional
// (engine.BuildOptions.ProjectInputs). Every node of the experiment must
// give the same output both times: a stage that reads a field it does not
// declare gives another output (or fails) when it is cut away.
func TestStagesReadOnlyWhatTheyDeclare(t *testing.T) {
	h := loadHarness(t)
	for _, name := range stages.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr := example(name)
			src, err := h.experiment(nil, addr)
			if err != nil {
				t.Fatal(err)
			}
			if o := h.outcome(t, src, addr); len(o.failures) > 0 || o.buildErr != "" || o.layoutErr != "" || o.loadErr != "" {
				t.Fatalf("the minimal %s does not run: %v %s %s %s", name, o.failures, o.buildErr, o.layoutErr, o.loadErr)
			}
			want := h.allOutputs(t, src, h.store, engine.BuildOptions{})
			// Outputs computed from cut-down inputs must not meet the real
			// ones in a cache: a store of their own.
			store := cache.NewMemory()
			exp, diags := config.Load(h.dirOf(t, src), config.Options{Vars: h.vars()})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			g, diags := engine.BuildWith(exp, engine.BuildOptions{ProjectInputs: true})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			e := &engine.Engine{Store: store, Exec: engine.NewLocalExecutor(exp.LLMProviders(), zerolog.Nop())}
			sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range sum.Failures {
				t.Errorf("%s: %s", f.Address, f.Error)
			}
			got := h.allOutputs(t, src, store, engine.BuildOptions{ProjectInputs: true})
			for _, a := range slices.Sorted(maps.Keys(want)) {
				if untimed(got[a]) != untimed(want[a]) {
					t.Errorf("%s gives another output when its stage reads only its declared fields:\n  real: %.300s\n  cut:  %.300s", a, want[a], got[a])
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d nodes with cut inputs, %d without", len(got), len(want))
			}
		})
	}
}

// allOutputs reads the output of every stage node of src from store, by
// address.
func (h *harness) allOutputs(t *testing.T, src string, store cache.Store, opts engine.BuildOptions) map[string]string {
	exp, diags := config.Load(h.dirOf(t, src), config.Options{Vars: h.vars()})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g, diags := engine.BuildWith(exp, opts)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	e := &engine.Engine{Store: store}
	p := e.Plan(g)
	out := map[string]string{}
	for _, addr := range g.StageOrder() {
		views, err := e.Inspect(p, addr, engine.InspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range views {
			if v.Result != nil {
				out[v.Address] = string(v.Result.Output)
			}
		}
	}
	return out
}

// untimed is an output without its "retrieved" member: when a literature
// source answered is recorded, not computed, and differs between two runs.
func untimed(out string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(out), &m) != nil || m == nil {
		return out
	}
	delete(m, "retrieved")
	b, _ := json.Marshal(m)
	return string(b)
}
