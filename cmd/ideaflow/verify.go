package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/engine"
)

// parseFraction reads "5%" or "0.05" as 0.05.
func parseFraction(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err == nil && pct {
		f /= 100
	}
	if err != nil || f <= 0 || f > 1 {
		return 0, fmt.Errorf("--sample %q: give a share of the cached calls, as 5%% or 0.05 (more than 0, at most 100%%)", s)
	}
	return f, nil
}

func (a *app) verifyCmd() *cobra.Command {
	var sample string
	var seed int64
	var maxCost float64
	cmd := &cobra.Command{
		Use:   "verify [EXPERIMENT]",
		Short: "Without --sample: recompute the cached deterministic nodes; with --sample 5%: ask a seeded sample of cached calls again and say how far answers moved (the cache is never changed)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			a.lastRunVars = true // the configuration that was run
			g, err := a.load(expArg(args))
			if err != nil {
				return err
			}
			store, err := a.openCacheReadOnly()
			if err != nil {
				return err
			}
			defer store.Close()
			if sample == "" {
				return a.verify(g, store)
			}
			frac, err := parseFraction(sample)
			if err != nil {
				return &exitError{exitBadInput, err}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			e := &engine.Engine{Store: store, Log: a.log, Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), a.log)}
			rep, err := e.VerifySample(ctx, g, engine.SampleOptions{Fraction: frac, Seed: seed, MaxCost: maxCost})
			if rep != nil {
				printSample(a, rep, sample, seed)
			}
			if err != nil {
				return &exitError{exitInterrupted, err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&sample, "sample", "", "ask this share of the cached model calls again (5% or 0.05), chosen by --seed")
	f.Int64Var(&seed, "seed", 1, "which calls the sample holds: the same seed and cache give the same sample")
	f.Float64Var(&maxCost, "max-cost", 0, "send no call whose estimate would take the cost of the sample past this many USD")
	a.addVarFlags(cmd)
	return cmd
}

func printSample(a *app, rep *engine.SampleReport, sample string, seed int64) {
	sampled := 0
	for _, pd := range rep.Providers {
		sampled += pd.Sampled
	}
	fmt.Fprintf(a.stdout, "asked again %d of %d cached model call(s) (--sample %s, seed %d), $%.4f; the cache was not changed.\n", sampled, rep.Cached, sample, seed, rep.CostUSD)
	for _, p := range slices.Sorted(maps.Keys(rep.Providers)) {
		pd := rep.Providers[p]
		rate := func(n int) string {
			if pd.Asked == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(pd.Asked))
		}
		fmt.Fprintf(a.stdout, "  provider %s: %d asked, %d same answer (%s exact match), %d same parsed output (%s), %d failed; scores: %d compared, %d moved, mean |delta| %.4g\n",
			p, pd.Asked, pd.SameAnswer, rate(pd.SameAnswer), pd.SameOutput, rate(pd.SameOutput), pd.Failed, pd.Scores, pd.ScoresMoved, pd.MeanAbsDelta)
	}
	if rep.OverBudget > 0 {
		fmt.Fprintf(a.stdout, "  %d sampled call(s) not sent: --max-cost would have been passed\n", rep.OverBudget)
	}
}
