// Package config loads an experiment (a folder of .hcl files, or one file)
// into typed Go values. It decodes with diagnostics in the manner of
// Terraform's configs package: every problem is collected with its source
// range, a one-line summary and a sentence on how to fix it.
package config

import (
	"errors"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Experiment is a decoded experiment.
type Experiment struct {
	Name      string // folder (or file) base name, or settings { name }: what plan, run and reports call it
	Dir       string // folder the relative paths resolve against
	Files     map[string]*hcl.File
	Variables map[string]cty.Value

	Providers map[string]*Provider
	Models    map[string]*stages.Model
	Datasets  map[string]*Dataset
	Qualities map[string]*stages.Quality
	// Stages lists every stage instance (reports included, as instances of the
	// "report" stage type) in an order where inputs come first.
	Stages []*StageInstance

	// Source is the digest of the experiment's files' contents, for run records.
	Source string

	// StopWhen is the experiment's stop_when block (nil: none): the run
	// goes in rounds of items until its rule stops it (engine/adaptive.go).
	StopWhen *StopWhen

	// MaxNodes caps the nodes of the laid-out graph: settings { max_nodes },
	// else DefaultMaxNodes. See CheckNodes.
	MaxNodes int

	// ReadFiles lists the absolute path of every file the experiment's
	// file() and templatefile() calls read (prompts, a published board),
	// sorted, each once. With its .hcl files and its datasets' paths it is
	// every file its outputs rest on: a pack of a one-file experiment
	// carries these, not the folder's other files.
	ReadFiles []string

	// ResultsDir is where reports go unless --out says otherwise: one
	// folder per experiment, so two experiment files in one folder never
	// overwrite each other's pages: <Dir>/results for a folder experiment,
	// <Dir>/results/<file stem> for a one-file experiment.
	ResultsDir string

	// ID is the experiment's identity, under which plan keeps the keys it
	// explains reasons against: "name:<settings name>" when settings {
	// name } is given, else "path:<absolute path>" of the experiment's
	// folder or file. Two experiments of one name in different folders are
	// distinct; a moved or renamed one is found again by Blocks (see
	// engine's priorRun).
	ID string
	// Path is the absolute path the experiment was loaded from (its
	// folder, or its one file).
	Path string
	// Blocks lists the addresses of every declared block, sorted: what a
	// later plan of a moved or renamed experiment matches its last run by.
	Blocks []string

	// ModelRanges gives each model block's declaration, for errors about a
	// model found after decoding (a budget its missing price leaves unbound).
	ModelRanges map[string]hcl.Range

	budgetMu   sync.Mutex
	overBudget hcl.Diagnostics // what CheckNodes said when it first refused
}

// Provider is a provider block with where it was declared. Its settings
// are llm.Provider's: the shared ones as fields, the kind-specific ones in
// llm.Provider.Settings (see llm.Provider.Get).
type Provider struct {
	llm.Provider
	DeclRange      hcl.Range
	APIKeyEnvRange hcl.Range            // the api_key_env value, else the block
	Ranges         map[string]hcl.Range // setting name -> range of its value, for settings given
	// Answerer is who answers the provider's calls (llm.Provider.Identify),
	// given to every model that names the provider (stages.Model.Answerer):
	// key material of the nodes that call them.
	Answerer llm.Answerer
}

// Dataset is a dataset block.
type Dataset struct {
	Name    string
	Format  string
	Path    string // absolute
	IDField string
	Limit   int
	// Select holds the load options past IDField and Limit (the references
	// file, min_references, sample), as engine/config/datasets.go reads them.
	Select    datasets.Options
	DeclRange hcl.Range

	once  sync.Once
	items []datasets.Item
	err   error
	// refused is set when decoding refused one of the dataset's paths, at
	// its attribute: the dataset is not loaded, and says ErrReported.
	refused bool
}

// ErrReported is what Items returns for a dataset whose path decoding
// already refused, with a located error: there is nothing more to say.
var ErrReported = errors.New("already reported")

// Items loads the dataset's items, once: decoding checks (validate) and the
// engine's layout read the same load.
func (d *Dataset) Items() ([]datasets.Item, error) {
	d.once.Do(func() {
		if d.refused {
			d.err = ErrReported
			return
		}
		d.items, d.err = datasets.Load(d.Format, d.Path, d.options())
	})
	return d.items, d.err
}

// InputRef stands for an Input param before the engine lays out the DAG: the
// address of the dataset or stage instance it points at.
type InputRef struct {
	Address string
	Range   hcl.Range
}

// StageInstance is one instance of a stage block (or report block) after
// for_each expansion. Params hold typed Go values per stages.Kind, except that
// Input params hold InputRef and Inputs params hold []InputRef: the engine
// swaps in the upstream views once their nodes are laid out.
type StageInstance struct {
	Address string // `stage.rank_ideas.novelty["gpt4o"]` or `report.table1`
	Block   string // `stage.rank_ideas.novelty` or `report.table1`
	Type    stages.Type
	Key     string
	Params  stages.Params
	// ParamRanges gives the source range of each param, for errors found later (e.g. template errors).
	ParamRanges map[string]hcl.Range
	DeclRange   hcl.Range
	// Deps are the addresses of every instance or dataset this one reads.
	Deps []string
}
