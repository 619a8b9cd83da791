package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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
	if page.Provenance.Ideaflow == "" {
		// No report wrote a provenance file: what the CLI knows itself.
		page.Provenance = report.PageProvenance{Ideaflow: versionString(), ExperimentDigest: g.Exp.Source,
			GitCommit: gitCommit(g.Exp.Dir), Variables: variableStrings(g)}
	}
	items, err := a.pageItems(g, store)
	if err != nil {
		return "", err
	}
	page.Items = items
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

// readResults reads the files the run wrote: CSV tables (Markdown where a
// report wrote no CSV), SVG plots with their figure data, and provenance.
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
		case ext == ".csv" || (ext == ".md" && !have[stem+".csv"]):
			t, err := pageTable(stem, name, have)
			if err != nil {
				return err
			}
			page.Tables = append(page.Tables, t)
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

// pageItems collects, per item, each generating instance's ideas and every
// model call's judgement of them, from the cache. A node's ideas are the
// "ideas" of its output (generate_ideas); any other model call on an item
// is a judgement: a ranking (order, labels, target_rank) or ratings (its
// output's numbers), with the answer's text as its rationale.
func (a *app) pageItems(g *engine.Graph, store cache.Store) ([]report.PageItem, error) {
	e := &engine.Engine{Store: store, Log: a.log}
	p := e.Plan(g)
	type groupKey struct{ item, model string }
	var items []report.PageItem
	itemIndex := map[string]int{}
	groupIndex := map[groupKey]int{}
	group := func(item, model string) *report.ItemGroup {
		i, ok := itemIndex[item]
		if !ok {
			i = len(items)
			itemIndex[item] = i
			items = append(items, report.PageItem{ID: item})
		}
		k := groupKey{item, model}
		j, ok := groupIndex[k]
		if !ok {
			j = len(items[i].Groups)
			groupIndex[k] = j
			items[i].Groups = append(items[i].Groups, report.ItemGroup{Model: model})
		}
		return &items[i].Groups[j]
	}
	for _, addr := range g.StageOrder() {
		views, err := e.Inspect(p, addr, engine.InspectOptions{})
		if err != nil {
			return nil, fmt.Errorf("read %s for report.html: %w", addr, err)
		}
		for i := range views {
			v := &views[i]
			if v.Item == "" || v.Status != "cached" || v.Result == nil || v.Type == "dataset" {
				continue
			}
			var out map[string]json.RawMessage
			if json.Unmarshal(v.Result.Output, &out) != nil {
				continue
			}
			if isTrue(out["dropped"]) {
				continue
			}
			model := v.InstanceKey
			if model == "" && v.Generator != nil {
				model = v.Generator.Name
			}
			synthetic := v.Provenance != nil && v.Provenance.Synthetic
			if raw, ok := out["ideas"]; ok {
				var ideas []string
				if json.Unmarshal(raw, &ideas) == nil {
					gr := group(v.Item, model)
					gr.Ideas = append(gr.Ideas, ideas...)
					gr.Synthetic = gr.Synthetic || synthetic
				}
				continue
			}
			if v.Work != "call" {
				continue
			}
			j := judgement(v, out)
			j.Synthetic = synthetic
			gr := group(v.Item, model)
			gr.Judgements = append(gr.Judgements, j)
		}
	}
	return items, nil
}

func judgement(v *engine.NodeView, out map[string]json.RawMessage) report.Judgement {
	j := report.Judgement{Stage: strings.TrimPrefix(v.Block, "stage."), Slot: v.Slot, Label: v.Label, Rationale: v.Result.Raw}
	j.Judge = v.Result.ServedModel
	if j.Judge == "" {
		j.Judge = v.Result.Model
	}
	if raw, ok := out["order"]; ok {
		_ = json.Unmarshal(raw, &j.Order)
		_ = json.Unmarshal(out["labels"], &j.Shown)
		var rank float64
		if json.Unmarshal(out["target_rank"], &rank) == nil && rank > 0 {
			j.Score = &rank
		}
		return j
	}
	for k, raw := range out {
		var x float64
		if json.Unmarshal(raw, &x) == nil {
			if j.Scores == nil {
				j.Scores = map[string]float64{}
			}
			j.Scores[k] = x
		}
	}
	for _, k := range []string{"score", "rating", "overlap"} {
		if x, ok := j.Scores[k]; ok {
			j.Score = &x
			break
		}
	}
	if j.Score == nil && len(j.Scores) == 1 {
		for _, x := range j.Scores {
			j.Score = &x
		}
	}
	return j
}

func isTrue(raw json.RawMessage) bool {
	var b bool
	return json.Unmarshal(raw, &b) == nil && b
}

// pageTable reads report NAME's table for the page: from its Markdown file
// when it has one that reads as a report table (labels, formatted values,
// bold, notes and footnotes), else from its CSV (raw values), else the
// Markdown text as it is.
func pageTable(stem, name string, have map[string]bool) (report.PageTable, error) {
	var md []byte
	if have[stem+".md"] {
		b, err := os.ReadFile(stem + ".md")
		if err != nil {
			return report.PageTable{}, fmt.Errorf("read table %s.md: %w", stem, err)
		}
		if t, ok := report.TableFromMarkdown(name, string(b)); ok {
			return t, nil
		}
		md = b
	}
	if !have[stem+".csv"] {
		return report.PageTable{Name: name, Markdown: string(md)}, nil
	}
	b, err := os.ReadFile(stem + ".csv")
	if err != nil {
		return report.PageTable{}, fmt.Errorf("read table %s.csv: %w", stem, err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return report.PageTable{}, fmt.Errorf("read table %s.csv: %w", stem, err)
	}
	t := report.PageTable{Name: name}
	if len(recs) == 0 {
		return t, nil
	}
	t.Header = recs[0]
	t.Numeric = make([]bool, len(t.Header))
	for i := range t.Numeric {
		t.Numeric[i] = len(recs) > 1
		for _, r := range recs[1:] {
			if _, err := strconv.ParseFloat(r[i], 64); err != nil && r[i] != "" {
				t.Numeric[i] = false
			}
		}
	}
	for _, r := range recs[1:] {
		row := make([]report.PageCell, len(r))
		for i, v := range r {
			row[i] = report.PageCell{Value: v}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
