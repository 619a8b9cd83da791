package scholareval

import (
	"encoding/json"
	"reflect"
	"strings"
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
	out, err := augmented([]string{"s1", "s2"}, 2, 2, false, in)
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
	out, _ = augmented([]string{"s1", "s2"}, 10, 10, false, in)
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

// The authors' selection, worked by hand: seeds s1 and s2, each with its
// recommendations and its references in seed order; p0 (scored by the
// relevance pass) and every paper seen before are skipped; a failed child
// adds nothing. most_cited sorts each seed's references before keeping 2.
func TestAugmentedPerSeed(t *testing.T) {
	in := []stages.In{
		papersIn(t, "recommend s1", rp("p0", 1), rp("r1", 5), rp("s2", 4)),
		papersIn(t, "references s1", rp("x", 3), rp("y", 30), rp("z", 50)),
		{Node: stages.NodeInfo{Item: "i", Label: "recommend s2"}}, // failed
		papersIn(t, "references s2", rp("r1", 99), rp("w", 1)),
	}
	ids := func(ps []Paper) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return strings.Join(out, ",")
	}
	seen := map[string]bool{"s1": true, "s2": true, "p0": true}
	for _, tc := range []struct {
		listed                       bool
		recommended, referenced, all string
	}{
		// listed: the references requests asked for 2, so each reply holds
		// at most 2; here they hold 3 and 2, and the first 2 are kept.
		{true, "r1", "x,y,w", "r1,x,y,w"},
		{false, "r1", "z,y,w", "r1,z,y,w"},
	} {
		out, err := augmentedPerSeed(augmentPlan{seeds: []string{"s1", "s2"}, seen: seen, perSeed: true, keepRec: 3, keepRef: 2, listed: tc.listed}, in)
		if err != nil {
			t.Fatal(err)
		}
		if ids(out.Recommended) != tc.recommended || ids(out.Referenced) != tc.referenced || ids(out.Added) != tc.all {
			t.Errorf("listed %v: recommended %s, referenced %s, added %s", tc.listed, ids(out.Recommended), ids(out.Referenced), ids(out.Added))
		}
	}
}
