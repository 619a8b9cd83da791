package ideabench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

// An idea of about 100 words, the length the paper's prompt asks for.
var benchIdea = strings.Repeat("We hypothesise that modulating the pathway changes the outcome in vivo. ", 9)

// An abstract of about 1,500 characters, typical of the IdeaBench data.
var benchAbstract = strings.Repeat("An abstract sentence of moderate length. ", 37)

// BenchmarkRankPrepare measures one rank node's Prepare: decoding its inputs,
// shuffling, rendering the prompt and building the request.
func BenchmarkRankPrepare(b *testing.B) {
	f := newRankFixture(b, stages.Params{"n": 3}, stages.Params{"permutations": 3}, "p1")
	n := f.rank[1]
	// A dataset record the size of a real IdeaBench target: 12 references with abstracts.
	rec := paper("p1")
	for i := 0; i < 12; i++ {
		r := goodRef(fmt.Sprint(i))
		r.Abstract = benchAbstract
		rec.References = append(rec.References, r)
	}
	in := f.inputs(b, n, [][]string{{benchIdea}, {benchIdea}, {benchIdea}}, mustJSON(b, rec))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := n.Prepare(in)
		if err != nil || w.Call == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGeneratePrepare measures one independent generation sample's Prepare.
func BenchmarkGeneratePrepare(b *testing.B) {
	nodes := generateNodes(b, stages.Params{"n": 3}, "p1")
	f := FilterOutput{References: []Ref{}}
	for i := 0; i < 5; i++ {
		f.References = append(f.References, Ref{ID: fmt.Sprint(i), Title: "A title", Abstract: benchAbstract})
	}
	in := genIn(b, nodes[0], mustJSON(b, f))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := nodes[0].Prepare(in)
		if err != nil || w.Call == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRankLayout lays out 20,000 items x 3 permutations (60k nodes).
func BenchmarkRankLayout(b *testing.B) {
	items := make([]string, 20000)
	for i := range items {
		items[i] = fmt.Sprintf("item-%d", i)
	}
	f := newRankFixture(b, stages.Params{"n": 3}, stages.Params{}, items...)
	params := stages.WithDefaults(rankType{}, stages.Params{"ideas": f.ideas, "judge": testJudge, "quality": novelty, "permutations": 3})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A fresh upstream each time, so its per-item index is rebuilt as in a real plan.
		params["ideas"] = &stages.Upstream{Address: f.ideas.Address, Type: f.ideas.Type, Key: f.ideas.Key, Nodes: f.ideas.Nodes, Source: f.ideas.Source}
		nodes, err := rankType{}.Layout(&stages.Instance{Address: "stage.rank_ideas.b", Params: params})
		if err != nil || len(nodes) != 60000 {
			b.Fatal(err, len(nodes))
		}
	}
}
