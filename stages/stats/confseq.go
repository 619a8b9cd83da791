package stats

// Confidence sequences: intervals for the mean of a bounded score that
// hold at every sample size at once, so a rule that looks after every
// round of items and stops when it likes keeps its stated error rate. A
// fixed-n interval (Bootstrap's) looked at after every round does not:
// its miscoverage grows with the number of looks.

import (
	"fmt"
	"math"
)

// ConfSeq is a confidence sequence for the mean of scores in [Lo, Hi],
// fed one observation at a time. Interval is the running intersection of
// the intervals so far: it only narrows, and with probability at least
// 1-alpha it holds the mean at every n simultaneously (for observations
// that are independent with a common mean, or more generally whose
// conditional mean given the past is constant).
type ConfSeq interface {
	// Add feeds one observation; a value outside [Lo, Hi] or NaN is an
	// error and leaves the sequence unchanged.
	Add(x float64) error
	// Interval is the current interval, on the scores' scale, and the
	// number of observations it rests on. With none it is [Lo, Hi].
	Interval() (lower, upper float64, n int)
}

// CSMethod names a confidence sequence construction.
type CSMethod string

const (
	// CSBernstein is the predictable plug-in empirical-Bernstein CS of
	// Waudby-Smith & Ramdas (2023), Theorem 2: closed form, O(1) per
	// observation.
	CSBernstein CSMethod = "bernstein"
	// CSBetting is their hedged-capital betting CS (Theorem 3), on a grid
	// of candidate means: tighter, O(grid) per observation.
	CSBetting CSMethod = "betting"
)

// csTruncation is c in the papers' bets: a bet never stakes more than
// half the capital, so capital never reaches zero.
const csTruncation = 0.5

// DefaultCSGrid is the number of candidate means a betting CS tracks.
const DefaultCSGrid = 1000

// NewConfSeq returns a confidence sequence of the given method at
// miscoverage alpha in (0, 1) for scores in [lo, hi] (lo < hi). grid is
// the betting CS's number of candidate means (0: DefaultCSGrid); the
// Bernstein CS ignores it.
func NewConfSeq(method CSMethod, lo, hi, alpha float64, grid int) (ConfSeq, error) {
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("%w: confidence sequence bounds [%v, %v] must be finite with lo < hi", ErrRange, lo, hi)
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("%w: confidence sequence alpha %v must be in (0, 1)", ErrRange, alpha)
	}
	base := csBase{lo: lo, hi: hi, alpha: alpha, muHat: 0.5, varHat: 0.25, lower: 0, upper: 1}
	switch method {
	case CSBernstein, "":
		return &bernsteinCS{csBase: base}, nil
	case CSBetting:
		if grid == 0 {
			grid = DefaultCSGrid
		}
		if grid < 2 || grid > 1_000_000 {
			return nil, fmt.Errorf("%w: betting grid %d must be in [2, 1000000]", ErrRange, grid)
		}
		b := &bettingCS{csBase: base, logKp: make([]float64, grid+1), logKm: make([]float64, grid+1), out: make([]bool, grid+1)}
		return b, nil
	}
	return nil, fmt.Errorf("%w: unknown confidence sequence method %q (bernstein or betting)", ErrRange, method)
}

// csBase holds what both constructions share: the scale, and the
// predictable mean and variance estimates (mu-hat, sigma-hat squared of
// the papers, started at 1/2 and 1/4) from which each bet is sized
// before the observation it stakes on is seen.
type csBase struct {
	lo, hi, alpha float64
	n             int
	sum, sumSq    float64 // sum of x, sum of (x - muHat_i)^2, on [0, 1]
	muHat, varHat float64 // predictable estimates after n observations
	lower, upper  float64 // running intersection, on [0, 1]
}

func (b *csBase) scale(x float64) (float64, error) {
	if math.IsNaN(x) {
		return 0, fmt.Errorf("%w: confidence sequence observation", ErrNaN)
	}
	if x < b.lo || x > b.hi {
		return 0, fmt.Errorf("%w: observation %v outside [%v, %v]", ErrRange, x, b.lo, b.hi)
	}
	return (x - b.lo) / (b.hi - b.lo), nil
}

// lambda is the predictable plug-in bet for observation n+1 (1-based t):
// sqrt(2 log(2/alpha) / (varHat_{t-1} t log(1+t))), before truncation.
func (b *csBase) lambda() float64 {
	t := float64(b.n + 1)
	return math.Sqrt(2 * math.Log(2/b.alpha) / (b.varHat * t * math.Log(1+t)))
}

// update folds x (on [0, 1]) into the predictable estimates.
func (b *csBase) update(x float64) {
	b.n++
	b.sum += x
	mu := (0.5 + b.sum) / float64(b.n+1)
	b.sumSq += (x - mu) * (x - mu)
	b.muHat = mu
	b.varHat = (0.25 + b.sumSq) / float64(b.n+1)
}

func (b *csBase) Interval() (float64, float64, int) {
	w := b.hi - b.lo
	return b.lo + b.lower*w, b.lo + b.upper*w, b.n
}

type bernsteinCS struct {
	csBase
	sumLam, sumLamX, sumPsi float64
}

// psiE is the papers' psi_E(lambda) = (-log(1-lambda) - lambda) / 4.
func psiE(l float64) float64 { return (-math.Log1p(-l) - l) / 4 }

func (c *bernsteinCS) Add(x float64) error {
	x, err := c.scale(x)
	if err != nil {
		return err
	}
	l := math.Min(c.lambda(), csTruncation)
	v := 4 * (x - c.muHat) * (x - c.muHat)
	c.sumLam += l
	c.sumLamX += l * x
	c.sumPsi += v * psiE(l)
	c.update(x)
	center := c.sumLamX / c.sumLam
	half := (math.Log(2/c.alpha) + c.sumPsi) / c.sumLam
	c.lower = math.Max(c.lower, center-half)
	c.upper = math.Min(c.upper, center+half)
	if c.lower > c.upper { // the intersection emptied: keep a point, not an inverted interval
		c.lower, c.upper = center, center
	}
	return nil
}

// bettingCS tracks, for each candidate mean m = k/grid, the log capital
// of a bettor on "the mean is above m" (K+) and one on "below m" (K-).
// m leaves the sequence for good once the hedged capital
// max(K+/2, K-/2) reaches 1/alpha (Ville's inequality): the running
// intersection.
type bettingCS struct {
	csBase
	logKp, logKm []float64
	out          []bool
}

func (c *bettingCS) Add(x float64) error {
	x, err := c.scale(x)
	if err != nil {
		return err
	}
	l := c.lambda()
	g := len(c.out) - 1
	thresh := math.Log(2 / c.alpha) // max(K+, K-)/2 >= 1/alpha
	for k := 0; k <= g; k++ {
		if c.out[k] {
			continue
		}
		m := float64(k) / float64(g)
		// At m = 0 (m = 1) the bet needs no truncation: x - m cannot
		// be negative (positive), so c/m is +Inf and Min keeps l.
		c.logKp[k] += math.Log1p(math.Min(l, csTruncation/m) * (x - m))
		c.logKm[k] += math.Log1p(-math.Min(l, csTruncation/(1-m)) * (x - m))
		if c.logKp[k] >= thresh || c.logKm[k] >= thresh {
			c.out[k] = true
		}
	}
	c.update(x)
	// The interval spans the candidates still in, widened to the next
	// candidate each side, so a mean between two grid points is not lost.
	first, last := -1, -1
	for k := 0; k <= g; k++ {
		if !c.out[k] {
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	if first < 0 { // every candidate out (probability <= alpha): keep the last interval
		return nil
	}
	c.lower = math.Max(c.lower, float64(max(first-1, 0))/float64(g))
	c.upper = math.Min(c.upper, float64(min(last+1, g))/float64(g))
	return nil
}
