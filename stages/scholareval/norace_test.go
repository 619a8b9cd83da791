//go:build !race

package scholareval_test

const raceEnabled = false
