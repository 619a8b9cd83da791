package ideabench

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
)

func TestFilterKeep(t *testing.T) {
	mod := func(f func(r *datasets.Reference)) datasets.Reference {
		r := goodRef("r")
		f(&r)
		return r
	}
	defaults := stages.Params{}
	tests := []struct {
		name   string
		params stages.Params
		ref    datasets.Reference
		keep   bool
	}{
		{"primary background paper", defaults, goodRef("r"), true},
		{"exactly min citations", defaults, mod(func(r *datasets.Reference) { r.Citations = 5 }), true},
		{"below min citations", defaults, mod(func(r *datasets.Reference) { r.Citations = 4 }), false},
		{"review", defaults, mod(func(r *datasets.Reference) { r.Types = []string{"JournalArticle", "Review"} }), false},
		{"editorial", defaults, mod(func(r *datasets.Reference) { r.Types = []string{"Editorial"} }), false},
		{"letters", defaults, mod(func(r *datasets.Reference) { r.Types = []string{"LettersAndComments"} }), false},
		{"book", defaults, mod(func(r *datasets.Reference) { r.Types = []string{"Book"} }), false},
		{"book section", defaults, mod(func(r *datasets.Reference) { r.Types = []string{"BookSection"} }), false},
		{"type case differs: substring match is case-sensitive", defaults, mod(func(r *datasets.Reference) { r.Types = []string{"review"} }), true},
		{"type case differs, exact match", stages.Params{"type_match": "exact"}, mod(func(r *datasets.Reference) { r.Types = []string{"review"} }), false},
		{"no types", defaults, mod(func(r *datasets.Reference) { r.Types = nil }), false},
		{"no types, drop_untyped off", stages.Params{"drop_untyped": false}, mod(func(r *datasets.Reference) { r.Types = nil }), true},
		{"methodology only", defaults, mod(func(r *datasets.Reference) { r.Intents = []string{"methodology"} }), false},
		{"methodology and result", defaults, mod(func(r *datasets.Reference) { r.Intents = []string{"methodology", "result"} }), true},
		{"background among intents", defaults, mod(func(r *datasets.Reference) { r.Intents = []string{"methodology", "Background"} }), true},
		{"no intents", defaults, mod(func(r *datasets.Reference) { r.Intents = nil }), false},
		{"no abstract", defaults, mod(func(r *datasets.Reference) { r.Abstract = "  " }), false},
		{"intent rule off", stages.Params{"intent_rule": "none"}, mod(func(r *datasets.Reference) { r.Intents = nil }), true},
		{"require_intent replaces the authors' rule", stages.Params{"require_intent": "background"}, mod(func(r *datasets.Reference) { r.Intents = []string{"methodology", "result"} }), false},
		{"custom min citations", stages.Params{"min_citations": 0}, mod(func(r *datasets.Reference) { r.Citations = 0 }), true},
		{"custom exclude list", stages.Params{"exclude_types": []string{"Book"}}, mod(func(r *datasets.Reference) { r.Types = []string{"Review"} }), true},
		{"empty exclude list", stages.Params{"exclude_types": []string{}}, mod(func(r *datasets.Reference) { r.Types = []string{"Review"} }), true},
		{"mode all keeps a review", stages.Params{"mode": "all"}, mod(func(r *datasets.Reference) {
			r.Types, r.Citations, r.Intents = []string{"Review"}, 0, []string{"methodology"}
		}), true},
		{"mode all still needs an abstract", stages.Params{"mode": "all"}, mod(func(r *datasets.Reference) { r.Abstract = "" }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := decodeFilter(stages.WithDefaults(filterType{}, tc.params))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.keep(&tc.ref); got != tc.keep {
				t.Errorf("keep = %v, want %v", got, tc.keep)
			}
		})
	}
}

func TestFilterApply(t *testing.T) {
	review := goodRef("rev")
	review.Types = []string{"Review"}
	few := goodRef("few")
	few.Citations = 2
	p := paper("p1", goodRef("a"), review, goodRef("b"), few, goodRef("c"), goodRef("d"))
	tests := []struct {
		name    string
		params  stages.Params
		refs    []string
		dropped bool
		reason  string
	}{
		{"defaults keep all that pass", stages.Params{}, []string{"a", "b", "c", "d"}, false, ""},
		{"limit draws at random, in the order drawn", stages.Params{"limit": 3}, []string{"b", "c", "a"}, false, ""},
		{"limit with pick first keeps the first in dataset order", stages.Params{"limit": 3, "pick": "first"}, []string{"a", "b", "c"}, false, ""},
		{"limit of exactly the kept count keeps dataset order", stages.Params{"limit": 4}, []string{"a", "b", "c", "d"}, false, ""},
		{"limit above count changes nothing", stages.Params{"limit": 6}, []string{"a", "b", "c", "d"}, false, ""},
		{"mode all", stages.Params{"mode": "all"}, []string{"a", "rev", "b", "few", "c", "d"}, false, ""},
		{"mode all with limit", stages.Params{"mode": "all", "limit": 5}, []string{"few", "b", "rev", "c", "a"}, false, ""},
		{"mode all with limit, pick first", stages.Params{"mode": "all", "limit": 5, "pick": "first"}, []string{"a", "rev", "b", "few", "c"}, false, ""},
		{"min_filtered in mode all", stages.Params{"mode": "all", "min_filtered": 5}, []string{}, true, "4 of 6 references pass the filter, fewer than min_filtered = 5"},
		{"max_filtered", stages.Params{"mode": "all", "max_filtered": 3}, []string{}, true, "4 of 6 references pass the filter, more than max_filtered = 3"},
		{"within min_filtered and max_filtered", stages.Params{"mode": "all", "min_filtered": 4, "max_filtered": 4}, []string{"a", "rev", "b", "few", "c", "d"}, false, ""},
		{"too few left", stages.Params{"min_references": 5}, []string{"a", "b", "c", "d"}, true, "4 of 6 references kept, fewer than min_references = 5"},
		// p1 has no year: it cannot be shown to postdate anything.
		{"published_after without a year", stages.Params{"published_after": "2024-01-01"}, []string{}, true, "no publication year to compare with published_after = 2024-01-01"},
		{"min_references 0 never drops", stages.Params{"min_references": 0, "min_citations": 100}, []string{}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := decodeFilter(stages.WithDefaults(filterType{}, tc.params))
			if err != nil {
				t.Fatal(err)
			}
			out := s.apply(&p)
			var got []string
			for _, r := range out.References {
				got = append(got, r.ID)
			}
			if got == nil {
				got = []string{}
			}
			if !reflect.DeepEqual(got, tc.refs) {
				t.Errorf("refs %v, want %v", got, tc.refs)
			}
			if out.Dropped != tc.dropped || out.Reason != tc.reason {
				t.Errorf("dropped %v %q, want %v %q", out.Dropped, out.Reason, tc.dropped, tc.reason)
			}
			if !reflect.DeepEqual(out.Target, Target{ID: "p1"}) {
				t.Errorf("target %+v", out.Target)
			}
			// The target's own text never reaches generation.
			b := mustJSON(t, out)
			for _, own := range []string{p.Title, p.Abstract, p.Idea} {
				if strings.Contains(string(b), own) {
					t.Errorf("filter output carries the target's %q", own)
				}
			}
		})
	}
}

// published_after keeps a target of its own year only from 1 January on.
func TestFilterPublishedAfter(t *testing.T) {
	for _, tc := range []struct {
		year    int
		after   string
		dropped bool
	}{
		{2023, "2024-01-01", true}, {2024, "2024-01-01", false}, {2024, "2024-06-01", true}, {2025, "2024-06-01", false}, {2023, "", false},
	} {
		s, err := decodeFilter(stages.WithDefaults(filterType{}, stages.Params{"published_after": tc.after}))
		if err != nil {
			t.Fatal(err)
		}
		p := paper("p1", goodRef("a"), goodRef("b"), goodRef("c"))
		p.Year = tc.year
		out := s.apply(&p)
		if out.Dropped != tc.dropped || (tc.dropped && out.Reason != "may be published before published_after = "+tc.after) || (!tc.dropped && len(out.References) != 3) {
			t.Errorf("year %d, published_after %q: %+v", tc.year, tc.after, out)
		}
	}
}

func TestFilterParamErrors(t *testing.T) {
	tests := []struct {
		params stages.Params
		param  string
		want   string
	}{
		{stages.Params{"mode": "some"}, "mode", `mode = "some" is not one of "filtered", "all", "random"`},
		{stages.Params{"mode": "random"}, "limit", `mode = "random" draws limit references, so limit must be at least 1 (the paper's low resource: 5); for every reference use mode = "all"`},
		{stages.Params{"mode": "random", "limit": 2}, "limit", "limit = 2 is below min_references = 3, so every target would be dropped"},
		{stages.Params{"min_citations": -1}, "min_citations", "min_citations = -1 must not be negative"},
		{stages.Params{"limit": -2}, "limit", "limit = -2 must not be negative (0 means no limit)"},
		{stages.Params{"min_references": -1}, "min_references", "min_references = -1 must not be negative"},
		{stages.Params{"limit": 2}, "limit", "limit = 2 is below min_references = 3, so every target would be dropped"},
		{stages.Params{}, "dataset", "dataset is required"},
		{stages.Params{"published_after": "01/01/2024"}, "published_after", `published_after "01/01/2024" is not a date written YYYY-MM-DD, such as "2024-01-01"`},
	}
	for _, tc := range tests {
		_, err := filterType{}.Layout(&stages.Instance{Address: "stage.filter_references.low", Params: stages.WithDefaults(filterType{}, tc.params)})
		checkParamError(t, err, tc.param, tc.want)
	}
}

func TestFilterLayoutAndOutput(t *testing.T) {
	ds := datasetUp("p1", "p2", "p3")
	nodes := layout(t, filterType{}, "stage.filter_references.low", stages.Params{"dataset": ds, "limit": 5})
	if len(nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(nodes))
	}
	for i, n := range nodes {
		if n.Item != ds.Nodes[i].Item || n.Slot != 0 || n.Label != "" || n.AllowMissing ||
			!reflect.DeepEqual(n.Deps, []stages.Dep{{Input: "dataset", Index: i}}) {
			t.Errorf("node %d = %+v", i, n)
		}
	}
	meth := goodRef("m")
	meth.Intents = []string{"methodology"}
	rec := mustJSON(t, paper("p2", goodRef("a"), meth, goodRef("b"), goodRef("c")))
	out := compute(t, nodes[1], []stages.In{{Dep: nodes[1].Deps[0], Node: stages.NodeInfo{Item: "p2"}, Output: rec}})
	want := `{"target":{"id":"p2"},` +
		`"references":[{"id":"a","title":"Ref a","abstract":"Abstract of reference a."},{"id":"b","title":"Ref b","abstract":"Abstract of reference b."},{"id":"c","title":"Ref c","abstract":"Abstract of reference c."}],` +
		`"dropped":false,"reason":""}`
	if string(out) != want {
		t.Errorf("output\n got %s\nwant %s", out, want)
	}
	// A target left with too few references is dropped, with its kept references listed.
	rec = mustJSON(t, paper("p3", goodRef("a"), meth))
	out = compute(t, nodes[2], []stages.In{{Dep: nodes[2].Deps[0], Node: stages.NodeInfo{Item: "p3"}, Output: rec}})
	var f FilterOutput
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	if !f.Dropped || f.Reason != "1 of 2 references kept, fewer than min_references = 3" || len(f.References) != 1 {
		t.Errorf("dropped target output %s", out)
	}
	w, err := nodes[0].Prepare([]stages.In{{Node: stages.NodeInfo{Item: "p1"}, Output: []byte(`{"id":`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = w.Compute(); err == nil || !strings.Contains(err.Error(), `decode target "p1"`) {
		t.Errorf("bad record error = %v", err)
	}
}

func TestFilterCheckDataset(t *testing.T) {
	intents := map[string][]string{intentField: {"background", "methodology", "result"}, refIDField: {"r1"}}
	noRefs := map[string][]string{intentField: {}, refIDField: {}}
	const getRefs = `Give them references: build them from Semantic Scholar with experiments/ideabench/build_dataset.hcl, join a references file to the target list (references = "refs.csv" on the ideabench-targets-csv dataset, one row per target and reference with a target_id column), or use format = "ideabench" with each target's references in its JSONL record`
	tests := []struct {
		name   string
		params stages.Params
		values map[string][]string
		want   string // "" for no complaint
	}{
		{"misspelt", stages.Params{"require_intent": "backgorund"}, intents,
			`require_intent: require_intent = "backgorund" is the intent of no reference, so every target would be dropped; the references' intents are "background", "methodology", "result"`},
		{"default is there", stages.Params{}, intents, ""},
		{"case differs", stages.Params{"require_intent": "Background"}, intents, ""},
		{"any intent", stages.Params{"require_intent": ""}, intents, ""},
		{"mode all ignores intents", stages.Params{"require_intent": "backgorund", "mode": "all"}, intents, ""},
		{"mode random ignores intents", stages.Params{"require_intent": "backgorund", "mode": "random"}, intents, ""},
		{"dataset without intents", stages.Params{"require_intent": "backgorund"}, map[string][]string{intentField: {}, refIDField: {""}}, ""},
		{"no references", stages.Params{}, noRefs,
			"dataset: no target in it has any reference, so every target would be dropped at min_references and nothing generated or scored: the targets cannot run. " + getRefs},
		{"no references, min_references 0", stages.Params{"min_references": 0, "mode": "all"}, noRefs,
			"dataset: no target in it has any reference, so every target would go to generation with no references: the targets cannot run. " + getRefs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, pe := range (filterType{}).CheckDataset(stages.WithDefaults(filterType{}, tc.params), tc.values) {
				got = append(got, pe.Param+": "+pe.Error())
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// mode = "random": the limit references with an abstract whose
// SHA-256("seed\x00target\x00position\x00id") is lowest, lowest first
// (expected draws computed independently with Python's hashlib); citations,
// types and intents are ignored. A target with limit or fewer keeps them
// all in dataset order.
func TestFilterRandom(t *testing.T) {
	var refs []datasets.Reference
	for _, id := range strings.Fields("a b x c d e f") {
		r := goodRef(id)
		switch id {
		case "x":
			r.Abstract = ""
		case "b":
			r.Types, r.Citations, r.Intents = []string{"Review"}, 0, []string{"methodology"}
		}
		refs = append(refs, r)
	}
	tests := []struct {
		seed, limit, minRefs int
		target               string
		want                 string // kept ids, or "dropped: reason"
	}{
		{0, 3, 3, "p1", "c b f"},
		{1, 3, 3, "p1", "f c e"},
		{0, 3, 3, "p2", "e d f"},
		{0, 5, 3, "p1", "c b f e d"},
		{0, 6, 3, "p1", "a b c d e f"},
		{0, 100, 3, "p1", "a b c d e f"},
		{7, 1, 1, "p1", "a"},
		{0, 10, 7, "p1", "dropped: 6 of 7 references have an abstract, fewer than min_references = 7"},
	}
	for _, tc := range tests {
		s, err := decodeFilter(stages.WithDefaults(filterType{}, stages.Params{"mode": "random", "seed": tc.seed, "limit": tc.limit, "min_references": tc.minRefs}))
		if err != nil {
			t.Fatal(err)
		}
		p := paper(tc.target, refs...)
		out := s.apply(&p)
		var got []string
		for _, r := range out.References {
			got = append(got, r.ID)
		}
		g := strings.Join(got, " ")
		if out.Dropped {
			g = "dropped: " + out.Reason
		}
		if g != tc.want {
			t.Errorf("seed %d limit %d target %s: got %q, want %q", tc.seed, tc.limit, tc.target, g, tc.want)
		}
	}
}
