package literature

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

// The IdeaBench dataset builder is three stage types and a writer, so that
// building a dataset is an experiment like any other: every literature
// request is a cached service node (an interrupted build resumes where it
// stopped, a re-run with the same as_of makes no request), plan counts the
// requests offline before any is made, and the provider's rate limit,
// retries and breaker apply. The experiments are
// experiments/ideabench/build_dataset.hcl (the published targets, by id)
// and build_dataset_renewed.hcl (new targets by venue, field, year and
// citations, e.g. published after a model's knowledge cutoff).
//
//	find_targets    per item of a queries dataset: one bulk search
//	lookup_papers   the items of an id list: one batch look-up
//	fetch_references per target: its references, every page (expanded from
//	                find_targets' answers, or one per dataset item)
//	write_ideabench_dataset  the files: targets.csv + references.jsonl (the
//	                ideabench-targets-csv format with references =), and
//	                ideabench.jsonl (the ideabench format), with a report

func init() {
	stages.Register(findTargetsType{})
	stages.Register(lookupPapersType{})
	stages.Register(fetchReferencesType{})
	stages.Register(writeDatasetType{})
}

// Limits of the builder's counts.
const (
	// MaxTargetsPerQuery bounds find_targets' limit and fetch_references'
	// max_per_query: a million would be a snapshot of whole venues, which
	// the Semantic Scholar datasets serve better than the API.
	MaxTargetsPerQuery = 100000
)

// Params shared by the builder's types.
var (
	paramLiterature = stages.Param{Name: "literature", Kind: stages.ModelRef, Required: true, Service: true,
		Doc: "the literature service: a model block whose provider is of kind semantic_scholar, corpus or mock (its name is key material)"}
	paramAsOf = stages.Param{Name: "as_of", Kind: stages.String, Required: true,
		Doc: `the snapshot of the literature read, e.g. "2026-12-01": the same as_of answers from the cache; a new one fetches again`}
)

func asOf(p stages.Params) (string, error) {
	s := strings.TrimSpace(p.String("as_of"))
	if s == "" {
		return "", stages.ParamErrorf("as_of", `as_of is empty; name the snapshot read, e.g. as_of = "2026-12-01"`)
	}
	return s, nil
}

func literatureModel(p stages.Params) (*stages.Model, error) {
	m := p.Model("literature")
	if m == nil {
		return nil, stages.ParamErrorf("literature", "literature is required: a model block on a semantic_scholar, corpus or mock provider")
	}
	return m, nil
}

// TargetQuery is one record of find_targets' queries dataset (format
// jsonl): which papers are targets. Every member but id is optional; at
// least one criterion is needed.
type TargetQuery struct {
	ID                    string   `json:"id"`
	Query                 string   `json:"query,omitempty"` // bulk-search text ("" with venues or fields: every paper passing the filters)
	Venues                []string `json:"venues,omitempty"`
	ExcludeVenues         []string `json:"exclude_venues,omitempty"`
	FieldsOfStudy         []string `json:"fields_of_study,omitempty"`
	Year                  string   `json:"year,omitempty"`
	PublicationDateOrYear string   `json:"publication_date_or_year,omitempty"`
	MinCitations          int      `json:"min_citations,omitempty"`
	Limit                 int      `json:"limit,omitempty"` // 0: find_targets' limit
}

// decodeTargetQuery reads one record strictly: a misspelt member would
// otherwise widen a query to the whole literature.
func decodeTargetQuery(item string, rec []byte) (TargetQuery, error) {
	var q TargetQuery
	dec := json.NewDecoder(bytes.NewReader(rec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return q, fmt.Errorf("query %q: %v (a query has id, query, venues, exclude_venues, fields_of_study, year, publication_date_or_year, min_citations, limit)", item, err)
	}
	if q.Query == "" && len(q.Venues) == 0 && len(q.FieldsOfStudy) == 0 && q.Year == "" && q.PublicationDateOrYear == "" {
		return q, fmt.Errorf("query %q has no criterion: give query, venues, fields_of_study, year or publication_date_or_year", item)
	}
	if q.MinCitations < 0 || q.Limit < 0 || q.Limit > MaxTargetsPerQuery {
		return q, fmt.Errorf("query %q: min_citations must be 0 or more and limit 0 to %d", item, MaxTargetsPerQuery)
	}
	return q, nil
}

// findTargetsType is find_targets.
type findTargetsType struct{}

// ServiceOps: the literature source is asked for OpBulkSearch.
func (findTargetsType) ServiceOps(stages.Params) map[string][]string {
	return map[string][]string{"literature": {OpBulkSearch}}
}

func (findTargetsType) Name() string    { return "find_targets" }
func (findTargetsType) Version() string { return "1" }
func (findTargetsType) Params() []stages.Param {
	return []stages.Param{
		{Name: "queries", Kind: stages.Input, Required: true, Accepts: []string{"dataset"},
			Doc: "a jsonl dataset of target queries, one a line: id, and any of query, venues, exclude_venues, fields_of_study, year, publication_date_or_year, min_citations, limit"},
		paramLiterature, paramAsOf,
		{Name: "limit", Kind: stages.Int, Default: 1000, Min: 1, Max: MaxTargetsPerQuery,
			Doc: "targets per query when its record gives no limit (the bulk search's every page is followed up to it)"},
	}
}

func (findTargetsType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	queries, err := stages.RequireInput(inst.Params, "queries")
	if err != nil {
		return nil, err
	}
	m, err := literatureModel(inst.Params)
	if err != nil {
		return nil, err
	}
	as, err := asOf(inst.Params)
	if err != nil {
		return nil, err
	}
	limit := inst.Params.Int("limit")
	nodes := make([]stages.Node, 0, len(queries.Nodes))
	for i, n := range queries.Nodes {
		item := n.Item
		nodes = append(nodes, stages.Node{Item: item, Label: "search", Deps: []stages.Dep{{Input: "queries", Index: i}},
			Prepare: func(in []stages.In) (*stages.Work, error) {
				q, err := decodeTargetQuery(item, in[0].Output)
				if !hasAnyField(in[0].Output, queryCriteria) {
					// A record without a criterion is not a target query
					// (what the strict decode says of it, beside).
					why := "the query's criterion"
					if err != nil {
						why += "; " + err.Error()
					}
					return nil, stages.MissingField(in[0], why, queryCriteria...)
				}
				if err != nil {
					return nil, err
				}
				if q.Limit == 0 {
					q.Limit = limit
				}
				body, err := json.Marshal(SearchQuery{Snapshot: Snapshot{AsOf: as}, Query: q.Query, Limit: q.Limit, Year: q.Year,
					PublicationDateOrYear: q.PublicationDateOrYear, FieldsOfStudy: q.FieldsOfStudy, MinCitationCount: q.MinCitations,
					Venues: q.Venues, ExcludeVenues: q.ExcludeVenues})
				if err != nil {
					return nil, err
				}
				return serviceWork(m, OpBulkSearch, body, nil), nil
			}})
	}
	return nodes, nil
}

// lookupPapersType is lookup_papers.
type lookupPapersType struct{}

// ServiceOps: the literature source is asked for OpBatch.
func (lookupPapersType) ServiceOps(stages.Params) map[string][]string {
	return map[string][]string{"literature": {OpBatch}}
}

func (lookupPapersType) Name() string    { return "lookup_papers" }
func (lookupPapersType) Version() string { return "1" }
func (lookupPapersType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ids", Kind: stages.Input, Required: true, Accepts: []string{"dataset"},
			Doc: "a dataset whose item ids are paper ids (Semantic Scholar ids, or DOI:..., CorpusId:..., ARXIV:...)"},
		paramLiterature, paramAsOf,
	}
}

// Layout is one batch request for every id (the client splits it into
// requests of 500): its ids are the items, known now, so it needs no dep.
func (lookupPapersType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	ids, err := stages.RequireInput(inst.Params, "ids")
	if err != nil {
		return nil, err
	}
	m, err := literatureModel(inst.Params)
	if err != nil {
		return nil, err
	}
	as, err := asOf(inst.Params)
	if err != nil {
		return nil, err
	}
	items := ids.Items()
	if len(items) == 0 {
		return nil, nil
	}
	return []stages.Node{{Label: "batch", Prepare: func([]stages.In) (*stages.Work, error) {
		body, err := json.Marshal(BatchQuery{Snapshot: Snapshot{AsOf: as}, IDs: items})
		if err != nil {
			return nil, err
		}
		return serviceWork(m, OpBatch, body, func(reply []byte) ([]byte, error) {
			var ps Papers
			if err := json.Unmarshal(reply, &ps); err != nil {
				return nil, fmt.Errorf("decode the batch reply: %w", err)
			}
			return json.Marshal(LookedUp{IDs: items, Papers: ps})
		}), nil
	}}}, nil
}

// LookedUp is lookup_papers' output: the batch reply with the ids asked
// for, so that an unknown one (a nil entry) can be named.
type LookedUp struct {
	IDs []string `json:"ids"`
	Papers
}

func serviceWork(m *stages.Model, op string, body []byte, output func([]byte) ([]byte, error)) *stages.Work {
	return &stages.Work{Service: &stages.Service{Model: m, Request: serviceRequest(m, op, body), Output: output}}
}

// TargetReferences is a fetch_references node's output: the references
// reply with the id of the paper they are the references of.
type TargetReferences struct {
	PaperID    string      `json:"paper_id"`
	References []Reference `json:"references"`
	Retrieved  string      `json:"retrieved,omitempty"`
}

// fetchReferencesType is fetch_references.
type fetchReferencesType struct{}

// ServiceOps: the literature source is asked for OpReferences.
func (fetchReferencesType) ServiceOps(stages.Params) map[string][]string {
	return map[string][]string{"literature": {OpReferences}}
}

func (fetchReferencesType) Name() string    { return "fetch_references" }
func (fetchReferencesType) Version() string { return "1" }
func (fetchReferencesType) Params() []stages.Param {
	return []stages.Param{
		{Name: "targets", Kind: stages.Input, Required: true, Accepts: []string{"find_targets", "dataset"},
			Doc: "the targets: find_targets (one request per paper found) or a dataset whose item ids are paper ids (one per item)"},
		paramLiterature, paramAsOf,
		{Name: "max_per_query", Kind: stages.Int, Default: 2000, Min: 1, Max: MaxTargetsPerQuery,
			Doc: "most targets one find_targets query may yield; more fails that query's expansion (raise it, or narrow the query). Plan's upper bound"},
	}
}

func (fetchReferencesType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	if _, err := stages.RequireInput(inst.Params, "targets"); err != nil {
		return nil, err
	}
	if _, err := literatureModel(inst.Params); err != nil {
		return nil, err
	}
	_, err := asOf(inst.Params)
	return nil, err
}

func (fetchReferencesType) ExpandInputs() []string { return []string{"targets"} }

func (fetchReferencesType) MaxPerItem(inst *stages.Instance) int {
	if t := inst.Params.Input("targets"); t != nil && t.Type == "dataset" {
		return 1
	}
	return inst.Params.Int("max_per_query")
}

// Expand lays out one references request per target of the item: the item
// itself when targets is a dataset, else each distinct paper its search
// found (papers without an id cannot be asked for). A child carries its
// paper id in its request and depends on no node, so a search that gained
// a paper re-runs no other target's request.
func (t fetchReferencesType) Expand(inst *stages.Instance, item string, in []stages.In) ([]stages.Node, error) {
	m, err := literatureModel(inst.Params)
	if err != nil {
		return nil, err
	}
	as, err := asOf(inst.Params)
	if err != nil {
		return nil, err
	}
	var ids []string
	if inst.Params.Input("targets").Type == "dataset" {
		ids = []string{item}
	} else {
		if len(in) != 1 || in[0].Output == nil {
			return nil, nil // the search failed: nothing to fetch
		}
		var ps Papers
		if err := json.Unmarshal(in[0].Output, &ps); err != nil {
			return nil, fmt.Errorf("decode the targets found: %w", err)
		}
		seen := map[string]bool{}
		for _, p := range ps.Papers {
			if p != nil && p.PaperID != "" && !seen[p.PaperID] {
				seen[p.PaperID] = true
				ids = append(ids, p.PaperID)
			}
		}
		if max := inst.Params.Int("max_per_query"); len(ids) > max {
			return nil, fmt.Errorf("query %q found %d targets, more than max_per_query = %d; raise max_per_query or narrow the query", item, len(ids), max)
		}
	}
	nodes := make([]stages.Node, 0, len(ids))
	for i, id := range ids {
		id := id
		nodes = append(nodes, stages.Node{Item: item, Slot: i, Label: "references " + id,
			Prepare: func([]stages.In) (*stages.Work, error) {
				body, err := json.Marshal(ReferencesQuery{Snapshot: Snapshot{AsOf: as}, PaperID: id})
				if err != nil {
					return nil, err
				}
				return serviceWork(m, OpReferences, body, func(reply []byte) ([]byte, error) {
					var r References
					if err := json.Unmarshal(reply, &r); err != nil {
						return nil, fmt.Errorf("decode references of %s: %w", id, err)
					}
					if r.References == nil {
						r.References = []Reference{}
					}
					return json.Marshal(TargetReferences{PaperID: id, References: r.References, Retrieved: r.Retrieved})
				}), nil
			}})
	}
	return nodes, nil
}

// writeDatasetType is write_ideabench_dataset.
type writeDatasetType struct{}

func (writeDatasetType) Name() string    { return "write_ideabench_dataset" }
func (writeDatasetType) Version() string { return "1" }
func (writeDatasetType) Params() []stages.Param {
	return []stages.Param{
		{Name: "targets", Kind: stages.Input, Required: true, Accepts: []string{"find_targets", "lookup_papers", "dataset"},
			Doc: "the target papers: find_targets, lookup_papers, or the target dataset itself (its records keep their idea; no targets.csv is written, the dataset's file is the target list)"},
		{Name: "references", Kind: stages.Input, Required: true, Accepts: []string{"fetch_references"},
			Doc: "the targets' references"},
	}
}

// Files the builder writes.
const (
	TargetsFile    = "targets.csv"
	ReferencesFile = "references.jsonl"
	IdeaBenchFile  = "ideabench.jsonl"
	ReportFile     = "build_report.json"
)

func (writeDatasetType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	targets, err := stages.RequireInput(inst.Params, "targets")
	if err != nil {
		return nil, err
	}
	refs, err := stages.RequireInput(inst.Params, "references")
	if err != nil {
		return nil, err
	}
	deps := append(stages.AllDeps("targets", targets), stages.AllDeps("references", refs)...)
	fromDataset := targets.Type == "dataset"
	return []stages.Node{{Deps: deps, AllowMissing: true, WritesFiles: true, Label: "files",
		Prepare: func(in []stages.In) (*stages.Work, error) {
			return &stages.Work{Compute: func() ([]byte, error) {
				files, err := buildFiles(in, fromDataset)
				if err != nil {
					return nil, err
				}
				return json.Marshal(stages.Files{Files: files})
			}}, nil
		}}}, nil
}

// BuildReport is build_report.json: what the build found and left out.
type BuildReport struct {
	Targets               int      `json:"targets"`                 // written
	TargetsNoAbstract     []string `json:"targets_no_abstract"`     // left out: neither abstract nor idea
	TargetsNotFound       []string `json:"targets_not_found"`       // ids the batch look-up did not know (or after the cutoff)
	TargetsNoReferences   []string `json:"targets_no_references"`   // written, with no reference
	TargetsFailed         []string `json:"targets_failed"`          // references request failed: written without references
	References            int      `json:"references"`              // rows of references.jsonl
	ReferencesUnresolved  int      `json:"references_unresolved"`   // no paperId
	ReferencesNoAbstract  int      `json:"references_no_abstract"`  // never kept by filter_references
	ReferencesWithIntents int      `json:"references_with_intents"` // at least one intent
	Retrieved             []string `json:"retrieved"`               // first and last retrieval time
}

// target is one target as written.
type target struct {
	paper Paper
	idea  string
}

func buildFiles(in []stages.In, fromDataset bool) (map[string]string, error) {
	var rep BuildReport
	var order []string
	targets := map[string]*target{}
	add := func(t *target) {
		if t.paper.PaperID == "" || targets[t.paper.PaperID] != nil {
			return // duplicates (a paper found by two queries): the first stays
		}
		targets[t.paper.PaperID] = t
		order = append(order, t.paper.PaperID)
	}
	refsOf := map[string][]Reference{}
	var times []string
	for _, x := range in {
		switch x.Input {
		case "targets":
			if x.Output == nil {
				continue // a failed search: its targets are unknown, the run reports the node
			}
			if fromDataset {
				var p datasets.Paper
				if err := json.Unmarshal(x.Output, &p); err != nil {
					return nil, fmt.Errorf("decode target record %q: %w", x.Node.Item, err)
				}
				if p.ID == "" {
					p.ID = x.Node.Item
				}
				add(&target{paper: Paper{PaperID: p.ID, Title: p.Title, Abstract: p.Abstract, Year: p.Year}, idea: p.Idea})
				continue
			}
			var ps LookedUp // find_targets' Papers, or lookup_papers' with the ids
			if err := json.Unmarshal(x.Output, &ps); err != nil {
				return nil, fmt.Errorf("decode targets: %w", err)
			}
			times = append(times, ps.Retrieved)
			for i, p := range ps.Papers.Papers {
				if p == nil {
					id := fmt.Sprintf("#%d", i+1)
					if i < len(ps.IDs) {
						id = ps.IDs[i]
					}
					rep.TargetsNotFound = append(rep.TargetsNotFound, id)
					continue
				}
				add(&target{paper: *p})
			}
		case "references":
			if x.Output == nil {
				continue // its target is listed in targets_failed below
			}
			var tr TargetReferences
			if err := json.Unmarshal(x.Output, &tr); err != nil {
				return nil, fmt.Errorf("decode references: %w", err)
			}
			if _, dup := refsOf[tr.PaperID]; !dup {
				refsOf[tr.PaperID] = tr.References
			}
			times = append(times, tr.Retrieved)
		}
	}
	var tcsv bytes.Buffer
	cw := csv.NewWriter(&tcsv)
	cw.Write([]string{"paperId", "title", "abstract", "year", "venue", "citationCount", "publicationTypes", "publicationDate"})
	var refLines, ibLines bytes.Buffer
	for _, id := range order {
		t := targets[id]
		if strings.TrimSpace(t.paper.Abstract) == "" && strings.TrimSpace(t.idea) == "" {
			rep.TargetsNoAbstract = append(rep.TargetsNoAbstract, id)
			continue
		}
		rep.Targets++
		p := t.paper
		year := ""
		if p.Year != 0 {
			year = fmt.Sprint(p.Year)
		}
		cw.Write([]string{p.PaperID, p.Title, p.Abstract, year, p.Venue, fmt.Sprint(p.CitationCount), pyList(p.PublicationTypes), p.PublicationDate})
		refs, fetched := refsOf[id]
		switch {
		case !fetched:
			rep.TargetsFailed = append(rep.TargetsFailed, id)
		case len(refs) == 0:
			rep.TargetsNoReferences = append(rep.TargetsNoReferences, id)
		}
		rec := datasets.Paper{ID: id, Title: p.Title, Abstract: p.Abstract, Idea: t.idea, Year: p.Year}
		for _, r := range refs {
			rep.References++
			if r.Paper.PaperID == "" {
				rep.ReferencesUnresolved++
			}
			if strings.TrimSpace(r.Paper.Abstract) == "" {
				rep.ReferencesNoAbstract++
			}
			if len(r.Intents) > 0 {
				rep.ReferencesWithIntents++
			}
			line, err := json.Marshal(referenceRow(id, r))
			if err != nil {
				return nil, err
			}
			refLines.Write(line)
			refLines.WriteByte('\n')
			rec.References = append(rec.References, datasets.Reference{ID: r.Paper.PaperID, Title: r.Paper.Title, Abstract: r.Paper.Abstract,
				Citations: r.Paper.CitationCount, Types: r.Paper.PublicationTypes, Intents: r.Intents})
		}
		line, err := json.Marshal(rec)
		if err != nil {
			return nil, err
		}
		ibLines.Write(line)
		ibLines.WriteByte('\n')
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return nil, err
	}
	sort.Strings(times)
	if len(times) > 0 {
		first, last := times[0], times[len(times)-1]
		for _, t := range times { // the empty times of replies without one sort first
			if t != "" {
				first = t
				break
			}
		}
		rep.Retrieved = []string{first, last}
	}
	for _, l := range []*[]string{&rep.TargetsNoAbstract, &rep.TargetsNotFound, &rep.TargetsNoReferences, &rep.TargetsFailed, &rep.Retrieved} {
		if *l == nil {
			*l = []string{}
		}
	}
	report, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	files := map[string]string{ReferencesFile: refLines.String(), IdeaBenchFile: ibLines.String(), ReportFile: string(report) + "\n"}
	if !fromDataset {
		files[TargetsFile] = tcsv.String()
	}
	return files, nil
}

// refRow is one line of references.jsonl, as the ideabench-targets-csv
// format's references file reads it: Semantic Scholar's field names, null
// for what is unknown.
type refRow struct {
	TargetID         string   `json:"target_id"`
	PaperID          *string  `json:"paperId"`
	Title            *string  `json:"title"`
	Abstract         *string  `json:"abstract"`
	Year             *int     `json:"year"`
	CitationCount    int      `json:"citationCount"`
	PublicationTypes []string `json:"publicationTypes"`
	Intents          []string `json:"intents"`
	Contexts         []string `json:"contexts"`
	IsInfluential    bool     `json:"isInfluential"`
}

func referenceRow(target string, r Reference) refRow {
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	row := refRow{TargetID: target, PaperID: str(r.Paper.PaperID), Title: str(r.Paper.Title), Abstract: str(r.Paper.Abstract),
		CitationCount: r.Paper.CitationCount, PublicationTypes: r.Paper.PublicationTypes, Intents: r.Intents, Contexts: r.Contexts,
		IsInfluential: r.IsInfluential}
	if r.Paper.Year != 0 {
		y := r.Paper.Year
		row.Year = &y
	}
	return row
}

// pyList writes a list as pandas writes one into a CSV cell: ['a', 'b'].
func pyList(l []string) string {
	if len(l) == 0 {
		return "[]"
	}
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func hasAnyField(rec []byte, fields []string) bool {
	for _, f := range fields {
		if stages.HasField(rec, f) {
			return true
		}
	}
	return false
}
