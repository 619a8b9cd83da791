// Package engine turns a decoded experiment into an item-level DAG of nodes,
// keys every node by content, and plans or runs it against the cache.
package engine

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
)

// Graph is an experiment laid out as nodes. Nodes are stored in a topological
// order: every node comes after the nodes it depends on. The graph only
// grows: instances whose inputs are not final yet are laid out later, and
// Expander instances append an item's nodes once the item's inputs settle
// (see grow), always after every node they depend on, so the order holds.
type Graph struct {
	Exp       *config.Experiment
	Instances []*Instance
	Nodes     []*Node
	// dependents[i] lists the nodes that read node i (CSR form keeps 200k nodes compact).
	depStart []int32
	depList  []int32
	byAddr   map[string]*Instance
	// hasField memoises which dataset records have a field (checkNeeds).
	hasField map[recordField]bool
	project  bool // BuildOptions.ProjectInputs
}

// Instance is a stage instance (or a dataset) with its nodes.
type Instance struct {
	Address string
	Block   string
	Type    string // stage type, or "dataset"
	Version string
	Key     string
	Params  stages.Params
	Up      *stages.Upstream
	// nodes maps each position of Up.Nodes to the node's index in
	// Graph.Nodes. An instance's nodes are contiguous unless it expands.
	nodes []int32
	Count int
	// paramParts are the key parts of this instance's params, used by compute nodes.
	paramParts []namedPart
	// about are the params field by field, stored beside each record (not
	// key material) so a later plan can name what changed.
	about    []namedPart
	memoBase [32]byte
	// answerers digests who answers each of the instance's model params
	// (in param order), for its memo: see memoBase.
	answerers [32]byte
	// providers are the providers of every model this instance or anything upstream uses.
	providers map[string]bool
	source    bool // a dataset: its nodes are given, never run
	cfg       *config.StageInstance

	// inputs maps each Input param name (and "name\x00address" for each
	// upstream of an Inputs param) to the upstream instance.
	inputs   map[string]*Instance
	laidOut  bool // Layout has run (always true for datasets)
	stInst   *stages.Instance
	expander stages.Expander // nil unless the stage type expands
	expanded map[string]bool // items expanded so far (expanders only)
	final    bool            // no node will be added any more
	// willFail are the needs some items cannot meet (checkNeeds): plan
	// counts those items as failing.
	willFail []willFail
	// keep is, under BuildOptions.ProjectInputs, the fields each input
	// (by Dep.Input) is cut down to before Prepare or Expand reads it.
	keep     map[string]map[string]bool
	calls    bool // its nodes likely make model calls (see guessWork): they are resolved first
	services bool // its nodes likely make service calls
	// model is the model the instance's nodes call, for estimates before
	// they are prepared: its first chat model param in declaration order,
	// else its first service model param (modelService).
	model        *stages.Model
	modelService bool
}

// noteModel offers a model param's value for Instance.model.
func (inst *Instance) noteModel(m *stages.Model, service bool) {
	if m != nil && (inst.model == nil || (inst.modelService && !service)) {
		inst.model, inst.modelService = m, service
	}
}

// Node is one unit of caching and scheduling.
type Node struct {
	Inst    *Instance
	Spec    stages.Node
	Deps    []int32
	Address string
	// expanded marks a node an Expander added: a compute child is keyed on
	// its item and label, not its slot.
	expanded bool
	// expandedFrom digests the outputs its Expand call read (expanded nodes
	// only). It is part of the node's memo input key, never of its key: a
	// child's request may carry more of those outputs than its label and
	// deps say (the method's text, a retrieved paper), so a memo hit must
	// not skip Prepare once they changed; Prepare then finds an unchanged
	// request's answer by its key.
	expandedFrom *[32]byte
	// output and outputDigest are set for dataset nodes (the item record).
	output       []byte
	outputDigest [32]byte
}

// Build lays out the experiment: loads datasets, lays out every stage
// instance whose inputs are final and wires item-level edges. Instances
// downstream of an Expander are laid out later, by grow. Errors carry the
// source range of the block or param at fault.
func Build(exp *config.Experiment) (*Graph, hcl.Diagnostics) {
	return BuildWith(exp, BuildOptions{})
}

// BuildOptions change what Build checks.
type BuildOptions struct {
	// SkipWiringCheck lays out a wiring checkNeeds would refuse, so that a
	// test can see what running it does (stages/all's wiring test: validate
	// refuses exactly what would fail for a missing field). The CLI never
	// sets it.
	SkipWiringCheck bool
	// ProjectInputs hands every node only the fields its stage's schema
	// reads of each input, needed or when present (and the drop
	// convention), so that a test can
	// check a stage reads no field it does not declare (stages/all). The
	// outputs computed so are not what the stages give: never share their
	// store. The CLI never sets it.
	ProjectInputs bool
	// LayAhead, when more than 0, stops laying out instances once the graph
	// has that many nodes and an instance that asks a model is among them:
	// the rest are declared (and their wiring checked) but laid out by the
	// walk, as an expander's dependents are, once its first round has
	// walked what is laid out. A run's plan sends calls as
	// it finds them (early.go), so at 10^6 nodes the first call leaves
	// after the first instances' layout, not every node's. What a layout
	// refuses is then found during the plan, after those calls: a run sets
	// it, never validate or plan, whose node counts are Build's.
	LayAhead int
}

// DefaultLayAhead is the run's BuildOptions.LayAhead: below it (every
// experiment but the largest) a run lays out the whole graph first, as
// plan does.
const DefaultLayAhead = 100_000

// BuildWith is Build with options.
func BuildWith(exp *config.Experiment, opts BuildOptions) (*Graph, hcl.Diagnostics) {
	g := &Graph{Exp: exp, byAddr: map[string]*Instance{}, project: opts.ProjectInputs}
	var diags hcl.Diagnostics

	dsNames := make([]string, 0, len(exp.Datasets))
	for n := range exp.Datasets {
		dsNames = append(dsNames, n)
	}
	sort.Strings(dsNames)
	for _, n := range dsNames {
		ds := exp.Datasets[n]
		items, err := ds.Items()
		if errors.Is(err, config.ErrReported) {
			continue
		}
		if err != nil {
			r := ds.DeclRange
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Cannot load dataset %q", n),
				Detail: fmt.Sprintf("%s. Fix the file or the dataset's format/path.", err), Subject: &r})
			continue
		}
		inst := &Instance{Address: "dataset." + n, Block: "dataset." + n, Type: "dataset", source: true, providers: map[string]bool{},
			laidOut: true, final: true}
		inst.Up = &stages.Upstream{Address: inst.Address, Type: "dataset"}
		inst.Up.Source = inst.Up
		inst.Up.Fields = g.datasetFields(inst)
		inst.nodes = make([]int32, 0, len(items))
		for _, it := range items {
			inst.nodes = append(inst.nodes, int32(len(g.Nodes)))
			inst.Up.Nodes = append(inst.Up.Nodes, stages.NodeInfo{Item: it.ID})
			g.Nodes = append(g.Nodes, &Node{Inst: inst, Spec: stages.Node{Item: it.ID}, Address: inst.Address + "/" + it.ID,
				output: it.Record, outputDigest: sha256.Sum256(it.Record)})
		}
		inst.Count = len(items)
		g.byAddr[inst.Address] = inst
		g.Instances = append(g.Instances, inst)
	}
	if diags.HasErrors() {
		return nil, diags
	}

	callsLaidOut := false // an instance that asks a model is laid out (LayAhead)
	for _, si := range exp.Stages {
		inst := g.declare(si)
		if inst == nil {
			continue
		}
		g.byAddr[inst.Address] = inst
		g.Instances = append(g.Instances, inst)
		if d := g.checkServiceOps(inst); d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		if d := g.checkNeeds(inst); len(d) > 0 && !opts.SkipWiringCheck {
			diags = append(diags, d...)
			if d.HasErrors() {
				continue
			}
		}
		if pc, ok := si.Type.(stages.ParamChecker); ok {
			if err := pc.CheckParams(inst.stInst); err != nil {
				diags = append(diags, errAt(si, paramOf(err), "%s. Fix the stage's parameters.", err)...)
				continue
			}
		}
		if inst.layoutReady() && (opts.LayAhead <= 0 || len(g.Nodes) < opts.LayAhead || !callsLaidOut) {
			diags = append(diags, g.layout(inst)...)
			callsLaidOut = callsLaidOut || inst.asksModels()
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	g.indexDependents()
	return g, diags
}

// asksModels reports whether inst has a model param set (a model or a
// list of them): its nodes are calls, or may be.
func (inst *Instance) asksModels() bool {
	for _, p := range inst.cfg.Type.Params() {
		if (p.Kind == stages.ModelRef || p.Kind == stages.ModelList) && inst.Params.Has(p.Name) {
			return true
		}
	}
	return false
}

// declare resolves an instance's params and inputs, without laying it out.
// It returns nil when an input is missing (its own error is reported;
// repeating it downstream is noise).
func (g *Graph) declare(si *config.StageInstance) *Instance {
	inst := &Instance{
		Address: si.Address, Block: si.Block, Type: si.Type.Name(), Version: si.Type.Version(), Key: si.Key,
		Params: stages.Params{}, providers: map[string]bool{}, cfg: si, inputs: map[string]*Instance{},
	}
	inst.expander, _ = si.Type.(stages.Expander)
	var firstInput *Instance
	var generator *stages.Model
	for _, p := range si.Type.Params() {
		v, ok := si.Params[p.Name]
		if !ok {
			continue
		}
		switch ref := v.(type) {
		case config.InputRef:
			up := g.byAddr[ref.Address]
			if up == nil {
				return nil
			}
			inst.Params[p.Name] = up.Up
			inst.inputs[p.Name] = up
			if firstInput == nil {
				firstInput = up
			}
			mergeSet(inst.providers, up.providers)
		case []config.InputRef:
			var ups []*stages.Upstream
			for _, r := range ref {
				up := g.byAddr[r.Address]
				if up == nil {
					return nil
				}
				ups = append(ups, up.Up)
				inst.inputs[p.Name+"\x00"+r.Address] = up
				mergeSet(inst.providers, up.providers)
			}
			inst.Params[p.Name] = ups
		default:
			inst.Params[p.Name] = v
			switch m := v.(type) {
			case *stages.Model:
				inst.noteModel(m, p.Service)
				inst.providers[m.Provider] = true
				if p.Generator && generator == nil {
					generator = m
				}
			case []*stages.Model:
				if len(m) > 0 {
					inst.noteModel(m[0], p.Service)
				}
				for _, mm := range m {
					inst.providers[mm.Provider] = true
				}
			}
		}
	}
	inst.calls, inst.services = g.guessWork(inst)
	inst.Up = &stages.Upstream{Address: inst.Address, Type: inst.Type, Key: inst.Key}
	inherited := false
	if firstInput != nil {
		inst.Up.Source = firstInput.Up.Source
		if generator == nil && firstInput.Up.Generator != nil {
			generator, inherited = firstInput.Up.Generator, true
		}
	}
	inst.Up.Generator = generator
	if sch, ok := stages.SchemaOf(si.Type, inst.Params); ok {
		inst.Up.Fields = sch.Gives
	}
	inst.paramParts = paramParts(si.Type, inst.Params)
	inst.about = aboutParts(si.Type, inst.Params)
	if inherited {
		// A generator inherited through a stage without a model of its own
		// is no param, yet a stage may read it (judges exclude its family):
		// key it like one.
		inst.paramParts = append(inst.paramParts, partOf("upstream.generator", mustJSON([2]string{generator.Name, generator.Family}), generator.Name))
	}
	// Whether an instance's outputs are synthetic is not known here: it is
	// read from the records its nodes read (provenance.go), never guessed
	// from the providers configured.
	inst.answerers = modelAnswerers(si.Type, inst.Params)
	if g.project {
		inst.keep = keepFields(si.Type, inst)
	}
	inst.memoBase = memoBase(inst)
	inst.stInst = &stages.Instance{Address: inst.Address, Key: inst.Key, Params: inst.Params}
	return inst
}

// modelAnswerers digests who answers each model param of params, in the
// type's param order.
func modelAnswerers(t stages.Type, params stages.Params) [32]byte {
	h := sha256.New()
	write := func(m *stages.Model) {
		h.Write([]byte(m.Answerer.Class + "\x00" + m.Answerer.Identity + "\x00"))
	}
	for _, p := range t.Params() {
		switch m := params[p.Name].(type) {
		case *stages.Model:
			h.Write([]byte(p.Name + "\x00"))
			write(m)
		case []*stages.Model:
			h.Write([]byte(p.Name + "\x00"))
			for _, mm := range m {
				write(mm)
			}
		}
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// layoutReady reports whether inst can be laid out now: every input is
// final, except that an Expander's expand inputs need only be laid out (its
// items expand one by one as those inputs settle).
func (inst *Instance) layoutReady() bool {
	if inst.laidOut {
		return false
	}
	for name, up := range inst.inputs {
		if up.final {
			continue
		}
		if up.laidOut && inst.isExpandInput(name) {
			continue
		}
		return false
	}
	return true
}

func (inst *Instance) isExpandInput(name string) bool {
	if inst.expander == nil {
		return false
	}
	for _, n := range inst.expander.ExpandInputs() {
		if n == name {
			return true
		}
	}
	return false
}

// layout runs the stage type's Layout and appends its nodes.
func (g *Graph) layout(inst *Instance) hcl.Diagnostics {
	si := inst.cfg
	nodes, err := si.Type.Layout(inst.stInst)
	if err != nil {
		return errAt(si, paramOf(err), "%s. Fix the stage's parameters.", err)
	}
	inst.laidOut = true
	if diags := g.appendNodes(inst, nodes, nil); diags.HasErrors() {
		return diags
	}
	var warnings hcl.Diagnostics
	if lw, ok := si.Type.(stages.LayoutWarner); ok {
		for _, pe := range lw.LayoutWarnings(inst.stInst) {
			d := errAt(si, pe.Param, "%s.", pe.Err)
			d[0].Severity, d[0].Summary = hcl.DiagWarning, "Check "+si.Address
			warnings = append(warnings, d...)
		}
	}
	if inst.expander == nil {
		inst.final = true
	} else {
		inst.expanded = map[string]bool{}
		inst.final = inst.Up.Source == nil || len(inst.Up.Source.Nodes) == 0
	}
	return warnings
}

// appendNodes adds nodes of inst at the end of the graph.
func (g *Graph) appendNodes(inst *Instance, nodes []stages.Node, expandedFrom *[32]byte) hcl.Diagnostics {
	if diags := g.Exp.CheckNodes(inst.cfg, len(g.Nodes), len(nodes)); diags.HasErrors() {
		return diags
	}
	base := len(inst.nodes) // stages.Self indexes count from here: this Layout's or Expand's first node
	// One allocation for the call's nodes and one for their edges, not one
	// per node (a million-node layout made four small allocations a node).
	// Pointers into slab stay valid: it is never grown. Each node's Deps is
	// capped at its own length, so an append to one never writes into the
	// next node's edges.
	slab := make([]Node, len(nodes))
	edges := 0
	for _, spec := range nodes {
		edges += len(spec.Deps)
	}
	edgeBuf := make([]int32, 0, edges)
	g.Nodes = slices.Grow(g.Nodes, len(nodes))
	inst.nodes = slices.Grow(inst.nodes, len(nodes))
	inst.Up.Nodes = slices.Grow(inst.Up.Nodes, len(nodes))
	for k, spec := range nodes {
		n := &slab[k]
		*n = Node{Inst: inst, Spec: spec, expanded: expandedFrom != nil, expandedFrom: expandedFrom}
		n.Address = nodeAddress(inst.Address, spec)
		first := len(edgeBuf)
		for _, d := range spec.Deps {
			idx, ok := resolveDep(inst, d, g.byAddr, base)
			switch {
			case !ok && d.Input == stages.Self:
				return errAt(inst.cfg, "", "stage type %s laid out node %d of %s on its own node %d, which is not laid out before it (an internal error in the stage type)", inst.Type, k, inst.Address, d.Index)
			case !ok:
				return errAt(inst.cfg, d.Input, "stage type %s laid out a dependency on %s node %d, which does not exist (an internal error in the stage type)", inst.Type, d.Input, d.Index)
			}
			edgeBuf = append(edgeBuf, int32(idx))
		}
		if len(edgeBuf) > first {
			n.Deps = edgeBuf[first:len(edgeBuf):len(edgeBuf)]
		}
		inst.nodes = append(inst.nodes, int32(len(g.Nodes)))
		inst.Up.Nodes = append(inst.Up.Nodes, stages.NodeInfo{Item: spec.Item, Slot: spec.Slot, Label: spec.Label})
		g.Nodes = append(g.Nodes, n)
	}
	inst.Count = len(inst.nodes)
	return nil
}

func errAt(si *config.StageInstance, param string, format string, args ...any) hcl.Diagnostics {
	r := si.DeclRange
	if pr, ok := si.ParamRanges[param]; ok {
		r = pr
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("Cannot lay out %s", si.Block), // once per block: the same mistake in every for_each instance is one
		Detail: fmt.Sprintf(format, args...), Subject: &r}}
}

// paramOf names the parameter a stage's error is about, when it says.
func paramOf(err error) string {
	var pe *stages.ParamError
	if errors.As(err, &pe) {
		return pe.Param
	}
	return ""
}

// resolveDep maps a stage's Dep to a global node index. For an Inputs param,
// Index counts across the listed instances' nodes in order (they are final
// before anything is laid out on them); a Dep named by the address of the
// instance's source dataset points at that dataset's items; stages.Self
// points at an earlier node of inst returned by the same call, whose first
// node is inst's node base.
func resolveDep(inst *Instance, d stages.Dep, byAddr map[string]*Instance, base int) (int, bool) {
	if d.Index < 0 {
		return 0, false
	}
	at := func(up *Instance, i int) (int, bool) {
		if i >= len(up.nodes) {
			return 0, false
		}
		return int(up.nodes[i]), true
	}
	if d.Input == stages.Self {
		// inst.nodes holds the nodes appended before this one and no other,
		// so only an earlier node resolves: no cycle, and Graph.Nodes stays
		// in topological order.
		return at(inst, base+d.Index)
	}
	if up := inst.inputs[d.Input]; up != nil {
		return at(up, d.Index)
	}
	if src := byAddr[d.Input]; src != nil && src.source && inst.Up.Source == src.Up {
		return at(src, d.Index)
	}
	idx := d.Index
	for _, u := range inst.Params.Inputs(d.Input) {
		up := inst.inputs[d.Input+"\x00"+u.Address]
		if up == nil {
			return 0, false
		}
		if idx < len(up.nodes) {
			return at(up, idx)
		}
		idx -= len(up.nodes)
	}
	return 0, false
}

func mergeSet(dst, src map[string]bool) {
	for k := range src {
		dst[k] = true
	}
}

func nodeAddress(inst string, spec stages.Node) string {
	if spec.Item == "" {
		return inst + "/*"
	}
	if spec.Label != "" {
		return inst + "/" + spec.Item + "/" + spec.Label
	}
	return inst + "/" + spec.Item
}

func (g *Graph) indexDependents() {
	counts := make([]int32, len(g.Nodes)+1)
	for _, n := range g.Nodes {
		for _, d := range n.Deps {
			counts[d+1]++
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	g.depStart = counts
	g.depList = make([]int32, counts[len(counts)-1])
	fill := make([]int32, len(g.Nodes))
	for i, n := range g.Nodes {
		for _, d := range n.Deps {
			g.depList[counts[d]+fill[d]] = int32(i)
			fill[d]++
		}
	}
}

// Dependents returns the nodes that read node i.
func (g *Graph) Dependents(i int) []int32 { return g.depList[g.depStart[i]:g.depStart[i+1]] }

// paramParts encodes an instance's non-input params as named key parts, for
// compute nodes (model nodes are keyed on their rendered request instead, so
// a param such as n that does not change a sample's request keeps it cached).
func paramParts(t stages.Type, params stages.Params) []namedPart {
	var out []namedPart
	for _, p := range t.Params() {
		v, ok := params[p.Name]
		if !ok || v == nil {
			continue
		}
		var enc []byte
		display := ""
		switch x := v.(type) {
		case *stages.Upstream:
			enc = []byte(x.Address)
			display = x.Address
		case []*stages.Upstream:
			var as []string
			for _, u := range x {
				as = append(as, u.Address)
			}
			enc = []byte(strings.Join(as, "\n"))
			display = strings.Join(as, ", ")
		default:
			enc, _ = json.Marshal(x)
			display = string(enc)
		}
		if len(display) > 60 {
			display = display[:57] + "..."
		}
		out = append(out, namedPart{name: "param." + p.Name, digest: sha256.Sum256(enc), display: display})
	}
	return out
}
