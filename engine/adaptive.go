package engine

// An adaptive run (config.StopWhen): rounds of items as ordinary engine
// work. Round r is the whole experiment built with the stop_when dataset
// cut to its first r*round items in a seeded order (the dataset's
// sample/sample_seed, whose k items are a prefix of its k+r) and run: the
// items of earlier rounds are the same nodes under the same keys, so they
// are cached and only the new items' nodes run. After each round the
// stop_when stage's outputs are read (Inspect) and stages/adaptive decides.
// Raising the target later (a narrower half_width, a higher level) walks
// the same rounds again from the cache, with no call repeated, and goes on
// where the earlier run stopped.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages/adaptive"
)

// AdaptiveRound is one round of an adaptive run.
type AdaptiveRound struct {
	Round int `json:"round"`
	// Items is the items in after this round; Scored those every model
	// has a score for (the board's).
	Items  int `json:"items"`
	Scored int `json:"scored"`
	// Calls is the calls this round sent (cached answers cost none).
	Calls    int               `json:"calls"`
	Decision adaptive.Decision `json:"decision"`
	Summary  *Summary          `json:"-"`
}

// AdaptiveSummary is an adaptive run: its rounds and why it stopped.
type AdaptiveSummary struct {
	Rounds []AdaptiveRound `json:"rounds"`
	// Models names the board's models (the score stage's instance keys),
	// in the order of Decision's indexes.
	Models []string `json:"models"`
	Total  int      `json:"total_items"`
	Reason string   `json:"reason"`
	Calls  int      `json:"calls"`
	// Graph is the last round's graph.
	Graph *Graph `json:"-"`
}

// Last is the last round.
func (s *AdaptiveSummary) Last() AdaptiveRound { return s.Rounds[len(s.Rounds)-1] }

// RunAdaptive runs exp round by round under its stop_when block. e.Exec
// must be set (the providers are the same every round). exp's stop_when
// dataset is replaced for each round and restored before it returns.
func (e *Engine) RunAdaptive(ctx context.Context, exp *config.Experiment, opts RunOptions) (*AdaptiveSummary, error) {
	sw := exp.StopWhen
	if sw == nil {
		return nil, fmt.Errorf("adaptive run: the experiment has no stop_when block")
	}
	orig := exp.Datasets[sw.Items]
	if orig == nil {
		return nil, fmt.Errorf("adaptive run: stop_when items: no dataset %q", sw.Items)
	}
	defer func() { exp.Datasets[sw.Items] = orig }()
	all, err := orig.Items()
	if err != nil {
		return nil, fmt.Errorf("adaptive run: dataset.%s: %w", sw.Items, err)
	}
	out := &AdaptiveSummary{Total: len(all)}
	var board *adaptive.Board
	seen := map[string]bool{}
	for r := 1; ; r++ {
		k := adaptive.Rounds(r, sw.Rule.Round, len(all))
		exp.Datasets[sw.Items] = orig.Sampled(k, sw.Seed)
		g, diags := Build(exp)
		if diags.HasErrors() {
			return out, &InputError{Diags: diags}
		}
		sum, err := e.Run(ctx, g, opts)
		if err != nil {
			return out, fmt.Errorf("adaptive run, round %d: %w", r, err)
		}
		out.Graph = g
		out.Calls += sum.LLMCalls
		models, scores, err := e.boardScores(g, sw)
		if err != nil {
			return out, fmt.Errorf("adaptive run, round %d: %w", r, err)
		}
		if board == nil {
			if board, err = adaptive.NewBoard(sw.Rule, len(models), len(all)); err != nil {
				return out, fmt.Errorf("adaptive run: %w", err)
			}
			out.Models = models
		} else if strings.Join(models, "\x00") != strings.Join(out.Models, "\x00") {
			return out, fmt.Errorf("adaptive run, round %d: the board's models changed (%v, then %v)", r, out.Models, models)
		}
		// The new items, in ID order: which items a round holds is the
		// seeded order's; the order within it is fixed so the sequences,
		// and the stopping round, are deterministic.
		var fresh []string
		for id := range scores {
			if !seen[id] {
				fresh = append(fresh, id)
			}
		}
		sort.Strings(fresh)
		for _, id := range fresh {
			seen[id] = true
			if err := board.Add(scores[id]); err != nil {
				return out, fmt.Errorf("adaptive run, round %d: %w", r, err)
			}
		}
		d := board.Decide(out.Calls)
		if k >= len(all) && !d.Stop {
			d.Stop, d.Reason = true, "exhausted" // items some model has no score for
		}
		out.Rounds = append(out.Rounds, AdaptiveRound{Round: r, Items: k, Scored: board.Items(), Calls: sum.LLMCalls, Decision: d, Summary: sum})
		if d.Stop {
			out.Reason = d.Reason
			return out, nil
		}
	}
}

// boardScores reads the stop_when stage's outputs: per item every model's
// score (the mean of its nodes' Field on that item). Items some model has
// no score for (a failed judgement, a dropped idea) are left out.
func (e *Engine) boardScores(g *Graph, sw *config.StopWhen) ([]string, map[string][]float64, error) {
	var insts []*config.StageInstance
	for _, si := range g.Exp.Stages {
		if si.Block == sw.Scores {
			insts = append(insts, si)
		}
	}
	if len(insts) == 0 {
		return nil, nil, fmt.Errorf("stop_when scores: no instance of %s", sw.Scores)
	}
	plan := e.Plan(g)
	models := make([]string, len(insts))
	type acc struct{ sum, n float64 }
	per := make([]map[string]*acc, len(insts))
	for m, si := range insts {
		models[m] = si.Key
		per[m] = map[string]*acc{}
		views, err := e.Inspect(plan, si.Address, InspectOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("stop_when scores: %w", err)
		}
		for _, v := range views {
			if v.Result == nil || len(v.Result.Output) == 0 {
				continue
			}
			var fields map[string]json.RawMessage
			if json.Unmarshal(v.Result.Output, &fields) != nil {
				continue
			}
			var x float64
			if raw, ok := fields[sw.Field]; !ok || json.Unmarshal(raw, &x) != nil {
				continue
			}
			if dropped, ok := fields["dropped"]; ok && string(dropped) == "true" {
				continue
			}
			a := per[m][v.Item]
			if a == nil {
				a = &acc{}
				per[m][v.Item] = a
			}
			a.sum += x
			a.n++
		}
	}
	out := map[string][]float64{}
	for item := range per[0] {
		row := make([]float64, len(insts))
		complete := true
		for m := range insts {
			a := per[m][item]
			if a == nil {
				complete = false
				break
			}
			row[m] = a.sum / a.n
		}
		if complete {
			out[item] = row
		}
	}
	return models, out, nil
}
