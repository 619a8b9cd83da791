package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/literature"
)

// evidence writes the literature replies an experiment's cache holds as a
// corpus file (stages/literature/record.go), so that a run made against
// Semantic Scholar can be run again offline, on the same evidence, by
// whoever has the file: point the literature model at a provider of kind
// "corpus" whose path is the file.

func (a *app) evidenceCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "evidence [EXPERIMENT] --out FILE",
		Short: "Write the cached literature replies of an experiment as a corpus file that replays them offline",
		Long: `Write every literature request of an experiment that the cache has a reply
for (searches, snippets, references, recommendations, title matches, look-ups),
with that reply, as a JSONL file the corpus provider kind replays:

  ideaflow run experiments/scholareval/coverage.hcl -var offline=false
  ideaflow evidence experiments/scholareval/coverage.hcl -var offline=false --out evidence.jsonl
  ideaflow run experiments/scholareval/coverage.hcl -var corpus=evidence.jsonl   # offline, the same evidence

A corpus of recorded replies answers exactly the requests that were recorded,
byte for byte; any other request (a changed query, limit, as_of or cutoff)
fails and says so. Requests without a cached reply are counted on stderr: run
the experiment first. The file holds no key or provider setting.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{exitBadInput, fmt.Errorf("--out is required: the corpus file to write")}
			}
			path := expArg(args)
			g, err := a.load(path)
			if err != nil {
				return err
			}
			store, closeStore, err := a.planStore("no literature reply is cached")
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
			xs, missing, err := literatureExchanges(e, p, g)
			if err != nil {
				return &exitError{exitFailedNodes, err}
			}
			var buf bytes.Buffer
			n, err := literature.WriteEvidence(&buf, xs)
			if err != nil {
				return &exitError{exitFailedNodes, fmt.Errorf("evidence of %s: %w", g.Exp.Name, err)}
			}
			if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
				return &exitError{exitFailedNodes, fmt.Errorf("write evidence: %w", err)}
			}
			fmt.Fprintf(a.stdout, "wrote %d recorded literature exchange(s) to %s (%s)\n", n, out, countOps(xs))
			if missing > 0 {
				fmt.Fprintf(a.stderr, "note: %d literature request(s) of %s have no cached reply and are not in the file (run the experiment, then record again)\n", missing, g.Exp.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the corpus file to write (JSONL)")
	a.addVarFlags(cmd)
	return cmd
}

// literatureExchanges collects, from every instance of a stage type that
// asks literature operations, each service node's request and its cached
// reply; missing counts the nodes with no cached reply. Only those
// instances are inspected: rendering every prompt of an experiment to find
// its searches would cost a re-render of each.
func literatureExchanges(e *engine.Engine, p *engine.Plan, g *engine.Graph) ([]literature.Exchange, int, error) {
	var xs []literature.Exchange
	missing := 0
	for _, inst := range g.Instances {
		t, ok := stages.Lookup(inst.Type)
		su, isService := t.(stages.ServiceUser)
		if !ok || !isService || !asksLiterature(su.ServiceOps(inst.Params)) {
			continue
		}
		views, err := e.Inspect(p, inst.Address, engine.InspectOptions{Render: true})
		if err != nil {
			var ae *engine.AddressError
			if errors.As(err, &ae) && ae.Pending {
				continue // laid out only after its inputs run: nothing cached under it
			}
			return nil, 0, err
		}
		for _, v := range views {
			if v.Work != "service" || v.Service == nil || !slices.Contains(literature.Ops, v.Service.Op) {
				continue
			}
			if v.Result == nil || v.Result.Planned {
				missing++
				continue
			}
			reply := json.RawMessage(v.Result.Raw) // the reply, kept beside an output derived from it
			if len(reply) == 0 {
				reply = v.Result.Output // the output is the reply
			}
			xs = append(xs, literature.Exchange{Op: v.Service.Op, Request: json.RawMessage(v.Service.Body), Reply: reply})
		}
	}
	return xs, missing, nil
}

func asksLiterature(ops map[string][]string) bool {
	for _, list := range ops {
		for _, op := range list {
			if strings.HasPrefix(op, "literature.") {
				return true
			}
		}
	}
	return false
}

// countOps says how many exchanges of each operation, in Ops order.
func countOps(xs []literature.Exchange) string {
	n := map[string]int{}
	for _, x := range xs {
		n[x.Op]++
	}
	var parts []string
	for _, op := range literature.Ops {
		if n[op] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[op], strings.TrimPrefix(op, "literature.")))
		}
	}
	if len(parts) == 0 {
		return "none cached"
	}
	return strings.Join(parts, ", ") + " replies, before removing repeats"
}
