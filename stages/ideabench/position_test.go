package ideabench

import (
	"math"
	"reflect"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

// Hand-worked tails: n = 4 trials at p = 1/4.
func TestBinomialUpperTail(t *testing.T) {
	for _, tc := range []struct {
		k, n int
		p    float64
		want float64
	}{
		{4, 4, 0.25, 1.0 / 256},     // (1/4)^4
		{3, 4, 0.25, 13.0 / 256},    // 4*(1/4)^3*(3/4) + 1/256
		{0, 4, 0.25, 1},             // always
		{5, 4, 0.25, 0},             // impossible
		{1, 2, 0.5, 0.75},           // 1 - (1/2)^2
		{6, 8, 0.25, 277.0 / 65536}, // (C(8,6)3^2 + C(8,7)3 + 1)/4^8 = (252+24+1)/65536
	} {
		if got := BinomialUpperTail(tc.k, tc.n, tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("P(X >= %d | n=%d, p=%v) = %v, want %v", tc.k, tc.n, tc.p, got, tc.want)
		}
	}
}

// rotated is the rotate ranking of permutation p (the target at position
// p+1) with n = 3 ideas: the judge's order is letters given best first.
func rotated(p int, order ...string) RankOutput {
	target := string(letters[p])
	rank := 0
	for i, l := range order {
		if l == target {
			rank = i + 1
		}
	}
	return RankOutput{N: 3, Order: order, TargetLetter: target, TargetRank: rank}
}

// A judge that always ranks the first-shown idea first: over two targets
// (8 rankings) it wins 8 of 8 at expected share 1/4, p = (1/4)^8. A second
// audit, with a judge that ranks by quality (the target always last), wins
// with the idea shown first only when an idea is first: 3 of 4 per target.
func TestPositionBias(t *testing.T) {
	var firstLover, fair []stages.In
	for _, item := range []string{"p1", "p2"} {
		for p := 0; p < 4; p++ {
			in := rankIn(t, item, p, rotated(p, "A", "B", "C", "D"))
			in.Input = "rotate"
			firstLover = append(firstLover, in)
			// The quality judge: ideas in letter order, the target last.
			var order []string
			for _, l := range "ABCD" {
				if string(l) != string(letters[p]) {
					order = append(order, string(l))
				}
			}
			in = rankIn(t, item, p, rotated(p, append(order, string(letters[p]))...))
			in.Input = "rotate"
			fair = append(fair, in)
		}
	}
	first := rankIn(t, "p1", 0, ranked(3, 1))
	first.Input = "target_first"
	first2 := rankIn(t, "p2", 0, ranked(3, 1))
	first2.Input = "target_first"
	shuffle := rankIn(t, "p1", 0, ranked(3, 3))
	shuffle.Input = "shuffle"
	shuffle2 := rankIn(t, "p2", 0, ranked(3, 2))
	shuffle2.Input = "shuffle"

	s, err := PositionBias(append(firstLover, first, first2, shuffle, shuffle2), 0.05)
	if err != nil {
		t.Fatal(err)
	}
	want := &stages.Score{Value: 1, Count: 2, PerItem: map[string]float64{"p1": 1, "p2": 1}, Extra: map[string]float64{
		"dropped": 0, "rankings": 8, "first_wins": 8, "n": 3, "expected_share": 0.25,
		"p_value": math.Pow(0.25, 8), "biased": 1,
		// Shown at position K, the first-lover ranks the target K-th.
		"mean_rank_at_1": 1, "mean_rank_at_2": 2, "mean_rank_at_3": 3, "mean_rank_at_4": 4,
		"target_top_at_1": 1, "target_top_at_2": 0, "target_top_at_3": 0, "target_top_at_4": 0,
		// rotate: ranks 1..4 of n = 3 -> mean of 0, 1/3, 2/3, 1 = 0.5.
		"insight_rotate": 0.5, "insight_target_first": 0, "insight_shuffle": (2.0/3 + 1.0/3) / 2,
	}}
	if math.Abs(s.Extra["p_value"]-want.Extra["p_value"]) < 1e-15 {
		s.Extra["p_value"] = want.Extra["p_value"]
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("first-position judge:\n got %+v\nwant %+v", s, want)
	}

	s, err = PositionBias(fair, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	// 6 of 8 first-position wins at p = 1/4: P(X >= 6) = 277/65536 < 0.05,
	// so this judge is flagged too — correctly: with the target always
	// worst, letter A is an idea (the best-ranked idea A) in 3 of 4
	// rotations. The audit measures where winners are shown, so a judge
	// whose ideas are in quality order is indistinguishable from a biased
	// one; real ideas are not ordered by letter.
	if s.Value != 0.75 || s.Extra["first_wins"] != 6 || math.Abs(s.Extra["p_value"]-277.0/65536) > 1e-12 || s.Extra["biased"] != 1 ||
		s.Extra["mean_rank_at_1"] != 4 || s.Extra["mean_rank_at_4"] != 4 || s.Extra["insight_rotate"] != 1 {
		t.Errorf("quality judge: %+v", s)
	}
}

func TestPositionBiasRefusesNonRotation(t *testing.T) {
	a := rankIn(t, "p1", 0, rotated(0, "A", "B", "C", "D"))
	b := rankIn(t, "p1", 1, rotated(0, "A", "B", "C", "D"))
	a.Input, b.Input = "rotate", "rotate"
	if _, err := PositionBias([]stages.In{a, b}, 0.05); err == nil {
		t.Error("two rankings with the target at the same position were accepted")
	}
	if _, err := PositionBias([]stages.In{a}, 0.05); err == nil {
		t.Error("one ranking of n+1 = 4 was accepted")
	}
}

func TestSanity(t *testing.T) {
	for _, tc := range []struct {
		check string
		v     map[string]float64
		pass  bool
	}{
		{"order", map[string]float64{"shuffled_words": 0.2, "copy_reference": 0.4, "target_oracle": 0.9}, true},
		{"order", map[string]float64{"shuffled_words": 0.5, "copy_reference": 0.4, "target_oracle": 0.9}, false},
		{"order", map[string]float64{"shuffled_words": 0.2, "copy_reference": 0.9, "target_oracle": 0.9}, false}, // strict
		{"tie", map[string]float64{"target_oracle": 0.55}, true},
		{"tie", map[string]float64{"target_oracle": 0.0}, false}, // the oracle always ranked below the target
	} {
		s := Sanity(tc.check, tc.v, 0.5, 0.1)
		if (s.Value == 1) != tc.pass || (s.Extra["failed"] == 1) == tc.pass {
			t.Errorf("%s %v: %+v, want pass %v", tc.check, tc.v, s, tc.pass)
		}
	}
}
