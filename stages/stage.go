// Package stages holds ideaflow's stage types. A stage type declares its
// parameters (the engine decodes HCL into typed Go values against them; no HCL
// reaches this package) and lays out one stage instance as item-level nodes.
// Each node is pure given its inputs plus, for model nodes, one model call.
package stages

import (
	"fmt"
	"sort"
	"sync"

	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Kind is the type of a parameter value.
type Kind int

const (
	String     Kind = iota // Go: string
	Int                    // Go: int
	Number                 // Go: float64
	Bool                   // Go: bool
	StringList             // Go: []string
	Template               // Go: string; a prompt template (inline or file()); its text is key material
	ModelRef               // Go: *Model
	ModelList              // Go: []*Model
	QualityRef             // Go: *Quality
	Input                  // Go: *Upstream; a dataset or an upstream stage instance (an edge of the DAG)
	Inputs                 // Go: []*Upstream; every instance of one or more stages, no fan-out (reports, aggregates across models)
	StringMap              // Go: map[string]string; labels, per-column options ({ "insight_score.novelty" = "Novelty" })
	NumberMap              // Go: map[string]float64; numbers by name (an expect's published values by row)
)

func (k Kind) String() string {
	return [...]string{"string", "number (whole)", "number", "bool", "list of strings", "template",
		"model reference", "list of model references", "quality reference", "dataset or stage reference", "list of stage references",
		"map of strings", "map of numbers"}[k]
}

// Param declares one attribute of a stage block.
type Param struct {
	Name     string
	Kind     Kind
	Required bool
	Default  any      // Go value of Kind's type; nil: zero value
	Accepts  []string // Input: stage types (or "dataset") it may point at; empty: any
	Doc      string   // one line, used in error hints
	// Generator marks a ModelRef param whose model produces the ideas the
	// instance's outputs are (generate_ideas' model). A model that judges,
	// reviews or extracts from ideas is not one (rank_ideas' judge,
	// ScholarEval's reviewer): its instance inherits its first input's
	// generator, so whose ideas a score is about stays known downstream,
	// and who answered is read from the records. Downstream stages see it
	// as Upstream.Generator.
	Generator bool
	// Service marks a ModelRef param whose model serves service calls
	// (embeddings, literature search), not chat: before the nodes can be
	// prepared, plan counts them as service calls, and a stage's chat model
	// param, when it has one too, is the one its nodes are said to call.
	Service bool
	// Min and Max bound an Int param, both inclusive; engine/config refuses
	// a value outside them at its attribute, naming the -var it came from.
	// Every count a user gives declares them: unbounded, n = 1e9 laid out
	// for minutes and n = 1e19 overflowed the slice the nodes go in. Both
	// zero means unbounded, which stages/all allows for no registered type.
	Min, Max int
}

// Bounded reports whether an Int param declares its range.
func (p Param) Bounded() bool { return p.Min != 0 || p.Max != 0 }

// ParamError is a stage's complaint about one of its parameters, so the
// engine can point at that attribute's source range without guessing from
// the message.
type ParamError struct {
	Param string
	Err   error
}

func (e *ParamError) Error() string { return e.Err.Error() }
func (e *ParamError) Unwrap() error { return e.Err }

// ParamErrorf returns a *ParamError for param with a formatted message.
func ParamErrorf(param, format string, args ...any) error {
	return &ParamError{Param: param, Err: fmt.Errorf(format, args...)}
}

// Price is a model's price per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok"`
	// Batch and cached-input prices, nil when the block gives none (then
	// stages/pricing falls back to the synchronous input and output
	// prices: a cost is never under-estimated for want of a discount).
	BatchInputPerMTok       *float64 `json:"batch_input_per_mtok,omitempty"`
	BatchOutputPerMTok      *float64 `json:"batch_output_per_mtok,omitempty"`
	CachedInputPerMTok      *float64 `json:"cached_input_per_mtok,omitempty"`       // prompt tokens served from the provider's cache
	BatchCachedInputPerMTok *float64 `json:"batch_cached_input_per_mtok,omitempty"` // the same, in a batch
}

// Model is a decoded model block.
type Model struct {
	Address     string   `json:"-"` // "model.gpt4o"
	Provider    string   `json:"-"` // provider block name (never key material; who answers is: Answerer)
	Name        string   `json:"name"`
	Family      string   `json:"family,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Seed        *int     `json:"seed,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	JSONMode    bool     `json:"json_mode,omitempty"`
	Price       Price    `json:"-"` // prices change cost, not answers
	// Priced says a price block was given (a free local model is priced at
	// 0); without one, costs are unknown, never $0.
	Priced bool `json:"-"`
	// KnowledgeCutoff is the end of the model's training data, YYYY-MM-DD
	// ("" unknown): plan warns about targets it may have read. Not key
	// material: it changes no answer.
	KnowledgeCutoff string `json:"-"`
	// Answerer is who answers this model's calls: its provider's
	// llm.Answerer (class and identity, never the provider's name). It is
	// key material of every model and service node that calls the model,
	// not of a compute node's params (json "-"): a compute output depends
	// on who answered only through its inputs, whose provenance the engine
	// keys it on (In.Provenance).
	Answerer llm.Answerer `json:"-"`
}

// Request starts a request to this model with its sampling parameters.
//
// With a seed, sample i is sent with seed+i: independent samples must differ
// even on an endpoint that a fixed seed makes deterministic, and each stays
// reproducible.
func (m *Model) Request(msgs []llm.Message, sample int, spec format.Spec) llm.Request {
	seed := m.Seed
	if seed != nil {
		s := *seed + sample
		seed = &s
	}
	return llm.Request{
		Model: m.Name, Messages: msgs, Temperature: m.Temperature, TopP: m.TopP,
		MaxTokens: m.MaxTokens, Seed: seed, Stop: m.Stop, JSONMode: m.JSONMode,
		Sample: sample, Format: spec,
	}
}

// Quality is a decoded quality block: a user-defined quality indicator.
type Quality struct {
	Address    string `json:"-"`
	Name       string `json:"name"`
	Definition string `json:"definition"`
}

// NodeInfo identifies one node of an upstream instance.
type NodeInfo struct {
	Item  string // item id; "" for an aggregate node
	Slot  int    // sample index, permutation index, ...; 0 when unused
	Label string // the node's Label ("overall", "sample 2"); "" if none
}

// Upstream is what a stage sees of an input: a dataset or an upstream stage instance.
type Upstream struct {
	Address string // "dataset.targets" or `stage.generate_ideas.main["gpt4o"]`
	Type    string // stage type, or "dataset"
	Key     string // instance key ("" when the instance has none)
	// Nodes lists the instance's nodes in layout order. It only grows: an
	// Expander instance appends the nodes of an item when the item expands,
	// so an index into Nodes stays valid.
	Nodes []NodeInfo
	// Source is the dataset the items come from (itself for a dataset), so a stage
	// can reach an item's original record without another parameter.
	Source *Upstream
	// Generator is the model whose ideas the instance's outputs are, or are
	// about: its own Generator param, else its first input's (nil for a
	// dataset, or when nothing upstream generates). A judge stage reads it to
	// keep judges independent of the generator and its family.
	Generator *Model
	// Fields are the fields its nodes' outputs carry: its type's
	// Schema(params).Gives, a dataset format's declared record fields
	// (nil for a format whose records are whatever the file holds), nil
	// for a type that declares none. See schema.go.
	Fields []Field

	mu     sync.Mutex
	byItem map[string][]int
	seen   int // Nodes indexed into byItem so far
}

// ItemNodes returns the indexes (into Nodes) of the nodes for item, in order.
func (u *Upstream) ItemNodes(item string) []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byItem == nil {
		u.byItem = make(map[string][]int)
	}
	for ; u.seen < len(u.Nodes); u.seen++ {
		n := u.Nodes[u.seen]
		u.byItem[n.Item] = append(u.byItem[n.Item], u.seen)
	}
	return u.byItem[item]
}

// AllDeps is a dependency on every node of up, reached through the Input
// param named input: what an aggregate over all items depends on.
func AllDeps(input string, up *Upstream) []Dep {
	deps := make([]Dep, len(up.Nodes))
	for i := range up.Nodes {
		deps[i] = Dep{Input: input, Index: i}
	}
	return deps
}

// Items returns the distinct item ids in first-seen order.
func (u *Upstream) Items() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range u.Nodes {
		if !seen[n.Item] {
			seen[n.Item] = true
			out = append(out, n.Item)
		}
	}
	return out
}

// Params are a stage instance's decoded parameter values, typed per Param.Kind.
type Params map[string]any

func (p Params) String(name string) string      { s, _ := p[name].(string); return s }
func (p Params) Int(name string) int            { i, _ := p[name].(int); return i }
func (p Params) Number(name string) float64     { f, _ := p[name].(float64); return f }
func (p Params) Bool(name string) bool          { b, _ := p[name].(bool); return b }
func (p Params) Strings(name string) []string   { s, _ := p[name].([]string); return s }
func (p Params) Model(name string) *Model       { m, _ := p[name].(*Model); return m }
func (p Params) Models(name string) []*Model    { m, _ := p[name].([]*Model); return m }
func (p Params) Quality(name string) *Quality   { q, _ := p[name].(*Quality); return q }
func (p Params) Input(name string) *Upstream    { u, _ := p[name].(*Upstream); return u }
func (p Params) Inputs(name string) []*Upstream { u, _ := p[name].([]*Upstream); return u }
func (p Params) StringMap(name string) map[string]string {
	m, _ := p[name].(map[string]string)
	return m
}
func (p Params) NumberMap(name string) map[string]float64 {
	m, _ := p[name].(map[string]float64)
	return m
}
func (p Params) Has(name string) bool { v, ok := p[name]; return ok && v != nil }

// WithDefaults returns a copy of p with every param of t that p leaves unset
// (absent or nil) set to its declared Default, the rule engine/config applies
// when it decodes a stage block. A stage therefore reads p.Int("n") and
// friends directly and keeps each default in one place, its Param; tests and
// other callers that build sparse Params fill them through here. Params
// without a Default stay unset. p itself is not modified; the defaults are
// shared, not copied, so stages must treat param values as read-only (they
// already must: the engine shares them across instances too).
func WithDefaults(t Type, p Params) Params {
	out := make(Params, len(p))
	for k, v := range p {
		out[k] = v
	}
	for _, param := range t.Params() {
		if !out.Has(param.Name) && param.Default != nil {
			out[param.Name] = param.Default
		}
	}
	return out
}

// Instance is one stage instance to lay out. It says nothing of who will
// answer its calls: that is known only from the records its nodes read
// (In.Provenance), never from the configuration.
type Instance struct {
	Address string // `stage.rank_ideas.novelty["gpt4o"]`
	Key     string // for_each / fan-out key, "" when single
	Params  Params
}

// Dep points at one upstream node: Input is the parameter name, Index the node's
// position in that Upstream's Nodes. For an Inputs param (a list of upstreams),
// Index counts across the listed upstreams' Nodes concatenated in list order.
// A Dep whose Input is the Address of the instance's Source dataset (reached
// through its first Input param) points at that dataset's items. A Dep whose
// Input is Self points at a node of the instance itself returned before this
// one by the same Layout or Expand call: Index is its position in the slice
// that call returned.
type Dep struct {
	Input string
	Index int
}

// Self is the Dep.Input of a dependency on an earlier node of the same
// instance: per-item compute over the item's own service replies (an
// embedding similarity item's scores read its texts' vectors), so what a
// downstream aggregate loads is the small result, never every reply at once. Only
// earlier nodes can be named, so a stage cannot lay out a cycle; no param may
// be named "self".
const Self = "self"

// In is one resolved dependency handed to Prepare, in the order of Node.Deps.
type In struct {
	Dep
	Node NodeInfo
	// From is the upstream instance the node belongs to (for an Inputs
	// param, the listed upstream it falls in), so an aggregate need not
	// reconstruct it from offsets.
	From   *Upstream
	Output []byte // the upstream node's canonical JSON output; nil if it failed (only for Node.AllowMissing)
	// Provenance says who answered the calls Output rests on, transitively,
	// as the cache records say (nil: none did, a dataset item; or Output
	// is nil). A compute node is keyed on its inputs' provenance, so an
	// output that labels what fed it (a report marking the cells that came
	// from the mock) is recomputed when that changes; a call's request must
	// not read it (a call is keyed on its request, not on it).
	Provenance *Provenance
}

// Provenance is who answered the model and service calls an output rests
// on, directly or through its inputs, read from the records of those calls.
// Shared between nodes: read-only.
type Provenance struct {
	// Synthetic says some answer came from a synthetic answerer (the mock).
	Synthetic bool
	// Answerers are the distinct answerers, sorted by class, then identity.
	Answerers []llm.Answerer
}

// IsSynthetic reports whether p says some answer was made up; a nil p did
// not rest on any call.
func (p *Provenance) IsSynthetic() bool { return p != nil && p.Synthetic }

// Work is what a node does once its inputs are known. Exactly one of Call,
// Service or Compute is set. The engine keys the node on the stage type and
// version, the digests of the inputs, and: Call.Request for a model node,
// Service.Request for a service node, the instance's params for a compute
// node.
type Work struct {
	Call    *Call
	Service *Service
	Compute func() ([]byte, error) // deterministic, no model calls; returns canonical JSON
	// KeyParams narrows the params a Compute node is keyed on: nil means all of
	// the instance's params; a non-nil list (possibly empty) names the only
	// ones its output depends on, so changing another param (say n) does not
	// re-run it. Model nodes are keyed on their request (and Call.KeyParams)
	// and ignore this.
	KeyParams []string
}

// Call is one model request and how to turn its parsed answer into the node output.
type Call struct {
	Model   *Model
	Request llm.Request
	// Output turns the parsed answer into canonical JSON. The engine applies
	// it after the call returns, outside the executor, so a task is plain
	// data: whether an answer is usable is decided by Request.Format alone
	// (the parser re-asks on anything the spec refuses). An error here fails
	// the node without another ask, so it must only refuse what the spec
	// cannot express.
	Output func(a *format.Answer) ([]byte, error)
	// KeyParams names the instance params Output reads (a word limit that
	// drops an answer): the node is keyed on them beside its request, so
	// changing one re-runs the node instead of serving an output made
	// under the old value. nil: Output reads none.
	KeyParams []string
}

// Service is one non-chat request (embeddings, token embeddings, literature
// search) to Model's provider, and how to turn the reply into the node
// output. Model.Name is the service's model ("" when it has none); the
// engine keys the node on Request and on who answers (Model.Answerer), never
// on the provider block's name.
type Service struct {
	Model   *Model
	Request llm.ServiceRequest
	// Output turns the reply body (the operation's documented shape) into
	// the node's canonical JSON; nil keeps the body as is. Applied by the
	// engine after the call, like Call.Output.
	Output func(body []byte) ([]byte, error)
}

// Node is one unit of caching and scheduling.
type Node struct {
	Item  string
	Slot  int
	Label string // human suffix for the node address, e.g. "sample 2"; "" if none
	Deps  []Dep
	// AllowMissing lets an aggregate run when some deps failed or were skipped:
	// their In.Output is nil and the aggregate counts them as missing. Without
	// it, a node whose dep failed is skipped.
	AllowMissing bool
	// WritesFiles marks a node whose output is a Files value: after a run
	// the engine writes its files to the experiment's results folder.
	WritesFiles bool
	Prepare     func(in []In) (*Work, error)
}

// Files is the output of a node that writes files (Node.WritesFiles): file
// name (no folders) -> content. Binary holds files that are not text (a
// PNG figure): a JSON string carries only UTF-8, so they travel as bytes
// (base64 in the node's JSON output).
type Files struct {
	Files  map[string]string `json:"files"`
	Binary map[string][]byte `json:"binary,omitempty"`
}

// Type is a stage type.
type Type interface {
	Name() string
	// Version is the implementation version; bump it when outputs would change for the same inputs.
	Version() string
	Params() []Param
	// Layout expands one instance into nodes. inputs holds the Upstream of each Input param.
	// Errors about one parameter should be a *ParamError.
	Layout(inst *Instance) ([]Node, error)
}

// A Type may also be an Expander, a ServiceUser, a ParamChecker, a
// LayoutWarner, a DatasetChecker (below), a Declarer (schema.go) and a
// Presenter (present.go): how its outputs read to show, export and
// report.html, which know no stage type.

// Expander is a stage type whose nodes per item depend on upstream outputs
// (ScholarEval: the methods a model extracted from an idea, then one search
// per method). Its Layout lays out what is known up front (often nothing);
// the engine calls Expand for an item once every node of that item in the
// ExpandInputs has settled and those inputs have themselves finished laying
// out the item, then appends the nodes returned. Plan and run repeat until
// nothing new expands.
//
// Invariants the engine relies on:
//   - Expand is pure: the same params, item and input outputs give the same
//     nodes (in the same order), so plan and run expand alike and a cached
//     expansion is found again.
//   - Every returned node has Item == item and a Label unique within the
//     item, derived from what the node stands for (a method's text, a
//     query), not from its position: a compute child is keyed on its item and
//     Label instead of its Slot, so the same children in another order hit
//     the cache. Model and service children are keyed on their requests.
//     A compute child's output must therefore be a function of the params,
//     its item, its Label and its Deps' outputs alone: whatever else of the
//     expand inputs its Prepare reads belongs in its Label. A model or
//     service child's request may carry more than its Label: the engine's
//     memo of a child includes the outputs its Expand call read, so a
//     changed input prepares the child again (an unchanged request is still
//     answered by its key, without a call).
//   - Deps point at nodes of the instance's inputs laid out so far. A dep's
//     whole output is key material, so a child that stands for one element
//     of an upstream answer carries that element in its request (or label)
//     instead of depending on the answer: otherwise a list that gained an
//     element re-runs every child.
//   - len(result) <= MaxPerItem(inst).
type Expander interface {
	Type
	// ExpandInputs names the Input params (single upstreams) whose outputs
	// Expand reads. An optional one the experiment leaves unset gives no
	// nodes in Expand's in.
	ExpandInputs() []string
	// MaxPerItem bounds how many nodes Expand returns for one item; plan
	// multiplies by it for an upper-bound estimate before the inputs exist.
	MaxPerItem(inst *Instance) int
	// Expand lays out item's nodes. in holds the item's nodes of each
	// ExpandInputs param in turn, in node order; Output is nil for a node
	// that failed or was skipped.
	Expand(inst *Instance, item string, in []In) ([]Node, error)
}

// ServiceUser is a stage type whose Service model params make service
// calls. ServiceOps names, for an instance's params, the operations each
// such param's model will be asked for (param name -> ops), so that Build refuses
// a model whose provider kind does not serve it, at the param's file:line,
// before anything runs: a bertscore similarity pointed at an embeddings
// endpoint would otherwise fail once per target, after its ideas were paid
// for. A param the params leave unused (rouge_l's model) is absent.
type ServiceUser interface {
	Type
	ServiceOps(p Params) map[string][]string
}

// ParamChecker is a stage type that checks, before it can be laid out, what
// its Layout would refuse of its params alone: its templates. A stage at the
// end of a chain of expanding stages is laid out only once the chain has
// run; Build calls CheckParams for every instance, so validate reports a
// template error there before anything is paid for.
type ParamChecker interface {
	Type
	CheckParams(inst *Instance) error
}

// LayoutWarner is a stage type that can tell, once laid out, that an
// instance is valid yet will not give what its author likely meant (a report
// whose rows match none of its columns). The engine reports each complaint
// as a warning at its param; validate, plan and run print them.
type LayoutWarner interface {
	Type
	LayoutWarnings(inst *Instance) []*ParamError
}

// DatasetChecker is a stage type that checks its params against the values
// its dataset's records hold: filter_references' require_intent against the
// citation intents the references carry, which a stage otherwise sees only
// item by item, once it runs. engine/config calls it on loading (so validate,
// plan and run alike) for each instance whose Input param names a dataset,
// and reports each error as a warning at its param: the dataset may be about
// to change, and the value is the user's to keep.
type DatasetChecker interface {
	Type
	// DatasetFields names the fields whose distinct string values
	// CheckDataset reads, as paths through the records: "references.intents"
	// is every intent of every reference (lists are walked through).
	DatasetFields() []string
	// CheckDataset returns its complaints; values holds each field's
	// distinct values, sorted.
	CheckDataset(p Params, values map[string][]string) []*ParamError
}

var (
	regMu    sync.RWMutex
	registry = map[string]Type{}
)

// Register adds a stage type; stage packages call it from init.
func Register(t Type) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[t.Name()]; dup {
		panic(fmt.Sprintf("stage type %q registered twice", t.Name()))
	}
	registry[t.Name()] = t
}

// Lookup returns the stage type called name.
func Lookup(name string) (Type, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	t, ok := registry[name]
	return t, ok
}

// Names lists registered stage types, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Score is the output every aggregate metric stage produces (insight_score,
// aggregate, ...), so reports can read any of them.
type Score struct {
	Value   float64            `json:"value"`
	Count   int                `json:"count"`           // items that contributed
	Missing int                `json:"missing"`         // items whose inputs failed or were skipped
	Extra   map[string]float64 `json:"extra,omitempty"` // named secondary values (e.g. ci_low, ci_high)
	PerItem map[string]float64 `json:"per_item,omitempty"`
}
