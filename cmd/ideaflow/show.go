package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/engine/config"
	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func (a *app) showCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ADDRESS [EXPERIMENT]",
		Short: "Show nodes as sent and answered: request, raw answer, output, usage, attempts, key parts, failure",
		Long: `Show one node, every node of an item, or every node of a stage instance or
block, read-only from the cache:

  ideaflow show 'stage.generate_ideas.main["gpt4o"]/qs-membrane/sample 0'
  ideaflow show 'stage.generate_ideas.main["gpt4o"]/qs-membrane' experiments/quickstart
  ideaflow show report.table1

A model node's request is rendered again from its cached inputs, exactly as
the stage renders it to send. A node not in the cache shows why it must run.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, views, err := a.inspect(args[0], expArg(args[1:]), engine.InspectOptions{Render: true})
			if err != nil {
				return err
			}
			// How each node reads, as its stage type presents it.
			nodes, err := presentViews(g, views)
			if err != nil {
				return &exitError{exitFailedNodes, err}
			}
			if asJSON {
				out := make([]shownNode, len(views)) // an empty instance is [], not null
				for i := range views {
					out[i] = shownNode{NodeView: &views[i], Reads: readsAs(nodes[i].pr)}
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			if len(views) == 0 {
				// Zero is a size: every item of the instance expanded to none.
				fmt.Fprintf(a.stdout, "%s: 0 nodes (laid out and complete: no item gave it a node)\n", args[0])
			}
			for i, v := range views {
				if i > 0 {
					fmt.Fprintln(a.stdout)
				}
				printNode(a.stdout, &v)
				printReads(a.stdout, nodes[i].pr)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the nodes as a JSON array")
	a.addVarFlags(cmd)
	return cmd
}

// inspect loads the experiment, plans it against the cache read-only and
// returns the nodes at address. Before the first run the default cache does
// not exist yet; as for plan, every node is then reported as to run.
func (a *app) inspect(address, path string, opts engine.InspectOptions) (*engine.Graph, []engine.NodeView, error) {
	g, err := a.load(path)
	if err != nil {
		return nil, nil, err
	}
	views, err := a.inspectGraph(g, address, opts)
	return g, views, err
}

func (a *app) inspectGraph(g *engine.Graph, address string, opts engine.InspectOptions) ([]engine.NodeView, error) {
	store, closeStore, err := a.planStore("no node has a result")
	if err != nil {
		return nil, err
	}
	defer closeStore()
	e := &engine.Engine{Store: store, Log: a.log}
	p := e.Plan(g)
	if p.Diags.HasErrors() {
		config.WriteDiagnostics(a.stderr, p.Diags, g.Exp.Files)
		return nil, &exitError{exitBadInput, fmt.Errorf("%d error(s) laying out %s", len(p.Diags.Errs()), g.Exp.Name)}
	}
	views, err := e.Inspect(p, address, opts)
	var ae *engine.AddressError
	switch {
	case errors.As(err, &ae):
		return nil, &exitError{exitBadInput, fmt.Errorf("%s: %w", g.Exp.Name, err)}
	case err != nil:
		return nil, &exitError{exitFailedNodes, err}
	}
	return views, nil
}

// shownNode is one node as show --json prints it: the engine's view and,
// beside it, how its stage type presents the output ("reads_as").
type shownNode struct {
	*engine.NodeView
	Reads *nodeReads `json:"reads_as,omitempty"`
}

// nodeReads is a node's presentation as show prints it.
type nodeReads struct {
	Ideas      []stages.Idea      `json:"ideas,omitempty"`
	Judgements []stages.Judgement `json:"judgements,omitempty"`
	Tables     []string           `json:"tables,omitempty"` // titles
	Rows       int                `json:"export_rows"`
	Dropped    bool               `json:"dropped,omitempty"`
	Helper     bool               `json:"helper,omitempty"`
}

func readsAs(pr *stages.Presented) *nodeReads {
	if pr == nil {
		return nil
	}
	r := &nodeReads{Ideas: pr.Ideas, Judgements: pr.Judgements, Rows: len(pr.Rows), Dropped: pr.Dropped, Helper: pr.Helper}
	for _, t := range pr.Tables {
		r.Tables = append(r.Tables, t.Title)
	}
	return r
}

// printReads writes how a node reads: its ideas, its judgements (judge,
// what was judged, the verdict) and tables, as report.html shows them.
func printReads(w io.Writer, pr *stages.Presented) {
	if pr == nil || pr.Helper || (len(pr.Ideas) == 0 && len(pr.Judgements) == 0 && len(pr.Tables) == 0) {
		return
	}
	fmt.Fprintln(w, "\nreads as:")
	for i, idea := range pr.Ideas {
		what := "idea"
		if idea.Given {
			what = "idea given"
		}
		fmt.Fprintf(w, "  %s %d: %s\n", what, i, shorten(strings.Join(strings.Fields(idea.Text), " "), 100))
	}
	for _, j := range pr.Judgements {
		fmt.Fprintf(w, "  judgement: %s", j.Dimension)
		if j.Judge != "" {
			fmt.Fprintf(w, " by %s", j.Judge)
		}
		if j.Score != nil {
			fmt.Fprintf(w, ", score %s", stages.FormatNumber(*j.Score, 3))
		}
		if j.Verdict != "" {
			fmt.Fprintf(w, ", %s", j.Verdict)
		}
		if len(j.Scores) > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(j.Scores)) {
				parts = append(parts, k+" "+stages.FormatNumber(j.Scores[k], 3))
			}
			fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
		}
		fmt.Fprintln(w)
	}
	for _, t := range pr.Tables {
		fmt.Fprintf(w, "  table: %s (%d row(s))\n", t.Title, len(t.Rows))
	}
}

// printNode writes one node as a person reads it: what it is, what was
// asked, what came back, what it cost, and what its key is made of.
func printNode(w io.Writer, v *engine.NodeView) {
	fmt.Fprintf(w, "%s\n", v.Address)
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(w, "  %-10s %s\n", name+":", value)
		}
	}
	stage := v.Type
	if v.Version != "" {
		stage += "@" + v.Version
	}
	if v.InstanceKey != "" {
		stage += fmt.Sprintf(" (instance %s, key %q)", v.Instance, v.InstanceKey)
	}
	field("stage", stage)
	status := v.Status
	if v.Reason != "" {
		status += ": " + v.Reason
	}
	field("status", status)
	field("work", v.Work)
	field("key", v.Key)
	if len(v.Inputs) > 0 {
		field("inputs", strings.Join(v.Inputs, "\n             "))
	}
	if g := v.Generator; g != nil {
		field("generator", modelText(g.Name, g.Family))
	}
	if a := v.Asks; a != nil {
		field("will ask", a.String()+" (provider "+v.Provider+")")
	}
	if p := v.Provenance; p != nil && (v.Work != "call" && v.Work != "service" || len(p.Answerers) > 1) {
		// What the output rests on, beyond the node's own answerer.
		field("rests on", restsOn(p))
	}
	for _, n := range v.Notes {
		field("note", n)
	}
	if v.PrepareError != "" {
		field("prepare", "error: "+v.PrepareError)
	}

	if r := v.Request; r != nil {
		fmt.Fprintf(w, "\nrequest (provider %s):\n", v.Provider)
		printRequest(w, r)
	}
	if s := v.Service; s != nil {
		fmt.Fprintf(w, "\nservice request (provider %s):\n  op:    %s\n  model: %s\n  body:\n%s\n", v.Provider, s.Op, s.Model, indentJSON(s.Body, "    "))
	}
	if r := v.Result; r != nil {
		if r.Raw != "" {
			fmt.Fprintf(w, "\nanswer (raw):\n%s\n", strings.TrimRight(r.Raw, "\n"))
		}
		if r.Reasoning != "" {
			fmt.Fprintf(w, "\nreasoning:\n%s\n", strings.TrimRight(r.Reasoning, "\n"))
		}
		title := "output"
		if r.Planned {
			title = "output (computed by the plan in memory; not in the cache yet)"
		}
		fmt.Fprintf(w, "\n%s:\n%s\n", title, indentJSON(r.Output, "  "))
		if v.Work == "call" || v.Work == "service" {
			fmt.Fprintln(w)
			served := r.ServedModel
			if served == "" {
				served = "(not reported)"
			}
			fingerprint := r.Fingerprint
			if fingerprint == "" {
				fingerprint = "(not reported)"
			}
			if a := r.Answerer; a != nil {
				fmt.Fprintf(w, "  answered by: %s (class %s, identity %s)\n", a.String(), a.Class, nonEmptyText(a.Identity))
			} else {
				fmt.Fprintln(w, "  answered by: (the record does not say)")
			}
			fmt.Fprintf(w, "  model:       %s, served by %s, fingerprint %s\n", r.Model, served, fingerprint)
			if r.AdoptedFrom != "" {
				fmt.Fprintf(w, "  adopted:     copied by `ideaflow cache adopt` from the previous-scheme record %s, on the user's word that %s answered it\n",
					shortDigest(r.AdoptedFrom), r.Answerer)
			}
			u := r.Usage
			cached := ""
			if u.CachedTokens > 0 {
				cached = fmt.Sprintf(" (%d input from the provider's prompt cache)", u.CachedTokens)
			}
			fmt.Fprintf(w, "  usage:       %d input + %d output tokens%s, $%.6f, %d ms\n", u.InputTokens, u.OutputTokens, cached, u.CostUSD, u.LatencyMS)
			if r.Obtained != "" {
				fmt.Fprintf(w, "  obtained:    by %s\n", r.Obtained)
			}
			if r.AnswerKey != "" {
				fmt.Fprintf(w, "  answer:      re-derived with no call from the stored answer %s (the same request, asked under other output settings)\n", shortDigest(r.AnswerKey))
			}
		}
		switch p := v.Provenance; {
		case r.Synthetic && (v.Work == "call" || v.Work == "service"):
			fmt.Fprintln(w, "  SYNTHETIC: answered by the mock provider")
		case p != nil && p.Synthetic:
			fmt.Fprintln(w, "  SYNTHETIC: rests on answers of the mock provider ("+restsOn(p)+")")
		}
		if !r.CreatedAt.IsZero() {
			fmt.Fprintf(w, "  created:     %s\n", r.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"))
		}
		printAttempts(w, r.Attempts)
	}
	if f := v.Failure; f != nil {
		fmt.Fprintf(w, "\nlast run failed (%s):\n  error: %s\n", f.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"), f.Error)
		if f.Raw != "" {
			fmt.Fprintf(w, "  raw answer:\n%s\n", strings.TrimRight(f.Raw, "\n"))
		}
		printAttempts(w, f.Attempts)
	}
	// Parts named "about:..." describe a record without being key material
	// (a plan names changed params with them): shown apart, so the key
	// parts list exactly what the key is made of.
	var key, about []cache.Part
	for _, p := range v.Parts {
		if strings.HasPrefix(p.Name, "about:") {
			about = append(about, p)
		} else {
			key = append(key, p)
		}
	}
	printParts(w, "key parts", key)
	printParts(w, "about (not key material)", about)
}

func printParts(w io.Writer, title string, parts []cache.Part) {
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	width := 0
	for _, p := range parts {
		width = max(width, len(p.Name))
	}
	for _, p := range parts {
		d := p.Display
		if d == "" {
			d = "sha256:" + shortDigest(p.Digest)
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, p.Name, d)
	}
}

// printRequest writes the sampling settings, then every message verbatim
// between role markers, so what is shown can be pasted back as it was sent.
func printRequest(w io.Writer, r *llm.Request) {
	opt := func(p *float64) string {
		if p == nil {
			return "unset"
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	seed := "unset"
	if r.Seed != nil {
		seed = strconv.Itoa(*r.Seed)
	}
	maxTokens := "unset"
	if r.MaxTokens > 0 {
		maxTokens = strconv.Itoa(r.MaxTokens)
	}
	format, _ := json.Marshal(r.Format)
	fmt.Fprintf(w, "  model:       %s\n  temperature: %s\n  top_p:       %s\n  max_tokens:  %s\n  seed:        %s\n",
		r.Model, opt(r.Temperature), opt(r.TopP), maxTokens, seed)
	if len(r.Stop) > 0 {
		stop, _ := json.Marshal(r.Stop)
		fmt.Fprintf(w, "  stop:        %s\n", stop)
	}
	if r.JSONMode {
		fmt.Fprintln(w, "  json_mode:   true")
	}
	if len(r.JSONSchema) > 0 {
		fmt.Fprintf(w, "  json_schema: %s\n", r.JSONSchema)
	}
	fmt.Fprintf(w, "  sample:      %d\n  format:      %s\n", r.Sample, format)
	for _, m := range r.Messages {
		fmt.Fprintf(w, "--- %s ---\n%s\n", m.Role, m.Content)
	}
	fmt.Fprintln(w, "--- end ---")
}

func printAttempts(w io.Writer, as []cache.Attempt) {
	if len(as) == 0 {
		return
	}
	fmt.Fprintf(w, "  attempts:    %d\n", len(as))
	for i, at := range as {
		what := "ok"
		if at.Error != "" {
			what = "error: " + at.Error
		}
		kind := "ask"
		if at.Repair {
			kind = "repair re-ask"
		}
		status := ""
		if at.Status != 0 {
			status = fmt.Sprintf(", HTTP %d", at.Status)
		}
		fmt.Fprintf(w, "    %d. %s (%d ms%s): %s\n", i+1, kind, at.Duration, status, what)
		if at.Error != "" && at.Raw != "" {
			fmt.Fprintf(w, "       raw: %q\n", shorten(at.Raw, 200))
		}
	}
}

// restsOn names the answerers a provenance lists.
func restsOn(p *engine.FedBy) string {
	if len(p.Answerers) == 0 {
		return "no call"
	}
	names := make([]string, len(p.Answerers))
	for i, a := range p.Answerers {
		names[i] = a.String()
	}
	return strings.Join(names, "; ")
}

func nonEmptyText(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func modelText(name, family string) string {
	if family == "" {
		return name
	}
	return fmt.Sprintf("%s (family %s)", name, family)
}

// indentJSON pretty-prints a JSON value, or returns it as it is when it is
// not JSON (a damaged record is still shown).
func indentJSON(b []byte, prefix string) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, prefix, "  "); err != nil {
		return prefix + string(b)
	}
	return prefix + buf.String()
}

func shortDigest(d string) string {
	if len(d) > 16 {
		return d[:16] + "…"
	}
	return d
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
