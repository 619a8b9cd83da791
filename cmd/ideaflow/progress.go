package main

import (
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/schollz/progressbar/v3"

	"github.com/ideaflow/ideaflow/engine"
)

// progress draws a bar over the nodes a run must visit (cached ones found by
// the plan are not counted) on a terminal.
func progress(w io.Writer) func(total int) (func(string, engine.Status), func(int)) {
	return func(total int) (func(string, engine.Status), func(int)) {
		bar := progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("nodes"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100_000_000),
		)
		var mu sync.Mutex
		return func(string, engine.Status) { _ = bar.Add(1) },
			func(added int) {
				// Nodes an expansion added: the bar's end moves.
				mu.Lock()
				defer mu.Unlock()
				total += added
				bar.ChangeMax(total)
			}
	}
}

// progressLog is the progress report where there is no terminal: one
// structured log line at most every interval, and one at the end. The total
// grows when an expansion adds nodes.
func progressLog(log zerolog.Logger, interval time.Duration) func(total int) (func(string, engine.Status), func(int)) {
	return func(total int) (func(string, engine.Status), func(int)) {
		var mu sync.Mutex
		done, counts := 0, map[engine.Status]int{}
		last := time.Now()
		report := func(_ string, st engine.Status) {
			mu.Lock()
			defer mu.Unlock()
			done++
			counts[st]++
			if done != total && time.Since(last) < interval {
				return
			}
			last = time.Now()
			log.Info().Int("done", done).Int("total", total).Int("ran", counts[engine.StatusRan]).
				Int("cached", counts[engine.StatusCached]).Int("failed", counts[engine.StatusFailed]).
				Int("skipped", counts[engine.StatusSkipped]).Msg("progress")
		}
		grow := func(added int) {
			mu.Lock()
			defer mu.Unlock()
			total += added
		}
		return report, grow
	}
}
