package stats

import (
	"errors"
	"math"
	"testing"
)

// near reports whether got is within 1e-12 of want: values like 3.7 are
// not exact in binary, and NumPy's own float rounding may differ from
// ours in the last bit.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-12 }

// The expectations are NumPy's np.percentile(x, p) (method "linear"),
// worked by hand from h = (n-1)p/100, x[floor h] + frac(h)(x[floor h+1]-x[floor h]).
func TestPercentile(t *testing.T) {
	oneToTen := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	ties := []float64{7, 1, 3, 3, 9} // sorted: 1 3 3 7 9
	scores := []float64{6.5, 8, 7, 5, 9, 7.5}
	tests := []struct {
		name   string
		values []float64
		p      float64
		want   float64
	}{
		// LiveIdeaBench flexibility: 30th; h = 9*0.3 = 2.7 -> 3 + 0.7*1.
		{"1..10 p30", oneToTen, 30, 3.7},
		// IdeaBench: 80th; h = 9*0.8 = 7.2 -> 8 + 0.2*1.
		{"1..10 p80", oneToTen, 80, 8.2},
		{"1..10 p0", oneToTen, 0, 1},
		{"1..10 p100", oneToTen, 100, 10},
		{"1..10 p50", oneToTen, 50, 5.5},
		// h = 4*0.3 = 1.2 -> 3 + 0.2*(3-3).
		{"ties p30", ties, 30, 3},
		// h = 4*0.8 = 3.2 -> 7 + 0.2*(9-7).
		{"ties p80", ties, 80, 7.4},
		// h = 4*0.25 = 1, exact rank.
		{"ties p25", ties, 25, 3},
		// h = 4*0.9 = 3.6 -> 7 + 0.6*2.
		{"ties p90", ties, 90, 8.2},
		// sorted 5 6.5 7 7.5 8 9; h = 5*0.3 = 1.5 -> 6.5 + 0.5*0.5.
		{"scores p30", scores, 30, 6.75},
		// h = 5*0.8 = 4, exact rank.
		{"scores p80", scores, 80, 8},
		{"scores p50", scores, 50, 7.25},
		{"single p30", []float64{4}, 30, 4},
		{"single p0", []float64{4}, 0, 4},
	}
	for _, tt := range tests {
		got, err := Percentile(tt.values, tt.p)
		if err != nil || !near(got, tt.want) {
			t.Errorf("%s: Percentile = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	// The input is not reordered.
	if ties[0] != 7 || ties[4] != 9 {
		t.Errorf("Percentile sorted its input: %v", ties)
	}
}

func TestMeanMedian(t *testing.T) {
	tests := []struct {
		values       []float64
		mean, median float64
	}{
		{[]float64{1, 2, 3, 4}, 2.5, 2.5},
		{[]float64{3, 1, 2}, 2, 2},
		{[]float64{6.5, 8, 7, 5, 9, 7.5}, 43.0 / 6, 7.25},
		{[]float64{-2}, -2, -2},
		{[]float64{1, 1, 1, 10}, 3.25, 1},
	}
	for _, tt := range tests {
		if got, err := Mean(tt.values); err != nil || !near(got, tt.mean) {
			t.Errorf("Mean(%v) = %v, %v; want %v", tt.values, got, err, tt.mean)
		}
		if got, err := Median(tt.values); err != nil || got != tt.median {
			t.Errorf("Median(%v) = %v, %v; want %v", tt.values, got, err, tt.median)
		}
		if got, _ := Percentile(tt.values, 50); got != tt.median {
			t.Errorf("Percentile(%v, 50) = %v; want the median %v", tt.values, got, tt.median)
		}
	}
}

func TestPercentileErrors(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		p      float64
		want   error
	}{
		{"empty", nil, 50, ErrEmpty},
		{"NaN value", []float64{1, math.NaN()}, 50, ErrNaN},
		{"p below 0", []float64{1, 2}, -1, ErrRange},
		{"p above 100", []float64{1, 2}, 100.5, ErrRange},
		{"p NaN", []float64{1, 2}, math.NaN(), ErrRange},
	}
	for _, tt := range tests {
		if _, err := Percentile(tt.values, tt.p); !errors.Is(err, tt.want) {
			t.Errorf("%s: Percentile error = %v; want %v", tt.name, err, tt.want)
		}
	}
	if _, err := Mean(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("Mean(nil) error = %v; want ErrEmpty", err)
	}
	if _, err := Median([]float64{math.NaN()}); !errors.Is(err, ErrNaN) {
		t.Errorf("Median(NaN) error = %v; want ErrNaN", err)
	}
	if v := MeanStat(nil); !math.IsNaN(v) {
		t.Errorf("MeanStat(nil) = %v; want NaN", v)
	}
	if v := PercentileStat(30)([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}); !near(v, 3.7) {
		t.Errorf("PercentileStat(30) = %v; want 3.7", v)
	}
}
