package stats

import (
	"fmt"
	"math"
	"slices"

	mstats "github.com/montanaflynn/stats"
)

// Percentile returns the p-th percentile (p in [0, 100]) of values by
// linear interpolation between closest ranks, NumPy's default method
// ("linear", Hyndman & Fan type 7, also R's default): for the sorted
// values x[0] <= ... <= x[n-1],
//
//	h = (n-1) * p/100
//	Percentile = x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h])
//
// so p = 0 is the minimum, p = 100 the maximum and p = 50 the median.
// LiveIdeaBench's flexibility is the 30th percentile of an idea's scores
// across keywords; IdeaBench reports the 80th.
//
// The interpolation is montanaflynn/stats' Percentile, which implements
// this definition (and guards against overflow); this wrapper adds p = 0,
// which that library rejects, and turns NaN into an error.
func Percentile(values []float64, p float64) (float64, error) {
	if err := checkValues(values); err != nil {
		return math.NaN(), err
	}
	if math.IsNaN(p) || p < 0 || p > 100 {
		return math.NaN(), fmt.Errorf("%w: percentile %v not in [0, 100]", ErrRange, p)
	}
	if p == 0 {
		return slices.Min(values), nil
	}
	v, err := mstats.Percentile(values, p)
	if err != nil {
		return math.NaN(), fmt.Errorf("stats: percentile: %v", err)
	}
	return v, nil
}

// Mean returns the arithmetic mean, sum(x) / n (computed without
// overflow for large finite values, by montanaflynn/stats).
func Mean(values []float64) (float64, error) {
	if err := checkValues(values); err != nil {
		return math.NaN(), err
	}
	v, err := mstats.Mean(values)
	if err != nil {
		return math.NaN(), fmt.Errorf("stats: mean: %v", err)
	}
	return v, nil
}

// Median returns the middle value of the sorted values, or the mean of
// the two middle values when n is even; it equals Percentile(values, 50).
func Median(values []float64) (float64, error) {
	if err := checkValues(values); err != nil {
		return math.NaN(), err
	}
	v, err := mstats.Median(values)
	if err != nil {
		return math.NaN(), fmt.Errorf("stats: median: %v", err)
	}
	return v, nil
}

// MeanStat is Mean as a statistic for Bootstrap: NaN instead of an error.
func MeanStat(values []float64) float64 {
	v, err := Mean(values)
	if err != nil {
		return math.NaN()
	}
	return v
}

// PercentileStat returns Percentile(·, p) as a statistic for Bootstrap
// (NaN instead of an error), e.g. PercentileStat(30) for flexibility.
func PercentileStat(p float64) func([]float64) float64 {
	return func(values []float64) float64 {
		v, err := Percentile(values, p)
		if err != nil {
			return math.NaN()
		}
		return v
	}
}

// checkValues rejects an empty slice and NaN.
func checkValues(values []float64) error {
	if len(values) == 0 {
		return ErrEmpty
	}
	for i, v := range values {
		if math.IsNaN(v) {
			return fmt.Errorf("%w: value %d", ErrNaN, i)
		}
	}
	return nil
}
