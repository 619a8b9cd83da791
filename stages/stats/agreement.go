package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"

	mstats "github.com/montanaflynn/stats"
)

// Metric is the level of measurement of the values Krippendorff's alpha
// compares, which fixes the squared difference δ²(c, k) between two
// values c and k.
type Metric int

const (
	// NominalMetric: δ² = 0 if c = k, else 1 (categories).
	NominalMetric Metric = iota
	// OrdinalMetric: δ² = (Σ_{g=c..k} n_g - (n_c + n_k)/2)², with n_g
	// the number of pairable values equal to g and the sum over the
	// ranked values from c to k (ranks, e.g. a 1-5 rating scale).
	OrdinalMetric
	// IntervalMetric: δ² = (c - k)² (scores on an interval scale).
	IntervalMetric
	// RatioMetric: δ² = ((c - k)/(c + k))² (non-negative values with a
	// true zero; 0 when c = k = 0).
	RatioMetric
)

// MaxDistinctValues bounds the distinct values KrippendorffAlpha and
// CohenKappa accept: both build a table with a cell per pair of values,
// so 47,200 continuous scores would need 17 GB. 2,048 values take 32 MB.
const MaxDistinctValues = 2048

// KrippendorffAlpha returns Krippendorff's alpha, the agreement among
// coders beyond chance, for data[coder][unit] with NaN where a coder did
// not code a unit. It follows the coincidence-matrix formulation of
// Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011):
//
//   - a unit u with m_u >= 2 values is pairable (units with fewer are
//     dropped); each ordered pair of its values from different coders
//     adds 1/(m_u - 1) to the coincidence o_ck of their values c and k;
//   - n_c = Σ_k o_ck is the number of pairable values c, n = Σ_c n_c;
//   - alpha = 1 - D_o/D_e = 1 - (n - 1) Σ_ck o_ck δ²_ck / Σ_ck n_c n_k δ²_ck.
//
// alpha is 1 for perfect agreement, 0 for agreement at chance, and
// negative for systematic disagreement. It is ErrUndefined when fewer
// than two values are pairable or all pairable values are equal
// (D_e = 0). RatioMetric needs non-negative values.
func KrippendorffAlpha(data [][]float64, metric Metric) (float64, error) {
	if metric < NominalMetric || metric > RatioMetric {
		return math.NaN(), fmt.Errorf("%w: unknown metric %d", ErrRange, metric)
	}
	if len(data) == 0 || len(data[0]) == 0 {
		return math.NaN(), fmt.Errorf("%w: no coders or no units", ErrEmpty)
	}
	units := len(data[0])
	for c, row := range data {
		if len(row) != units {
			return math.NaN(), fmt.Errorf("%w: coder 0 coded %d units, coder %d %d", ErrLength, units, c, len(row))
		}
		for u, v := range row {
			if math.IsInf(v, 0) || (metric == RatioMetric && v < 0) {
				return math.NaN(), fmt.Errorf("%w: coder %d, unit %d: value %v", ErrRange, c, u, v)
			}
		}
	}

	// The distinct values of pairable units, sorted (the ordinal
	// metric needs their order).
	var vals []float64
	for u := range units {
		if pairable(data, u) >= 2 {
			for _, row := range data {
				if !math.IsNaN(row[u]) {
					vals = append(vals, row[u])
				}
			}
		}
	}
	slices.Sort(vals)
	vals = slices.Compact(vals)
	if len(vals) == 0 {
		return math.NaN(), fmt.Errorf("%w: no unit has two values", ErrUndefined)
	}
	if len(vals) > MaxDistinctValues {
		return math.NaN(), fmt.Errorf("%w: %d distinct values; alpha's coincidence matrix has one cell per pair of values, so at most %d are allowed (round continuous scores to a scale first)", ErrRange, len(vals), MaxDistinctValues)
	}
	index := make(map[float64]int, len(vals))
	for i, v := range vals {
		index[v] = i
	}

	// Coincidences: o[c][k] += (count_c count_k - [c=k] count_c)/(m_u - 1),
	// which is the sum over ordered pairs of different coders.
	v := len(vals)
	o := make([][]float64, v)
	for i := range o {
		o[i] = make([]float64, v)
	}
	// Only the values present in a unit can pair there, so each unit
	// costs O(m_u²), not O(v²): with continuous scores v is large.
	counts := make([]float64, v)
	var present []int
	for u := range units {
		m := pairable(data, u)
		if m < 2 {
			continue
		}
		present = present[:0]
		for _, row := range data {
			if !math.IsNaN(row[u]) {
				i := index[row[u]]
				if counts[i] == 0 {
					present = append(present, i)
				}
				counts[i]++
			}
		}
		for _, c := range present {
			for _, k := range present {
				pairs := counts[c] * counts[k]
				if c == k {
					pairs -= counts[c]
				}
				o[c][k] += pairs / float64(m-1)
			}
		}
		for _, c := range present {
			counts[c] = 0
		}
	}
	nc := make([]float64, v)
	var n float64
	for c := range v {
		for k := range v {
			nc[c] += o[c][k]
		}
		n += nc[c]
	}

	// cum[g] = n_0 + ... + n_{g-1}, so the ordinal metric's sum over the
	// values from c to k is cum[hi+1] - cum[lo].
	cum := make([]float64, v+1)
	for g := range v {
		cum[g+1] = cum[g] + nc[g]
	}
	delta := func(c, k int) float64 {
		switch metric {
		case NominalMetric:
			if c == k {
				return 0
			}
			return 1
		case OrdinalMetric:
			lo, hi := min(c, k), max(c, k)
			d := cum[hi+1] - cum[lo] - (nc[c]+nc[k])/2
			return d * d
		case IntervalMetric:
			d := vals[c] - vals[k]
			return d * d
		default: // RatioMetric
			if vals[c]+vals[k] == 0 {
				return 0
			}
			d := (vals[c] - vals[k]) / (vals[c] + vals[k])
			return d * d
		}
	}
	var observed, expected float64
	for c := range v {
		for k := range v {
			d := delta(c, k)
			observed += o[c][k] * d
			expected += nc[c] * nc[k] * d
		}
	}
	if expected == 0 {
		return math.NaN(), fmt.Errorf("%w: all pairable values are equal", ErrUndefined)
	}
	return 1 - (n-1)*observed/expected, nil
}

// pairable returns m_u, the number of coders who coded unit u.
func pairable(data [][]float64, u int) int {
	m := 0
	for _, row := range data {
		if !math.IsNaN(row[u]) {
			m++
		}
	}
	return m
}

// Weights are the disagreement weights of Cohen's kappa.
type Weights int

const (
	// Unweighted: every disagreement weighs 1 (Cohen 1960).
	Unweighted Weights = iota
	// Linear: a disagreement between x and y weighs |x - y|.
	Linear
	// Quadratic: it weighs (x - y)² (Fleiss & Cohen 1973; for
	// integer ratings close to the intraclass correlation).
	Quadratic
)

// CohenKappa returns Cohen's kappa between two raters who rated the same
// items, a[i] and b[i] being their ratings of item i (category codes;
// NaN is an error). With p_ij the share of items rated i by a and j by
// b, and e_ij = p_i. p_.j the share expected if the raters were
// independent,
//
//	kappa = 1 - Σ w_ij p_ij / Σ w_ij e_ij
//
// which for Unweighted (w_ij = [i ≠ j]) is (p_o - p_e)/(1 - p_e) with
// p_o = Σ p_ii and p_e = Σ p_i. p_.i. Linear and Quadratic weights use
// the rating values themselves, |x_i - x_j| and (x_i - x_j)², so a
// category nobody used changes nothing (the usual |i-j|/(k-1) weights
// differ only by a constant factor, which cancels). It is ErrUndefined
// when chance disagreement is 0 (both raters used a single category).
func CohenKappa(a, b []float64, w Weights) (float64, error) {
	if w < Unweighted || w > Quadratic {
		return math.NaN(), fmt.Errorf("%w: unknown weights %d", ErrRange, w)
	}
	if len(a) != len(b) {
		return math.NaN(), fmt.Errorf("%w: %d and %d ratings", ErrLength, len(a), len(b))
	}
	if err := checkValues(a); err != nil {
		return math.NaN(), err
	}
	if err := checkValues(b); err != nil {
		return math.NaN(), err
	}
	cats := slices.Concat(a, b)
	slices.Sort(cats)
	cats = slices.Compact(cats)
	if len(cats) > MaxDistinctValues {
		return math.NaN(), fmt.Errorf("%w: %d distinct ratings; kappa's table has one cell per pair of them, so at most %d are allowed (kappa is for categories and rating scales)", ErrRange, len(cats), MaxDistinctValues)
	}
	index := make(map[float64]int, len(cats))
	for i, c := range cats {
		index[c] = i
	}
	k := len(cats)
	p := make([][]float64, k)
	for i := range p {
		p[i] = make([]float64, k)
	}
	row, col := make([]float64, k), make([]float64, k)
	share := 1 / float64(len(a))
	for i := range a {
		r, c := index[a[i]], index[b[i]]
		p[r][c] += share
		row[r] += share
		col[c] += share
	}
	var observed, expected float64
	for i := range k {
		for j := range k {
			var wij float64
			switch d := cats[i] - cats[j]; w {
			case Unweighted:
				if i != j {
					wij = 1
				}
			case Linear:
				wij = math.Abs(d)
			case Quadratic:
				wij = d * d
			}
			observed += wij * p[i][j]
			expected += wij * row[i] * col[j]
		}
	}
	if expected == 0 {
		return math.NaN(), fmt.Errorf("%w: chance disagreement is 0", ErrUndefined)
	}
	return 1 - observed/expected, nil
}

// KendallTauB returns Kendall's tau-b between x and y, pairs (x[i], y[i])
// being one item's two values (two judges' scores, or a score and a
// rank). Over the n(n-1)/2 pairs of items, with C concordant, D
// discordant, T_x tied only in x and T_y tied only in y (pairs tied in
// both count in neither),
//
//	tau-b = (C - D) / √((C + D + T_x)(C + D + T_y))
//
// which is SciPy's kendalltau default and equals tau-a when there are no
// ties. Computed by montanaflynn/stats (O(n²)). It needs two items and
// is ErrUndefined when x or y is constant.
func KendallTauB(x, y []float64) (float64, error) {
	if len(x) != len(y) {
		return math.NaN(), fmt.Errorf("%w: %d and %d values", ErrLength, len(x), len(y))
	}
	if err := checkValues(x); err != nil {
		return math.NaN(), err
	}
	if err := checkValues(y); err != nil {
		return math.NaN(), err
	}
	if len(x) < 2 {
		return math.NaN(), fmt.Errorf("%w: tau needs two items", ErrEmpty)
	}
	tau, err := mstats.KendallTau(x, y)
	if errors.Is(err, mstats.ErrZero) {
		return math.NaN(), fmt.Errorf("%w: a constant variable", ErrUndefined)
	}
	if err != nil {
		return math.NaN(), fmt.Errorf("stats: kendall tau: %v", err)
	}
	return tau, nil
}

// KendallTauOrders returns Kendall's tau between two orderings of the
// same ids (e.g. two rankings of the same ideas, best first): tau-b of
// the ids' positions, which, orderings having no ties, is
// (C - D)/(n(n-1)/2). Both must hold the same ids, each once.
func KendallTauOrders(a, b []string) (float64, error) {
	if len(a) != len(b) {
		return math.NaN(), fmt.Errorf("%w: orderings of %d and %d ids", ErrLength, len(a), len(b))
	}
	pos := make(map[string]int, len(b))
	for i, id := range b {
		if _, dup := pos[id]; dup {
			return math.NaN(), fmt.Errorf("%w: id %q twice in the second ordering", ErrRange, id)
		}
		pos[id] = i
	}
	x, y := make([]float64, len(a)), make([]float64, len(a))
	seen := make(map[string]bool, len(a))
	for i, id := range a {
		j, ok := pos[id]
		if !ok {
			return math.NaN(), fmt.Errorf("%w: id %q only in the first ordering", ErrRange, id)
		}
		if seen[id] {
			return math.NaN(), fmt.Errorf("%w: id %q twice in the first ordering", ErrRange, id)
		}
		seen[id] = true
		x[i], y[i] = float64(i), float64(j)
	}
	return KendallTauB(x, y)
}
