package scholareval

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// ---- contribution_dimensions -------------------------------------------

type dimensionsType struct{}

func (dimensionsType) Name() string    { return "contribution_dimensions" }
func (dimensionsType) Version() string { return "1" }
func (dimensionsType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Doc: "the ideas to review, one per item: a dataset of format scholarideas (or any records with id, idea and cutoff), or a stage that gives one idea an item (IdeaBench's generate_ideas with n = 1, generate_from_keyword with ideas_per_keyword = 1)"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Doc: "the model that extracts the contributions (the reviewer)"},
		{Name: "max_statements", Kind: stages.Int, Default: 10, Min: 1, Max: maxStatements, Doc: "extract at most this many contribution statements per idea"},
		{Name: "queries_per_statement", Kind: stages.Int, Default: 3, Min: 1, Max: maxQueriesPerStmt, Doc: "literature queries per statement, at most (the paper: 3)"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultDimensionsPrompt, Doc: "the extraction prompt (data: .Idea .MaxStatements .QueriesPerStatement)"},
	}
}

// Statement is one contribution statement under its dimension.
type Statement struct {
	Dimension string   `json:"dimension"`
	Statement string   `json:"statement"`
	Queries   []string `json:"queries"`
}

// DimensionsOutput is a contribution_dimensions node's output.
type DimensionsOutput struct {
	Idea       string      `json:"idea"`
	Cutoff     string      `json:"cutoff,omitempty"`
	Dimensions []string    `json:"dimensions"` // distinct, in first-listed order
	Statements []Statement `json:"statements"`
	Queries    []Query     `json:"queries"`
	Dropped    int         `json:"dropped"`
}

type dimensionsData struct {
	Idea                               string
	MaxStatements, QueriesPerStatement int
}

// generalDimension holds a statement given without a "Dimension:" prefix.
const generalDimension = "General"

func (dimensionsType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	max, perStmt := inst.Params.Int("max_statements"), inst.Params.Int("queries_per_statement")
	return extractLayout(inst,
		func(text string) any { return dimensionsData{text, max, perStmt} },
		func(rec *idea, lines []string) any { return parseDimensions(rec, lines, max, perStmt) },
		nil) // an idea dropped upstream fails here: the contribution chain does not pass drops on yet
}

func parseDimensions(rec *idea, lines []string, max, perStmt int) DimensionsOutput {
	out := DimensionsOutput{Idea: rec.Idea, Cutoff: rec.Cutoff, Dimensions: []string{}, Statements: []Statement{}, Queries: []Query{}}
	seen, dims := map[string]bool{}, map[string]string{}
	for _, l := range lines {
		text, qs := splitQueries(l, perStmt)
		dim, stmt := generalDimension, text
		// "Method: a new loss" names its dimension; a colon late in a
		// sentence does not.
		if d, s, ok := strings.Cut(text, ":"); ok && len(strings.Fields(d)) <= 5 && strings.TrimSpace(s) != "" {
			dim, stmt = strings.Trim(strings.TrimSpace(d), "*_"), strings.TrimSpace(s)
		}
		k := norm(stmt)
		if k == "" || seen[k] || len(out.Statements) == max {
			out.Dropped++
			continue
		}
		seen[k] = true
		if canon, ok := dims[norm(dim)]; ok {
			dim = canon // "method" and "Method" are one dimension
		} else {
			dims[norm(dim)] = dim
			out.Dimensions = append(out.Dimensions, dim)
		}
		if len(qs) == 1 && qs[0] == text {
			qs = []string{stmt} // no queries given: search the statement, not its dimension label
		}
		out.Statements = append(out.Statements, Statement{Dimension: dim, Statement: stmt, Queries: qs})
		for _, q := range qs {
			out.Queries = append(out.Queries, Query{Query: q, For: stmt})
		}
	}
	return out
}

func decodeDimensions(ins []stages.In) (*DimensionsOutput, error) {
	if len(ins) != 1 || ins[0].Output == nil {
		return nil, nil
	}
	var d DimensionsOutput
	if err := json.Unmarshal(ins[0].Output, &d); err != nil {
		return nil, fmt.Errorf("decode dimensions: %w", err)
	}
	return &d, nil
}

// ---- contribution_relevance --------------------------------------------

type relevanceType struct{}

func (relevanceType) Name() string    { return "contribution_relevance" }
func (relevanceType) Version() string { return "2" } // 2: search optional, papers without an abstract skipped
func (relevanceType) Params() []stages.Param {
	return []stages.Param{
		{Name: "dimensions", Kind: stages.Input, Required: true, Accepts: []string{"contribution_dimensions"}, Doc: "the extracted contributions"},
		{Name: "search", Kind: stages.Input, Accepts: []string{"literature_search"}, Doc: "the paper search of their queries (the first relevance pass); a pass over added papers alone leaves it unset"},
		{Name: "augment", Kind: stages.Input, Accepts: []string{"paper_augment", "embedding_filter"}, Doc: "the papers added to the search's (paper_augment, or embedding_filter's selection of them): with search unset, the authors' second relevance pass over the added papers; unset, the search's papers alone (the augmentation ablation)"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Doc: "the model that scores each paper's relevance"},
		{Name: "require_abstract", Kind: stages.Bool, Default: true, Doc: "score only papers with an abstract (the authors' relevance_assessor.py drops the others before scoring); false: a paper without one is scored by its title"},
		{Name: "max_papers", Kind: stages.Int, Default: 1000, Min: 1, Max: 100000, Doc: "at most this many distinct papers per idea; an idea past it fails, naming the count"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultRelevancePrompt, Doc: "the relevance prompt (data: .Statements .Title .Abstract); answered as a 0-5 rating"},
	}
}

// RelevanceOutput is one paper's relevance to the idea's contributions.
type RelevanceOutput struct {
	Paper       Paper  `json:"paper"`
	Score       int    `json:"score"` // 0-5
	Explanation string `json:"explanation,omitempty"`
}

type relevanceData struct {
	Statements      []string
	Title, Abstract string
}

func (relevanceType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	if _, err := stages.RequireInput(p, "dimensions"); err != nil {
		return nil, err
	}
	if !p.Has("search") && !p.Has("augment") {
		return nil, stages.ParamErrorf("search", "give search (the papers the queries found), augment (the papers an augmentation added), or both")
	}
	if _, err := requireModel(p, "model"); err != nil {
		return nil, err
	}
	_, err := stages.RenderParam("prompt", inst.Address+" prompt", p.String("prompt"), relevanceData{[]string{"s"}, "t", "a"})
	return nil, err
}

func (relevanceType) ExpandInputs() []string { return []string{"dimensions", "search", "augment"} }
func (relevanceType) MaxPerItem(inst *stages.Instance) int {
	return inst.Params.Int("max_papers")
}

// Expand scores each distinct paper the idea's queries found once, against
// all of the idea's statements (the paper compares contributions, not
// query hits).
func (relevanceType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	by := split(in)
	dims, err := decodeDimensions(by["dimensions"])
	if dims == nil || err != nil {
		return nil, err
	}
	res, _, err := results(by["search"])
	if err != nil {
		return nil, err
	}
	var stmts []string
	for _, s := range dims.Statements {
		stmts = append(stmts, s.Dimension+": "+s.Statement)
	}
	p := inst.Params
	m, prompt, name := p.Model("model"), p.String("prompt"), inst.Address+" prompt"
	seen := map[string]bool{}
	var nodes []stages.Node
	add := func(pp Paper) {
		if seen[pp.ID] || p.Bool("require_abstract") && strings.TrimSpace(pp.Abstract) == "" {
			return
		}
		seen[pp.ID] = true
		paper := pp
		data := relevanceData{Statements: stmts, Title: pp.Title, Abstract: pp.Abstract}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("p", data, paper),
			Prepare: func([]stages.In) (*stages.Work, error) {
				text, err := stages.RenderParam("prompt", name, prompt, data)
				if err != nil {
					return nil, err
				}
				return call(m, text, format.Spec{Kind: format.Rating, Min: 0, Max: 5}, func(a *format.Answer) ([]byte, error) {
					return stages.EncodeOutput(RelevanceOutput{Paper: paper, Score: a.Rating, Explanation: a.Explanation})
				}), nil
			}})
	}
	for _, q := range dims.Queries {
		if r := res[q.Query]; r != nil {
			for _, pp := range r.Papers {
				add(pp)
			}
		}
	}
	added, err := augmentedPapers(by["augment"])
	if err != nil {
		return nil, err
	}
	for _, pp := range added {
		add(pp)
	}
	if max := p.Int("max_papers"); len(nodes) > max {
		return nil, stages.ParamErrorf("max_papers", "item %q retrieved %d distinct papers, more than max_papers = %d; raise it or lower the search limit", item, len(nodes), max)
	}
	return nodes, nil
}

// ---- contribution_compare ----------------------------------------------

type compareType struct{}

func (compareType) Name() string    { return "contribution_compare" }
func (compareType) Version() string { return "2" } // 2: the top papers by relevance (select), a second relevance pass
func (compareType) Params() []stages.Param {
	return []stages.Param{
		{Name: "dimensions", Kind: stages.Input, Required: true, Accepts: []string{"contribution_dimensions"}, Doc: "the extracted contributions"},
		{Name: "relevance", Kind: stages.Input, Required: true, Accepts: []string{"contribution_relevance"}, Doc: "the papers' relevance scores"},
		{Name: "augmented_relevance", Kind: stages.Input, Accepts: []string{"contribution_relevance"}, Doc: "the second relevance pass, over the papers the augmentation added (the authors'): its papers join relevance's, after them"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Doc: "the model that compares the idea with each paper"},
		{Name: "min_relevance", Kind: stages.Int, Default: 3, Min: 0, Max: 5, Doc: "compare only papers scored at least this relevant (the paper: 3)"},
		{Name: "select", Kind: stages.String, Default: SelectTop, Doc: `which of the relevant papers are compared: "top" (the authors' paper_sampler.py: the sample most relevant, ties in retrieval order) or "sample" (the paper's words, "samples 25": a seeded sample of sample)`},
		{Name: "sample", Kind: stages.Int, Default: 25, Min: 1, Max: 1000, Doc: "compare at most this many of the relevant papers (the paper: 25)"},
		{Name: "seed", Kind: stages.Int, Default: 0, Min: 0, Max: 1 << 30, Doc: `select = "sample": the papers with the lowest SHA-256 of seed (decimal), a NUL byte and the paper id`},
		{Name: "prompt", Kind: stages.Template, Default: DefaultComparePrompt, Doc: "the comparison prompt (data: .Idea .Dimensions .Title .Abstract); answered as fields dimension_1.. in -1..1"},
	}
}

// How contribution_compare picks the papers it compares.
const (
	SelectTop    = "top"    // the authors' code: the most relevant first
	SelectSample = "sample" // the paper's words: a seeded sample
)

// CompareOutput is the idea compared with one paper along each dimension.
type CompareOutput struct {
	Paper  Paper          `json:"paper"`
	Scores map[string]int `json:"scores"` // dimension -> 1 (idea more novel), 0, -1 (paper has it)
}

type compareData struct {
	Idea            string
	Dimensions      []string
	Title, Abstract string
}

func (compareType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	for _, n := range []string{"dimensions", "relevance"} {
		if _, err := stages.RequireInput(p, n); err != nil {
			return nil, err
		}
	}
	if _, err := requireModel(p, "model"); err != nil {
		return nil, err
	}
	if s := p.String("select"); s != SelectTop && s != SelectSample {
		return nil, stages.ParamErrorf("select", `select = %q: use %q (the authors' code: the most relevant) or %q (a seeded sample)`, s, SelectTop, SelectSample)
	}
	_, err := stages.RenderParam("prompt", inst.Address+" prompt", p.String("prompt"), compareData{"i", []string{"d"}, "t", "a"})
	return nil, err
}

func (compareType) ExpandInputs() []string {
	return []string{"dimensions", "relevance", "augmented_relevance"}
}
func (compareType) MaxPerItem(inst *stages.Instance) int { return inst.Params.Int("sample") }

// samplePapers keeps the n papers with the lowest SHA-256 of seed, NUL and
// id, in their given order: which papers are kept does not depend on the
// order the search returned them in, and one more relevant paper changes at
// most one member.
func samplePapers(ps []Paper, n, seed int) []Paper {
	if len(ps) <= n {
		return ps
	}
	type ranked struct {
		i   int
		sum [32]byte
	}
	rs := make([]ranked, len(ps))
	for i, p := range ps {
		rs[i] = ranked{i, sha256.Sum256([]byte(strconv.Itoa(seed) + "\x00" + p.ID))}
	}
	sort.Slice(rs, func(a, b int) bool { return string(rs[a].sum[:]) < string(rs[b].sum[:]) })
	keep := make([]int, n)
	for k := range keep {
		keep[k] = rs[k].i
	}
	sort.Ints(keep)
	out := make([]Paper, n)
	for k, i := range keep {
		out[k] = ps[i]
	}
	return out
}

// topPapers is the authors' paper_sampler.py: the n most relevant, by
// score, ties in the order given (Python's sort is stable): the first
// relevance pass in retrieval order, then the added papers in the order
// the embedding filter kept them. (The authors' ties follow the order
// their threads finished scoring.)
func topPapers(rs []RelevanceOutput, n int) []Paper {
	sorted := append([]RelevanceOutput{}, rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Score > sorted[j].Score })
	if len(sorted) > n {
		sorted = sorted[:n]
	}
	out := make([]Paper, len(sorted))
	for i, r := range sorted {
		out[i] = r.Paper
	}
	return out
}

func fieldName(i int) string { return "dimension_" + strconv.Itoa(i+1) }

func (compareType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	by := split(in)
	dims, err := decodeDimensions(by["dimensions"])
	if dims == nil || err != nil {
		return nil, err
	}
	if len(dims.Dimensions) == 0 {
		return nil, nil
	}
	rels, _, err := decodeIn[RelevanceOutput](append(append([]stages.In{}, by["relevance"]...), by["augmented_relevance"]...))
	if err != nil {
		return nil, err
	}
	p := inst.Params
	var relevant []RelevanceOutput
	seen := map[string]bool{}
	for _, r := range rels {
		if r.Score >= p.Int("min_relevance") && !seen[r.Paper.ID] {
			seen[r.Paper.ID] = true
			relevant = append(relevant, r)
		}
	}
	var chosen []Paper
	if p.String("select") == SelectTop {
		chosen = topPapers(relevant, p.Int("sample"))
	} else {
		ps := make([]Paper, len(relevant))
		for i, r := range relevant {
			ps[i] = r.Paper
		}
		chosen = samplePapers(ps, p.Int("sample"), p.Int("seed"))
	}
	m, prompt, name := p.Model("model"), p.String("prompt"), inst.Address+" prompt"
	fields := make([]string, len(dims.Dimensions))
	for i := range fields {
		fields[i] = fieldName(i)
	}
	spec := format.Spec{Kind: format.Fields, Fields: fields, Min: -1, Max: 1}
	var nodes []stages.Node
	for _, pp := range chosen {
		paper := pp
		data := compareData{Idea: dims.Idea, Dimensions: dims.Dimensions, Title: pp.Title, Abstract: pp.Abstract}
		nodes = append(nodes, stages.Node{Item: item, Slot: len(nodes), Label: label("p", data, paper),
			Prepare: func([]stages.In) (*stages.Work, error) {
				text, err := stages.RenderParam("prompt", name, prompt, data)
				if err != nil {
					return nil, err
				}
				return call(m, text, spec, func(a *format.Answer) ([]byte, error) {
					out := CompareOutput{Paper: paper, Scores: map[string]int{}}
					for i, d := range data.Dimensions {
						out.Scores[d] = a.Fields[fieldName(i)]
					}
					return stages.EncodeOutput(out)
				}), nil
			}})
	}
	return nodes, nil
}

// ---- contribution_review -----------------------------------------------

type contributionType struct{}

func (contributionType) Name() string    { return "contribution_review" }
func (contributionType) Version() string { return "1" }
func (contributionType) Params() []stages.Param {
	return []stages.Param{
		{Name: "dimensions", Kind: stages.Input, Required: true, Accepts: []string{"contribution_dimensions"}, Doc: "the extracted contributions"},
		{Name: "compare", Kind: stages.Input, Required: true, Accepts: []string{"contribution_compare"}, Doc: "the pairwise comparisons"},
		{Name: "model", Kind: stages.ModelRef, Required: true, Doc: "the model that writes the review"},
		{Name: "prompt", Kind: stages.Template, Default: DefaultContributionPrompt, Doc: "the review prompt (data: .Idea .Dimensions .Papers, each .ID .Title .Year .Scores)"},
	}
}

type comparedPaper struct {
	ID, Title string
	Year      int
	Scores    string // "method +1, dataset 0"
}

type contributionData struct {
	Idea       string
	Dimensions []string
	Papers     []comparedPaper
}

// CheckParams renders the prompt on sample data: the stage is laid out only
// once every comparison has run.
func (contributionType) CheckParams(inst *stages.Instance) error {
	_, err := stages.RenderParam("prompt", inst.Address+" prompt", inst.Params.String("prompt"), contributionData{"i", []string{"d"}, []comparedPaper{{"id", "t", 2020, "d +1"}}})
	return err
}

func (contributionType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	dims, err := stages.RequireInput(p, "dimensions")
	if err != nil {
		return nil, err
	}
	cmp, err := stages.RequireInput(p, "compare")
	if err != nil {
		return nil, err
	}
	m, err := requireModel(p, "model")
	if err != nil {
		return nil, err
	}
	prompt, name := p.String("prompt"), inst.Address+" prompt"
	if err := (contributionType{}).CheckParams(inst); err != nil {
		return nil, err
	}
	src := cmp.Source
	if src == nil {
		return nil, stages.ParamErrorf("compare", "compare (%s) has no source dataset", cmp.Address)
	}
	var nodes []stages.Node
	for _, item := range src.Items() {
		d, err := oneNode("dimensions", dims, item)
		if err != nil {
			return nil, err
		}
		deps := []stages.Dep{{Input: "dimensions", Index: d}}
		for _, k := range cmp.ItemNodes(item) {
			deps = append(deps, stages.Dep{Input: "compare", Index: k})
		}
		nodes = append(nodes, stages.Node{Item: item, Deps: deps, AllowMissing: true,
			Prepare: func(in []stages.In) (*stages.Work, error) {
				ds, err := decodeDimensions(in[:1])
				if err != nil {
					return nil, err
				}
				if ds == nil {
					return nil, fmt.Errorf("item %q: its contribution extraction failed", item)
				}
				cs, missing, err := decodeIn[CompareOutput](in[1:])
				if err != nil {
					return nil, err
				}
				data := contributionData{Idea: ds.Idea, Dimensions: ds.Dimensions}
				for _, c := range cs {
					var parts []string
					for _, dim := range ds.Dimensions {
						parts = append(parts, fmt.Sprintf("%s %+d", dim, c.Scores[dim]))
					}
					data.Papers = append(data.Papers, comparedPaper{c.Paper.ID, c.Paper.Title, c.Paper.Year, strings.Join(parts, ", ")})
				}
				text, err := stages.RenderParam("prompt", name, prompt, data)
				if err != nil {
					return nil, err
				}
				return call(m, text, format.Spec{Kind: format.Text}, func(a *format.Answer) ([]byte, error) {
					return stages.EncodeOutput(contributionReview(a.Text, ds, cs, missing))
				}), nil
			}})
	}
	return nodes, nil
}

func contributionReview(text string, ds *DimensionsOutput, cs []CompareOutput, missing int) Review {
	r := Review{Kind: "contribution", Text: strings.TrimSpace(text), Missing: missing}
	fillSections(&r)
	retrieved := map[string]bool{}
	for _, c := range cs {
		retrieved[c.Paper.ID] = true
	}
	r.Citations = checkCitations(retrieved, text)
	return r
}
