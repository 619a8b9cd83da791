package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages/expect"
)

// exitDrift is `check`'s: some published value was not reproduced (a
// drift beyond its tolerance, or no measured value at all).
const exitDrift = 4

// checked is one expect's verdict as check prints it.
type checked struct {
	Address string `json:"address"`
	expect.Verdict
	// Synthetic says the measured value rests on the mock's answers, as
	// the records say.
	Synthetic bool `json:"synthetic,omitempty"`

	judged bool // the verdict was read: Published and Tolerance are known
}

func (a *app) checkCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check [EXPERIMENT]",
		Short: "Compare every expect block's published value or order with the cached result: pass or drift (exit 4)",
		Long: `Read every expect block of the experiment from the cache (read-only) and
print, for each, the published value and its tolerance beside the measured
value (with its interval and item count when the score gives them):

  expect "table1_novelty" {
    for_each  = local.table1            # "MODEL SCENARIO" => the paper's value
    score     = stage.insight_score.novelty[each.key]
    published = each.value
    tolerance = 0.05
    source    = "IdeaBench Table 1"
  }

or, for an order (a leaderboard's ranking), Kendall's tau-b between the
run's values and the published ones over the instances both have:

  expect "board_order" {
    scores           = stage.liveideabench_score.average   # one instance per model
    published_values = { for r in csvdecode(file("board.csv")) : r.Model => tonumber(r.Average) }
    min_tau_b        = 0.8
  }

An expect whose score is cached is judged without a call, even if the
expect was added after the run. Exit 0 when every expect passes, 4 when
one drifts or has no measured value (its score failed or never ran), 2 on
bad input or an experiment without expect blocks.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := a.load(expArg(args))
			if err != nil {
				return err
			}
			var addrs []string
			for _, addr := range g.StageOrder() {
				if strings.HasPrefix(addr, "expect.") {
					addrs = append(addrs, addr)
				}
			}
			if len(addrs) == 0 {
				return &exitError{exitBadInput, fmt.Errorf("%s has no expect block: add one per published value, e.g. expect \"x\" { score = stage.insight_score.novelty, published = 0.61, tolerance = 0.05 }", g.Exp.Name)}
			}
			store, closeStore, err := a.planStore("no expect has a measured value")
			if err != nil {
				return err
			}
			defer closeStore()
			e := &engine.Engine{Store: store, Log: a.log}
			p := e.Plan(g)
			if p.Diags.HasErrors() {
				config.WriteDiagnostics(a.stderr, p.Diags, g.Exp.Files)
				return &exitError{exitBadInput, fmt.Errorf("%d error(s) laying out %s", len(p.Diags.Errs()), g.Exp.Name)}
			}
			config.WriteDiagnostics(a.stderr, config.Dedupe(p.Diags), g.Exp.Files)
			var out []checked
			for _, addr := range addrs {
				views, err := e.Inspect(p, addr, engine.InspectOptions{})
				var ae *engine.AddressError
				switch {
				case errors.As(err, &ae):
					return &exitError{exitBadInput, fmt.Errorf("%s: %w", g.Exp.Name, err)}
				case err != nil:
					return &exitError{exitFailedNodes, err}
				}
				for _, v := range views {
					out = append(out, verdictOf(v))
				}
			}
			counts := map[string]int{}
			for _, c := range out {
				counts[c.Status]++
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
			} else {
				printChecks(a, g.Exp.Name, out, counts)
			}
			if counts["drift"]+counts["missing"] > 0 {
				return &exitError{exitDrift, fmt.Errorf("%d of %d published value(s) not reproduced", counts["drift"]+counts["missing"], len(out))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdicts as a JSON array")
	a.addVarFlags(cmd)
	return cmd
}

// verdictOf reads an expect node's verdict: its cached output, or the one
// the plan computed from cached inputs; without either (its score is not
// computed yet), missing.
func verdictOf(v engine.NodeView) checked {
	c := checked{Address: strings.TrimSuffix(v.Address, "/*")}
	if v.Result != nil && len(v.Result.Output) > 0 {
		if err := json.Unmarshal(v.Result.Output, &c.Verdict); err == nil {
			c.judged = true
			c.Synthetic = v.Provenance != nil && v.Provenance.Synthetic
			return c
		}
	}
	c.Status = "missing"
	switch {
	case v.Failure != nil:
		c.Reason = "failed: " + v.Failure.Error
	case v.PrepareError != "":
		c.Reason = "failed: " + v.PrepareError
	default:
		c.Reason = "not computed: its score has not run; run the experiment (or `ideaflow run --offline` on a cache that holds its answers)"
		if v.Reason != "" {
			c.Reason += " (" + v.Reason + ")"
		}
	}
	return c
}

// orderText is an order verdict's line: tau-b against its bound, over how
// many rows, and the keys on one side only.
func orderText(c checked) string {
	o := c.Order
	var b strings.Builder
	if c.Measured != nil {
		fmt.Fprintf(&b, "tau-b %.3f over %d rows, at least %.3f for the published order", *c.Measured, len(o.Rows), o.MinTauB)
	} else {
		fmt.Fprintf(&b, "order over %d rows (tau-b at least %.3f): %s", len(o.Rows), o.MinTauB, c.Reason)
	}
	if len(o.Unpublished) > 0 {
		fmt.Fprintf(&b, "; not published, left out: %s", strings.Join(o.Unpublished, ", "))
	}
	if len(o.Unrun) > 0 {
		fmt.Fprintf(&b, "; published, not in this run: %d", len(o.Unrun))
	}
	return b.String()
}

func printChecks(a *app, name string, out []checked, counts map[string]int) {
	fmt.Fprintf(a.stdout, "Published values of %s beside this cache's results:\n\n", name)
	width := 0
	for _, c := range out {
		width = max(width, len(c.Address))
	}
	synthetic := 0
	for _, c := range out {
		line := fmt.Sprintf("  %-*s  %-7s", width, c.Address, c.Status)
		switch {
		case c.Order != nil:
			line += "  " + orderText(c)
		case c.Measured != nil:
			line += fmt.Sprintf("  measured %.3f", *c.Measured)
			if c.CILow != nil {
				line += fmt.Sprintf(" [%.3f, %.3f]", *c.CILow, *c.CIHigh)
			}
			if c.Count != nil {
				line += fmt.Sprintf(" over %d", *c.Count)
			}
			line += fmt.Sprintf(", published %.3f ± %.3f (delta %+.3f)", *c.Published, *c.Tolerance, *c.Delta)
		case c.judged && c.Published != nil:
			line += fmt.Sprintf("  published %.3f ± %.3f: %s", *c.Published, *c.Tolerance, c.Reason)
		default:
			line += "  " + c.Reason
		}
		if c.Source != "" {
			line += "  (" + c.Source + ")"
		}
		if c.Synthetic {
			line += "  SYNTHETIC"
			synthetic++
		}
		fmt.Fprintln(a.stdout, line)
	}
	fmt.Fprintf(a.stdout, "\n%d expect(s): %d pass, %d drift, %d missing.\n", len(out), counts["pass"], counts["drift"], counts["missing"])
	if synthetic > 0 {
		fmt.Fprintf(a.stdout, "SYNTHETIC: %d of the measured values rest on answers of the mock provider; they reproduce nothing.\n", synthetic)
	}
}
