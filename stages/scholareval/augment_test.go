package scholareval

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

func papersIn(t *testing.T, label string, ps ...rankedPaper) stages.In {
	t.Helper()
	b, err := json.Marshal(augmentPapers{Papers: ps})
	if err != nil {
		t.Fatal(err)
	}
	return stages.In{Node: stages.NodeInfo{Item: "i", Label: label}, Output: b}
}

func rp(id string, cites int) rankedPaper {
	return rankedPaper{Paper: Paper{ID: id, Title: "t " + id}, Citations: cites}
}

// The selection, worked by hand. Seeds s1, s2. Recommended (in the
// source's order): s1 (a seed: skipped), r1, r2, r3; keep 2 -> r1, r2.
// References of s1: x (30), r1 (99: recommended already), y (30); of s2:
// z (50), x (30, again), s2 (itself). Most cited first, ties by id,
// seeds and listed papers skipped: z (50), x (30), y (30); keep 2 -> z, x.
func TestAugmentedSelection(t *testing.T) {
	in := []stages.In{
		papersIn(t, "recommend-abc", rp("s1", 1), rp("r1", 5), rp("r2", 4), rp("r3", 3)),
		papersIn(t, "references s1", rp("x", 30), rp("r1", 99), rp("y", 30)),
		papersIn(t, "references s2", rp("z", 50), rp("x", 30), rp("s2", 7)),
	}
	out, err := augmented([]string{"s1", "s2"}, 2, 2, in)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ps []Paper) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	if got := ids(out.Recommended); !reflect.DeepEqual(got, []string{"r1", "r2"}) {
		t.Errorf("recommended %v", got)
	}
	if got := ids(out.Referenced); !reflect.DeepEqual(got, []string{"z", "x"}) {
		t.Errorf("referenced %v", got)
	}
	// Keeping more than there are: every candidate once, in that order.
	out, _ = augmented([]string{"s1", "s2"}, 10, 10, in)
	if got := ids(out.Recommended); !reflect.DeepEqual(got, []string{"r1", "r2", "r3"}) {
		t.Errorf("recommended, keep 10: %v", got)
	}
	if got := ids(out.Referenced); !reflect.DeepEqual(got, []string{"z", "x", "y"}) {
		t.Errorf("referenced, keep 10: %v", got)
	}
	// What relevance adds: recommended first, then referenced.
	b, _ := json.Marshal(out)
	added, err := augmentedPapers([]stages.In{{Node: stages.NodeInfo{Label: "recommend-abc"}, Output: []byte(`{"papers":[]}`)},
		{Node: stages.NodeInfo{Label: "augmented-def"}, Output: b}})
	if err != nil || !reflect.DeepEqual(ids(added), []string{"r1", "r2", "r3", "z", "x", "y"}) {
		t.Errorf("augmentedPapers: %v %v", ids(added), err)
	}
	if added, err := augmentedPapers(nil); added != nil || err != nil {
		t.Errorf("no augment: %v %v", added, err)
	}
}
