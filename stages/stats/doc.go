// Package stats holds the statistics that reports use: percentiles,
// bootstrap confidence intervals (single, paired, and leaderboard ranks),
// anytime-valid confidence sequences for bounded means,
// and agreement between raters (Krippendorff's alpha, Cohen's kappa,
// Kendall's tau-b).
//
// # Confidence sequences
//
// NewConfSeq gives anytime-valid intervals for the mean of scores bounded
// in [lo, hi]: with probability 1-alpha the interval holds the mean at
// every sample size at once, so an adaptive evaluation may look after
// every round of items and stop whenever it likes without inflating its
// error rate (a fixed-n interval looked at every 50 items misses 20-35%
// of the time at a nominal 5%: TestConfSeqTimeUniformCoverage). Two
// constructions, both from I. Waudby-Smith and A. Ramdas, "Estimating
// means of bounded random variables by betting", J. R. Stat. Soc. B 86(1)
// (2024), arXiv:2010.09686:
//
//   - CSBernstein, the predictable plug-in empirical-Bernstein CS
//     (Theorem 2; the empirical-Bernstein family of S. R. Howard, A.
//     Ramdas, J. McAuliffe and J. Sekhon, "Time-uniform, nonparametric,
//     nonasymptotic confidence sequences", Ann. Statist. 49(2), 2021):
//     closed form, O(1) per observation;
//   - CSBetting, the hedged-capital betting CS (Theorem 3, theta = 1/2),
//     tracked on a grid of candidate means and widened one grid point each
//     side: tighter early, O(grid) per observation.
//
// Both use the papers' predictable plug-in bets with truncation c = 1/2
// and report the running intersection. They assume each observation's
// mean given the past is the target (independent draws, or items taken
// in a random order from a population much larger than the sample); for
// items drawn without replacement from a small finite list they cover
// the population mean conservatively only approximately (the papers'
// without-replacement variants are not implemented).
//
// # Inputs and missing values
//
// Inputs are plain []float64 (one value per item) and [][]float64 (one row
// per model or per coder, one column per item). Missing values are NaN, and
// only where a missing value has a defined meaning: KrippendorffAlpha, whose
// formulation handles missing values, reads NaN as "this coder did not rate
// this unit". Every other function rejects a NaN with ErrNaN, so that a
// missing score never silently becomes part of a mean; drop or impute
// missing items before calling them.
//
// Bad input (empty slices, mismatched lengths, out-of-range parameters)
// returns an error wrapping one of the Err values below; nothing panics on
// data. Statistics that are undefined for the data (kappa when chance
// agreement is perfect, tau-b when one variable is constant) return
// ErrUndefined.
//
// # Determinism
//
// Bootstrap resampling draws from a math/rand/v2 PCG seeded with
// Options.Seed, and maps its 64-bit outputs to item indices with this
// package's own bounded-integer routine, so a seed gives the same
// resamples, and so the same interval, on every run, platform and Go
// release.
package stats

import "errors"

var (
	// ErrEmpty: no values where at least one (or two) are needed.
	ErrEmpty = errors.New("stats: empty input")
	// ErrLength: slices that must be parallel have different lengths.
	ErrLength = errors.New("stats: mismatched lengths")
	// ErrNaN: a NaN where missing values are not allowed, or a
	// statistic that returned NaN.
	ErrNaN = errors.New("stats: NaN in input")
	// ErrRange: a parameter outside its domain (a percentile outside
	// [0, 100], a confidence level outside (0, 1), ...).
	ErrRange = errors.New("stats: parameter out of range")
	// ErrUndefined: the statistic is undefined for this data.
	ErrUndefined = errors.New("stats: statistic undefined for this data")
)
