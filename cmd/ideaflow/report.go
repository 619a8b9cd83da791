package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
)

// report re-renders an experiment's reports from the cache: after editing a
// report block (labels, a pivot, a format) or to get the tables on another
// machine from a cache bundle, without running anything.

func (a *app) reportCmd() *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use:   "report [EXPERIMENT]",
		Short: "Re-render every report from the cache alone: no model or service call",
		Long: `Write every report of an experiment from the cache alone, as the last run
would have written it: no model or service call is made and the cache is only
read. A node whose last run failed stays failed (the report counts its items
as missing); deterministic nodes that are not cached (a report whose block
you edited, an aggregate whose params changed) are computed in memory from
their cached inputs, and named.

When the cache lacks model or service answers a report needs (run with other
-var values, or a bundle from another experiment), that report is not written
and the command names what it lacks and exits 2; the other reports are
written. Run the experiment to fill the cache.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := a.load(expArg(args))
			if err != nil {
				return err
			}
			if err := checkOutputs(outDir, ""); err != nil {
				return &exitError{exitBadInput, err}
			}
			store, err := a.openCacheReadOnly()
			if err != nil {
				return err
			}
			defer store.Close()
			e := &engine.Engine{Store: store, Log: a.log, CheckRecords: store.Recovery().RecordsUnreadable > 0}
			got, err := e.RenderReports(g, engine.RunOptions{ReportDir: outDir, Variables: variableStrings(g),
				GitCommit: gitCommit(g.Exp.Dir), Version: versionString()})
			var ie *engine.InputError
			if errors.As(err, &ie) && len(ie.Diags) > 0 {
				config.WriteDiagnostics(a.stderr, ie.Diags, g.Exp.Files)
				return &exitError{exitBadInput, errors.New("nothing was rendered")}
			}
			if got != nil && err == nil && len(got.Missing) == 0 && got.Summary != nil {
				// The experiment's page, over what was rendered; its summary
				// says nothing ran.
				if page, herr := a.writeHTMLPage(g, store, got.Summary, outDir); herr != nil {
					fmt.Fprintf(a.stderr, "warning: %s not written: %v\n", htmlPageName, herr)
				} else {
					got.Reports = append(got.Reports, page)
				}
			}
			if got != nil {
				printRendered(a, got)
			}
			switch {
			case err != nil:
				return &exitError{exitFailedNodes, err}
			case len(got.Missing) > 0:
				return &exitError{exitBadInput, fmt.Errorf("%d report(s) not rendered: the cache (%s) lacks results they need; run the experiment (ideaflow run) or import a cache bundle that holds them",
					len(got.Missing), a.cacheDirPath())}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&outDir, "out", "", "folder for report files (default results/ beside a folder experiment's files, results/<file stem>/ beside a one-file experiment)")
	a.addVarFlags(cmd)
	return cmd
}

func printRendered(a *app, r *engine.Rendered) {
	if len(r.Computed) > 0 {
		var parts []string
		for _, inst := range slices.Sorted(maps.Keys(r.Computed)) {
			parts = append(parts, fmt.Sprintf("%s (%d)", inst, r.Computed[inst]))
		}
		fmt.Fprintf(a.stdout, "computed from cached inputs (not in the cache; not saved): %s\n", strings.Join(parts, ", "))
	}
	if r.Failed > 0 {
		fmt.Fprintf(a.stdout, "%d node(s) failed in the last run that tried them; the reports count their items as missing (run again to retry them)\n", r.Failed)
	}
	for _, m := range r.Missing {
		fmt.Fprintf(a.stderr, "not rendered: %s\n", m)
	}
	for _, p := range r.Reports {
		fmt.Fprintf(a.stdout, "wrote %s\n", p)
	}
}
