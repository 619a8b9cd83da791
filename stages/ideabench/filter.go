package ideabench

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

// DefaultExcludeTypes are the Semantic Scholar publication types the
// authors' filter drops (filter_references.py at 9dbd125; the paper's text
// says "reviews, editorials, letters, or books"). Matched as substrings
// (type_match = "substring"), "Book" also drops BookSection.
var DefaultExcludeTypes = []string{"Review", "Dataset", "Editorial", "LettersAndComments", "News", "Book"}

// AuthorsDroppedIntents are the intent lists the authors' filter drops a
// reference for: cited with no intent, or only for its result, or only for
// its methodology (filter_references.py compares the list's Python text
// with "[]", "['result']" and "['methodology']").
var AuthorsDroppedIntents = [][]string{{}, {"result"}, {"methodology"}}

// The bounds of filter_references' counts: far past any paper's citation
// count or reference list, so only a typo meets them.
const (
	maxCitations  = 1_000_000_000
	maxReferences = 100_000
)

type filterType struct{}

func (filterType) Name() string { return "filter_references" }

// Version 3: the authors' filter is the default (intent rule, excluded
// types matched as substrings, untyped references dropped, limit drawn at
// random), min_filtered and max_filtered.
func (filterType) Version() string { return "3" }

func (filterType) Params() []stages.Param {
	return []stages.Param{
		{Name: "dataset", Kind: stages.Input, Required: true, Accepts: []string{"dataset"}, Doc: "the target papers (format ideabench)"},
		{Name: "mode", Kind: stages.String, Default: "filtered", Doc: `"filtered" (the authors' filter, below), "all" (high resource: every reference with an abstract) or "random" (the paper's random-filtering baseline: mode = "all" with limit references drawn at random, the same as pick = "random"; the citation, type and intent rules do not apply)`},
		{Name: "min_citations", Kind: stages.Int, Default: 5, Min: 0, Max: maxCitations, Doc: "drop references cited fewer times (the authors: 5)"},
		{Name: "exclude_types", Kind: stages.StringList, Default: DefaultExcludeTypes, Doc: "drop references with a publication type matching any of these (the authors' list; the paper's text names reviews, editorials, letters and books)"},
		{Name: "type_match", Kind: stages.String, Default: "substring", Doc: `how exclude_types match a reference's publication types: "substring" (the authors: an excluded name anywhere in a type name, case-sensitive, so "Book" drops "BookSection") or "exact" (a whole type name, any case)`},
		{Name: "drop_untyped", Kind: stages.Bool, Default: true, Doc: "drop references without publication types (the authors drop a missing publicationTypes with their missing abstracts); false keeps them"},
		{Name: "intent_rule", Kind: stages.String, Default: "authors", Doc: `"authors": drop a reference cited with no intent, only for its result or only for its methodology (filter_references.py: the intent list exactly [], ['result'] or ['methodology']; a missing list counts as []); "none": no intent rule. Replaced by require_intent when that is set`},
		{Name: "require_intent", Kind: stages.String, Default: "", Doc: `keep only references cited with this intent ("background": a reading of the paper's text, "cited in the background section"), in place of intent_rule; "": intent_rule decides`},
		{Name: "limit", Kind: stages.Int, Default: 0, Min: 0, Max: maxReferences, Doc: "keep at most this many references (0: no limit; the paper's low resource: 5); pick says which"},
		{Name: "pick", Kind: stages.String, Default: "random", Doc: `which references limit keeps of a target that has more: "random" (the authors' random.sample: limit drawn by seed, in the order drawn) or "first" (the first in dataset order); a target with limit or fewer keeps them all, in dataset order, either way`},
		{Name: "seed", Kind: stages.Int, Default: 0, Min: 0, Max: math.MaxInt32, Doc: `chooses the random draws (pick = "random", mode = "random"); each target's draw depends on the seed, the target id and its references alone, and a draw of k is the first k of a draw of more`},
		{Name: "min_references", Kind: stages.Int, Default: 3, Min: 0, Max: maxReferences, Doc: "drop targets left with fewer references (the authors: 3)"},
		{Name: "min_filtered", Kind: stages.Int, Default: 0, Min: 0, Max: maxReferences, Doc: `drop targets with fewer references passing the filter (the mode = "filtered" rules above), whatever the mode: the targets of the authors' main results have at least 3 (high resource included), those of the paper's ablation at least 15; 0: no bound`},
		{Name: "max_filtered", Kind: stages.Int, Default: 0, Min: 0, Max: maxReferences, Doc: `drop targets with more references passing the filter, whatever the mode (the authors' ablation_study code: at most 15, where the paper's text says at least 15); 0: no bound`},
		{Name: "published_after", Kind: stages.String, Default: "", Doc: `YYYY-MM-DD: drop (and count) targets that may have been published before it, as a generator's knowledge_cutoff (a target with a year only counts from 1 January; one without a year is dropped); "": keep every target`},
	}
}

// filterSettings are a filter_references instance's decoded params.
type filterSettings struct {
	All           bool
	Random        bool // limit drawn at random (pick = "random" or mode = "random")
	DrawAll       bool // mode = "random"
	Seed          int
	MinCitations  int
	ExcludeTypes  []string
	Substring     bool // type_match = "substring"
	DropUntyped   bool
	AuthorsIntent bool // intent_rule = "authors" and no require_intent
	RequireIntent string
	Limit         int
	MinReferences int
	MinFiltered   int
	MaxFiltered   int
	// PublishedAfter is the published_after date ("" none); after is it parsed.
	PublishedAfter string
	after          time.Time
}

func decodeFilter(p stages.Params) (*filterSettings, error) {
	mode := p.String("mode")
	if err := oneOf("mode", mode, "filtered", "all", "random"); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		param   string
		allowed []string
	}{
		{"type_match", []string{"substring", "exact"}}, {"intent_rule", []string{"authors", "none"}}, {"pick", []string{"random", "first"}},
	} {
		// Read: a name from this list, which the source check cannot see.
		if err := oneOf(c.param, stages.Read(filterType{}, p).String(c.param), c.allowed...); err != nil {
			return nil, err
		}
	}
	s := &filterSettings{
		All:            mode != "filtered",
		Random:         mode == "random" || p.String("pick") == "random",
		DrawAll:        mode == "random",
		Seed:           p.Int("seed"),
		MinCitations:   p.Int("min_citations"),
		ExcludeTypes:   p.Strings("exclude_types"),
		Substring:      p.String("type_match") == "substring",
		DropUntyped:    p.Bool("drop_untyped"),
		RequireIntent:  p.String("require_intent"),
		Limit:          p.Int("limit"),
		MinReferences:  p.Int("min_references"),
		MinFiltered:    p.Int("min_filtered"),
		MaxFiltered:    p.Int("max_filtered"),
		PublishedAfter: p.String("published_after"),
	}
	s.AuthorsIntent = s.RequireIntent == "" && p.String("intent_rule") == "authors"
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
	case mode == "random" && s.Limit == 0:
		// Drawing "all" of them at random is mode = "all" in another order.
		return nil, stages.ParamErrorf("limit", `mode = "random" draws limit references, so limit must be at least 1 (the paper's low resource: 5); for every reference use mode = "all"`)
	case mode == "random" && p.String("pick") == "first":
		return nil, stages.ParamErrorf("pick", `mode = "random" draws its references at random, so pick = "first" contradicts it; for the first references of every reference use mode = "all" with pick = "first"`)
	case s.Limit > 0 && s.Limit < s.MinReferences:
		// Blamed on limit: min_references is the paper's rule, limit the knob
		// a researcher turns for the low-resource setting.
		return nil, stages.ParamErrorf("limit", "limit = %d is below min_references = %d, so every target would be dropped", s.Limit, s.MinReferences)
	case s.MaxFiltered > 0 && s.MaxFiltered < s.MinFiltered:
		return nil, stages.ParamErrorf("max_filtered", "max_filtered = %d is below min_filtered = %d, so every target would be dropped", s.MaxFiltered, s.MinFiltered)
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
	filters := p.String("mode") == "filtered" || p.Int("min_filtered") > 0 || p.Int("max_filtered") > 0
	if want == "" || !filters || len(have) == 0 || containsFold(have, want) {
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
	// The target subset by filtered references (the authors' main targets
	// have at least 3, the ablation's at least 15), in every mode.
	if s.MinFiltered > 0 || s.MaxFiltered > 0 {
		passing := 0
		for i := range p.References {
			if s.passes(&p.References[i]) {
				passing++
			}
		}
		switch {
		case passing < s.MinFiltered:
			out.Dropped = true
			out.Reason = fmt.Sprintf("%d of %d references pass the filter, fewer than min_filtered = %d", passing, len(p.References), s.MinFiltered)
			return out
		case s.MaxFiltered > 0 && passing > s.MaxFiltered:
			out.Dropped = true
			out.Reason = fmt.Sprintf("%d of %d references pass the filter, more than max_filtered = %d", passing, len(p.References), s.MaxFiltered)
			return out
		}
	}
	var kept []int
	for i := range p.References {
		if s.keep(&p.References[i]) {
			kept = append(kept, i)
		}
	}
	if len(kept) < s.MinReferences {
		out.Dropped = true
		// The reason names only what decided the drop, not the limit, so that
		// changing the limit leaves a dropped target's output unchanged.
		if s.DrawAll {
			out.Reason = fmt.Sprintf("%d of %d references have an abstract, fewer than min_references = %d", len(kept), len(p.References), s.MinReferences)
		} else {
			out.Reason = fmt.Sprintf("%d of %d references kept, fewer than min_references = %d", len(kept), len(p.References), s.MinReferences)
		}
		for _, i := range kept {
			r := &p.References[i]
			out.References = append(out.References, Ref{ID: r.ID, Title: r.Title, Abstract: r.Abstract})
		}
		return out
	}
	// A target with limit references or fewer keeps them all in dataset
	// order, so a larger limit that keeps every reference changes nothing
	// downstream (the authors' random.sample would also shuffle the prompt
	// order of a target with exactly limit: see FIDELITY.md).
	if s.Limit > 0 && len(kept) > s.Limit {
		if s.Random {
			kept = s.draw(p, kept)
		}
		kept = kept[:s.Limit]
	}
	for _, i := range kept {
		r := &p.References[i]
		out.References = append(out.References, Ref{ID: r.ID, Title: r.Title, Abstract: r.Abstract})
	}
	return out
}

// draw orders a target's kept references (indexes into its reference list)
// for a random pick: by SHA-256 of (seed in decimal, NUL, target id, NUL,
// position in the target's reference list in decimal, NUL, reference id),
// lowest first. The first limit of them are a uniformly random ordered
// sample, as the authors' random.sample gives (in the order drawn, as
// theirs shuffles the abstracts in the prompt). A target's draw depends on the
// seed, its id and its own references alone, so adding targets or other
// instances changes none, and a draw of k is the first k of a draw of more.
func (s *filterSettings) draw(p *datasets.Paper, kept []int) []int {
	type cand struct {
		i    int
		hash [32]byte
	}
	cands := make([]cand, len(kept))
	prefix := strconv.Itoa(s.Seed) + "\x00" + p.ID + "\x00"
	for k, i := range kept {
		cands[k] = cand{i, sha256.Sum256([]byte(prefix + strconv.Itoa(i) + "\x00" + p.References[i].ID))}
	}
	sort.Slice(cands, func(a, b int) bool { return bytes.Compare(cands[a].hash[:], cands[b].hash[:]) < 0 })
	out := make([]int, len(cands))
	for k, c := range cands {
		out[k] = c.i
	}
	return out
}

// keep decides one reference under the instance's mode. A reference
// without an abstract is useless to the generator in every mode; the
// authors' code drops those first too.
func (s *filterSettings) keep(r *datasets.Reference) bool {
	if s.All {
		return strings.TrimSpace(r.Abstract) != ""
	}
	return s.passes(r)
}

// passes applies the mode = "filtered" rules, in the authors' order: an
// abstract (and, with drop_untyped, publication types), min_citations,
// exclude_types, then the intent rule.
func (s *filterSettings) passes(r *datasets.Reference) bool {
	if strings.TrimSpace(r.Abstract) == "" || (s.DropUntyped && len(r.Types) == 0) {
		return false
	}
	if r.Citations < s.MinCitations {
		return false
	}
	for _, t := range r.Types {
		if s.excluded(t) {
			return false
		}
	}
	switch {
	case s.RequireIntent != "":
		return containsFold(r.Intents, s.RequireIntent)
	case s.AuthorsIntent:
		for _, drop := range AuthorsDroppedIntents {
			if slices.Equal(r.Intents, drop) || (len(drop) == 0 && len(r.Intents) == 0) {
				return false
			}
		}
	}
	return true
}

// excluded reports whether publication type t matches exclude_types.
func (s *filterSettings) excluded(t string) bool {
	for _, x := range s.ExcludeTypes {
		if (s.Substring && x != "" && strings.Contains(t, x)) || (!s.Substring && strings.EqualFold(t, x)) {
			return true
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
