package liveideabench

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/judging"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func init() { stages.Register(judgeType{}) }

// Judge scores are on the paper's 1-10 scale.
const (
	scoreMin = 1
	scoreMax = 10
	// maxJudges bounds judges_per_idea: each is one call per idea.
	maxJudges = 50
)

type judgeType struct{}

func (judgeType) Name() string    { return "judge_panel" }
func (judgeType) Version() string { return "2" } // 2: draws per idea, exclusion by name, authors_parse

func (judgeType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Doc: "the ideas to judge: a generate_from_keyword instance, IdeaBench's generate_ideas (each of its ideas judged), or any stage or dataset whose nodes give an idea; its generator is never among the judges"},
		{Name: "panel", Kind: stages.ModelList, Required: true, Doc: "the judge models; each idea gets judges_per_idea of them, drawn by rendezvous hashing on seed and the idea (see draw), so adding a judge re-runs only the judgements that now draw it"},
		{Name: "judges_per_idea", Kind: stages.Int, Default: 3, Min: 1, Max: maxJudges, Doc: "judges drawn per idea (the paper: 3)"},
		{Name: "seed", Kind: stages.Int, Default: 0, Min: math.MinInt32, Max: math.MaxInt32, Doc: "seed of the judge draws"},
		excludeParam,
		drawParam,
		protocolParam,
		{Name: "dimensions", Kind: stages.StringList, Default: defaultDimensions, Doc: "the scores each judge gives, 1-10 (protocol v2: originality, feasibility, clarity; v1: originality and feasibility)"},
		{Name: "definitions", Kind: stages.StringMap, Doc: "dimension -> its description in the judge prompt; the protocol's three have defaults, any other dimension needs one"},
		{Name: "system_prompt", Kind: stages.Template, Default: DefaultJudgeSystemPrompt, Doc: "the judge's system message (data: .Dimensions with .Name and .Definition, .Count: their number in words); it asks for the score block the scores are read from, so a replacement must too; the protocol's by default (v2's shown)"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultJudgePrompt, Doc: "the user message (data: .Idea, .Keyword, .Domain); the protocol's by default (v2's shown)"},
	}
}

// The draw param's values.
const (
	// DrawIndependent: each idea gets a draw of its own, keyed on its
	// generator, keyword and sample (fluency: pair), as the authors'
	// random.sample per idea.
	DrawIndependent = "independent"
	// DrawShared: one draw per keyword and sample (fluency: pair), the same
	// judges for every generator's idea that none of them is excluded from.
	DrawShared = "shared"
)

// excludeParam and drawParam are judge_panel's and fluency's, declared once.
var (
	excludeParam = stages.Param{Name: "exclude", Kind: stages.String, Default: string(judging.ExcludeModel),
		Doc: `who may not judge an idea: "model" (its generator, by exact model name, as the authors' run.py and the paper), "family" (every model of the generator's family too) or "none"`}
	drawParam = stages.Param{Name: "draw", Kind: stages.String, Default: DrawIndependent,
		Doc: `"independent" (each idea its own draw, keyed on its generator, keyword and sample, as the authors' random.sample per idea) or "shared" (one draw per keyword and sample: every generator's idea gets the same judges, unless excluded)`}
)

// drawParams reads exclude and draw.
func drawParams(p stages.Params) (judging.Exclusion, bool, error) {
	ex, err := judging.ParseExclusion("exclude", p.String("exclude"))
	if err != nil {
		return "", false, err
	}
	switch p.String("draw") {
	case DrawIndependent:
		return ex, false, nil
	case DrawShared:
		return ex, true, nil
	}
	return "", false, stages.ParamErrorf("draw", `draw = %q is not one of %q (each idea its own draw, as the authors' code) or %q (one draw per keyword and sample for every generator)`, p.String("draw"), DrawIndependent, DrawShared)
}

// DrawKey is the rendezvous key (judging.Draw) of one draw of judge_panel
// (parts: keyword item, sample) or fluency (item, "pair", pair index):
// the parts, and the generator's name unless the draw is shared.
func DrawKey(shared bool, gen *stages.Model, parts ...string) string {
	if shared {
		return judging.Key(parts...)
	}
	name := ""
	if gen != nil {
		name = gen.Name
	}
	return judging.Key(append([]string{"idea of", name}, parts...)...)
}

// Dimension is one judged dimension as the system prompt sees it.
type Dimension struct{ Name, Definition string }

// JudgeSystemData is the system prompt's template data.
type JudgeSystemData struct {
	Dimensions []Dimension
	Count      string // "three"
}

// JudgeData is the user prompt's template data.
type JudgeData struct{ Idea, Keyword, Domain string }

// Judgement is a judge_panel node's output: one judge's scores for one
// idea. Which idea and judge it belongs to is the node's (item = keyword,
// the judge in Judge); the generator is the instance's. Only what the
// request and the protocol determine is in it, because two nodes with the
// same request share one cached answer. A judgement of a dropped idea is
// {"dropped": true}.
type Judgement struct {
	Judge     string         `json:"judge"`
	Scores    map[string]int `json:"scores"`
	Mean      float64        `json:"mean"` // of Scores
	Reasoning string         `json:"reasoning,omitempty"`
	// AuthorsParse is what the authors' own parser of the protocol read
	// from the same raw answer: a compatibility parse, never used to accept
	// the answer.
	AuthorsParse *AuthorsScores `json:"authors_parse,omitempty"`
	Dropped      bool           `json:"dropped,omitempty"`
}

// AuthorsScores is a compatibility parse of a judge's answer: Scores and
// Mean as the strict parse's (Scores as the authors' statistics use them,
// float(value), so 7.5 or 15 can appear), Valid false with the Reason when
// the authors' code would not have used the answer (it asks again), and
// Parser naming the authors' function and commit.
type AuthorsScores struct {
	Scores map[string]float64 `json:"scores,omitempty"`
	Mean   *float64           `json:"mean,omitempty"`
	Valid  bool               `json:"valid"`
	Reason string             `json:"reason,omitempty"`
	Parser string             `json:"parser"`
}

func authorsScores(r *release, fields []string, raw string) *AuthorsScores {
	c := r.parseScores(raw, fields)
	out := &AuthorsScores{Scores: c.Scores, Valid: c.Valid, Reason: c.Reason, Parser: r.scoresParser}
	if c.Valid && len(c.Scores) > 0 {
		keys := make([]string, 0, len(c.Scores))
		for k := range c.Scores {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sum := 0.0
		for _, k := range keys {
			sum += c.Scores[k]
		}
		m := sum / float64(len(keys))
		out.Mean = &m
	}
	return out
}

var droppedOutput = []byte(`{"dropped":true}`)

type judge struct {
	system     string // rendered once: it depends on the params alone
	prompt     string
	promptName string
	spec       format.Spec
	release    *release
}

func (judgeType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	ideas := p.Input("ideas")
	if ideas == nil {
		return nil, stages.ParamErrorf("ideas", "ideas is required")
	}
	panel := p.Models("panel")
	k := p.Int("judges_per_idea")
	ex, shared, err := drawParams(p)
	if err != nil {
		return nil, err
	}
	if err := judging.Check("panel", "judges_per_idea", panel, ideas.Generator, k, ex); err != nil {
		return nil, err
	}
	r, err := protocolOf(p)
	if err != nil {
		return nil, err
	}
	dims, err := dimensions(p, r)
	if err != nil {
		return nil, err
	}
	j := &judge{prompt: r.text(p, "prompt", DefaultJudgePrompt, r.judgeUser), promptName: inst.Address + " prompt", release: r,
		spec: format.Spec{Kind: format.Scores, Fields: names(dims), Min: scoreMin, Max: scoreMax}}
	if err := j.spec.Validate(); err != nil {
		return nil, stages.ParamErrorf("dimensions", "dimensions: %v", err)
	}
	system := r.text(p, "system_prompt", DefaultJudgeSystemPrompt, r.judgeSystem)
	if j.system, err = stages.RenderParam("system_prompt", inst.Address+" system_prompt", system, &JudgeSystemData{Dimensions: dims, Count: countWord(len(dims))}); err != nil {
		return nil, err
	}
	if _, err := stages.RenderParam("prompt", j.promptName, j.prompt, &JudgeData{Idea: "An idea.", Keyword: "a keyword"}); err != nil {
		return nil, err
	}
	// Each idea is judged: one per node of a LiveIdeaBench generation, or
	// each of a batch of IdeaBench ideas (stages.IdeasPerNode, from the
	// upstream's schema).
	per := stages.IdeasPerNode(ideas)
	if per < 1 {
		return nil, stages.ParamErrorf("ideas", "ideas (%s) gives a number of ideas per node known only once it runs, and judge_panel lays out one judgement per idea; give it a stage with one idea a node (generate_from_keyword) or a fixed number (generate_ideas)", ideas.Address)
	}
	eligible := judging.Eligible(panel, ideas.Generator, ex)
	position := make(map[string]int, len(panel))
	for i, m := range panel {
		position[m.Name] = i
	}
	seed := p.Int("seed")
	var nodes []stages.Node
	prepares := make(map[judgeIdea]func([]stages.In) (*stages.Work, error), len(eligible)*per)
	for _, m := range eligible {
		for x := 0; x < per; x++ {
			prepares[judgeIdea{m.Name, x}] = j.prepare(m, x)
		}
	}
	// Labels are shared across keywords: a full-size plan has 141,600
	// judgements and a handful of distinct labels.
	type labelKey struct {
		sample, idea int
		judge        string
	}
	labels := map[labelKey]string{}
	nodes = make([]stages.Node, 0, len(ideas.Nodes)*per*k)
	for i, n := range ideas.Nodes {
		deps := []stages.Dep{{Input: "ideas", Index: i}}
		sample := strconv.Itoa(n.Slot)
		for x := 0; x < per; x++ {
			// One idea a node (LiveIdeaBench) keeps the draw, slot and
			// label it always had; each of a batch is drawn for apart.
			key := DrawKey(shared, ideas.Generator, n.Item, sample)
			if per > 1 {
				key = DrawKey(shared, ideas.Generator, n.Item, sample, "idea", strconv.Itoa(x))
			}
			for _, m := range judging.Draw(seed, key, eligible, k) {
				lk := labelKey{n.Slot, x, m.Name}
				label, ok := labels[lk]
				if !ok {
					label = "sample " + sample + " judge " + m.Name
					if per > 1 {
						label = "sample " + sample + " idea " + strconv.Itoa(x) + " judge " + m.Name
					}
					labels[lk] = label
				}
				nodes = append(nodes, stages.Node{
					Item: n.Item,
					// Unique per node of the instance (the memo tells nodes
					// apart by item and slot): the sample, its idea, then
					// the judge's place in the panel.
					Slot:    (n.Slot*per+x)*len(panel) + position[m.Name],
					Label:   label,
					Deps:    deps,
					Prepare: prepares[judgeIdea{m.Name, x}],
				})
			}
		}
	}
	return nodes, nil
}

// dimensions resolves the dimensions param with their definitions.
func dimensions(p stages.Params, r *release) ([]Dimension, error) {
	names := r.list(p, "dimensions", defaultDimensions, r.dimensions)
	if len(names) == 0 {
		return nil, stages.ParamErrorf("dimensions", "dimensions is empty; give the scores to ask for, e.g. [\"originality\", \"feasibility\"]")
	}
	defs := p.StringMap("definitions")
	for d := range defs {
		found := false
		for _, n := range names {
			found = found || n == d
		}
		if !found {
			return nil, stages.ParamErrorf("definitions", "definitions has %q, which is not one of the dimensions (%s)", d, strings.Join(names, ", "))
		}
	}
	out := make([]Dimension, len(names))
	for i, n := range names {
		def, ok := defs[n]
		if !ok {
			def, ok = r.definitions[n]
		}
		if !ok {
			return nil, stages.ParamErrorf("definitions", "dimension %q has no definition for the judge prompt; add it to definitions, e.g. definitions = { %s = \"...\" }", n, n)
		}
		out[i] = Dimension{Name: n, Definition: def}
	}
	return out, nil
}

func names(dims []Dimension) []string {
	out := make([]string, len(dims))
	for i, d := range dims {
		out[i] = d.Name
	}
	return out
}

func countWord(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

// judgeIdea names a judge's Prepare for one idea of a node.
type judgeIdea struct {
	judge string
	idea  int
}

// prepare asks judge m about idea x of the node in in[0] (read by
// stages.ReadIdeas: a LiveIdeaBench idea, an IdeaBench batch, a record).
func (j *judge) prepare(m *stages.Model, x int) func([]stages.In) (*stages.Work, error) {
	return func(in []stages.In) (*stages.Work, error) {
		idea, err := stages.ReadIdeas(in[0], "the text to judge")
		if err != nil {
			return nil, err
		}
		if idea.Dropped {
			return dropWork(), nil
		}
		if x >= len(idea.Ideas) {
			return nil, fmt.Errorf("%s gives %d idea(s); judge_panel laid out a judgement of idea %d", stages.NodeAddress(in[0]), len(idea.Ideas), x)
		}
		user, err := stages.RenderParam("prompt", j.promptName, j.prompt, &JudgeData{Idea: idea.Ideas[x], Keyword: idea.Keyword, Domain: idea.Domain})
		if err != nil {
			return nil, err
		}
		// The system prompt carries the answer format, as in the paper, so
		// no format paragraph is appended; a repair re-ask states it.
		msgs := []llm.Message{{Role: "system", Content: strings.TrimSpace(j.system)}, {Role: "user", Content: strings.TrimSpace(user)}}
		return &stages.Work{Call: &stages.Call{
			Model:   m,
			Request: m.Request(msgs, 0, j.spec),
			Output: func(a *format.Answer) ([]byte, error) {
				return judgementOutput(m.Name, j.spec.Fields, a, j.release)
			},
			// The authors' parser of the protocol reads the answer too.
			KeyParams: []string{"protocol"},
		}}, nil
	}
}

func judgementOutput(judge string, dims []string, a *format.Answer, r *release) ([]byte, error) {
	sum := 0
	for _, d := range dims {
		sum += a.Fields[d]
	}
	return json.Marshal(Judgement{Judge: judge, Scores: a.Fields, Mean: float64(sum) / float64(len(dims)), Reasoning: a.Explanation,
		AuthorsParse: authorsScores(r, dims, a.Raw)})
}

// dropWork is the Compute of a node whose idea was dropped upstream: keyed
// on no param, so it stays cached whatever the judges or prompts.
func dropWork() *stages.Work {
	return &stages.Work{Compute: func() ([]byte, error) { return droppedOutput, nil }, KeyParams: []string{}}
}

// decodeIdea reads an upstream idea node's output.
func decodeIdea(x stages.In) (*Idea, error) {
	var idea Idea
	if err := json.Unmarshal(x.Output, &idea); err != nil {
		return nil, fmt.Errorf("idea of %q (sample %d) is not a LiveIdeaBench idea: %w", x.Node.Item, x.Node.Slot, err)
	}
	if !idea.Dropped && strings.TrimSpace(idea.Idea) == "" {
		return nil, stages.MissingField(x, "the idea's text", stages.FieldIdea)
	}
	return &idea, nil
}
