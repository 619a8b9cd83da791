package stats

import (
	"fmt"
	"math"
	"slices"
)

// Standing is one model's place on a bootstrapped leaderboard. Ranks
// count from 1 (best, highest statistic); tied models share the better
// rank (competition ranking: rank = 1 + the number of models strictly
// higher).
type Standing struct {
	// Score is the model's statistic and its bootstrap interval.
	Score Interval
	// Rank is the model's rank by Score.Estimate.
	Rank int
	// RankLower and RankUpper are the (1-Level)/2 and (1+Level)/2
	// quantiles of the model's rank over the resamples (2.5% and 97.5%
	// at 95%): "ranked between RankLower and RankUpper".
	RankLower, RankUpper int
	// ArenaRank is Chatbot Arena's rank from the score intervals; see
	// ArenaRanks.
	ArenaRank int
}

// Leaderboard bootstraps a leaderboard. scores[m][i] is model m's score
// on item i; every model must be scored on the same items. Each resample
// draws item indices with replacement and applies them to all models at
// once (items are resampled jointly, so a hard item is hard for every
// model in the same resample), computes stat for each model and ranks
// the models. It returns, per model in input order, the statistic's
// interval (opts.Method), the rank by the estimates, the rank interval,
// and the Arena rank.
//
// The rank quantiles use the inverted empirical CDF (NumPy's
// "inverted_cdf"): the q-quantile of the B sorted ranks r_(1..B) is
// r_(ceil(qB)), so a rank interval is always a pair of ranks that
// occurred, never an interpolated 1.4.
func Leaderboard(scores [][]float64, stat func([]float64) float64, opts Options) ([]Standing, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	if len(scores) == 0 {
		return nil, fmt.Errorf("%w: no models", ErrEmpty)
	}
	n := len(scores[0])
	for m, row := range scores {
		if len(row) != n {
			return nil, fmt.Errorf("%w: model 0 has %d scores, model %d has %d", ErrLength, n, m, len(row))
		}
		if err := checkValues(row); err != nil {
			return nil, fmt.Errorf("model %d: %w", m, err)
		}
	}
	k := len(scores)
	est := make([]float64, k)
	for m, row := range scores {
		est[m] = stat(row)
		if math.IsNaN(est[m]) {
			return nil, fmt.Errorf("%w: statistic of model %d is NaN", ErrNaN, m)
		}
	}

	s := newSampler(opts.Seed)
	idx := make([]int, n)
	buf := make([]float64, n)
	boot := make([][]float64, k) // boot[m][b]: model m's statistic in resample b
	ranks := make([][]int, k)    // ranks[m][b]: its rank there
	for m := range k {
		boot[m] = make([]float64, opts.Resamples)
		ranks[m] = make([]int, opts.Resamples)
	}
	theta := make([]float64, k)
	for b := range opts.Resamples {
		s.draw(idx)
		for m, row := range scores {
			for i, j := range idx {
				buf[i] = row[j]
			}
			theta[m] = stat(buf)
			if math.IsNaN(theta[m]) {
				return nil, fmt.Errorf("%w: statistic of model %d in resample %d is NaN", ErrNaN, m, b)
			}
			boot[m][b] = theta[m]
		}
		for m, r := range competitionRanks(theta) {
			ranks[m][b] = r
		}
	}

	out := make([]Standing, k)
	lo, hi := (1-opts.Level)/2, (1+opts.Level)/2
	pointRanks := competitionRanks(est)
	ivs := make([]Interval, k)
	for m := range k {
		iv, err := interval(scores[m], stat, est[m], boot[m], opts)
		if err != nil {
			return nil, fmt.Errorf("model %d: %w", m, err)
		}
		ivs[m] = iv
		slices.Sort(ranks[m])
		out[m] = Standing{
			Score:     iv,
			Rank:      pointRanks[m],
			RankLower: invertedCDF(ranks[m], lo),
			RankUpper: invertedCDF(ranks[m], hi),
		}
	}
	for m, r := range ArenaRanks(ivs) {
		out[m].ArenaRank = r
	}
	return out, nil
}

// competitionRanks returns 1 + the number of values strictly greater than
// each value ("1224" ranking, higher is better).
func competitionRanks(values []float64) []int {
	r := make([]int, len(values))
	for m, v := range values {
		r[m] = 1
		for _, w := range values {
			if w > v {
				r[m]++
			}
		}
	}
	return r
}

// invertedCDF returns sorted[ceil(q·B) - 1] (1-based r_(ceil(qB))),
// clamped to the slice. The small tolerance keeps q·B that is an
// integer in exact arithmetic (0.025·1000) from rounding up past it.
func invertedCDF(sorted []int, q float64) int {
	k := int(math.Ceil(q*float64(len(sorted)) - 1e-9))
	k = min(max(k, 1), len(sorted))
	return sorted[k-1]
}

// ArenaRanks ranks models by their confidence intervals the way Chatbot
// Arena's leaderboard does (Chiang et al. 2024, "Chatbot Arena"): a
// model's rank is 1 + the number of models whose interval lies entirely
// above its own, i.e. whose Lower exceeds its Upper. Models whose
// intervals overlap share ranks, so ranks say only what the data
// separate. Higher scores are better.
func ArenaRanks(ivs []Interval) []int {
	r := make([]int, len(ivs))
	for m, iv := range ivs {
		r[m] = 1
		for _, other := range ivs {
			if other.Lower > iv.Upper {
				r[m]++
			}
		}
	}
	return r
}
