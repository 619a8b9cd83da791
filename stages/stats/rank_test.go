package stats

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestArenaRanks(t *testing.T) {
	ivs := []Interval{
		{Lower: 0.80, Upper: 0.90}, // nobody's lower bound exceeds 0.90: 1
		{Lower: 0.75, Upper: 0.85}, // overlaps the first: 1
		{Lower: 0.50, Upper: 0.60}, // 0.80 and 0.75 exceed 0.60: 3
		{Lower: 0.55, Upper: 0.78}, // only 0.80 exceeds 0.78: 2
		{Lower: 0.10, Upper: 0.20}, // all four exceed 0.20: 5
	}
	if got, want := ArenaRanks(ivs), []int{1, 1, 3, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("ArenaRanks = %v; want %v", got, want)
	}
	if got := ArenaRanks(nil); len(got) != 0 {
		t.Errorf("ArenaRanks(nil) = %v", got)
	}
}

func TestCompetitionRanksAndQuantile(t *testing.T) {
	if got, want := competitionRanks([]float64{0.5, 0.9, 0.5, 0.1}), []int{2, 1, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("competitionRanks = %v; want %v", got, want)
	}
	// 1000 ranks: 25 ones, then twos. The 2.5% quantile is r_(25) = 1
	// (0.025·1000 = 25 exactly, not rounded up to 26); r_(26) = 2.
	r := make([]int, 1000)
	for i := range r {
		r[i] = 2
		if i < 25 {
			r[i] = 1
		}
	}
	if got := invertedCDF(r, 0.025); got != 1 {
		t.Errorf("invertedCDF(0.025) = %d; want 1", got)
	}
	if got := invertedCDF(r, 0.026); got != 2 {
		t.Errorf("invertedCDF(0.026) = %d; want 2", got)
	}
	if got := invertedCDF(r, 0); got != 1 {
		t.Errorf("invertedCDF(0) = %d; want 1", got)
	}
}

// TestLeaderboard uses constructed data whose rank distribution is known:
// A scores 0.9 on every item and D 0.1, so they are always first and
// last; B alternates 1, 0 and C = 1 - B, so in every resample B and C
// share 2nd place (tie) or split 2nd and 3rd, either way round.
func TestLeaderboard(t *testing.T) {
	const n = 20
	a, b, c, d := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		a[i], d[i] = 0.9, 0.1
		b[i] = float64(i % 2)
		c[i] = 1 - b[i]
	}
	scores := [][]float64{a, b, c, d}
	got, err := Leaderboard(scores, MeanStat, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ rank, lo, hi, arena int }
	want := []row{{1, 1, 1, 1}, {2, 2, 3, 2}, {2, 2, 3, 2}, {4, 4, 4, 4}}
	for m, s := range got {
		if r := (row{s.Rank, s.RankLower, s.RankUpper, s.ArenaRank}); r != want[m] {
			t.Errorf("model %d: rank, interval, arena = %v; want %v (standing %+v)", m, r, want[m], s)
		}
	}
	if got[0].Score != (Interval{Estimate: 0.9, Lower: 0.9, Upper: 0.9, Level: 0.95}) {
		t.Errorf("model A score = %+v; want 0.9 [0.9, 0.9]", got[0].Score)
	}
	if s := got[1].Score; s.Estimate != 0.5 || !(s.Lower < 0.5 && s.Upper > 0.5 && s.Lower > 0.1 && s.Upper < 0.9) {
		t.Errorf("model B score = %+v; want 0.5 inside (0.1, 0.9)", s)
	}
	// B and C's intervals are mirror images: mean_C = 1 - mean_B in
	// every resample.
	if bi, ci := got[1].Score, got[2].Score; math.Abs(bi.Lower+ci.Upper-1) > 1e-12 || math.Abs(bi.Upper+ci.Lower-1) > 1e-12 {
		t.Errorf("B %+v and C %+v are not mirrored about 0.5", bi, ci)
	}
	again, err := Leaderboard(scores, MeanStat, Options{Seed: 3})
	if err != nil || !slices.Equal(got, again) {
		t.Errorf("Leaderboard not deterministic: %+v, %+v", got, again)
	}
	// A percentile statistic works the same way. (Not on B and C: the
	// 30th percentile of 0/1 data jumps between 0 and 1 and can pass
	// A's 0.9, so only the constant models are used.)
	p, err := Leaderboard([][]float64{d, a}, PercentileStat(30), Options{Seed: 3})
	if err != nil || p[0].RankLower != 2 || p[0].RankUpper != 2 || p[1].RankLower != 1 || p[1].RankUpper != 1 || p[0].ArenaRank != 2 {
		t.Errorf("Leaderboard(p30) = %+v, %v", p, err)
	}
}

func TestLeaderboardErrors(t *testing.T) {
	tests := []struct {
		name   string
		scores [][]float64
		opts   Options
		want   error
	}{
		{"no models", nil, Options{}, ErrEmpty},
		{"no items", [][]float64{{}, {}}, Options{}, ErrEmpty},
		{"ragged", [][]float64{{1, 2}, {1}}, Options{}, ErrLength},
		{"NaN", [][]float64{{1, 2}, {1, math.NaN()}}, Options{}, ErrNaN},
		{"level", [][]float64{{1, 2}}, Options{Level: 2}, ErrRange},
	}
	for _, tt := range tests {
		if _, err := Leaderboard(tt.scores, MeanStat, tt.opts); !errors.Is(err, tt.want) {
			t.Errorf("%s: error = %v; want %v", tt.name, err, tt.want)
		}
	}
}
