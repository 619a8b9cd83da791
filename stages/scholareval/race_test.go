//go:build race

package scholareval_test

// raceEnabled: the race detector makes a run of thousands of nodes several
// times slower; tests that repeat such a run over the same code paths
// skip the repeat under it.
const raceEnabled = true
