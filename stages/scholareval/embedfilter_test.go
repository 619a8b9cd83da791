package scholareval

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

func vectorIn(t *testing.T, label string, v ...float64) stages.In {
	t.Helper()
	b, err := json.Marshal(map[string][][]float64{"vectors": {v}})
	if err != nil {
		t.Fatal(err)
	}
	return stages.In{Node: stages.NodeInfo{Item: "i", Label: label}, Output: b}
}

// The embedding filter keeps the top_k added papers by cosine with the
// plan, ties in the order added (a stable sort, as Python's), and scores a
// failed embedding 0 (the authors' zero vector).
func TestTopSimilar(t *testing.T) {
	added := []Paper{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}}
	in := []stages.In{
		vectorIn(t, "plan", 1, 0),
		vectorIn(t, "paper a", 0, 1),              // 0
		vectorIn(t, "paper b", 1, 1),              // 1/√2
		vectorIn(t, "paper c", 2, 2),              // 1/√2, after b
		{Node: stages.NodeInfo{Label: "paper d"}}, // failed: 0
		vectorIn(t, "paper e", 3, 0),              // 1
	}
	out, err := topSimilar(added, 3, in)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range out.Added {
		ids = append(ids, p.ID)
	}
	if strings.Join(ids, ",") != "e,b,c" || out.Dropped != 2 || out.Similarity["d"] != 0 || math.Abs(out.Similarity["b"]-1/math.Sqrt2) > 1e-15 {
		t.Errorf("kept %v, dropped %d, similarity %v", ids, out.Dropped, out.Similarity)
	}
	if _, err := topSimilar(added, 3, in[:3]); err == nil {
		t.Errorf("a missing reply is an error")
	}
}

// The authors' paper_sampler.py: the most relevant first, ties in the
// order given, at most n.
func TestTopPapers(t *testing.T) {
	rs := []RelevanceOutput{{Paper: Paper{ID: "a"}, Score: 3}, {Paper: Paper{ID: "b"}, Score: 5}, {Paper: Paper{ID: "c"}, Score: 4},
		{Paper: Paper{ID: "d"}, Score: 5}, {Paper: Paper{ID: "e"}, Score: 3}}
	var ids []string
	for _, p := range topPapers(rs, 4) {
		ids = append(ids, p.ID)
	}
	if strings.Join(ids, ",") != "b,d,c,a" {
		t.Errorf("top 4: %v", ids)
	}
	if got := topPapers(rs, 10); len(got) != 5 {
		t.Errorf("top 10 of 5: %d", len(got))
	}
}
