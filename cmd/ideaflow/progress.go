package main

import (
	"io"

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
