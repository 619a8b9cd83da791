package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/report"
)

// htmlPageName is the experiment's one page, written beside its reports;
// partialPageName is the page of a run that left nodes undone, written
// beside it so a complete page is never replaced by a partial one (as a
// report's NAME.partial.md is written beside NAME.md).
const (
	htmlPageName    = "report.html"
	partialPageName = "report.partial.html"
)

// pageNoticeNodes is the graph size from which a run says, in a line, that
// it is writing the page: from there the page can take seconds to minutes.
const pageNoticeNodes = 20_000

// writeHTMLPage writes report.html after a run: the run's summary, the
// tables and plots the report and plot nodes just wrote (sum.Reports), and
// the cached outputs of every item-level node, laid out by
// report.WriteHTML. It is written here, not by a stage, because a stage's
// output is cached content and cannot hold what one run did (see
// stages/report/html.go). It returns the page's path.
func (a *app) writeHTMLPage(g *engine.Graph, store cache.Store, sum *engine.Summary, dir string) (string, error) {
	if dir == "" {
		dir = g.Exp.ResultsDir
	}
	path := filepath.Join(dir, htmlPageName)
	incomplete := sum.Incomplete || sum.Interrupted || sum.BudgetExhausted
	if incomplete {
		path = filepath.Join(dir, partialPageName)
	}
	if !incomplete && current(path, sum) {
		// Same results as the page shows (a warm re-run): collecting the
		// items again costs seconds at 200k nodes and would change nothing
		// but the summary of a run that computed nothing.
		fmt.Fprintf(a.stdout, "%s is current (the results it shows are unchanged)\n", path)
		return path, nil
	}
	page := &report.Page{Experiment: g.Exp.Name, ResultsDigest: sum.ResultsDigest,
		Partial: sum.Interrupted || sum.BudgetExhausted || sum.Nodes.Failed+sum.Nodes.Skipped > 0}
	page.Synthetic, page.SyntheticAll, page.SyntheticText = syntheticOf(sum)
	page.Summary = report.RunSummary{
		Total: sum.Nodes.Total, Cached: sum.Nodes.Cached, Ran: sum.Nodes.Ran, Failed: sum.Nodes.Failed, Skipped: sum.Nodes.Skipped,
		LLMCalls: sum.LLMCalls, ServiceCalls: sum.ServiceCalls, TokensIn: sum.Tokens.Input, TokensOut: sum.Tokens.Output,
		CostUSD: sum.CostUSD, Unpriced: sum.Unpriced, WallSeconds: sum.WallSeconds, ServedModels: sum.ServedModels,
	}
	for _, a := range sum.Answered {
		page.Summary.Answered = append(page.Summary.Answered, report.PageAnswerer{Name: a.Name(), Nodes: a.Nodes, Synthetic: a.Synthetic})
	}
	for _, f := range sum.Failures {
		page.Summary.Failures = append(page.Summary.Failures, f.Address+": "+f.Error)
	}
	if err := readResults(page, sum.Reports); err != nil {
		return "", err
	}
	items, tables, err := a.pageContent(g, store)
	if err != nil {
		return "", err
	}
	page.Items, page.Tables = items, tables
	if page.Provenance.Ideaflow == "" {
		// No report wrote a provenance file: what the CLI knows itself.
		page.Provenance = report.PageProvenance{Ideaflow: versionString(), ExperimentDigest: g.Exp.Source,
			GitCommit: gitCommit(g.Exp.Dir), Variables: variableStrings(g)}
	}
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, page); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create report folder: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if !incomplete {
		// A complete page supersedes the partial one an earlier run left.
		_ = os.Remove(filepath.Join(dir, partialPageName))
	}
	return path, nil
}

// syntheticOf says, from the records the run read and wrote (sum), whether
// some result rests on an answer of the mock, whether every answer is the
// mock's, and if not how many are.
func syntheticOf(sum *engine.Summary) (some, all bool, text string) {
	if !sum.Synthetic {
		return false, false, ""
	}
	nodes, mock := 0, 0
	for _, a := range sum.Answered {
		nodes += a.Nodes
		if a.Synthetic {
			mock += a.Nodes
		}
	}
	if mock == nodes {
		return true, true, ""
	}
	return true, false, fmt.Sprintf("%d of %d model and service nodes were answered by the mock", mock, nodes)
}

// current reports whether the page at path shows exactly sum's results and
// may stay: nothing failed or was skipped (a partial page is always
// rewritten), and the digest in its head is sum's.
func current(path string, sum *engine.Summary) bool {
	if sum.ResultsDigest == "" || sum.Nodes.Failed+sum.Nodes.Skipped > 0 || sum.Interrupted || sum.BudgetExhausted {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	return report.PageDigest(head[:n]) == sum.ResultsDigest
}

// readResults reads the files the run wrote: SVG plots with their figure
// data, and provenance. Tables come from the nodes' outputs (pageContent).
func readResults(page *report.Page, paths []string) error {
	have := map[string]bool{}
	for _, p := range paths {
		have[p] = true
	}
	for _, p := range paths {
		ext := filepath.Ext(p)
		stem := strings.TrimSuffix(p, ext)
		name := filepath.Base(stem)
		switch {
		case strings.HasSuffix(p, ".provenance.json"):
			if page.Provenance.Ideaflow != "" {
				continue // every report's provenance is the run's
			}
			var prov engine.Provenance
			if err := readJSON(p, &prov); err != nil {
				return err
			}
			page.Provenance = report.PageProvenance{Ideaflow: prov.Ideaflow, ExperimentDigest: prov.ExperimentDigest,
				GitCommit: prov.GitCommit, Variables: prov.Variables, Datasets: prov.Datasets}
		case ext == ".svg":
			b, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("read plot %s: %w", p, err)
			}
			pl := report.PagePlot{Name: name, SVG: string(b)}
			if have[stem+".json"] {
				var fig report.Figure
				if err := readJSON(stem+".json", &fig); err == nil {
					pl.Figure = &fig
				}
			}
			page.Plots = append(page.Plots, pl)
		}
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// pageContent collects, from the cache, what every node's stage type
// presents (stages.Present): per item, each generating instance's ideas and
// the judgements of them, and the tables (reports, leaderboards) in the
// experiment's order. The CLI knows no stage type: a node's ideas,
// judgements and tables are what its presenter says. A group is the
// node's instance key, else its generator; an idea a stage was given
// (Given) is shown once per item.
func (a *app) pageContent(g *engine.Graph, store cache.Store) ([]report.PageItem, []report.PageTable, error) {
	e := &engine.Engine{Store: store, Log: a.log}
	p := e.Plan(g)
	type groupKey struct{ item, model string }
	var items []report.PageItem
	var tables []report.PageTable
	itemIndex := map[string]int{}
	groupIndex := map[groupKey]int{}
	given := map[groupKey]bool{} // item, idea text
	item := func(id string) *report.PageItem {
		i, ok := itemIndex[id]
		if !ok {
			i = len(items)
			itemIndex[id] = i
			items = append(items, report.PageItem{ID: id})
		}
		return &items[i]
	}
	group := func(id, model string) *report.ItemGroup {
		it := item(id)
		k := groupKey{id, model}
		j, ok := groupIndex[k]
		if !ok {
			j = len(it.Groups)
			groupIndex[k] = j
			it.Groups = append(it.Groups, report.ItemGroup{Model: model})
		}
		return &it.Groups[j]
	}
	for _, addr := range g.StageOrder() {
		views, err := e.Inspect(p, addr, engine.InspectOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("read %s for report.html: %w", addr, err)
		}
		nodes, err := presentViews(g, views)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s for report.html: %w", addr, err)
		}
		for _, n := range nodes {
			v, pr := n.view, n.pr
			if pr == nil {
				continue
			}
			tables = append(tables, pr.Tables...)
			if v.Item == "" || pr.Dropped || (len(pr.Ideas) == 0 && len(pr.Judgements) == 0) {
				continue
			}
			model := v.InstanceKey
			if model == "" && v.Generator != nil {
				model = v.Generator.Name
			}
			synthetic := v.Provenance != nil && v.Provenance.Synthetic
			var generated []string
			for _, idea := range pr.Ideas {
				if !idea.Given {
					generated = append(generated, idea.Text)
					continue
				}
				if k := (groupKey{v.Item, idea.Text}); !given[k] {
					given[k] = true
					it := item(v.Item)
					it.Given = append(it.Given, idea.Text)
				}
			}
			if len(generated) > 0 {
				gr := group(v.Item, model)
				gr.Ideas = append(gr.Ideas, generated...)
				gr.Synthetic = gr.Synthetic || synthetic
			}
			for _, j := range pr.Judgements {
				gr := group(v.Item, model)
				gr.Judgements = append(gr.Judgements, report.Judgement{Dimension: j.Dimension, Judge: j.Judge, Slot: v.Slot, Label: v.Label,
					Shown: j.Shown, Order: j.Order, Score: j.Score, Verdict: j.Verdict, Scores: j.Scores, Rationale: j.Rationale, Synthetic: synthetic})
			}
		}
	}
	return items, tables, nil
}
