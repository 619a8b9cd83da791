package stats_test

import (
	"fmt"
	"math"

	"github.com/ideaflow/ideaflow/stages/stats"
)

func ExamplePercentile() {
	// LiveIdeaBench's flexibility: the 30th percentile of the scores.
	scores := []float64{6.5, 8, 7, 5, 9, 7.5}
	p30, _ := stats.Percentile(scores, 30)
	fmt.Println(p30)
	// Output: 6.75
}

func ExampleBootstrap() {
	scores := []float64{6.5, 8, 7, 5, 9, 7.5, 6, 8.5, 7, 6.5}
	iv, err := stats.Bootstrap(scores, stats.PercentileStat(30), stats.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.2f [%.2f, %.2f]\n", iv.Estimate, iv.Lower, iv.Upper)
	// Output: 6.50 [5.70, 7.35]
}

func ExampleKrippendorffAlpha() {
	nan := math.NaN()
	data := [][]float64{ // coder x unit
		{1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan},
		{1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3},
		{nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan},
		{1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan},
	}
	alpha, _ := stats.KrippendorffAlpha(data, stats.OrdinalMetric)
	fmt.Printf("%.3f\n", alpha)
	// Output: 0.815
}
