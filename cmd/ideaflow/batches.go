package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/batchexec"
	"github.com/ideaflow/ideaflow/stages/llm"
	"github.com/ideaflow/ideaflow/stages/llm/batch"
)

// batchDir is where the batch journals live: beside the cache they feed,
// so that any run on this cache picks up the batches another left.
func (a *app) batchDir() string { return filepath.Join(a.cacheDirPath(), "batches") }

// executor is the run's executor: the LocalExecutor, or, when a provider
// sets batch = true, the batch executor around one (bx, to close after
// the run). detachRun ends the run when --detach leaves only running
// batches.
func (a *app) executor(g *engine.Graph, detach bool, detachRun func()) (engine.Executor, *batchexec.Executor) {
	providers := g.Exp.LLMProviders()
	if !batchexec.Any(providers) {
		return engine.NewLocalExecutor(providers, a.log), nil
	}
	bx := batchexec.New(providers, a.log, batchexec.Options{Dir: a.batchDir(), Detach: detach, OnDetach: detachRun})
	return bx, bx
}

// closeBatches closes the batch executor after a run (durable: the run's
// records are written, so the answers handed over need not be collected
// again) and says what is still in flight.
func closeBatches(a *app, bx *batchexec.Executor, durable bool) string {
	if bx == nil {
		return ""
	}
	open := bx.Open()
	if err := bx.Close(durable); err != nil {
		fmt.Fprintf(a.stderr, "warning: batch journal: %v\n", err)
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(open)) {
		reqs, n := 0, 0
		for _, s := range open[name] {
			if s.Collected {
				continue
			}
			n++
			reqs += len(s.Keys)
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d request(s) in %d batch(es) of provider %s in flight", reqs, n, name))
		}
	}
	if len(parts) == 0 {
		return "no batch in flight"
	}
	return strings.Join(parts, ", ")
}

func (a *app) batchesCmd() *cobra.Command {
	var cancel string
	cmd := &cobra.Command{
		Use:   "batches [EXPERIMENT]",
		Short: "List the batches in flight for the experiment's batch providers (batch = true), or cancel one",
		Long: "List, from the journals beside the cache, the batch submissions a run made and has not collected yet: " +
			"a later `ideaflow run` collects them. --cancel asks the provider to cancel one; the next run collects what ran " +
			"and fails the nodes of the requests the cancel stopped (a cancelled request is not asked again on its own), " +
			"and a run after that asks them again.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := a.load(expArg(args))
			if err != nil {
				return err
			}
			providers := g.Exp.LLMProviders()
			names := slices.Sorted(maps.Keys(providers))
			found := false
			for _, name := range names {
				p := providers[name]
				if !batchexec.IsBatch(p) {
					continue
				}
				found = true
				path := batchexec.JournalPath(a.batchDir(), p)
				if cancel != "" {
					done, err := cancelBatch(cmd.Context(), p, path, cancel)
					if err != nil {
						return &exitError{exitFailedNodes, err}
					}
					if done {
						fmt.Fprintf(a.stdout, "asked provider %s to cancel %s; the next run collects what ran\n", name, cancel)
						return nil
					}
					continue
				}
				if err := listBatches(a.stdout, name, path); err != nil {
					return &exitError{exitFailedNodes, err}
				}
			}
			switch {
			case !found:
				fmt.Fprintf(a.stdout, "%s has no provider with batch = true.\n", g.Exp.Name)
			case cancel != "":
				return &exitError{exitBadInput, fmt.Errorf("no open submission %q; `ideaflow batches` lists them", cancel)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&cancel, "cancel", "", "cancel this submission (its id, as listed)")
	a.addVarFlags(cmd)
	return cmd
}

// listBatches prints a journal's open submissions, read without a
// connection to the provider (and without its lock: a run may be writing
// it; its last line may then be torn, and is left out).
func listBatches(w io.Writer, provider, path string) error {
	entries, err := readJournal(path)
	if err != nil {
		return err
	}
	subs, err := batch.Replay(entries)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(subs) == 0 {
		fmt.Fprintf(w, "provider %s: no batch in flight\n", provider)
		return nil
	}
	fmt.Fprintf(w, "provider %s: %d submission(s) in flight (journal %s)\n", provider, len(subs), path)
	for _, s := range subs {
		state := map[batch.Op]string{batch.OpIntent: "recorded, not uploaded", batch.OpUploaded: "uploaded, batch not confirmed",
			batch.OpSubmitted: "submitted"}[s.State]
		id := s.BatchID
		if id == "" {
			id = "-"
		}
		fmt.Fprintf(w, "  %s  batch %s  %s  %d request(s) for %s  since %s\n", s.ID, id, state, len(s.Keys), s.Model,
			time.Unix(s.Since, 0).UTC().Format("2006-01-02 15:04:05Z"))
	}
	return nil
}

// readJournal reads a journal's entries; a missing journal has none.
func readJournal(path string) ([]batch.Entry, error) { return batch.ReadFile(path) }

// cancelBatch cancels submission id if this provider's journal has it.
func cancelBatch(ctx context.Context, p llm.Provider, path, id string) (bool, error) {
	entries, err := readJournal(path)
	if err != nil {
		return false, err
	}
	subs, err := batch.Replay(entries)
	if err != nil {
		return false, err
	}
	if !slices.ContainsFunc(subs, func(s batch.Submission) bool { return s.ID == id }) {
		return false, nil
	}
	c, err := llm.New(p)
	if err != nil {
		return false, err
	}
	j, err := batch.OpenFile(path)
	if err != nil {
		return false, err
	}
	defer j.Close()
	bc, err := batch.New(c, j, batch.Options{})
	if err != nil {
		return false, err
	}
	return true, bc.Cancel(ctx, id)
}

// batchPlanText is plan's line on the calls that go in batches: how many,
// in how many rounds, and the estimate at batch prices beside the
// synchronous one.
func batchPlanText(b *engine.BatchPlan, e *engine.Estimate) string {
	rounds := "1 batch round"
	if b.Rounds != 1 {
		rounds = fmt.Sprintf("%d batch rounds", b.Rounds)
	}
	s := fmt.Sprintf("Batches (provider %s): %d of the %d model calls in %s (one per stage depth), ~$%.4f at batch prices against ~$%.4f synchronously",
		strings.Join(b.Providers, ", "), b.Calls, e.LLMCalls, rounds, b.CostUSD, b.SyncCostUSD)
	if b.Calls < e.LLMCalls {
		s += fmt.Sprintf("; the whole estimate at batch prices: ~$%.4f", e.CostUSD-b.SyncCostUSD+b.CostUSD)
	}
	return s + "."
}
