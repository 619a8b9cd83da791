package stats

import (
	"errors"
	"math"
	"testing"
)

// krippendorff2011 is the reliability data of the worked example in
// Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011):
// coders A-D (rows) by 12 units (columns), NaN where a coder did not
// code the unit.
func krippendorff2011() [][]float64 {
	N := math.NaN()
	return [][]float64{
		{1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N},
		{1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3},
		{N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N},
		{1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N},
	}
}

func TestKrippendorffAlphaPaper(t *testing.T) {
	tests := []struct {
		metric Metric
		paper  float64 // the paper's value, to 3 decimals
		full   float64 // this implementation's value, pinned
	}{
		{NominalMetric, 0.743, 0.74342105263157909},
		{OrdinalMetric, 0.815, 0.81538750375488145},
		{IntervalMetric, 0.849, 0.84910714285714284},
		// The paper gives no ratio value; 0.797 is what this
		// formulation gives (δ² = ((c-k)/(c+k))²), pinned.
		{RatioMetric, 0.797, 0.79740277471161214},
	}
	for _, tt := range tests {
		got, err := KrippendorffAlpha(krippendorff2011(), tt.metric)
		if err != nil {
			t.Fatalf("metric %d: %v", tt.metric, err)
		}
		if math.Round(got*1000)/1000 != tt.paper {
			t.Errorf("metric %d: alpha = %.6f; the paper gives %.3f", tt.metric, got, tt.paper)
		}
		if !near(got, tt.full) {
			t.Errorf("metric %d: alpha = %.17g; pinned %.17g", tt.metric, got, tt.full)
		}
	}
}

func TestKrippendorffAlphaHandWorked(t *testing.T) {
	// Two coders, three units: A = 1 1 2, B = 1 2 2. Coincidences:
	// unit 1 adds 2 to o_11, unit 2 adds 1 to o_12 and o_21, unit 3 adds
	// 2 to o_22; n_1 = n_2 = 3, n = 6. With δ²(1,2) = 1 (nominal, and
	// interval since 2-1 = 1): alpha = 1 - (6-1)·2 / (3·3·2) = 4/9.
	data := [][]float64{{1, 1, 2}, {1, 2, 2}}
	for _, m := range []Metric{NominalMetric, IntervalMetric, OrdinalMetric} {
		// Ordinal: δ²(1,2) = (n_1 + n_2 - (n_1 + n_2)/2)² = 9, and the
		// 9 cancels: also 4/9.
		if got, err := KrippendorffAlpha(data, m); err != nil || !near(got, 4.0/9) {
			t.Errorf("metric %d: alpha = %v, %v; want 4/9", m, got, err)
		}
	}
	// Perfect agreement is 1, whatever is missing.
	N := math.NaN()
	perfect := [][]float64{{1, 2, N, 4}, {1, 2, 3, 4}, {N, 2, 3, 4}}
	for m := NominalMetric; m <= RatioMetric; m++ {
		if got, err := KrippendorffAlpha(perfect, m); err != nil || got != 1 {
			t.Errorf("metric %d: perfect agreement alpha = %v, %v; want 1", m, got, err)
		}
	}
	// A unit only one coder coded is not pairable and changes nothing.
	d := krippendorff2011()
	d[0] = append(d[0], 7)
	for i := 1; i < len(d); i++ {
		d[i] = append(d[i], N)
	}
	if got, _ := KrippendorffAlpha(d, IntervalMetric); got != 0.84910714285714284 {
		t.Errorf("alpha with an unpairable unit = %.17g; want the paper data's", got)
	}
}

func TestKrippendorffAlphaErrors(t *testing.T) {
	N := math.NaN()
	tests := []struct {
		name   string
		data   [][]float64
		metric Metric
		want   error
	}{
		{"no coders", nil, NominalMetric, ErrEmpty},
		{"no units", [][]float64{{}}, NominalMetric, ErrEmpty},
		{"ragged", [][]float64{{1, 2}, {1}}, NominalMetric, ErrLength},
		{"inf", [][]float64{{1, math.Inf(1)}, {1, 2}}, IntervalMetric, ErrRange},
		{"negative ratio", [][]float64{{-1, 2}, {1, 2}}, RatioMetric, ErrRange},
		{"metric", [][]float64{{1, 2}, {1, 2}}, Metric(7), ErrRange},
		{"nothing pairable", [][]float64{{1, N}, {N, 2}}, NominalMetric, ErrUndefined},
		{"one value", [][]float64{{3, 3}, {3, N}}, IntervalMetric, ErrUndefined},
	}
	for _, tt := range tests {
		if _, err := KrippendorffAlpha(tt.data, tt.metric); !errors.Is(err, tt.want) {
			t.Errorf("%s: error = %v; want %v", tt.name, err, tt.want)
		}
	}
}

// ratings expands a contingency table (rows: rater a's category, columns:
// rater b's) into the two raters' rating lists.
func ratings(table [][]int, cats []float64) (a, b []float64) {
	for i, row := range table {
		for j, n := range row {
			for range n {
				a = append(a, cats[i])
				b = append(b, cats[j])
			}
		}
	}
	return a, b
}

func TestCohenKappa(t *testing.T) {
	// 2x2 (Wikipedia's example): 50 items, yes/yes 20, yes/no 5,
	// no/yes 10, no/no 15. p_o = 35/50 = 0.7; a says yes 25/50, b 30/50;
	// p_e = 0.5·0.6 + 0.5·0.4 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4.
	// With two categories 1 apart every weighting is the same.
	a2, b2 := ratings([][]int{{20, 5}, {10, 15}}, []float64{1, 0})
	// 3x3, categories 1 2 3, 15 items:
	//	4 1 0
	//	1 3 1
	//	0 1 4
	// Marginals all 5, so e_ij = 5·5/15 = 5/3 items per cell.
	// Unweighted: p_o = 11/15, p_e = 1/3, kappa = (11/15-5/15)/(10/15) = 0.6.
	// Linear: Σ w o = 4 (four adjacent cells, weight 1);
	// Σ w e = 5/3·(4·1 + 2·2) = 40/3; kappa = 1 - 4/(40/3) = 0.7.
	// Quadratic: Σ w o = 4; Σ w e = 5/3·(4·1 + 2·4) = 20; kappa = 0.8.
	a3, b3 := ratings([][]int{{4, 1, 0}, {1, 3, 1}, {0, 1, 4}}, []float64{1, 2, 3})
	tests := []struct {
		name string
		a, b []float64
		w    Weights
		want float64
	}{
		{"2x2", a2, b2, Unweighted, 0.4},
		{"2x2 linear", a2, b2, Linear, 0.4},
		{"2x2 quadratic", a2, b2, Quadratic, 0.4},
		{"3x3", a3, b3, Unweighted, 0.6},
		{"3x3 linear", a3, b3, Linear, 0.7},
		{"3x3 quadratic", a3, b3, Quadratic, 0.8},
		// Rescaling the codes (1 2 3 -> 10 20 30) leaves weighted kappa alone.
		{"3x3 linear x10", scale(a3, 10), scale(b3, 10), Linear, 0.7},
		{"perfect", []float64{1, 2, 3, 1}, []float64{1, 2, 3, 1}, Unweighted, 1},
	}
	for _, tt := range tests {
		if got, err := CohenKappa(tt.a, tt.b, tt.w); err != nil || !near(got, tt.want) {
			t.Errorf("%s: kappa = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

func scale(x []float64, f float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = v * f
	}
	return y
}

func TestCohenKappaErrors(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		w    Weights
		want error
	}{
		{"empty", nil, nil, Unweighted, ErrEmpty},
		{"lengths", []float64{1, 2}, []float64{1}, Unweighted, ErrLength},
		{"NaN", []float64{1, math.NaN()}, []float64{1, 2}, Unweighted, ErrNaN},
		{"one category", []float64{1, 1}, []float64{1, 1}, Unweighted, ErrUndefined},
		{"weights", []float64{1, 2}, []float64{1, 2}, Weights(5), ErrRange},
	}
	for _, tt := range tests {
		if _, err := CohenKappa(tt.a, tt.b, tt.w); !errors.Is(err, tt.want) {
			t.Errorf("%s: error = %v; want %v", tt.name, err, tt.want)
		}
	}
}

func TestKendallTauB(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
		want float64
	}{
		// Pairs (1-based): 12 tied in y; 13, 14, 24, 34 concordant;
		// 23 tied in x. C=4, D=0, Tx=1, Ty=1: 4/√(5·5) = 0.8.
		{"ties in both", []float64{1, 2, 2, 3}, []float64{1, 1, 2, 3}, 0.8},
		// 12 discordant; 13 tied in y; 14, 23, 24, 34 concordant.
		// C=4, D=1, Tx=0, Ty=1: 3/√(5·6) = 3/√30.
		{"one discordant", []float64{1, 2, 3, 4}, []float64{2, 1, 2, 3}, 3 / math.Sqrt(30)},
		// 12 tied in x; 13, 24 tied in y; 14 concordant; 23
		// discordant; 34 tied in x. C=1, D=1: 0.
		{"balanced", []float64{1, 1, 2, 2}, []float64{1, 2, 1, 2}, 0},
		// The pair tied in both counts in neither: C=2, 2/√(2·2) = 1.
		{"joint tie", []float64{1, 1, 2}, []float64{1, 1, 2}, 1},
		{"reversed", []float64{1, 2, 3, 4, 5}, []float64{9, 7, 5, 3, 1}, -1},
		// Two judges' 1-10 scores: pair 23 is tied in x only (8, 8 vs
		// 8, 7); the other nine are concordant. C=9, D=0, Tx=1, Ty=0:
		// 9/√(10·9) = 9/√90.
		{"judges", []float64{7, 8, 8, 5, 9}, []float64{6, 8, 7, 5, 9}, 9 / math.Sqrt(90)},
	}
	for _, tt := range tests {
		if got, err := KendallTauB(tt.x, tt.y); err != nil || !near(got, tt.want) {
			t.Errorf("%s: tau-b = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	errTests := []struct {
		name string
		x, y []float64
		want error
	}{
		{"empty", nil, nil, ErrEmpty},
		{"one item", []float64{1}, []float64{2}, ErrEmpty},
		{"lengths", []float64{1, 2}, []float64{1}, ErrLength},
		{"NaN", []float64{1, math.NaN()}, []float64{1, 2}, ErrNaN},
		{"constant", []float64{1, 1, 1}, []float64{1, 2, 3}, ErrUndefined},
	}
	for _, tt := range errTests {
		if _, err := KendallTauB(tt.x, tt.y); !errors.Is(err, tt.want) {
			t.Errorf("%s: error = %v; want %v", tt.name, err, tt.want)
		}
	}
}

func TestKendallTauOrders(t *testing.T) {
	abcd := []string{"A", "B", "C", "D"}
	tests := []struct {
		name string
		b    []string
		want float64
	}{
		{"same", []string{"A", "B", "C", "D"}, 1},
		// One swapped pair of six: (5 - 1)/6.
		{"one swap", []string{"B", "A", "C", "D"}, 4.0 / 6},
		{"reversed", []string{"D", "C", "B", "A"}, -1},
		// A and D swapped: pairs AD, AB, AC, BD, CD discordant, BC
		// concordant: (1 - 5)/6.
		{"ends swapped", []string{"D", "B", "C", "A"}, -4.0 / 6},
	}
	for _, tt := range tests {
		if got, err := KendallTauOrders(abcd, tt.b); err != nil || !near(got, tt.want) {
			t.Errorf("%s: tau = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	errTests := []struct {
		name string
		a, b []string
		want error
	}{
		{"lengths", abcd, []string{"A"}, ErrLength},
		{"missing id", abcd, []string{"A", "B", "C", "E"}, ErrRange},
		{"duplicate in b", abcd, []string{"A", "B", "C", "C"}, ErrRange},
		{"duplicate in a", []string{"A", "A", "B"}, []string{"A", "B", "C"}, ErrRange},
		{"one id", []string{"A"}, []string{"A"}, ErrEmpty},
	}
	for _, tt := range errTests {
		if _, err := KendallTauOrders(tt.a, tt.b); !errors.Is(err, tt.want) {
			t.Errorf("%s: error = %v; want %v", tt.name, err, tt.want)
		}
	}
}

func TestAgreementTooManyValues(t *testing.T) {
	n := MaxDistinctValues + 1
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i], b[i] = float64(i), float64(i)+0.5
	}
	if _, err := KrippendorffAlpha([][]float64{a, b}, IntervalMetric); !errors.Is(err, ErrRange) {
		t.Errorf("alpha over %d distinct values: %v; want ErrRange", 2*n, err)
	}
	if _, err := CohenKappa(a, a, Unweighted); !errors.Is(err, ErrRange) {
		t.Errorf("kappa over %d categories: %v; want ErrRange", n, err)
	}
	// At the bound both still work.
	if _, err := KrippendorffAlpha([][]float64{a[:MaxDistinctValues/2], b[:MaxDistinctValues/2]}, IntervalMetric); err != nil {
		t.Errorf("alpha at the bound: %v", err)
	}
}
