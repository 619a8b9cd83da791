package ideabench

import (
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// extract_idea gives each target its research idea: the dataset's "idea"
// when the record has one (a compute node, no call), else one model call
// stating the idea of the abstract without its results (the paper's
// Figure 5). model is needed only for targets without an idea, which layout
// cannot see (it has the dataset's item ids, not its records), so it is
// optional: a target that needs it while it is unset fails its node, naming
// model. With dataset_idea = false every target is extracted and model is
// required.
//
// Its output has an "idea" field, so rank_ideas reads it as the target idea
// through its target param.

type extractType struct{}

func (extractType) Name() string    { return "extract_idea" }
func (extractType) Version() string { return "1" }

func (extractType) Params() []stages.Param {
	return []stages.Param{
		{Name: "targets", Kind: stages.Input, Required: true, Accepts: []string{"dataset", "filter_references"}, Doc: "the targets: a dataset, or filter_references (whose dropped targets stay dropped)"},
		{Name: "model", Kind: stages.ModelRef, Doc: "the model that states the idea of a target whose record has none; required with dataset_idea = false"},
		{Name: "dataset_idea", Kind: stages.Bool, Default: true, Doc: "use the record's idea when it has one; false: extract every target's idea with model"},
		{Name: "domain", Kind: stages.String, Default: "biomedical", Doc: "the research field of the targets (template data .Domain)"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultExtractPrompt, Doc: "extraction prompt template (data: .Title .Abstract .Domain)"},
	}
}

// ExtractData is the template data of the extract_idea prompt.
type ExtractData struct {
	Title, Abstract, Domain string
}

// ExtractOutput is an extract_idea node's output. Source is "dataset" or
// "model".
type ExtractOutput struct {
	Idea    string `json:"idea,omitempty"`
	Source  string `json:"source,omitempty"`
	Dropped bool   `json:"dropped,omitempty"`
}

var droppedExtract = []byte(`{"dropped":true}`)

type extractor struct {
	model       *stages.Model
	datasetIdea bool
	domain      string
	prompt      string
	promptName  string
}

func (extractType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	x := &extractor{
		model:       p.Model("model"),
		datasetIdea: p.Bool("dataset_idea"),
		domain:      p.String("domain"),
		prompt:      p.String("prompt"),
		promptName:  inst.Address + " prompt",
	}
	targets, err := stages.RequireInput(p, "targets")
	if err != nil {
		return nil, err
	}
	if !x.datasetIdea && x.model == nil {
		return nil, stages.ParamErrorf("model", "dataset_idea = false extracts every idea with model, so model is required")
	}
	sample := &ExtractData{Title: "A title", Abstract: "An abstract.", Domain: x.domain}
	if _, err := stages.RenderParam("prompt", x.promptName, x.prompt, sample); err != nil {
		return nil, err
	}
	src := targets.Source
	if src == nil {
		return nil, stages.ParamErrorf("targets", "targets (%s) has no source dataset to take the abstracts from", targets.Address)
	}
	// A dataset is its own record; filter_references says whether the
	// target is dropped and the record, reached through its dataset, holds
	// the abstract and idea.
	isDataset := targets.Type == "dataset"
	items := targets.Items()
	nodes := make([]stages.Node, 0, len(items))
	for _, item := range items {
		tn := targets.ItemNodes(item)
		if len(tn) != 1 {
			return nil, stages.ParamErrorf("targets", "targets (%s) has %d nodes for item %q; need exactly one", targets.Address, len(tn), item)
		}
		deps := []stages.Dep{{Input: "targets", Index: tn[0]}}
		if !isDataset {
			rn := src.ItemNodes(item)
			if len(rn) != 1 {
				return nil, stages.ParamErrorf("targets", "the target dataset (%s) has %d records for item %q; need exactly one", src.Address, len(rn), item)
			}
			deps = append(deps, stages.Dep{Input: src.Address, Index: rn[0]})
		}
		nodes = append(nodes, stages.Node{Item: item, Deps: deps, Prepare: x.prepare})
	}
	return nodes, nil
}

// prepare reads the record (the last dep) and, through filter_references
// (the first dep of two), whether the target is dropped.
func (x *extractor) prepare(in []stages.In) (*stages.Work, error) {
	item := in[0].Node.Item
	if len(in) == 2 {
		d, err := isDropped(in[0].Output)
		if err != nil {
			return nil, fmt.Errorf("decode target %q: %w", item, err)
		}
		if d {
			return &stages.Work{Compute: func() ([]byte, error) { return droppedExtract, nil }, KeyParams: []string{}}, nil
		}
	}
	rec, err := decodeRecord(in[len(in)-1].Output)
	if err != nil {
		return nil, fmt.Errorf("decode target %q: %w", item, err)
	}
	if x.datasetIdea && rec.idea != "" {
		// Keyed on the record alone: no param changes the dataset's idea.
		out, err := stages.EncodeOutput(ExtractOutput{Idea: rec.idea, Source: "dataset"})
		if err != nil {
			return nil, err
		}
		return &stages.Work{Compute: func() ([]byte, error) { return out, nil }, KeyParams: []string{}}, nil
	}
	if x.model == nil {
		return nil, &stages.ParamError{Param: "model", Err: stages.MissingField(in[len(in)-1], "the target's idea; set model to extract it from the abstract", "idea")}
	}
	if rec.abstract == "" {
		return nil, stages.MissingField(in[len(in)-1], "the target's idea, or the abstract to extract it from", "idea", "abstract")
	}
	prompt, err := stages.RenderParam("prompt", x.promptName, x.prompt, &ExtractData{Title: rec.title, Abstract: rec.abstract, Domain: x.domain})
	if err != nil {
		return nil, err
	}
	spec := format.Spec{Kind: format.Text}
	msgs := []llm.Message{{Role: "user", Content: stages.UserMessage(prompt, spec)}}
	return &stages.Work{Call: &stages.Call{
		Model:   x.model,
		Request: x.model.Request(msgs, 0, spec),
		Output:  extractOutput,
	}}, nil
}

// extractOutput keeps the answer as the idea. The parser trims a Text answer
// and re-asks on an empty one, so there is nothing left to refuse.
func extractOutput(a *format.Answer) ([]byte, error) {
	return stages.EncodeOutput(ExtractOutput{Idea: a.Text, Source: "model"})
}

// targetRecord is what extract_idea and overlap_rating read of a target record
// (trimmed).
type targetRecord struct {
	title, abstract, idea string
}

func decodeRecord(d []byte) (*targetRecord, error) {
	r := &targetRecord{}
	err := walkObject(d, func(key, value []byte) (bool, error) {
		var s string
		var err error
		switch string(key) {
		case "title", "abstract", "idea":
			s, err = stringValue(value)
		default:
			return false, nil
		}
		switch s = strings.TrimSpace(s); string(key) {
		case "title":
			r.title = s
		case "abstract":
			r.abstract = s
		case "idea":
			r.idea = s
		}
		return false, err
	})
	return r, err
}

// isDropped reports whether an upstream output says its target was dropped.
func isDropped(d []byte) (bool, error) {
	dropped := false
	err := walkObject(d, func(key, value []byte) (bool, error) {
		if string(key) != "dropped" {
			return false, nil
		}
		dropped = string(value) == "true"
		return true, nil
	})
	return dropped, err
}
