package ideabench

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

// DefaultExcludeTypes are the Semantic Scholar publication types the paper
// treats as non-primary research.
var DefaultExcludeTypes = []string{"Review", "Editorial", "LettersAndComments", "Book", "BookSection"}

// The bounds of filter_references' counts: far past any paper's citation
// count or reference list, so only a typo meets them.
const (
	maxCitations  = 1_000_000_000
	maxReferences = 100_000
)

type filterType struct{}

func (filterType) Name() string    { return "filter_references" }
func (filterType) Version() string { return "2" } // 2: the target is passed on as id and keywords only

func (filterType) Params() []stages.Param {
	return []stages.Param{
		{Name: "dataset", Kind: stages.Input, Required: true, Accepts: []string{"dataset"}, Doc: "the target papers (format ideabench)"},
		{Name: "mode", Kind: stages.String, Default: "filtered", Doc: `"filtered" (the paper's filter), "all" (high resource: every reference with an abstract) or "random" (the paper's random-filtering baseline: limit references drawn by seed from those with an abstract; the citation, type and intent filters do not apply)`},
		{Name: "min_citations", Kind: stages.Int, Default: 5, Min: 0, Max: maxCitations, Doc: "drop references cited fewer times"},
		{Name: "exclude_types", Kind: stages.StringList, Default: DefaultExcludeTypes, Doc: "drop references with any of these publication types"},
		{Name: "require_intent", Kind: stages.String, Default: "background", Doc: `keep only references cited with this intent; "" keeps any`},
		{Name: "limit", Kind: stages.Int, Default: 0, Min: 0, Max: maxReferences, Doc: "keep at most this many references, in dataset order (0: no limit; the paper's low resource: 5)"},
		{Name: "min_references", Kind: stages.Int, Default: 3, Min: 0, Max: maxReferences, Doc: "drop targets left with fewer references"},
		{Name: "seed", Kind: stages.Int, Default: 0, Min: 0, Max: math.MaxInt32, Doc: `mode = "random": chooses the draw; each target's draw depends on the seed, the target id and its references alone`},
		{Name: "published_after", Kind: stages.String, Default: "", Doc: `YYYY-MM-DD: drop (and count) targets that may have been published before it, as a generator's knowledge_cutoff (a target with a year only counts from 1 January; one without a year is dropped); "": keep every target`},
	}
}

// filterSettings are a filter_references instance's decoded params.
type filterSettings struct {
	All           bool
	Random        bool
	Seed          int
	MinCitations  int
	ExcludeTypes  []string
	RequireIntent string
	Limit         int
	MinReferences int
	// PublishedAfter is the published_after date ("" none); after is it parsed.
	PublishedAfter string
	after          time.Time
}

func decodeFilter(p stages.Params) (*filterSettings, error) {
	mode := p.String("mode")
	if err := oneOf("mode", mode, "filtered", "all", "random"); err != nil {
		return nil, err
	}
	s := &filterSettings{
		All:            mode == "all",
		Random:         mode == "random",
		Seed:           p.Int("seed"),
		MinCitations:   p.Int("min_citations"),
		ExcludeTypes:   p.Strings("exclude_types"),
		RequireIntent:  p.String("require_intent"),
		Limit:          p.Int("limit"),
		MinReferences:  p.Int("min_references"),
		PublishedAfter: p.String("published_after"),
	}
	if s.PublishedAfter != "" {
		t, err := datasets.ParseDate(s.PublishedAfter)
		if err != nil {
			return nil, stages.ParamErrorf("published_after", "published_after %s", err)
		}
		s.after = t
	}
	switch {
	case s.MinCitations < 0:
		return nil, stages.ParamErrorf("min_citations", "min_citations = %d must not be negative", s.MinCitations)
	case s.Limit < 0:
		return nil, stages.ParamErrorf("limit", "limit = %d must not be negative (0 means no limit)", s.Limit)
	case s.MinReferences < 0:
		return nil, stages.ParamErrorf("min_references", "min_references = %d must not be negative", s.MinReferences)
	case s.Random && s.Limit == 0:
		// Drawing "all" of them at random is mode = "all" in another order.
		return nil, stages.ParamErrorf("limit", `mode = "random" draws limit references, so limit must be at least 1 (the paper's low resource: 5); for every reference use mode = "all"`)
	case s.Limit > 0 && s.Limit < s.MinReferences:
		// Blamed on limit: min_references is the paper's rule, limit the knob
		// a researcher turns for the low-resource setting.
		return nil, stages.ParamErrorf("limit", "limit = %d is below min_references = %d, so every target would be dropped", s.Limit, s.MinReferences)
	}
	return s, nil
}

// intentField is where a reference's citation intents are in an ideabench
// record.
const intentField = "references.intents"

// refIDField is every reference id: none at all means no target has a
// reference.
const refIDField = "references.id"

func (filterType) DatasetFields() []string { return []string{intentField, refIDField} }

// CheckDataset warns about a require_intent no reference carries: a misspelt
// "backgorund" would keep no reference, drop every target and still exit 0.
// A dataset with no intents at all (the published target list) says nothing
// about the spelling, so it passes.
//
// A dataset of which no target has a reference (the published target list
// alone) is named at dataset, which engine/config makes an error: every
// target would be dropped, or with min_references = 0 generate from
// nothing, and the run would exit 0 with nothing scored.
func (filterType) CheckDataset(p stages.Params, values map[string][]string) []*stages.ParamError {
	if len(values[refIDField]) == 0 {
		what := "every target would be dropped at min_references and nothing generated or scored"
		if p.Int("min_references") == 0 {
			what = "every target would go to generation with no references"
		}
		return []*stages.ParamError{stages.ParamErrorf("dataset",
			`no target in it has any reference, so %s: the targets cannot run. Give them references: build them from Semantic Scholar with experiments/ideabench/build_dataset.hcl, join a references file to the target list (references = "refs.csv" on the ideabench-targets-csv dataset, one row per target and reference with a target_id column), or use format = "ideabench" with each target's references in its JSONL record`, what).(*stages.ParamError)}
	}
	want, have := p.String("require_intent"), values[intentField]
	if want == "" || p.String("mode") != "filtered" || len(have) == 0 || containsFold(have, want) {
		return nil
	}
	return []*stages.ParamError{stages.ParamErrorf("require_intent",
		"require_intent = %q is the intent of no reference, so every target would be dropped; the references' intents are %s", want, quoteAll(have)).(*stages.ParamError)}
}

func (filterType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	s, err := decodeFilter(inst.Params)
	if err != nil {
		return nil, err
	}
	ds, err := stages.RequireInput(inst.Params, "dataset")
	if err != nil {
		return nil, err
	}
	prepare := func(in []stages.In) (*stages.Work, error) {
		return &stages.Work{Compute: func() ([]byte, error) {
			var p datasets.Paper
			if err := json.Unmarshal(in[0].Output, &p); err != nil {
				return nil, fmt.Errorf("decode target %q: %w", in[0].Node.Item, err)
			}
			return stages.EncodeOutput(s.apply(&p))
		}}, nil
	}
	nodes := make([]stages.Node, len(ds.Nodes))
	for i, n := range ds.Nodes {
		nodes[i] = stages.Node{Item: n.Item, Deps: []stages.Dep{{Input: "dataset", Index: i}}, Prepare: prepare}
	}
	return nodes, nil
}

// Target is what filter_references passes on of the target paper: only what
// generation may see. Its title, abstract and idea stay out, so a generator
// cannot be shown them and editing them re-runs no generation; rank_ideas
// reads them from the dataset.
type Target struct {
	ID       string   `json:"id"`
	Keywords []string `json:"keywords,omitempty"`
}

// Ref is a kept reference. Only what prompts use is passed on, so a change to
// a kept reference's citation count or intents cannot dirty the generation.
type Ref struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Abstract string `json:"abstract"`
}

// FilterOutput is a filter_references node's output.
type FilterOutput struct {
	Target     Target `json:"target"`
	References []Ref  `json:"references"`
	Dropped    bool   `json:"dropped"`
	Reason     string `json:"reason"`
}

func (s *filterSettings) apply(p *datasets.Paper) *FilterOutput {
	out := &FilterOutput{
		Target:     Target{ID: p.ID, Keywords: p.Keywords},
		References: []Ref{},
	}
	// Contamination first: a target the generator may have read is dropped
	// whatever its references. The reason leaves the year out, so one line
	// of the plan counts them all.
	if s.PublishedAfter != "" && datasets.MayPredate(p.Year, s.after) {
		out.Dropped = true
		out.Reason = fmt.Sprintf("may be published before published_after = %s", s.PublishedAfter)
		if p.Year == 0 {
			out.Reason = fmt.Sprintf("no publication year to compare with published_after = %s", s.PublishedAfter)
		}
		return out
	}
	if s.Random {
		return s.draw(p, out)
	}
	kept := 0
	for i := range p.References {
		r := &p.References[i]
		if !s.keep(r) {
			continue
		}
		kept++
		if s.Limit == 0 || len(out.References) < s.Limit {
			out.References = append(out.References, Ref{ID: r.ID, Title: r.Title, Abstract: r.Abstract})
		}
	}
	if kept < s.MinReferences {
		out.Dropped = true
		// The reason names only what decided the drop, not the limit, so that
		// changing the limit leaves a dropped target's output unchanged.
		out.Reason = fmt.Sprintf("%d of %d references kept, fewer than min_references = %d", kept, len(p.References), s.MinReferences)
	}
	return out
}

// draw is mode = "random": of the references with an abstract, the limit
// whose SHA-256 of (seed in decimal, NUL, target id, NUL, position in the
// target's reference list in decimal, NUL, reference id) is lowest, passed on
// in dataset order. A target's draw depends on the seed, its id and its own
// references alone, so adding targets or other instances changes none.
func (s *filterSettings) draw(p *datasets.Paper, out *FilterOutput) *FilterOutput {
	type cand struct {
		i    int
		hash [32]byte
	}
	var cands []cand
	prefix := strconv.Itoa(s.Seed) + "\x00" + p.ID + "\x00"
	for i := range p.References {
		r := &p.References[i]
		if strings.TrimSpace(r.Abstract) == "" {
			continue
		}
		cands = append(cands, cand{i, sha256.Sum256([]byte(prefix + strconv.Itoa(i) + "\x00" + r.ID))})
	}
	if len(cands) < s.MinReferences {
		out.Dropped = true
		out.Reason = fmt.Sprintf("%d of %d references have an abstract, fewer than min_references = %d", len(cands), len(p.References), s.MinReferences)
		return out
	}
	sort.Slice(cands, func(a, b int) bool { return bytes.Compare(cands[a].hash[:], cands[b].hash[:]) < 0 })
	cands = cands[:min(s.Limit, len(cands))]
	sort.Slice(cands, func(a, b int) bool { return cands[a].i < cands[b].i })
	for _, c := range cands {
		r := &p.References[c.i]
		out.References = append(out.References, Ref{ID: r.ID, Title: r.Title, Abstract: r.Abstract})
	}
	return out
}

// keep decides one reference. A reference without an abstract is useless to
// the generator in every mode; the paper's own code drops those first too.
func (s *filterSettings) keep(r *datasets.Reference) bool {
	if strings.TrimSpace(r.Abstract) == "" {
		return false
	}
	if s.All {
		return true
	}
	if r.Citations < s.MinCitations {
		return false
	}
	for _, t := range r.Types {
		if containsFold(s.ExcludeTypes, t) {
			return false
		}
	}
	return s.RequireIntent == "" || containsFold(r.Intents, s.RequireIntent)
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
