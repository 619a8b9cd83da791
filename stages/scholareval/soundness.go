package scholareval

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
	"github.com/ideaflow/ideaflow/stages/literature"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// Bounds of the counts an idea's answers may fan out into. MaxPerItem of
// the stages downstream follow from them, so each is declared once here.
const (
	maxMethods          = 50 // soundness_methods max_methods
	maxQueriesPerMethod = 5
	maxStatements       = 50 // contribution_dimensions max_statements
	maxQueriesPerStmt   = 10
	maxQueries          = maxStatements * maxQueriesPerStmt // >= maxMethods * maxQueriesPerMethod
)

// ---- soundness_methods -------------------------------------------------

type methodsType struct{}

func (methodsType) Name() string    { return "soundness_methods" }
func (methodsType) Version() string { return "1" }
func (methodsType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Doc: "the ideas to review, one per item: a dataset of format scholarideas (or any records with id, idea and cutoff), or a stage that gives one idea an item (IdeaBench's generate_ideas with n = 1, generate_from_keyword with ideas_per_keyword = 1)"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Doc: "the model that extracts the methods (the reviewer)"},
		{Name: "max_methods", Kind: stages.Int, Default: 10, Min: 1, Max: maxMethods, Doc: "extract at most this many methods per idea (the paper sets no cap; the answer decides how many)"},
		{Name: "queries_per_method", Kind: stages.Int, Default: 1, Min: 1, Max: maxQueriesPerMethod, Doc: "literature queries per method (the paper: 1 snippet query per method)"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultMethodsPrompt, Doc: "the extraction prompt (data: .Idea .MaxMethods .QueriesPerMethod)"},
	}
}

// Method is one extracted method and its literature queries.
type Method struct {
	Method  string   `json:"method"`
	Queries []string `json:"queries"`
}

// MethodsOutput is a soundness_methods node's output. Idea and Cutoff are
// carried so the stages downstream need not read the dataset again.
type MethodsOutput struct {
	Idea    string   `json:"idea"`
	Cutoff  string   `json:"cutoff,omitempty"`
	Methods []Method `json:"methods"`
	Queries []Query  `json:"queries"` // every method's queries, flat, for literature_search
	Dropped int      `json:"dropped"` // listed methods dropped as duplicates or past max_methods
	// DroppedUpstream says the idea was dropped upstream: no methods, no
	// call, and a review that passes the drop on.
	DroppedUpstream bool `json:"dropped_upstream,omitempty"`
}

type methodsData struct {
	Idea                         string
	MaxMethods, QueriesPerMethod int
}

func (methodsType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	max, perMethod := inst.Params.Int("max_methods"), inst.Params.Int("queries_per_method")
	return extractLayout(inst,
		func(text string) any { return methodsData{text, max, perMethod} },
		func(rec *idea, lines []string) any { return parseMethods(rec, lines, max, perMethod) },
		func() any { return MethodsOutput{Methods: []Method{}, Queries: []Query{}, DroppedUpstream: true} })
}

// queryLabel finds "Query:" / "Queries:" after a method or statement.
var queryLabel = regexp.MustCompile(`(?i)(?:^|[\s(\[—–\-|;])\**quer(?:y|ies)\**\s*:\s*`)

// splitQueries splits "method text Queries: q1 | q2" into the text and its
// queries (at most n). A line without a query label is its own query: the
// method's text is a fair snippet query, and a model that forgot the label
// should not lose the method.
func splitQueries(line string, n int) (string, []string) {
	text, qs := line, ""
	if loc := queryLabel.FindAllStringIndex(line, -1); len(loc) > 0 {
		last := loc[len(loc)-1]
		text, qs = line[:last[0]], line[last[1]:]
	}
	text = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), "-—–|;:(["))
	var queries []string
	seen := map[string]bool{}
	for _, q := range strings.FieldsFunc(qs, func(r rune) bool { return r == '|' || r == ';' || r == '\n' }) {
		q = strings.Trim(strings.TrimSpace(q), `"'*)]`)
		if q != "" && !seen[norm(q)] && len(queries) < n {
			seen[norm(q)] = true
			queries = append(queries, q)
		}
	}
	if len(queries) == 0 {
		queries = []string{text}
	}
	return text, queries
}

func parseMethods(rec *idea, lines []string, max, perMethod int) MethodsOutput {
	out := MethodsOutput{Idea: rec.Idea, Cutoff: rec.Cutoff, Methods: []Method{}, Queries: []Query{}}
	seen := map[string]bool{}
	for _, l := range lines {
		text, qs := splitQueries(l, perMethod)
		k := norm(text)
		if k == "" || seen[k] || len(out.Methods) == max {
			out.Dropped++
			continue
		}
		seen[k] = true
		out.Methods = append(out.Methods, Method{Method: text, Queries: qs})
		for _, q := range qs {
			out.Queries = append(out.Queries, Query{Query: q, For: text})
		}
	}
	return out
}

// ---- literature_search -------------------------------------------------

type searchType struct{}

// ServiceOps: snippet search or paper search, as op says.
func (searchType) ServiceOps(p stages.Params) map[string][]string {
	switch p.String("op") {
	case "snippets":
		return map[string][]string{"literature": {literature.OpSnippets}}
	case "search":
		return map[string][]string{"literature": {literature.OpSearch}}
	}
	return nil
}

func (searchType) Name() string    { return "literature_search" }
func (searchType) Version() string { return "1" }
func (searchType) Params() []stages.Param {
	return []stages.Param{
		{Name: "queries", Kind: stages.Input, Required: true, Accepts: []string{"soundness_methods", "contribution_dimensions"}, Doc: "the stage whose queries to search"},
		{Name: "literature", Kind: stages.ModelRef, Required: true, Service: true, Doc: "the literature source: a model block whose provider has a literature kind (corpus, semantic_scholar, mock)"},
		{Name: "op", Kind: stages.String, Required: true, Doc: `"snippets" (passages, as soundness reads them) or "search" (papers with abstracts, as contribution reads them)`},
		{Name: "limit", Kind: stages.Int, Default: 20, Min: 1, Max: 1000, Doc: "snippets or papers per query (the paper: 20 either way; the authors' code at b8391a0: 8 snippets, 20 papers; 20 snippets when it was released)"},
		asOfParam,
		{Name: "use_cutoff", Kind: stages.Bool, Default: true, Doc: "exclude papers published after the idea's cutoff date (the dataset's cutoff)"},
	}
}

// SearchOutput is a literature_search child's output: one query's results.
// It holds only what the request determines (the query, not what it was
// asked for), so the same query from two methods is one cached search.
type SearchOutput struct {
	Query    string    `json:"query"`
	Papers   []Paper   `json:"papers"`             // distinct, in rank order
	Snippets []Snippet `json:"snippets,omitempty"` // op snippets
	// Retrieved is when the source answered (RFC 3339; recorded, not key
	// material: the cached answer is the frozen evidence).
	Retrieved string `json:"retrieved,omitempty"`
}

// Snippet is a retrieved passage.
type Snippet struct {
	PaperID string `json:"paper_id"`
	Text    string `json:"text"`
	Section string `json:"section,omitempty"`
}

func (searchType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	if _, err := stages.RequireInput(p, "queries"); err != nil {
		return nil, err
	}
	if _, err := requireModel(p, "literature"); err != nil {
		return nil, err
	}
	if op := p.String("op"); op != "snippets" && op != "search" {
		return nil, stages.ParamErrorf("op", `op must be "snippets" or "search", not %q`, op)
	}
	if strings.TrimSpace(p.String("as_of")) == "" {
		return nil, stages.ParamErrorf("as_of", `as_of names the literature snapshot ("2026-12-01"); it must not be empty`)
	}
	return nil, nil
}

func (searchType) ExpandInputs() []string          { return []string{"queries"} }
func (searchType) MaxPerItem(*stages.Instance) int { return maxQueries }

type queriesOutput struct {
	Cutoff  string  `json:"cutoff"`
	Queries []Query `json:"queries"`
}

func (searchType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	if len(in) != 1 || in[0].Output == nil {
		return nil, nil // extraction failed: nothing to search
	}
	var q queriesOutput
	if err := json.Unmarshal(in[0].Output, &q); err != nil {
		return nil, fmt.Errorf("decode queries: %w", err)
	}
	p := inst.Params
	lit := p.Model("literature")
	snap := literature.Snapshot{AsOf: p.String("as_of")}
	if p.Bool("use_cutoff") {
		snap.CutoffDate = q.Cutoff
	}
	op, limit := p.String("op"), p.Int("limit")
	seen := map[string]bool{}
	var nodes []stages.Node
	for _, qu := range q.Queries {
		if seen[qu.Query] {
			continue
		}
		seen[qu.Query] = true
		query := qu.Query
		var body any
		var sop string
		if op == "snippets" {
			sop, body = literature.OpSnippets, literature.SnippetQuery{Snapshot: snap, Query: query, Limit: limit}
		} else {
			sop, body = literature.OpSearch, literature.SearchQuery{Snapshot: snap, Query: query, Limit: limit}
		}
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("q", sop, string(b)),
			Prepare: func([]stages.In) (*stages.Work, error) {
				return &stages.Work{Service: &stages.Service{Model: lit,
					Request: llm.ServiceRequest{Op: sop, Model: lit.Name, Body: b},
					Output:  func(reply []byte) ([]byte, error) { return searchOutput(sop, query, reply) }}}, nil
			}})
	}
	return nodes, nil
}

func searchOutput(op, query string, reply []byte) ([]byte, error) {
	out := SearchOutput{Query: query, Papers: []Paper{}}
	if op == literature.OpSnippets {
		var r literature.Snippets
		if err := json.Unmarshal(reply, &r); err != nil {
			return nil, fmt.Errorf("decode snippets: %w", err)
		}
		seen := map[string]bool{}
		out.Snippets, out.Retrieved = []Snippet{}, r.Retrieved
		for _, s := range r.Snippets {
			if s.Paper.PaperID == "" {
				continue // a passage no id can cite
			}
			out.Snippets = append(out.Snippets, Snippet{PaperID: s.Paper.PaperID, Text: s.Text, Section: s.Section})
			if !seen[s.Paper.PaperID] {
				seen[s.Paper.PaperID] = true
				out.Papers = append(out.Papers, paperOf(s.Paper))
			}
		}
		return stages.EncodeOutput(out)
	}
	var r literature.Papers
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, fmt.Errorf("decode papers: %w", err)
	}
	out.Retrieved = r.Retrieved
	seen := map[string]bool{}
	for _, p := range r.Papers {
		if p == nil || p.PaperID == "" || seen[p.PaperID] {
			continue
		}
		seen[p.PaperID] = true
		out.Papers = append(out.Papers, paperOf(*p))
	}
	return stages.EncodeOutput(out)
}

// results indexes an item's search outputs by query.
func results(ins []stages.In) (map[string]*SearchOutput, int, error) {
	outs, missing, err := decodeIn[SearchOutput](ins)
	if err != nil {
		return nil, 0, err
	}
	m := make(map[string]*SearchOutput, len(outs))
	for i := range outs {
		m[outs[i].Query] = &outs[i]
	}
	return m, missing, nil
}

// split separates an expansion's inputs by param.
func split(in []stages.In) map[string][]stages.In {
	out := map[string][]stages.In{}
	for _, x := range in {
		out[x.Input] = append(out[x.Input], x)
	}
	return out
}

// ---- soundness_evidence ------------------------------------------------

type evidenceType struct{}

func (evidenceType) Name() string    { return "soundness_evidence" }
func (evidenceType) Version() string { return "1" }
func (evidenceType) Params() []stages.Param {
	return []stages.Param{
		{Name: "methods", Kind: stages.Input, Required: true, Accepts: []string{"soundness_methods"}, Doc: "the extracted methods"},
		{Name: "search", Kind: stages.Input, Required: true, Accepts: []string{"literature_search"}, Doc: "the literature search of those methods' queries"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Doc: "the model that extracts each paper's evidence"},
		{Name: "max_papers", Kind: stages.Int, Default: 1000, Min: 1, Max: 100000, Doc: "at most this many (method, paper) pairs per idea; an idea past it fails, naming the count"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultEvidencePrompt, Doc: "the evidence prompt (data: .Method .Title .PaperID .Passages)"},
	}
}

// EvidenceOutput is one (method, paper) evidence extraction.
type EvidenceOutput struct {
	Method   string `json:"method"`
	Paper    Paper  `json:"paper"`
	Evidence string `json:"evidence"`
}

type evidenceData struct {
	Method, Title, PaperID string
	Passages               []string
}

func (evidenceType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	for _, n := range []string{"methods", "search"} {
		if _, err := stages.RequireInput(p, n); err != nil {
			return nil, err
		}
	}
	if _, err := requireModel(p, "model"); err != nil {
		return nil, err
	}
	_, err := stages.RenderParam("prompt", inst.Address+" prompt", p.String("prompt"), evidenceData{"m", "t", "id", []string{"a passage"}})
	return nil, err
}

func (evidenceType) ExpandInputs() []string { return []string{"methods", "search"} }
func (evidenceType) MaxPerItem(inst *stages.Instance) int {
	return inst.Params.Int("max_papers")
}

func decodeMethods(ins []stages.In) (*MethodsOutput, error) {
	if len(ins) != 1 || ins[0].Output == nil {
		return nil, nil
	}
	var m MethodsOutput
	if err := json.Unmarshal(ins[0].Output, &m); err != nil {
		return nil, fmt.Errorf("decode methods: %w", err)
	}
	return &m, nil
}

// Expand lays out one evidence call per method and paper retrieved by the
// method's queries, with the paper's passages (its abstract when the search
// returned papers rather than snippets).
func (evidenceType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	by := split(in)
	ms, err := decodeMethods(by["methods"])
	if ms == nil || err != nil {
		return nil, err
	}
	res, _, err := results(by["search"])
	if err != nil {
		return nil, err
	}
	p := inst.Params
	m, prompt, name := p.Model("model"), p.String("prompt"), inst.Address+" prompt"
	var nodes []stages.Node
	for _, meth := range ms.Methods {
		var order []Paper
		passages := map[string][]string{}
		for _, q := range meth.Queries {
			r := res[q]
			if r == nil {
				continue // that search failed
			}
			for _, s := range r.Snippets {
				passages[s.PaperID] = append(passages[s.PaperID], s.Text)
			}
			for _, pp := range r.Papers {
				if _, ok := passages[pp.ID]; !ok && len(r.Snippets) == 0 {
					passages[pp.ID] = []string{pp.Abstract}
				}
				if !containsPaper(order, pp.ID) {
					order = append(order, pp)
				}
			}
		}
		for _, pp := range order {
			data := evidenceData{Method: meth.Method, Title: pp.Title, PaperID: pp.ID, Passages: dedupe(passages[pp.ID])}
			method, paper := meth.Method, pp
			paper.Abstract = "" // the evidence stands for the passages, not the abstract
			nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("e", data, paper),
				Prepare: func([]stages.In) (*stages.Work, error) {
					text, err := stages.RenderParam("prompt", name, prompt, data)
					if err != nil {
						return nil, err
					}
					return call(m, text, format.Spec{Kind: format.Text}, func(a *format.Answer) ([]byte, error) {
						return stages.EncodeOutput(EvidenceOutput{Method: method, Paper: paper, Evidence: a.Text})
					}), nil
				}})
		}
	}
	if max := p.Int("max_papers"); len(nodes) > max {
		return nil, stages.ParamErrorf("max_papers", "item %q retrieved %d (method, paper) pairs, more than max_papers = %d; raise it or lower the search limit", item, len(nodes), max)
	}
	return nodes, nil
}

func containsPaper(ps []Paper, id string) bool {
	for _, p := range ps {
		if p.ID == id {
			return true
		}
	}
	return false
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if x = strings.TrimSpace(x); x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// ---- soundness_synthesis -----------------------------------------------

type synthesisType struct{}

func (synthesisType) Name() string    { return "soundness_synthesis" }
func (synthesisType) Version() string { return "1" }
func (synthesisType) Params() []stages.Param {
	return []stages.Param{
		{Name: "methods", Kind: stages.Input, Required: true, Accepts: []string{"soundness_methods"}, Doc: "the extracted methods"},
		{Name: "evidence", Kind: stages.Input, Required: true, Accepts: []string{"soundness_evidence"}, Doc: "the evidence extracted for them"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Doc: "the model that reviews each method"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultSynthesisPrompt, Doc: "the per-method review prompt (data: .Idea .Method .Evidence, each .PaperID .Title .Evidence)"},
	}
}

// MethodReview is one method's synthesis.
type MethodReview struct {
	Method         string    `json:"method"`
	Score          int       `json:"score"` // 0-10
	Synthesis      string    `json:"synthesis"`
	Support        []string  `json:"support"`
	Contradictions []string  `json:"contradictions"`
	Actions        []string  `json:"actions"`
	Papers         []string  `json:"papers"` // ids of the papers whose evidence it was given
	Citations      Citations `json:"citations"`
}

type evidenceItem struct{ PaperID, Title, Evidence string }

type synthesisData struct {
	Idea, Method string
	Evidence     []evidenceItem
}

func (synthesisType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	for _, n := range []string{"methods", "evidence"} {
		if _, err := stages.RequireInput(p, n); err != nil {
			return nil, err
		}
	}
	if _, err := requireModel(p, "model"); err != nil {
		return nil, err
	}
	_, err := stages.RenderParam("prompt", inst.Address+" prompt", p.String("prompt"), synthesisData{"i", "m", []evidenceItem{{"id", "t", "e"}}})
	return nil, err
}

func (synthesisType) ExpandInputs() []string          { return []string{"methods", "evidence"} }
func (synthesisType) MaxPerItem(*stages.Instance) int { return maxMethods }

func (synthesisType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	by := split(in)
	ms, err := decodeMethods(by["methods"])
	if ms == nil || err != nil {
		return nil, err
	}
	evs, _, err := decodeIn[EvidenceOutput](by["evidence"])
	if err != nil {
		return nil, err
	}
	p := inst.Params
	m, prompt, name := p.Model("model"), p.String("prompt"), inst.Address+" prompt"
	var nodes []stages.Node
	for _, meth := range ms.Methods {
		data := synthesisData{Idea: ms.Idea, Method: meth.Method}
		for _, e := range evs {
			if e.Method == meth.Method {
				data.Evidence = append(data.Evidence, evidenceItem{e.Paper.ID, e.Paper.Title, e.Evidence})
			}
		}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("m", data),
			Prepare: func([]stages.In) (*stages.Work, error) {
				text, err := stages.RenderParam("prompt", name, prompt, data)
				if err != nil {
					return nil, err
				}
				return call(m, text, format.Spec{Kind: format.Rating, Min: 0, Max: 10}, func(a *format.Answer) ([]byte, error) {
					return stages.EncodeOutput(methodReview(data, a))
				}), nil
			}})
	}
	return nodes, nil
}

func methodReview(d synthesisData, a *format.Answer) MethodReview {
	r := MethodReview{Method: d.Method, Score: a.Rating, Synthesis: a.Explanation, Papers: []string{}}
	retrieved := map[string]bool{}
	for _, e := range d.Evidence {
		retrieved[e.PaperID] = true
		r.Papers = append(r.Papers, e.PaperID)
	}
	s := sections(a.Explanation, "support", "contradictions", "suggested action")
	r.Support, r.Contradictions, r.Actions = nonNil(s["support"]), nonNil(s["contradictions"]), nonNil(s["suggested action"])
	r.Citations = checkCitations(retrieved, a.Explanation)
	return r
}

// ---- soundness_review --------------------------------------------------

type soundnessType struct{}

func (soundnessType) Name() string    { return "soundness_review" }
func (soundnessType) Version() string { return "1" }
func (soundnessType) Params() []stages.Param {
	return []stages.Param{
		{Name: "synthesis", Kind: stages.Input, Required: true, Accepts: []string{"soundness_synthesis"}, Doc: "the per-method reviews"},
		{Name: "methods", Kind: stages.Input, Required: true, Accepts: []string{"soundness_methods"}, Doc: "the methods extracted from the ideas reviewed (soundness_synthesis' methods): the idea the meta-review shows is theirs, never the dataset record's"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Doc: "the model that writes the meta-review"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultSoundnessPrompt, Doc: "the meta-review prompt (data: .Idea .Methods, each .Method .Score .Synthesis)"},
	}
}

type soundnessData struct {
	Idea    string
	Methods []MethodReview
}

// CheckParams renders the prompt on sample data: the stage is laid out only
// once every method is synthesised, and a template error must not wait.
func (soundnessType) CheckParams(inst *stages.Instance) error {
	_, err := stages.RenderParam("prompt", inst.Address+" prompt", inst.Params.String("prompt"), soundnessData{"i", []MethodReview{{Method: "m"}}})
	return err
}

// Layout runs once every item's methods are synthesised: one meta-review
// per idea, over the method reviews that succeeded (the others counted as
// missing).
func (soundnessType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	syn, err := stages.RequireInput(p, "synthesis")
	if err != nil {
		return nil, err
	}
	methods, err := stages.RequireInput(p, "methods")
	if err != nil {
		return nil, err
	}
	m, err := requireModel(p, "model")
	if err != nil {
		return nil, err
	}
	prompt, name := p.String("prompt"), inst.Address+" prompt"
	if err := (soundnessType{}).CheckParams(inst); err != nil {
		return nil, err
	}
	return childReviewNodes("synthesis", syn, methods, func(rec *idea, ins []stages.In) (*stages.Work, error) {
		mrs, missing, err := decodeIn[MethodReview](ins)
		if err != nil {
			return nil, err
		}
		text, err := stages.RenderParam("prompt", name, prompt, soundnessData{rec.Idea, mrs})
		if err != nil {
			return nil, err
		}
		return call(m, text, format.Spec{Kind: format.Text}, func(a *format.Answer) ([]byte, error) {
			return stages.EncodeOutput(soundnessReview(a.Text, mrs, missing))
		}), nil
	})
}

// childReviewNodes lays out one node per item of the source dataset over
// the item's children in up, then the item's methods node and its record.
// The idea reviewed is the one the methods were extracted from: a
// generated idea, where the dataset record may hold another (an IdeaBench
// target's own idea); the record gives the rest (id, domain, cutoff,
// rubric).
func childReviewNodes(param string, up, methods *stages.Upstream, prepare func(rec *idea, children []stages.In) (*stages.Work, error)) ([]stages.Node, error) {
	src := up.Source
	if src == nil {
		return nil, stages.ParamErrorf(param, "%s (%s) has no source dataset", param, up.Address)
	}
	var nodes []stages.Node
	for _, item := range src.Items() {
		var deps []stages.Dep
		for _, k := range up.ItemNodes(item) {
			deps = append(deps, stages.Dep{Input: param, Index: k})
		}
		mk, err := oneNode("methods", methods, item)
		if err != nil {
			return nil, err
		}
		r, err := oneNode(param, src, item)
		if err != nil {
			return nil, err
		}
		deps = append(deps, stages.Dep{Input: "methods", Index: mk}, stages.Dep{Input: src.Address, Index: r})
		nodes = append(nodes, stages.Node{Item: item, Deps: deps, AllowMissing: true,
			Prepare: func(in []stages.In) (*stages.Work, error) {
				ms, last := in[len(in)-2], in[len(in)-1]
				if ms.Output == nil {
					return nil, fmt.Errorf("item %q: its method extraction failed", item)
				}
				if last.Output == nil {
					return nil, fmt.Errorf("item %q: its dataset record is missing", item)
				}
				var mo MethodsOutput
				if err := json.Unmarshal(ms.Output, &mo); err != nil {
					return nil, fmt.Errorf("decode methods of item %q: %w", item, err)
				}
				if mo.DroppedUpstream {
					return &stages.Work{Compute: func() ([]byte, error) { return stages.EncodeOutput(droppedReview("soundness")) }}, nil
				}
				var rec idea
				if err := json.Unmarshal(last.Output, &rec); err != nil {
					return nil, fmt.Errorf("decode idea record %s: %w", stages.NodeAddress(last), err)
				}
				rec.Idea = mo.Idea
				if mo.Cutoff != "" {
					rec.Cutoff = mo.Cutoff
				}
				if rec.ID == "" {
					rec.ID = item
				}
				return prepare(&rec, in[:len(in)-2])
			}})
	}
	return nodes, nil
}

func soundnessReview(summary string, mrs []MethodReview, missing int) Review {
	r := Review{Kind: "soundness", Missing: missing}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(summary))
	b.WriteString("\n\n## Method reviews\n")
	retrieved := map[string]bool{}
	texts := []string{summary}
	total := 0
	for _, mr := range mrs {
		fmt.Fprintf(&b, "\n### %s (score %d/10)\n%s\n", mr.Method, mr.Score, strings.TrimSpace(mr.Synthesis))
		for _, id := range mr.Papers {
			retrieved[id] = true
		}
		texts = append(texts, mr.Synthesis)
		total += mr.Score
	}
	r.Text = b.String()
	s := sections(summary, reviewHeadings...)
	r.Strengths, r.Weaknesses, r.Suggestions = nonNil(s["strengths"]), nonNil(s["weaknesses"]), nonNil(s["suggestions"])
	if len(mrs) > 0 {
		mean := float64(total) / float64(len(mrs))
		r.Score = &mean
	}
	r.Citations = checkCitations(retrieved, texts...)
	return r
}
