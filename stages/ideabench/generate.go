package ideabench

import (
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// maxIdeas bounds n, the ideas per target: each is a model call per target
// (or a share of one long answer), and the paper's study of n stops at 10.
const maxIdeas = 100

type generateType struct{}

func (generateType) Name() string    { return "generate_ideas" }
func (generateType) Version() string { return "1" } // target adds to requests only when set: existing keys stand

func (generateType) Params() []stages.Param {
	return []stages.Param{
		{Name: "references", Kind: stages.Input, Required: true, Accepts: []string{"filter_references"}, Doc: "the filtered references of each target"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Generator: true, Doc: "the model that generates ideas"},
		{Name: "n", Kind: stages.Int, Default: 3, Min: 1, Max: maxIdeas, Doc: "ideas per target (the paper: 3)"},
		{Name: "mode", Kind: stages.String, Default: "independent", Doc: `"independent" (one request per idea; raising n reuses samples) or "batch" (one request for n ideas, as the paper does)`},
		{Name: "domain", Kind: stages.String, Default: "biomedical", Doc: "the research field the generator is profiled in (template data .Domain)"},
		{Name: "system", Kind: stages.Template, Default: DefaultGenerateSystem, Doc: "system message template"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultGeneratePrompt, Doc: `user message template (data: .References .N .Sample .Keywords .Domain); left at this default, prompt_style = "authors" sends the authors' prompt instead`},
		{Name: "prompt_style", Kind: stages.String, Default: "ideaflow", Doc: `"ideaflow" (the system message, the prompt, then answer-format instructions; the ideas parsed strictly) or "authors" (generate_hypotheses.py at 9dbd125: one user message, the authors' prompt with the abstracts cleaned of braces as they clean them, no system message and no instructions, the whole answer the idea; independent mode only, as the authors ask n times)`},
		{Name: "target", Kind: stages.Input, Accepts: []string{"extract_idea"}, Doc: `for a kind = "baseline" model only: the target ideas, added to the user message after "` + llm.BaselineTargetMarker + `" (shuffled_words and target_oracle read them); a real model given target sees the target idea`},
	}
}

// GenerateData is the template data of generate_ideas prompts.
type GenerateData struct {
	References []Reference
	N          int
	Sample     int
	Keywords   []string
	Domain     string
}

// Reference is one numbered reference in a generation prompt.
type Reference struct {
	Number   int
	ID       string
	Title    string
	Abstract string
}

// IdeasOutput is a generate_ideas node's output.
type IdeasOutput struct {
	Ideas   []string `json:"ideas"`
	Dropped bool     `json:"dropped,omitempty"`
}

type generator struct {
	model          *stages.Model
	n              int
	batch          bool
	domain         string
	system, prompt string
	systemName     string
	promptName     string
	target         bool // the target param is set: the request carries the target idea
	authors        bool // prompt_style = "authors"
}

func (generateType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	g, err := newGenerator(inst)
	if err != nil {
		return nil, err
	}
	refs, err := stages.RequireInput(inst.Params, "references")
	if err != nil {
		return nil, err
	}
	// One node per request: n per item in independent mode, one in batch mode.
	// Labels and Prepare funcs are shared across items to keep big plans small.
	perItem := g.n
	if g.batch {
		perItem = 1
	}
	labels := make([]string, perItem)
	prepares := make([]func([]stages.In) (*stages.Work, error), perItem)
	for s := range prepares {
		prepares[s] = g.prepare(s)
		if !g.batch {
			labels[s] = fmt.Sprintf("sample %d", s)
		}
	}
	nodes := make([]stages.Node, 0, len(refs.Nodes)*perItem)
	target := inst.Params.Input("target")
	g.target = target != nil
	for i, up := range refs.Nodes {
		deps := []stages.Dep{{Input: "references", Index: i}}
		if target != nil {
			tn := target.ItemNodes(up.Item)
			if len(tn) != 1 {
				return nil, stages.ParamErrorf("target", "target (%s) has %d nodes for item %q; need exactly one", target.Address, len(tn), up.Item)
			}
			deps = append(deps, stages.Dep{Input: "target", Index: tn[0]})
		}
		for s := 0; s < perItem; s++ {
			nodes = append(nodes, stages.Node{Item: up.Item, Slot: s, Label: labels[s], Deps: deps, Prepare: prepares[s]})
		}
	}
	return nodes, nil
}

func newGenerator(inst *stages.Instance) (*generator, error) {
	p := inst.Params
	g := &generator{
		model:      p.Model("model"),
		n:          p.Int("n"),
		domain:     p.String("domain"),
		system:     p.String("system"),
		prompt:     p.String("prompt"),
		systemName: inst.Address + " system",
		promptName: inst.Address + " prompt",
	}
	mode := p.String("mode")
	if err := oneOf("mode", mode, "independent", "batch"); err != nil {
		return nil, err
	}
	g.batch = mode == "batch"
	style := p.String("prompt_style")
	if err := oneOf("prompt_style", style, "ideaflow", "authors"); err != nil {
		return nil, err
	}
	if g.authors = style == "authors"; g.authors {
		if g.batch {
			return nil, stages.ParamErrorf("mode", `prompt_style = "authors" asks for one hypothesis per request, as the authors ask n times: use mode = "independent"`)
		}
		if g.prompt == DefaultGeneratePrompt {
			g.prompt = AuthorsGeneratePrompt
		}
	}
	if g.model == nil {
		return nil, stages.ParamErrorf("model", "model is required")
	}
	if g.n < 1 {
		return nil, stages.ParamErrorf("n", "n = %d must be at least 1", g.n)
	}
	// Render once with data of the real shape (several references, a
	// target with keywords) so a broken template fails the plan, not every
	// node of the run, and a template that indexes .Keywords is not refused.
	sample := &GenerateData{References: []Reference{
		{Number: 1, ID: "r1", Title: "First title", Abstract: "First abstract."},
		{Number: 2, ID: "r2", Title: "Second title", Abstract: "Second abstract."},
		{Number: 3, ID: "r3", Title: "Third title", Abstract: "Third abstract."},
	}, N: g.ideasPerRequest(), Keywords: []string{"first keyword", "second keyword"}, Domain: g.domain}
	if _, err := g.render(sample, ""); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *generator) ideasPerRequest() int {
	if g.batch {
		return g.n
	}
	return 1
}

// render renders a request. A non-empty target (the target param, for
// sanity baselines) is added to the user message after
// llm.BaselineTargetMarker, on one line, before the format instructions.
func (g *generator) render(data *GenerateData, target string) ([]llm.Message, error) {
	if g.authors {
		// One user message as the authors send it: no system message, no
		// instructions, the abstracts cleaned as they clean them.
		clean := *data
		clean.References = make([]Reference, len(data.References))
		for i, r := range data.References {
			r.Abstract = authorsAbstract(r.Abstract)
			clean.References[i] = r
		}
		prompt, err := stages.RenderParam("prompt", g.promptName, g.prompt, &clean)
		if err != nil {
			return nil, err
		}
		if target != "" {
			prompt = strings.TrimSpace(prompt) + "\n\n" + llm.BaselineTargetMarker + " " + target
		}
		return []llm.Message{{Role: "user", Content: prompt}}, nil
	}
	system, err := stages.RenderParam("system", g.systemName, g.system, data)
	if err != nil {
		return nil, err
	}
	prompt, err := stages.RenderParam("prompt", g.promptName, g.prompt, data)
	if err != nil {
		return nil, err
	}
	spec := g.spec(data.N)
	if target != "" {
		prompt = strings.TrimSpace(prompt) + "\n\n" + llm.BaselineTargetMarker + " " + target
	}
	var msgs []llm.Message
	if s := strings.TrimSpace(system); s != "" {
		msgs = append(msgs, llm.Message{Role: "system", Content: s})
	}
	return append(msgs, llm.Message{Role: "user", Content: stages.UserMessage(prompt, spec)}), nil
}

var droppedIdeas = []byte(`{"ideas":[],"dropped":true}`)

// prepare builds sample s of an item. In independent mode the request holds
// nothing that depends on n, so growing n leaves samples 0..n-1 cached.
func (g *generator) prepare(sample int) func(in []stages.In) (*stages.Work, error) {
	return func(in []stages.In) (*stages.Work, error) {
		f, err := decodePromptInput(in[0].Output)
		if err != nil {
			return nil, fmt.Errorf("decode references of %q: %w", in[0].Node.Item, err)
		}
		if f.dropped {
			return dropped(droppedIdeas, "model"), nil
		}
		data := &GenerateData{N: g.ideasPerRequest(), Sample: sample, Keywords: f.keywords, Domain: g.domain}
		// The target idea is never template data (a prompt must not be able
		// to leak it to a real generator); it reaches baselines only.
		target := ""
		if g.target {
			text, err := targetText(in[1])
			if err != nil {
				return nil, fmt.Errorf("target of %q: %w", in[1].Node.Item, err)
			}
			target = strings.Join(strings.Fields(text), " ")
		}
		data.References = make([]Reference, len(f.references))
		for i, r := range f.references {
			data.References[i] = Reference{Number: i + 1, ID: r.ID, Title: r.Title, Abstract: r.Abstract}
		}
		msgs, err := g.render(data, target)
		if err != nil {
			return nil, err
		}
		output := ideasOutput
		if g.authors {
			output = textIdeaOutput
		}
		return &stages.Work{Call: &stages.Call{
			Model:   g.model,
			Request: g.model.Request(msgs, sample, g.spec(data.N)),
			Output:  output,
		}}, nil
	}
}

// spec is the answer a request asks for: n ideas, or with the authors'
// prompt the whole answer as the one idea (StrOutputParser's reading).
func (g *generator) spec(n int) format.Spec {
	if g.authors {
		return format.Spec{Kind: format.Text}
	}
	return format.Spec{Kind: format.Ideas, N: n}
}

// textIdeaOutput takes a whole (trimmed, non-empty) answer as the idea,
// as the authors' StrOutputParser does.
func textIdeaOutput(a *format.Answer) ([]byte, error) {
	return stages.EncodeOutput(IdeasOutput{Ideas: []string{a.Text}})
}

// ideasOutput converts a parsed answer. It checks nothing: for an Ideas spec
// with N >= 1 the parser guarantees exactly N trimmed, non-empty ideas, and
// refusing here would fail the node where a parse error gets a repair re-ask.
func ideasOutput(a *format.Answer) ([]byte, error) {
	return stages.EncodeOutput(IdeasOutput{Ideas: a.Ideas})
}
