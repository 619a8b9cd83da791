package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/ideaflow/ideaflow/engine"
)

// runAdaptive runs an experiment with a stop_when block round by round
// (engine.RunAdaptive), prints one line per round and the board it
// stopped on, and returns the last round's graph and summary for the
// page and the summary that follow as after any run.
func (a *app) runAdaptive(ctx context.Context, e *engine.Engine, g *engine.Graph, opts engine.RunOptions) (*engine.Graph, *engine.Summary, error) {
	ad, err := e.RunAdaptive(ctx, g.Exp, opts)
	if ad == nil || len(ad.Rounds) == 0 {
		return g, nil, err
	}
	sw := g.Exp.StopWhen
	for _, r := range ad.Rounds {
		fmt.Fprintf(a.stdout, "round %d: %d of %d items (%d scored), %d calls; %d pair(s) separated, %d tied, %d open\n",
			r.Round, r.Items, ad.Total, r.Scored, r.Calls, len(r.Decision.Separated), len(r.Decision.Tied), r.Decision.Open)
	}
	last := ad.Last()
	if ad.Reason != "" {
		fmt.Fprintf(a.stdout, "stop_when: stopped by %s after %d round(s), %d of %d items, %d calls in this run (%s intervals at %.0f%% over the board)\n",
			ad.Reason, len(ad.Rounds), last.Items, ad.Total, ad.Calls, sw.Rule.Method, 100*sw.Rule.Level())
		for m, name := range ad.Models {
			iv := last.Decision.Intervals[m]
			fmt.Fprintf(a.stdout, "  %-40s [%.3f, %.3f]\n", name, iv.Lower, iv.Upper)
		}
		var pairs []string
		for _, p := range last.Decision.Separated {
			pairs = append(pairs, ad.Models[p.Higher]+" > "+ad.Models[p.Lower])
		}
		if len(pairs) > 0 {
			fmt.Fprintf(a.stdout, "  separated: %s\n", strings.Join(pairs, "; "))
		}
	}
	if ad.Graph != nil {
		g = ad.Graph
	}
	return g, last.Summary, err
}
