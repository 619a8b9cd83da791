package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// uniformData returns n values uniform on [0, 10) (mean 5, variance
// 100/12) from a PCG seeded with seed. The uniforms are k·2⁻⁵³ for a
// 53-bit integer k, so the data, like the resamples, depend only on the
// PCG stream and are the same on every platform.
func uniformData(seed uint64, n int) []float64 {
	src := rand.NewPCG(seed, 1)
	x := make([]float64, n)
	for i := range x {
		x[i] = 10 * float64(src.Uint64()>>11) / (1 << 53)
	}
	return x
}

func TestSamplerIndex(t *testing.T) {
	s := newSampler(7)
	counts := make([]int, 5)
	for range 10000 {
		i := s.index(5)
		if i < 0 || i >= 5 {
			t.Fatalf("index(5) = %d", i)
		}
		counts[i]++
	}
	for i, c := range counts {
		// Binomial(10000, 0.2): sd 40; 1800..2200 is 5 sd, and the
		// seed is fixed, so this cannot flake.
		if c < 1800 || c > 2200 {
			t.Errorf("index(5) drew %d %d times in 10000", i, c)
		}
	}
	// Pinned: the stream must not change across releases, or seeded
	// reports would change.
	s = newSampler(42)
	got := []int{s.index(10), s.index(10), s.index(10), s.index(10), s.index(1000)}
	want := pinnedIndices
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("seed 42 indices = %v; want %v", got, want)
	}
}

var pinnedIndices = []int{3, 8, 0, 0, 701}

func TestBootstrapDeterministic(t *testing.T) {
	x := uniformData(3, 30)
	for _, m := range []Method{PercentileMethod, BCa} {
		for _, stat := range []func([]float64) float64{MeanStat, PercentileStat(30)} {
			a, err := Bootstrap(x, stat, Options{Seed: 11, Method: m})
			if err != nil {
				t.Fatal(err)
			}
			b, err := Bootstrap(x, stat, Options{Seed: 11, Method: m})
			if err != nil {
				t.Fatal(err)
			}
			if a != b {
				t.Errorf("method %d: same seed, different intervals: %+v, %+v", m, a, b)
			}
			// (A percentile's interval is two order statistics of the
			// data and may well repeat across seeds; the mean's may not.)
			c, err := Bootstrap(x, MeanStat, Options{Seed: 12, Method: m})
			if err != nil {
				t.Fatal(err)
			}
			if d, _ := Bootstrap(x, MeanStat, Options{Seed: 11, Method: m}); d == c {
				t.Errorf("method %d: seeds 11 and 12 gave the same interval %+v", m, c)
			}
			if !(a.Lower <= a.Estimate && a.Estimate <= a.Upper) || a.Level != 0.95 {
				t.Errorf("method %d: interval %+v does not hold its estimate", m, a)
			}
		}
	}
	// Pinned interval: guards the whole chain (PCG, index mapping,
	// statistic, percentile) against silent change.
	got, err := Bootstrap(x, MeanStat, Options{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	if got != pinnedInterval {
		t.Errorf("pinned interval = %#v; want %#v", got, pinnedInterval)
	}
}

var pinnedInterval = Interval{Estimate: 5.267082673466606, Lower: 4.280970280762893, Upper: 6.278145236269512, Level: 0.95}

// TestBootstrapHandWorked: for values {0, 1} the resampled means are 0,
// 0.5 and 1 with probabilities 1/4, 1/2, 1/4, so among 1,000 resamples
// about 250 are 0 and 250 are 1, and the 2.5th and 97.5th percentiles
// are exactly 0 and 1. Constant data gives a degenerate interval.
func TestBootstrapHandWorked(t *testing.T) {
	iv, err := Bootstrap([]float64{0, 1}, MeanStat, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if iv != (Interval{Estimate: 0.5, Lower: 0, Upper: 1, Level: 0.95}) {
		t.Errorf("Bootstrap({0,1}) = %+v; want 0.5 [0, 1]", iv)
	}
	iv, err = Bootstrap([]float64{3, 3, 3, 3}, PercentileStat(30), Options{Seed: 1})
	if err != nil || iv != (Interval{Estimate: 3, Lower: 3, Upper: 3, Level: 0.95}) {
		t.Errorf("Bootstrap(constant) = %+v, %v; want 3 [3, 3]", iv, err)
	}
	iv, err = Bootstrap([]float64{1, 2, 3, 4}, MeanStat, Options{Seed: 1, Resamples: 200, Level: 0.5})
	if err != nil || iv.Level != 0.5 || iv.Lower < 1 || iv.Upper > 4 {
		t.Errorf("Bootstrap(Level 0.5) = %+v, %v", iv, err)
	}
}

// TestBootstrapCoverage is the CI-coverage property: over 200 samples of
// 40 uniform values (true mean 5), each with its own seeded bootstrap,
// the 95% interval should cover 5 in 90-99% of them. All seeds are
// fixed, so the count is a fixed number; it is pinned, and checked to be
// in range, so the test cannot flake and still says what it measures.
func TestBootstrapCoverage(t *testing.T) {
	for _, tt := range []struct {
		method Method
		want   int
	}{
		{PercentileMethod, pinnedCoverage[0]},
		{BCa, pinnedCoverage[1]},
	} {
		covered := 0
		for rep := range uint64(200) {
			x := uniformData(1000+rep, 40)
			iv, err := Bootstrap(x, MeanStat, Options{Seed: rep, Method: tt.method})
			if err != nil {
				t.Fatal(err)
			}
			if iv.Lower <= 5 && 5 <= iv.Upper {
				covered++
			}
		}
		if covered < 180 || covered > 198 {
			t.Errorf("method %d: the 95%% interval covered the mean in %d of 200 samples; want 180..198", tt.method, covered)
		}
		if covered != tt.want {
			t.Errorf("method %d: covered %d of 200; pinned %d", tt.method, covered, tt.want)
		}
	}
}

// Pinned coverage counts: percentile 182/200 (91%), BCa 184/200
// (92%); the percentile interval of the mean is known to undercover
// slightly at n = 40 (its width uses the plug-in variance).
var pinnedCoverage = [2]int{182, 184}

func TestBCaParts(t *testing.T) {
	// For the mean, θ̄ - θ_(i) = (x_i - x̄)/(n-1), so a = Σd³/(6(Σd²)^1.5)
	// with d = x - x̄. x = {1,2,3,10}: x̄ = 4, d = -3,-2,-1,6, Σd³ = 180,
	// Σd² = 50, a = 180/(6·50^1.5) = 0.6/√50.
	x := []float64{1, 2, 3, 10}
	jack := make([]float64, len(x))
	for i := range x {
		var rest []float64
		rest = append(append(rest, x[:i]...), x[i+1:]...)
		jack[i] = MeanStat(rest)
	}
	if got, ok := acceleration(jack); !ok || !near(got, 0.6/math.Sqrt(50)) {
		t.Errorf("acceleration = %v, %v; want %v", got, ok, 0.6/math.Sqrt(50))
	}
	if got, ok := acceleration([]float64{2, 2, 2}); ok {
		t.Errorf("acceleration(constant) = %v; want undefined (SciPy: 0/0)", got)
	}
	// Standard normal table values.
	for _, tt := range []struct{ p, z float64 }{
		{0.5, 0}, {0.975, 1.959963984540054}, {0.025, -1.959963984540054}, {0.8413447460685429, 1},
	} {
		if got := normQuantile(tt.p); math.Abs(got-tt.z) > 1e-9 {
			t.Errorf("normQuantile(%v) = %v; want %v", tt.p, got, tt.z)
		}
		if got := normCDF(tt.z); math.Abs(got-tt.p) > 1e-12 {
			t.Errorf("normCDF(%v) = %v; want %v", tt.z, got, tt.p)
		}
	}
	// On right-skewed data BCa moves the interval right of the
	// percentile interval (a > 0): the known effect of the correction.
	skewed := []float64{0.1, 0.2, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.2, 1.8, 2.5, 4, 7, 12}
	p, err := Bootstrap(skewed, MeanStat, Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Bootstrap(skewed, MeanStat, Options{Seed: 5, Method: BCa})
	if err != nil {
		t.Fatal(err)
	}
	if !(b.Upper > p.Upper && b.Lower > p.Lower) {
		t.Errorf("BCa %+v not right of percentile %+v on right-skewed data", b, p)
	}
}

func TestBootstrapErrors(t *testing.T) {
	nan := func([]float64) float64 { return math.NaN() }
	tests := []struct {
		name   string
		values []float64
		stat   func([]float64) float64
		opts   Options
		want   error
	}{
		{"empty", nil, MeanStat, Options{}, ErrEmpty},
		{"NaN value", []float64{1, math.NaN()}, MeanStat, Options{}, ErrNaN},
		{"NaN statistic", []float64{1, 2}, nan, Options{}, ErrNaN},
		{"one resample", []float64{1, 2}, MeanStat, Options{Resamples: 1}, ErrRange},
		{"negative resamples", []float64{1, 2}, MeanStat, Options{Resamples: -5}, ErrRange},
		{"level 1", []float64{1, 2}, MeanStat, Options{Level: 1}, ErrRange},
		{"level NaN", []float64{1, 2}, MeanStat, Options{Level: math.NaN()}, ErrRange},
		{"method", []float64{1, 2}, MeanStat, Options{Method: 9}, ErrRange},
		{"BCa two items", []float64{1, 2}, MeanStat, Options{Method: BCa}, ErrUndefined},
		{"BCa constant", []float64{1, 1, 1}, MeanStat, Options{Method: BCa}, ErrUndefined},
	}
	for _, tt := range tests {
		if _, err := Bootstrap(tt.values, tt.stat, tt.opts); !errors.Is(err, tt.want) {
			t.Errorf("%s: error = %v; want %v", tt.name, err, tt.want)
		}
	}
}

func TestPairedBootstrap(t *testing.T) {
	// Items differ widely, but a beats b by exactly 0.25 on each: the
	// paired interval is exactly [0.25, 0.25] and no resample has a <= b.
	// (Resampling the models separately would give a wide interval.)
	b := []float64{1, 9, 3, 7, 5, 2, 8}
	a := make([]float64, len(b))
	for i := range b {
		a[i] = b[i] + 0.25
	}
	p, err := PairedBootstrap(a, b, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p != (Paired{Diff: Interval{Estimate: 0.25, Lower: 0.25, Upper: 0.25, Level: 0.95}, ShareNonPositive: 0}) {
		t.Errorf("PairedBootstrap(a = b + 0.25) = %+v", p)
	}
	// Identical models: every difference is 0, which counts as <= 0.
	p, err = PairedBootstrap(b, b, Options{Seed: 1})
	if err != nil || p.ShareNonPositive != 1 || p.Diff.Lower != 0 || p.Diff.Upper != 0 {
		t.Errorf("PairedBootstrap(b, b) = %+v, %v", p, err)
	}
	// Differences {1, -1}: resampled means -1, 0, 1 with probabilities
	// 1/4, 1/2, 1/4, so about 75% are <= 0 and the interval is [-1, 1].
	p, err = PairedBootstrap([]float64{2, 0}, []float64{1, 1}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Diff != (Interval{Estimate: 0, Lower: -1, Upper: 1, Level: 0.95}) || p.ShareNonPositive < 0.72 || p.ShareNonPositive > 0.78 {
		t.Errorf("PairedBootstrap(diff {1,-1}) = %+v; want 0 [-1, 1], share about 0.75", p)
	}
	// The share and the interval come from the same resamples.
	q, err := PairedBootstrap([]float64{2, 0}, []float64{1, 1}, Options{Seed: 1})
	if err != nil || q != p {
		t.Errorf("PairedBootstrap not deterministic: %+v, %+v", p, q)
	}
	if _, err := PairedBootstrap([]float64{1, 2}, []float64{1}, Options{}); !errors.Is(err, ErrLength) {
		t.Errorf("mismatched lengths: error = %v; want ErrLength", err)
	}
	if _, err := PairedBootstrap([]float64{1, math.NaN()}, []float64{1, 2}, Options{}); !errors.Is(err, ErrNaN) {
		t.Errorf("NaN: error = %v; want ErrNaN", err)
	}
	if _, err := PairedBootstrap(nil, nil, Options{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: error = %v; want ErrEmpty", err)
	}
}

// TestBootstrapPercentileStatistic: the bootstrap of a percentile
// (flexibility is a 30th percentile). Hand-worked: for {0, 1} a resample
// is {0,0}, {0,1} or {1,1}, whose 30th percentiles are 0, 0.3 and 1 with
// probabilities 1/4, 1/2, 1/4, so the estimate is 0.3 and the 95%
// interval [0, 1]. Coverage: over 200 samples of 60 uniform values on
// [0, 10] (true 30th percentile 3), the interval covers 3 in 90-99% of
// them; the count is pinned as in TestBootstrapCoverage.
func TestBootstrapPercentileStatistic(t *testing.T) {
	iv, err := Bootstrap([]float64{0, 1}, PercentileStat(30), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !near(iv.Estimate, 0.3) || iv.Lower != 0 || iv.Upper != 1 {
		t.Errorf("Bootstrap({0,1}, p30) = %+v; want 0.3 [0, 1]", iv)
	}
	covered := 0
	for rep := range uint64(200) {
		x := uniformData(5000+rep, 60)
		iv, err := Bootstrap(x, PercentileStat(30), Options{Seed: rep})
		if err != nil {
			t.Fatal(err)
		}
		if iv.Lower <= 3 && 3 <= iv.Upper {
			covered++
		}
	}
	if covered < 180 || covered > 198 {
		t.Errorf("the 95%% interval of the 30th percentile covered it in %d of 200 samples; want 180..198", covered)
	}
	if covered != pinnedPercentileCoverage {
		t.Errorf("covered %d of 200; pinned %d", covered, pinnedPercentileCoverage)
	}
}

// pinnedPercentileCoverage is TestBootstrapPercentileStatistic's count.
var pinnedPercentileCoverage = 185 // 92.5%

// BenchmarkBootstrap times 1,000 resamples at LiveIdeaBench's size
// (47,200 ideas) for the mean and for a 30th percentile, which sorts
// each resample.
func BenchmarkBootstrap(b *testing.B) {
	x := uniformData(1, 47200)
	for _, bm := range []struct {
		name string
		stat func([]float64) float64
	}{{"mean", MeanStat}, {"p30", PercentileStat(30)}} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Bootstrap(x, bm.stat, Options{Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
