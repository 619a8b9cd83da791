package llmtest

import (
	"slices"
	"time"
)

// MostInWindow is the largest total weight of the sorted times inside any
// window (t-w, t] (weights nil: one each), what a rate limit over a sliding
// window w bounds. The windows that matter end at a time, so a two-pointer
// sweep suffices. It panics on unsorted times, which would make it
// undercount.
func MostInWindow(times []time.Time, weights []int, w time.Duration) int {
	if !slices.IsSortedFunc(times, func(a, b time.Time) int { return a.Compare(b) }) {
		panic("MostInWindow: times not sorted")
	}
	weight := func(i int) int {
		if weights == nil {
			return 1
		}
		return weights[i]
	}
	best, sum, lo := 0, 0, 0
	for hi, t := range times {
		sum += weight(hi)
		for !times[lo].After(t.Add(-w)) {
			sum -= weight(lo)
			lo++
		}
		best = max(best, sum)
	}
	return best
}
