package main

import (
	"fmt"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/executor"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// newExecutor is the executor run --executor names: "" or "local" calls the
// providers in-process; "loopback" sends every task through JSON to a
// second in-process executor and its result (or failure envelope) back, as
// a worker on another machine would: the seam's end-to-end check, and the
// shape of a queue's executor (issue 27).
func newExecutor(kind string, providers map[string]llm.Provider, log zerolog.Logger) (engine.Executor, error) {
	local := engine.NewLocalExecutor(providers, log)
	switch kind {
	case "", "local":
		return local, nil
	case "loopback":
		// The worker side knows no provider: each task carries its settings.
		worker := engine.NewLocalExecutor(nil, log)
		return executor.NewWire(executor.ServeWith(worker), local), nil
	}
	return nil, fmt.Errorf("--executor %q: want local or loopback", kind)
}

// addRemoteFlags adds run's flags for the scale-out seams.
func (a *app) addRemoteFlags(cmd *cobra.Command) {
	cmd.Flags().Lookup("executor").Hidden = true // a test and debugging seam until a queue executor lands
}
