package ideabench

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/format"
)

// rankFixture lays out generate (mode, n) then rank (params) over items.
type rankFixture struct {
	ds    *stages.Upstream
	ideas *stages.Upstream
	gen   []stages.Node
	rank  []stages.Node
}

func newRankFixture(t testing.TB, genParams, rankParams stages.Params, items ...string) *rankFixture {
	t.Helper()
	f := &rankFixture{ds: datasetUp(items...)}
	filt := layout(t, filterType{}, "stage.filter_references.low", stages.Params{"dataset": f.ds})
	gp := stages.Params{"references": stageUp("stage.filter_references.low", "filter_references", "", filt, f.ds), "model": testModel}
	for k, v := range genParams {
		gp[k] = v
	}
	f.gen = layout(t, generateType{}, `stage.generate_ideas.main["gen-model"]`, gp)
	f.ideas = stageUp(`stage.generate_ideas.main["gen-model"]`, "generate_ideas", "gen-model", f.gen, f.ds)
	rp := stages.Params{"ideas": f.ideas, "judge": testJudge, "quality": novelty}
	for k, v := range rankParams {
		rp[k] = v
	}
	f.rank = layout(t, rankType{}, `stage.rank_ideas.novelty["gen-model"]`, rp)
	return f
}

// inputs builds the In list of a rank node: ideas outputs then the target record.
func (f *rankFixture) inputs(t testing.TB, n stages.Node, ideas [][]string, target []byte) []stages.In {
	var in []stages.In
	for i, d := range n.Deps[:len(n.Deps)-1] {
		in = append(in, stages.In{Dep: d, Node: f.ideas.Nodes[d.Index], Output: mustJSON(t, IdeasOutput{Ideas: ideas[i]})})
	}
	last := n.Deps[len(n.Deps)-1]
	return append(in, stages.In{Dep: last, Node: stages.NodeInfo{Item: n.Item}, Output: target})
}

func record(t testing.TB, id string) []byte {
	return mustJSON(t, paper(id))
}

func TestRankLayout(t *testing.T) {
	tests := []struct {
		name       string
		gen, rank  stages.Params
		perms      int
		ideasPerIt int
	}{
		{"independent, one permutation", stages.Params{"n": 3}, stages.Params{}, 1, 3},
		{"independent, three permutations", stages.Params{"n": 3}, stages.Params{"permutations": 3}, 3, 3},
		{"batch, two permutations", stages.Params{"mode": "batch", "n": 3}, stages.Params{"permutations": 2}, 2, 1},
		{"target first", stages.Params{"n": 2}, stages.Params{"order": "target_first"}, 1, 2},
	}
	items := []string{"p1", "p2", "p3"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newRankFixture(t, tc.gen, tc.rank, items...)
			if len(f.rank) != len(items)*tc.perms {
				t.Fatalf("%d nodes, want %d", len(f.rank), len(items)*tc.perms)
			}
			for i, n := range f.rank {
				it := i / tc.perms
				p := i % tc.perms
				if n.Item != items[it] || n.Slot != p || n.Label != fmt.Sprintf("perm %d", p) {
					t.Errorf("node %d: %q slot %d label %q", i, n.Item, n.Slot, n.Label)
				}
				var want []stages.Dep
				for k := 0; k < tc.ideasPerIt; k++ {
					want = append(want, stages.Dep{Input: "ideas", Index: it*tc.ideasPerIt + k})
				}
				want = append(want, stages.Dep{Input: "dataset.targets", Index: it})
				if !reflect.DeepEqual(n.Deps, want) {
					t.Errorf("node %d deps %v, want %v", i, n.Deps, want)
				}
			}
		})
	}
}

func TestRankLayoutTargetStage(t *testing.T) {
	ds := datasetUp("p1", "p2")
	// A target stage whose items come in another order than the ideas'.
	target := &stages.Upstream{Address: "stage.extract_idea.main", Type: "extract_idea", Source: ds,
		Nodes: []stages.NodeInfo{{Item: "p2"}, {Item: "p1"}}}
	f := newRankFixture(t, stages.Params{"n": 1}, stages.Params{"target": target}, "p1", "p2")
	if got := f.rank[0].Deps; !reflect.DeepEqual(got, []stages.Dep{{Input: "ideas", Index: 0}, {Input: "target", Index: 1}}) {
		t.Errorf("p1 deps %v", got)
	}
	if got := f.rank[1].Deps; !reflect.DeepEqual(got, []stages.Dep{{Input: "ideas", Index: 1}, {Input: "target", Index: 0}}) {
		t.Errorf("p2 deps %v", got)
	}
	c := call(t, f.rank[0], f.inputs(t, f.rank[0], [][]string{{"gen idea"}}, []byte(`{"idea":"Extracted idea."}`)))
	if !strings.Contains(c.Request.Messages[0].Content, "Extracted idea.") {
		t.Error("the target stage's idea is not in the prompt")
	}
}

func TestRankParamErrors(t *testing.T) {
	ds := datasetUp("p1")
	ideas := &stages.Upstream{Address: "stage.generate_ideas.main", Type: "generate_ideas", Nodes: ds.Nodes, Source: ds}
	orphan := &stages.Upstream{Address: "stage.generate_ideas.main", Type: "generate_ideas", Nodes: ds.Nodes}
	twice := &stages.Upstream{Address: "stage.x.y", Nodes: []stages.NodeInfo{{Item: "p1"}, {Item: "p1", Slot: 1}}}
	base := func(extra stages.Params) stages.Params {
		p := stages.Params{"ideas": ideas, "judge": testJudge, "quality": novelty}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	// The source dataset itself has two nodes for p1: blamed on ideas, the
	// param it comes through, since no target param is set.
	dsTwice := &stages.Upstream{Address: "dataset.targets", Type: "dataset", Nodes: twice.Nodes}
	dsTwice.Source = dsTwice
	viaTwice := &stages.Upstream{Address: "stage.generate_ideas.main", Type: "generate_ideas", Nodes: ds.Nodes, Source: dsTwice}
	tests := []struct {
		params stages.Params
		param  string
		want   string
	}{
		{base(stages.Params{"order": "target_first", "permutations": 3}), "permutations", `order = "target_first" always gives the same letter order, so permutations must be 1 (got 3)`},
		{base(stages.Params{"order": "random"}), "order", `order = "random" is not one of "shuffle", "target_first", "target_last", "rotate"`},
		{base(stages.Params{"permutations": 0}), "permutations", "permutations = 0 must be at least 1"},
		{stages.Params{"ideas": ideas, "quality": novelty}, "judge", "judge is required"},
		{stages.Params{"ideas": ideas, "judge": testJudge}, "quality", "quality is required"},
		{stages.Params{"judge": testJudge, "quality": novelty}, "ideas", "ideas is required"},
		{base(stages.Params{"ideas": orphan}), "ideas", "ideas (stage.generate_ideas.main) has no source dataset to take target ideas from; set target"},
		{base(stages.Params{"target": twice}), "target", `target (stage.x.y) has 2 nodes for item "p1"; need exactly one`},
		{base(stages.Params{"ideas": viaTwice}), "ideas", `target (dataset.targets) has 2 nodes for item "p1"; need exactly one`},
		{base(stages.Params{"prompt": "{{.Target}}"}), "prompt",
			`render template stage.rank_ideas.novelty prompt: template: stage.rank_ideas.novelty prompt:1:2: executing "stage.rank_ideas.novelty prompt" at <.Target>: .Target is not a field here; available: .Quality .Ideas .Letters .N`},
	}
	for _, tc := range tests {
		_, err := rankType{}.Layout(&stages.Instance{Address: "stage.rank_ideas.novelty", Params: stages.WithDefaults(rankType{}, tc.params)})
		checkParamError(t, err, tc.param, tc.want)
	}
}

func TestRankPrepareGolden(t *testing.T) {
	ideas := [][]string{{"Idea zero about fins."}, {"Idea one about scales."}, {"Idea two about gills."}}
	tests := []struct {
		golden       string
		rank         stages.Params
		node         int
		labels       map[string]string
		targetLetter string
	}{
		{"rank_target_first.txt", stages.Params{"order": "target_first"}, 0,
			map[string]string{"A": "target", "B": "idea 0", "C": "idea 1", "D": "idea 2"}, "A"},
		{"rank_shuffle_perm1.txt", stages.Params{"permutations": 2, "seed": 7}, 1, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			f := newRankFixture(t, stages.Params{"n": 3}, tc.rank, "p1")
			n := f.rank[tc.node]
			c := call(t, n, f.inputs(t, n, ideas, record(t, "p1")))
			if c.Model != testJudge || c.Request.Model != "judge-model" || c.Request.Sample != n.Slot {
				t.Errorf("call model %v sample %d", c.Request.Model, c.Request.Sample)
			}
			if !reflect.DeepEqual(c.Request.Format, format.Spec{Kind: format.Ranking, Letters: "ABCD"}) {
				t.Errorf("format %+v", c.Request.Format)
			}
			golden(t, tc.golden, requestText(t, c.Request))
			out, err := c.Output(&format.Answer{Ranking: []string{"D", "C", "B", "A"}})
			if err != nil {
				t.Fatal(err)
			}
			var r RankOutput
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatal(err)
			}
			if tc.labels != nil && (!reflect.DeepEqual(r.Labels, tc.labels) || r.TargetLetter != tc.targetLetter) {
				t.Errorf("labels %v target %s", r.Labels, r.TargetLetter)
			}
			// Whatever the shuffle, the prompt shows each candidate under the letter the labels say.
			content := c.Request.Messages[0].Content
			for l, label := range r.Labels {
				text := "Idea of p1."
				if label != "target" {
					var k int
					fmt.Sscanf(label, "idea %d", &k)
					text = ideas[k][0]
				}
				if !strings.Contains(content, "Hypothesis "+l+":\n"+text+"\n") {
					t.Errorf("letter %s (%s) not shown with %q", l, label, text)
				}
			}
			wantRank := 4 - strings.Index("ABCD", r.TargetLetter)
			if r.TargetRank != wantRank || r.N != 3 || !reflect.DeepEqual(r.Order, []string{"D", "C", "B", "A"}) {
				t.Errorf("output %s", out)
			}
		})
	}
}

// TestRankOutput runs answers through format.Parse against the request's
// spec, then Call.Output. Everything rankOutput used to refuse (a missing,
// repeated or unknown letter) is now a parse error, which gets a repair
// re-ask; Output never fails on a parsed answer.
func TestRankOutput(t *testing.T) {
	f := newRankFixture(t, stages.Params{"n": 2}, stages.Params{"order": "target_first"}, "p1")
	c := call(t, f.rank[0], f.inputs(t, f.rank[0], [][]string{{"i0"}, {"i1"}}, record(t, "p1")))
	if spec := c.Request.Format; spec.Kind != format.Ranking || spec.Letters != "ABC" {
		t.Fatalf("request format %+v, want a ranking over ABC", spec)
	}
	tests := []struct {
		answer   string
		want     string // node output
		parseErr string // exact parse error
	}{
		{"Ranking: B > A > C", `{"order":["B","A","C"],"labels":{"A":"target","B":"idea 0","C":"idea 1"},"target_letter":"A","target_rank":2,"n":2}`, ""},
		{"ranking: a > b > c", `{"order":["A","B","C"],"labels":{"A":"target","B":"idea 0","C":"idea 1"},"target_letter":"A","target_rank":1,"n":2}`, ""},
		{"1. C\n2. B\n3. A", `{"order":["C","B","A"],"labels":{"A":"target","B":"idea 0","C":"idea 1"},"target_letter":"A","target_rank":3,"n":2}`, ""},
		{"Ranking: B > A", "", "ranking B > A is invalid: missing C (use each of A, B, C exactly once)"},
		{"Ranking: B > A > B", "", "ranking B > A > B is invalid: repeated B; missing C (use each of A, B, C exactly once)"},
		{"Ranking: B > A > D", "", "ranking B > A > D is invalid: unknown D; missing C (use each of A, B, C exactly once)"},
		{"Ranking: B > A > C > A", "", "ranking B > A > C > A is invalid: repeated A (use each of A, B, C exactly once)"},
	}
	for _, tc := range tests {
		a, err := format.Parse(c.Request.Format, tc.answer)
		if tc.parseErr != "" {
			if err == nil || err.Error() != tc.parseErr {
				t.Errorf("%q: parse %#v, %v; want error %q", tc.answer, a, err, tc.parseErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: parse: %v", tc.answer, err)
			continue
		}
		out, err := c.Output(a)
		if err != nil || string(out) != tc.want {
			t.Errorf("%q: output %s, %v\nwant %s", tc.answer, out, err, tc.want)
		}
	}
	// Only an answer that did not come from the parser can lack the target.
	if _, err := c.Output(&format.Answer{Ranking: []string{"B", "C"}}); err == nil ||
		err.Error() != "ranking B > C lacks the target's letter A, which the ranking parser guarantees (an internal error)" {
		t.Errorf("unparsed ranking without the target: %v", err)
	}
}

func TestRankTargetText(t *testing.T) {
	f := newRankFixture(t, stages.Params{"n": 1}, stages.Params{}, "p1")
	tests := []struct {
		record  string
		want    string
		wantErr string
	}{
		{`{"id":"p1","abstract":"The abstract.","idea":"The idea."}`, "The idea.", ""},
		{`{"id":"p1","abstract":"The abstract.","idea":"  "}`, "The abstract.", ""},
		{`{"id":"p1","abstract":""}`, "", `target of "p1": missing field "idea" or "abstract" in item "p1" (the target's text)`},
	}
	for _, tc := range tests {
		w, err := f.rank[0].Prepare(f.inputs(t, f.rank[0], [][]string{{"gen"}}, []byte(tc.record)))
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			continue
		}
		if err != nil || !strings.Contains(w.Call.Request.Messages[0].Content, tc.want) {
			t.Errorf("%s: prompt lacks %q (%v)", tc.record, tc.want, err)
		}
	}
}

func TestRankDroppedItem(t *testing.T) {
	f := newRankFixture(t, stages.Params{"n": 2}, stages.Params{"permutations": 2}, "p1")
	for _, n := range f.rank {
		in := f.inputs(t, n, [][]string{{}, {}}, record(t, "p1"))
		for i := range in[:2] {
			in[i].Output = []byte(`{"ideas":[],"dropped":true}`)
		}
		if out := compute(t, n, in); string(out) != `{"dropped":true}` {
			t.Errorf("dropped item output %s", out)
		}
		if w, _ := n.Prepare(in); !reflect.DeepEqual(w.KeyParams, []string{"ideas"}) {
			t.Errorf("dropped ranking keyed on %v", w.KeyParams)
		}
	}
}

func TestPermutationDeterministic(t *testing.T) {
	a := permutation(3, "p1", 0, 6)
	b := permutation(3, "p1", 0, 6)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same inputs, different orders: %v %v", a, b)
	}
	// These exact orders are part of recorded requests (cache keys): they must never change.
	for _, tc := range []struct {
		seed int
		item string
		p, k int
		want []int
	}{
		{0, "p1", 0, 4, []int{0, 1, 3, 2}},
		{7, "p1", 1, 4, []int{3, 2, 1, 0}},
		{42, "t-graphene", 2, 6, []int{5, 1, 2, 0, 3, 4}},
		{0, "p1", 0, 1, []int{0}},
	} {
		if got := permutation(tc.seed, tc.item, tc.p, tc.k); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("permutation(%d, %q, %d, %d) = %v, want %v", tc.seed, tc.item, tc.p, tc.k, got, tc.want)
		}
	}
	differs := 0
	for s := 0; s < 20; s++ {
		if !reflect.DeepEqual(permutation(s, "p1", 0, 6), a) {
			differs++
		}
	}
	if differs < 18 {
		t.Errorf("only %d of 20 seeds changed the order", differs)
	}
}

func TestPermutationBalancedTargetPositions(t *testing.T) {
	const items, k = 4000, 4
	counts := make([]int, k)
	orders := map[string]int{}
	for i := 0; i < items; i++ {
		perm := permutation(0, fmt.Sprintf("item-%d", i), 0, k)
		for pos, c := range perm {
			if c == 0 {
				counts[pos]++
			}
		}
		orders[fmt.Sprint(perm)]++
	}
	// Expected 1000 per position; a fair shuffle stays within ~4.5 sigma (sigma ~ 27).
	for pos, c := range counts {
		if c < 880 || c > 1120 {
			t.Errorf("target at letter %c in %d of %d items; want about %d", 'A'+pos, c, items, items/k)
		}
	}
	if len(orders) != 24 {
		t.Errorf("%d distinct orders of 4 candidates, want all 24", len(orders))
	}
	for o, c := range orders {
		if c < 100 || c > 240 {
			t.Errorf("order %s drawn %d times; want about %d", o, c, items/24)
		}
	}
}

func TestRankLayoutRefusesMoreIdeasThanLetters(t *testing.T) {
	nodes := make([]stages.NodeInfo, 0, 26)
	for s := 0; s < 26; s++ {
		nodes = append(nodes, stages.NodeInfo{Item: "p1", Slot: s})
	}
	ds := &stages.Upstream{Address: "dataset.targets", Type: "dataset", Nodes: []stages.NodeInfo{{Item: "p1"}}}
	ds.Source = ds
	ideas := &stages.Upstream{Address: "stage.generate_ideas.main", Type: "generate_ideas", Nodes: nodes, Source: ds}
	judge := &stages.Model{Name: "judge"}
	_, err := rankType{}.Layout(&stages.Instance{Address: "stage.rank_ideas.x", Params: stages.Params{
		"ideas": ideas, "judge": judge, "quality": &stages.Quality{Name: "q", Definition: "d"},
		"permutations": 1, "order": "shuffle", "seed": 0, "prompt": DefaultRankPrompt, "prompt_style": "ideaflow",
	}})
	checkParamError(t, err, "ideas", "ideas gives 26 ideas per target; a ranking letters the target and the ideas A-Z, so n can be at most 25")
}

// A quality given by name alone is ranked on by name: the default prompt
// drops the "By X we mean" line.
func TestRankPromptWithoutDefinition(t *testing.T) {
	data := &RankData{Quality: Quality{Name: "feasibility"}, Ideas: []Candidate{{"A", "x"}, {"B", "y"}}, Letters: "AB", N: 1}
	got, err := stages.Render("rank", DefaultRankPrompt, data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "based on their feasibility") || strings.Contains(got, "we mean") {
		t.Fatalf("prompt:\n%s", got)
	}
}
