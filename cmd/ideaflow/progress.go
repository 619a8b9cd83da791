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
func progress(w io.Writer) func(total int) func(string, engine.Status) {
	return func(total int) func(string, engine.Status) {
		if total == 0 {
			return func(string, engine.Status) {}
		}
		bar := progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("nodes"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100_000_000),
		)
		return func(string, engine.Status) { _ = bar.Add(1) }
	}
}

// progressLog is the progress report where there is no terminal: one
// structured log line at most every interval, and one at the end.
func progressLog(log zerolog.Logger, interval time.Duration) func(total int) func(string, engine.Status) {
	return func(total int) func(string, engine.Status) {
		var mu sync.Mutex
		done, counts := 0, map[engine.Status]int{}
		last := time.Now()
		return func(_ string, st engine.Status) {
			mu.Lock()
			defer mu.Unlock()
			done++
			counts[st]++
			if done < total && time.Since(last) < interval {
				return
			}
			last = time.Now()
			log.Info().Int("done", done).Int("total", total).Int("ran", counts[engine.StatusRan]).
				Int("cached", counts[engine.StatusCached]).Int("failed", counts[engine.StatusFailed]).
				Int("skipped", counts[engine.StatusSkipped]).Msg("progress")
		}
	}
}
