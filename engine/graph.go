// Package engine turns a decoded experiment into an item-level DAG of nodes,
// keys every node by content, and plans or runs it against the cache.
package engine

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

// Graph is an experiment laid out as nodes. Nodes are stored in a topological
// order: every node comes after the nodes it depends on, because instances are
// laid out in block order and a node only depends on earlier instances.
type Graph struct {
	Exp       *config.Experiment
	Instances []*Instance
	Nodes     []*Node
	// dependents[i] lists the nodes that read node i (CSR form keeps 200k nodes compact).
	depStart []int32
	depList  []int32
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
	First   int // index of its first node in Graph.Nodes
	Count   int
	// paramParts are the key parts of this instance's params, used by compute nodes.
	paramParts []namedPart
	memoBase   [32]byte
	// providers are the providers of every model this instance or anything upstream uses.
	providers map[string]bool
	source    bool // a dataset: its nodes are given, never run
	cfg       *config.StageInstance
}

// Node is one unit of caching and scheduling.
type Node struct {
	Inst    *Instance
	Spec    stages.Node
	Deps    []int32
	Address string
	// output and outputDigest are set for dataset nodes (the item record).
	output       []byte
	outputDigest [32]byte
}

// Build lays out the experiment: loads datasets, lays out every stage
// instance and wires item-level edges. Errors carry the source range of the
// block or param at fault.
func Build(exp *config.Experiment) (*Graph, hcl.Diagnostics) {
	g := &Graph{Exp: exp}
	var diags hcl.Diagnostics
	byAddr := map[string]*Instance{}

	dsNames := make([]string, 0, len(exp.Datasets))
	for n := range exp.Datasets {
		dsNames = append(dsNames, n)
	}
	sort.Strings(dsNames)
	for _, n := range dsNames {
		ds := exp.Datasets[n]
		items, err := datasets.Load(ds.Format, ds.Path, datasets.Options{IDField: ds.IDField, Limit: ds.Limit})
		if err != nil {
			r := ds.DeclRange
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Cannot load dataset %q", n),
				Detail: fmt.Sprintf("%s. Fix the file or the dataset's format/path.", err), Subject: &r})
			continue
		}
		inst := &Instance{Address: "dataset." + n, Block: "dataset." + n, Type: "dataset", source: true, providers: map[string]bool{}}
		inst.Up = &stages.Upstream{Address: inst.Address, Type: "dataset"}
		inst.Up.Source = inst.Up
		inst.First = len(g.Nodes)
		for _, it := range items {
			inst.Up.Nodes = append(inst.Up.Nodes, stages.NodeInfo{Item: it.ID})
			g.Nodes = append(g.Nodes, &Node{Inst: inst, Spec: stages.Node{Item: it.ID}, Address: inst.Address + "/" + it.ID,
				output: it.Record, outputDigest: sha256.Sum256(it.Record)})
		}
		inst.Count = len(items)
		byAddr[inst.Address] = inst
		g.Instances = append(g.Instances, inst)
	}
	if diags.HasErrors() {
		return nil, diags
	}

	for _, si := range exp.Stages {
		inst, d := g.layout(si, byAddr)
		diags = append(diags, d...)
		if inst != nil {
			byAddr[inst.Address] = inst
			g.Instances = append(g.Instances, inst)
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	g.indexDependents()
	return g, diags
}

func (g *Graph) layout(si *config.StageInstance, byAddr map[string]*Instance) (*Instance, hcl.Diagnostics) {
	errAt := func(param string, format string, args ...any) hcl.Diagnostics {
		r := si.DeclRange
		if pr, ok := si.ParamRanges[param]; ok {
			r = pr
		}
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("Cannot lay out %s", si.Address),
			Detail: fmt.Sprintf(format, args...), Subject: &r}}
	}
	inst := &Instance{
		Address: si.Address, Block: si.Block, Type: si.Type.Name(), Version: si.Type.Version(), Key: si.Key,
		Params: stages.Params{}, providers: map[string]bool{}, cfg: si,
	}
	inputs := map[string]*Instance{}
	var firstInput *Instance
	for _, p := range si.Type.Params() {
		v, ok := si.Params[p.Name]
		if !ok {
			continue
		}
		switch ref := v.(type) {
		case config.InputRef:
			up := byAddr[ref.Address]
			if up == nil {
				return nil, nil // its own error is reported; repeating it downstream is noise
			}
			inst.Params[p.Name] = up.Up
			inputs[p.Name] = up
			if firstInput == nil {
				firstInput = up
			}
			mergeSet(inst.providers, up.providers)
		case []config.InputRef:
			var ups []*stages.Upstream
			for _, r := range ref {
				up := byAddr[r.Address]
				if up == nil {
					return nil, nil
				}
				ups = append(ups, up.Up)
				inputs[p.Name+"\x00"+r.Address] = up
				mergeSet(inst.providers, up.providers)
			}
			inst.Params[p.Name] = ups
		default:
			inst.Params[p.Name] = v
			switch m := v.(type) {
			case *stages.Model:
				inst.providers[m.Provider] = true
			case []*stages.Model:
				for _, mm := range m {
					inst.providers[mm.Provider] = true
				}
			}
		}
	}
	if _, ok := paramByName(si.Type, "synthetic"); ok {
		inst.Params["synthetic"] = g.usesMock(inst.providers)
	}
	inst.paramParts = paramParts(si.Type, inst.Params)
	inst.memoBase = memoBase(inst)
	inst.Up = &stages.Upstream{Address: inst.Address, Type: inst.Type, Key: inst.Key}
	if firstInput != nil {
		inst.Up.Source = firstInput.Up.Source
	}

	nodes, err := si.Type.Layout(&stages.Instance{Address: inst.Address, Key: inst.Key, Params: inst.Params})
	if err != nil {
		param := ""
		for name := range si.ParamRanges {
			if strings.Contains(err.Error(), name) && (param == "" || len(name) > len(param)) {
				param = name
			}
		}
		return nil, errAt(param, "%s. Fix the stage's parameters.", err)
	}
	inst.First = len(g.Nodes)
	inst.Count = len(nodes)
	for _, spec := range nodes {
		n := &Node{Inst: inst, Spec: spec}
		n.Address = nodeAddress(inst.Address, spec)
		for _, d := range spec.Deps {
			idx, ok := resolveDep(inst, d, inputs, byAddr)
			if !ok {
				return nil, errAt(d.Input, "stage type %s laid out a dependency on %s node %d, which does not exist (an internal error in the stage type)", inst.Type, d.Input, d.Index)
			}
			n.Deps = append(n.Deps, int32(idx))
		}
		inst.Up.Nodes = append(inst.Up.Nodes, stages.NodeInfo{Item: spec.Item, Slot: spec.Slot})
		g.Nodes = append(g.Nodes, n)
	}
	return inst, nil
}

// resolveDep maps a stage's Dep to a global node index. For an Inputs param,
// Index counts across the listed instances' nodes in order; a Dep named by the
// address of the instance's source dataset points at that dataset's items.
func resolveDep(inst *Instance, d stages.Dep, inputs, byAddr map[string]*Instance) (int, bool) {
	if d.Index < 0 {
		return 0, false
	}
	if up := inputs[d.Input]; up != nil {
		return up.First + d.Index, d.Index < up.Count
	}
	if src := byAddr[d.Input]; src != nil && src.source && inst.Up.Source == src.Up {
		return src.First + d.Index, d.Index < src.Count
	}
	idx := d.Index
	for _, u := range inst.Params.Inputs(d.Input) {
		up := inputs[d.Input+"\x00"+u.Address]
		if up == nil {
			return 0, false
		}
		if idx < up.Count {
			return up.First + idx, true
		}
		idx -= up.Count
	}
	return 0, false
}

func (g *Graph) usesMock(providers map[string]bool) bool {
	for p := range providers {
		if pr := g.Exp.Providers[p]; pr != nil && pr.Kind == "mock" {
			return true
		}
	}
	return false
}

func mergeSet(dst, src map[string]bool) {
	for k := range src {
		dst[k] = true
	}
}

func paramByName(t stages.Type, name string) (stages.Param, bool) {
	for _, p := range t.Params() {
		if p.Name == name {
			return p, true
		}
	}
	return stages.Param{}, false
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
