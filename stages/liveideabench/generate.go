package liveideabench

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func init() {
	stages.Register(generateType{})
}

// maxIdeasPerKeyword bounds ideas_per_keyword: each is a model call per
// keyword and model, and fluency needs only pairs.
const maxIdeasPerKeyword = 100

// maxLimit bounds max_words and min_chars: far past any short idea, so only
// a typo meets it.
const maxLimit = 100_000

// Drop reasons of an Idea (its Reason field).
const (
	ReasonTooLong  = "too_long"
	ReasonTooShort = "too_short"
	ReasonRefused  = "refused"
)

type generateType struct{}

func (generateType) Name() string    { return "generate_from_keyword" }
func (generateType) Version() string { return "1" }

func (generateType) Params() []stages.Param {
	return []stages.Param{
		{Name: "keywords", Kind: stages.Input, Required: true, Accepts: []string{"dataset"}, Doc: "the keywords: a liveideabench-keywords or keywords dataset, or any dataset whose records hold keyword_field"},
		{Name: "keyword_field", Kind: stages.String, Default: "keyword", Doc: "the record field holding the keyword (generic csv/jsonl datasets; the keyword formats call it keyword)"},
		{Name: "domain_field", Kind: stages.String, Default: "domain", Doc: "the record field holding the keyword's domain, if any (template data .Domain; the per-domain results)"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Generator: true, Doc: "the model that generates ideas"},
		{Name: "ideas_per_keyword", Kind: stages.Int, Default: 2, Min: 1, Max: maxIdeasPerKeyword, Doc: "independent ideas per keyword and model, one request each (fluency compares them in pairs)"},
		protocolParam,
		{Name: "system", Kind: stages.Template, Default: "", Doc: `system message template (same data as prompt); "" sends none, as the paper`},
		{Name: "prompt", Kind: stages.Template, Default: DefaultIdeaPrompt, Doc: "user message template (data: .Keyword .Domain .Sample .ID .Item, the item's record); the protocol's idea prompt by default (v2's shown, v1's under protocol = \"v1\")"},
		{Name: "refusal_phrases", Kind: stages.StringList, Default: DefaultRefusalPhrases, Doc: "an answer containing one of these (any case) is a refusal, re-asked once with reask (v2's REJECTION_PHRASES; protocol v1 detects none); [] turns detection off"},
		{Name: "reask", Kind: stages.Template, Default: FallbackPromptV2, Doc: "the message sent once after a refusal (same data as prompt): v2's fallback prompt, the idea prompt with a research justification"},
		{Name: "reask_mode", Kind: stages.String, Default: ReaskNewRequest, Doc: `how reask is sent: "new_request" (a request of its own, as the authors' code sends its fallback prompt) or "follow_up" (a reply after the refusal, in the same conversation)`},
		{Name: "drop_refused", Kind: stages.Bool, Default: false, Doc: "an idea whose re-ask was refused too is dropped as refused; false (the authors' code): the re-ask's answer is judged, whatever it says"},
		{Name: "final_idea", Kind: stages.Bool, Default: false, Doc: `reasoning models: ask for the answer after "**Final Idea:**" and judge only what follows the marker (the whole answer when there is none), as the paper does for QwQ`},
		{Name: "final_idea_marker", Kind: stages.String, Default: MarkerAuthors, Doc: `final_idea: where the idea is cut: "authors" (extract_final_idea: after the first "**Final Idea:**", else "**Final Idea**:", else the bare words "final idea", any case) or "last_label" (after the last "Final Idea" written as a label: a colon or dash after it, or a line of its own, so "my final idea is ..." is no marker)`},
		{Name: "max_words", Kind: stages.Int, Default: 200, Min: 1, Max: maxLimit, Doc: "ideas of this many words or more are dropped as too_long (the authors keep fewer than 200)"},
		{Name: "max_chars", Kind: stages.Int, Default: 2500, Min: 1, Max: maxLimit, Doc: "ideas of this many characters or more are dropped as too_long (the authors keep fewer than 2,500)"},
		{Name: "min_chars", Kind: stages.Int, Default: 101, Min: 0, Max: maxLimit, Doc: "ideas of fewer characters are dropped as too_short (the authors keep more than 100: 101)"},
	}
}

// The final_idea_marker values.
const (
	MarkerAuthors   = "authors"
	MarkerLastLabel = "last_label"
)

// The reask modes.
const (
	ReaskNewRequest = "new_request"
	ReaskFollowUp   = "follow_up"
)

// KeywordData is the template data of generate_from_keyword's prompt,
// system and reask templates.
type KeywordData struct {
	ID      string // the item id
	Keyword string
	Domain  string // "" when the dataset has none
	Sample  int
	// Item is the item's whole record (see datasets.RecordFields):
	// {{ .Item.keyword }}, {{ index .Item "Search Volume" }}.
	Item map[string]any
}

// outputParams are the params Idea outputs read beyond the request: the
// call is keyed on them (stages.Call.KeyParams), so changing max_words
// re-runs the nodes instead of serving ideas filtered under the old limit.
var outputParams = []string{"keyword_field", "domain_field", "final_idea", "final_idea_marker", "max_words", "max_chars", "min_chars", "drop_refused"}

type generator struct {
	model                        *stages.Model
	keywordField                 string
	domainField                  string
	system, prompt, reask        string
	reaskAlone                   bool
	address                      string
	phrases                      []string
	finalIdea                    bool
	lastLabel                    bool // final_idea_marker = "last_label"
	finalIdeaSep                 string
	dropRefused                  bool
	maxWords, maxChars, minChars int
}

func (generateType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	g, err := newGenerator(inst)
	if err != nil {
		return nil, err
	}
	kw := inst.Params.Input("keywords")
	if kw == nil {
		return nil, stages.ParamErrorf("keywords", "keywords is required")
	}
	n := inst.Params.Int("ideas_per_keyword")
	if n < 1 {
		return nil, stages.ParamErrorf("ideas_per_keyword", "ideas_per_keyword = %d must be at least 1", n)
	}
	// Labels and Prepare funcs are shared across keywords to keep a
	// 190,000-node plan small.
	labels := make([]string, n)
	prepares := make([]func([]stages.In) (*stages.Work, error), n)
	for s := range prepares {
		labels[s] = fmt.Sprintf("sample %d", s)
		prepares[s] = g.prepare(s)
	}
	nodes := make([]stages.Node, 0, len(kw.Nodes)*n)
	for i, up := range kw.Nodes {
		deps := []stages.Dep{{Input: "keywords", Index: i}}
		for s := 0; s < n; s++ {
			nodes = append(nodes, stages.Node{Item: up.Item, Slot: s, Label: labels[s], Deps: deps, Prepare: prepares[s]})
		}
	}
	return nodes, nil
}

func newGenerator(inst *stages.Instance) (*generator, error) {
	p := inst.Params
	r, err := protocolOf(p)
	if err != nil {
		return nil, err
	}
	g := &generator{
		model:        p.Model("model"),
		keywordField: p.String("keyword_field"),
		domainField:  p.String("domain_field"),
		system:       p.String("system"),
		prompt:       r.text(p, "prompt", DefaultIdeaPrompt, r.ideaPrompt),
		reask:        p.String("reask"),
		address:      inst.Address,
		phrases:      r.list(p, "refusal_phrases", DefaultRefusalPhrases, r.refusalPhrases),
		finalIdea:    p.Bool("final_idea"),
		finalIdeaSep: r.finalIdeaSep,
		dropRefused:  p.Bool("drop_refused"),
		maxWords:     p.Int("max_words"),
		maxChars:     p.Int("max_chars"),
		minChars:     p.Int("min_chars"),
	}
	switch p.String("final_idea_marker") {
	case MarkerAuthors:
	case MarkerLastLabel:
		g.lastLabel = true
	default:
		return nil, stages.ParamErrorf("final_idea_marker", `final_idea_marker = %q is not one of %q (the authors' extract_final_idea) or %q`, p.String("final_idea_marker"), MarkerAuthors, MarkerLastLabel)
	}
	switch p.String("reask_mode") {
	case ReaskNewRequest:
		g.reaskAlone = true
	case ReaskFollowUp:
	default:
		return nil, stages.ParamErrorf("reask_mode", `reask_mode = %q is not one of %q (a request of its own, as the authors' code) or %q (a reply in the same conversation)`, p.String("reask_mode"), ReaskNewRequest, ReaskFollowUp)
	}
	if g.model == nil {
		return nil, stages.ParamErrorf("model", "model is required")
	}
	if g.keywordField == "" {
		return nil, stages.ParamErrorf("keyword_field", `keyword_field is empty; name the record field holding the keyword (default "keyword")`)
	}
	for i, ph := range g.phrases {
		if strings.TrimSpace(ph) == "" {
			return nil, stages.ParamErrorf("refusal_phrases", "refusal_phrases[%d] is blank; it would mark every answer a refusal", i)
		}
	}
	if strings.TrimSpace(g.reask) == "" && len(g.phrases) > 0 {
		return nil, stages.ParamErrorf("reask", "reask is empty while refusal_phrases is set; give the message to re-ask with, or set refusal_phrases = [] to turn refusal detection off")
	}
	if g.maxWords < 1 {
		return nil, stages.ParamErrorf("max_words", "max_words = %d must be at least 1", g.maxWords)
	}
	if g.maxChars <= g.minChars {
		return nil, stages.ParamErrorf("max_chars", "max_chars = %d is not above min_chars = %d, so every idea would be dropped", g.maxChars, g.minChars)
	}
	// Render once with data of the real shape, so a broken template fails
	// the plan rather than every node. The record's other fields are known
	// only when the dataset is read, so a template naming one is checked
	// per node (its error lists the fields the record has).
	sample := &KeywordData{ID: "sample keyword", Keyword: "sample keyword", Domain: "Physics",
		Item: map[string]any{g.keywordField: "sample keyword"}}
	if g.domainField != "" {
		sample.Item[g.domainField] = "Physics"
	}
	if _, err := g.render(sample); err != nil && !strings.Contains(err.Error(), "<.Item.") {
		return nil, err
	}
	return g, nil
}

// rendered are a node's messages and its refusal spec.
type rendered struct {
	msgs []llm.Message
	spec format.Spec
}

func (g *generator) render(data *KeywordData) (*rendered, error) {
	text := func(param, tmpl string) (string, error) {
		s, err := stages.Render(g.address+" "+param, tmpl, data)
		if err != nil {
			return "", &stages.ParamError{Param: param, Err: err}
		}
		// Trimmed, so moving an inline template into a file (final newline)
		// keeps the request and its cache key.
		return strings.TrimSpace(s), nil
	}
	system, err := text("system", g.system)
	if err != nil {
		return nil, err
	}
	prompt, err := text("prompt", g.prompt)
	if err != nil {
		return nil, err
	}
	spec := format.Spec{Kind: format.Text}
	if len(g.phrases) > 0 {
		reask, err := text("reask", g.reask)
		if err != nil {
			return nil, err
		}
		if g.finalIdea {
			reask += g.finalIdeaSep + finalIdeaInstruction
		}
		spec.Refusals, spec.Reask, spec.ReaskAlone = g.phrases, reask, g.reaskAlone
	}
	if g.finalIdea {
		prompt += g.finalIdeaSep + finalIdeaInstruction
	}
	var msgs []llm.Message
	if system != "" {
		msgs = append(msgs, llm.Message{Role: "system", Content: system})
	}
	return &rendered{msgs: append(msgs, llm.Message{Role: "user", Content: prompt}), spec: spec}, nil
}

// prepare builds sample s of a keyword.
//
// The re-ask after a refusal travels in the request's format (Refusals,
// Reask) and is made by llm.Ask within the same node, rather than by an
// expanded child node: a child can depend only on another stage's nodes,
// and this way the node is keyed on its first request alone, its output
// holds both answers, and a warm run replays the exchange with no call.
// Changing refusal_phrases or reask changes that request, so it re-runs
// the stage's calls: what counts as a refusal is part of the method.
func (g *generator) prepare(sample int) func(in []stages.In) (*stages.Work, error) {
	return func(in []stages.In) (*stages.Work, error) {
		item := in[0].Node.Item
		rec, err := datasets.RecordFields(in[0].Output)
		if err != nil {
			return nil, fmt.Errorf("keyword %q: %w", item, err)
		}
		keyword, ok := stringField(rec, g.keywordField)
		if !ok || strings.TrimSpace(keyword) == "" {
			return nil, &stages.ParamError{Param: "keyword_field", Err: stages.MissingField(in[0], fmt.Sprintf("the keyword; the record has %s: set keyword_field", fieldNames(rec)), g.keywordField)}
		}
		domain, _ := stringField(rec, g.domainField)
		data := &KeywordData{ID: item, Keyword: keyword, Domain: domain, Sample: sample, Item: rec}
		r, err := g.render(data)
		if err != nil {
			return nil, err
		}
		return &stages.Work{Call: &stages.Call{
			Model:     g.model,
			Request:   g.model.Request(r.msgs, sample, r.spec),
			Output:    func(a *format.Answer) ([]byte, error) { return g.output(keyword, domain, a) },
			KeyParams: outputParams,
		}}, nil
	}
}

// output turns the answer into the node's Idea: the idea judged is the
// text after a Final Idea marker (final_idea, cut per final_idea_marker;
// else, or without a marker, the whole answer), white space collapsed,
// dropped when too long, too
// short, or (drop_refused) refused twice. The lengths are counted on the
// collapsed text, as the authors count them on the ideas they store
// (run.py's clean_text); a length in characters is in Unicode code points,
// as Python's len.
func (g *generator) output(keyword, domain string, a *format.Answer) ([]byte, error) {
	idea := Idea{Keyword: keyword, Domain: domain, Answer: a.Text, Refused: a.Refusal != "", RefusalAnswer: a.Refusal, FallbackRefused: a.Refused}
	text := a.Text
	switch {
	case g.finalIdea && g.lastLabel:
		if x, ok := format.FinalIdea(text); ok {
			text = x
		}
	case g.finalIdea:
		text = format.LiveIdeaBenchFinalIdea(text)
	}
	idea.Idea = format.CollapseSpace(text)
	idea.Words = len(strings.Fields(idea.Idea))
	chars := utf8.RuneCountInString(idea.Idea)
	switch {
	case a.Refused && g.dropRefused:
		idea.Dropped, idea.Reason = true, ReasonRefused
	case idea.Words >= g.maxWords || chars >= g.maxChars:
		idea.Dropped, idea.Reason = true, ReasonTooLong
	case chars < g.minChars:
		idea.Dropped, idea.Reason = true, ReasonTooShort
	}
	b, err := json.Marshal(idea)
	if err != nil {
		return nil, fmt.Errorf("encode idea: %w", err)
	}
	return b, nil
}

// stringField reads a record field as text: a string, or a number as
// written.
func stringField(rec map[string]any, name string) (string, bool) {
	switch v := rec[name].(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

func fieldNames(rec map[string]any) string {
	names := make([]string, 0, len(rec))
	for k := range rec {
		names = append(names, fmt.Sprintf("%q", k))
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
