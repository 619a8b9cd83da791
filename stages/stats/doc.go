// Package stats holds the statistics that reports use: percentiles,
// bootstrap confidence intervals (single, paired, and leaderboard ranks),
// and agreement between raters (Krippendorff's alpha, Cohen's kappa,
// Kendall's tau-b).
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
