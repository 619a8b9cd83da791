package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages"
)

// export (not `cache export`, which moves cache records between machines)
// writes a stage's per-item results as a table for pandas or R.

func (a *app) exportCmd() *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export ADDRESS [EXPERIMENT]",
		Short: "Write a stage's cached per-item results as CSV or JSONL, one row per idea, ranking or score",
		Long: `Write the cached results of a stage instance, of every instance of a stage
block, or of one item, as a table:

  ideaflow export stage.generate_ideas.main --format csv --out ideas.csv
  ideaflow export 'stage.rank_ideas.novelty["gpt4o"]' experiments/ib --format jsonl

Each stage type says what its rows are: generate_ideas one row per idea
(idea_index within its node; item_idea_index is the "idea I" of rank_ideas'
labels), rank_ideas one row per ranking (order best first, target_rank),
similarity one row per idea; other stages one row per node with their
output's top-level fields, declared ones first. Every row names its item,
instance key, slot and label, the generating model and the model that
answered. Only cached nodes have rows; the others are counted on stderr.

Nested values (a judgement's scores, a score's per_item) are nested JSON
in jsonl. In csv an object becomes one column per member, named
parent.member (scores.feasibility, extra.ci_low), recursively; a list is
its JSON text in one cell.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "csv" && format != "jsonl" {
				return &exitError{exitBadInput, fmt.Errorf("--format %q: use csv or jsonl", format)}
			}
			g, views, err := a.inspect(args[0], expArg(args[1:]), engine.InspectOptions{})
			if err != nil {
				return err
			}
			t, err := exportTable(g, views)
			if err != nil {
				return &exitError{exitBadInput, err}
			}
			var buf bytes.Buffer
			if format == "csv" {
				err = t.writeCSV(&buf)
			} else {
				err = t.writeJSONL(&buf)
			}
			if err != nil {
				return &exitError{exitFailedNodes, fmt.Errorf("export %s: %w", args[0], err)}
			}
			toStdout := out == "" || out == "-" // "-" is stdout, as for most Unix tools
			if toStdout {
				_, err = a.stdout.Write(buf.Bytes())
			} else {
				err = os.WriteFile(out, buf.Bytes(), 0o644)
			}
			if err != nil {
				return &exitError{exitFailedNodes, fmt.Errorf("write export: %w", err)}
			}
			if t.missing > 0 {
				fmt.Fprintf(a.stderr, "note: %d node(s) at %s have no cached result and have no rows (run the experiment, or see `ideaflow show`)\n", t.missing, args[0])
			}
			if t.dropped > 0 {
				fmt.Fprintf(a.stderr, "note: %d node(s) belong to items left out upstream (dropped)\n", t.dropped)
			}
			if t.services > 0 {
				fmt.Fprintf(a.stderr, "note: %d service reply node(s) have no rows of their own: their item's result node has its rows\n", t.services)
			}
			if !toStdout {
				fmt.Fprintf(a.stdout, "wrote %d row(s) to %s\n", len(t.rows), out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "csv", "csv or jsonl")
	cmd.Flags().StringVar(&out, "out", "", "write to this file instead of stdout (- for stdout)")
	a.addVarFlags(cmd)
	return cmd
}

// table is an export: its columns in order and one value per column per
// row (nil: empty; a json.RawMessage: a nested object or list).
type table struct {
	columns  []string
	rows     [][]any
	missing  int // nodes without a cached result
	dropped  int // nodes of items left out upstream
	services int // helper nodes (service replies), whose rows are their item's result node's
}

// Columns every row starts and ends with, whatever the stage.
var (
	leadColumns = []string{"address", "instance", "instance_key", "item", "slot", "label"}
	// answerer_class and answerer_identity name who answered a model or
	// service node (its record's answerer); for a deterministic node, who
	// answered the calls it rests on ("; " between several). synthetic says
	// the row rests on an answer of the mock, directly or through its
	// inputs, as the records say.
	tailColumns = []string{"generator", "generator_family", "model", "served_model", "fingerprint",
		"answerer_class", "answerer_identity", "synthetic", "key"}
)

// exportTable turns nodes of one stage type into rows: each node's rows as
// its stage type presents them (stages.Present), between the columns
// every row has. An output column named like one of those is prefixed
// "output.".
func exportTable(g *engine.Graph, views []engine.NodeView) (*table, error) {
	typ := ""
	for _, v := range views {
		if typ != "" && v.Type != typ {
			return nil, fmt.Errorf("the address holds nodes of stage types %s and %s: export one stage at a time", typ, v.Type)
		}
		typ = v.Type
	}
	nodes, err := presentViews(g, views)
	if err != nil {
		return nil, err
	}
	reserved := map[string]bool{}
	for _, c := range append(append([]string{}, leadColumns...), tailColumns...) {
		reserved[c] = true
	}
	t := &table{}
	var outCols []string
	seen := map[string]bool{}
	type outRow struct {
		v    *engine.NodeView
		vals map[string]any
	}
	var rows []outRow
	for _, n := range nodes {
		switch {
		case n.pr == nil:
			t.missing++
			continue
		case n.pr.Helper:
			t.services++
			continue
		case n.pr.Dropped:
			t.dropped++
		}
		for _, r := range n.pr.Rows {
			vals := map[string]any{}
			for _, c := range r {
				name := c.Name
				if reserved[name] {
					name = "output." + name
				}
				if !seen[name] {
					seen[name] = true
					outCols = append(outCols, name)
				}
				vals[name] = c.Value
			}
			rows = append(rows, outRow{n.view, vals})
		}
	}
	t.columns = append(append(append([]string{}, leadColumns...), outCols...), tailColumns...)
	for _, r := range rows {
		v := r.v
		vals := []any{v.Address, v.Instance, v.InstanceKey, v.Item, v.Slot, v.Label}
		for _, c := range outCols {
			vals = append(vals, r.vals[c])
		}
		var gen, family any
		if g := v.Generator; g != nil {
			gen, family = g.Name, nonEmpty(g.Family)
		}
		res := v.Result
		class, identity := answererColumns(v)
		synthetic := res.Synthetic || (v.Provenance != nil && v.Provenance.Synthetic)
		vals = append(vals, gen, family, nonEmpty(res.Model), nonEmpty(res.ServedModel), nonEmpty(res.Fingerprint),
			class, identity, synthetic, v.Key)
		t.rows = append(t.rows, vals)
	}
	return t, nil
}

// presentedNode is one node of a view with how its stage presents it; pr
// is nil for a node without a result.
type presentedNode struct {
	view *engine.NodeView
	pr   *stages.Presented
}

// hasResult reports whether v has an output to present: cached, or
// computed by the plan in memory (a report the cache lacks).
func hasResult(v *engine.NodeView) bool {
	return v.Result != nil && (v.Status == "cached" || v.Result.Planned)
}

// presentViews presents each node of views with a result by its stage
// type's presenter (stages.Present): the CLI knows no stage type's output.
// Each node is told how many ideas its item's earlier nodes of the same
// instance presented (-1 once one of them has no result).
func presentViews(g *engine.Graph, views []engine.NodeView) ([]presentedNode, error) {
	insts := map[string]*engine.Instance{}
	for _, inst := range g.Instances {
		insts[inst.Address] = inst
	}
	ideasSoFar := map[string]int{}
	out := make([]presentedNode, len(views))
	for i := range views {
		v := &views[i]
		out[i].view = v
		k := v.Instance + "\x00" + v.Item
		if !hasResult(v) {
			ideasSoFar[k] = -1
			continue
		}
		typ, ok := stages.Lookup(v.Type)
		if !ok || v.Type == "dataset" {
			continue
		}
		no := &stages.NodeOutput{Block: strings.TrimPrefix(v.Block, "stage."), Work: v.Work, Output: v.Result.Output,
			Node: stages.NodeInfo{Item: v.Item, Slot: v.Slot, Label: v.Label}, IdeasBefore: ideasSoFar[k]}
		if inst := insts[v.Instance]; inst != nil {
			no.Params = inst.Params
		}
		if v.Work == "call" {
			no.Raw, no.Model = v.Result.Raw, v.Result.ServedModel
			if no.Model == "" {
				no.Model = v.Result.Model
			}
		}
		pr, err := stages.Present(typ, no)
		if err != nil {
			return nil, fmt.Errorf("present %s: %w", v.Address, err)
		}
		out[i].pr = pr
		if ideasSoFar[k] >= 0 {
			ideasSoFar[k] += len(pr.Ideas)
		}
	}
	return out, nil
}

// answererColumns are a row's answerer_class and answerer_identity: a call
// or service record's answerer, else who answered what the node rests on.
func answererColumns(v *engine.NodeView) (class, identity any) {
	if a := v.Result.Answerer; a != nil {
		return a.Class, nonEmpty(a.Identity)
	}
	if v.Provenance == nil || len(v.Provenance.Answerers) == 0 {
		return nil, nil
	}
	var cs, ids []string
	for _, a := range v.Provenance.Answerers {
		cs, ids = append(cs, a.Class), append(ids, a.Identity)
	}
	return strings.Join(cs, "; "), nonEmpty(strings.Join(ids, "; "))
}

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// marshalPlain is json.Marshal without HTML escaping: an order "C > A"
// stays readable in the file.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// writeCSV writes the table flattened: a nested object becomes one column
// per member, named parent.member (recursively: scores.feasibility,
// authors_parse.scores.originality), the members in name order after
// those of earlier rows; a list is its JSON text in one cell. A row
// without a member leaves its cell empty.
func (t *table) writeCSV(w io.Writer) error {
	flat := make([][]flatCell, len(t.rows))
	subs := make([][]string, len(t.columns)) // per column: its flattened names, first-seen order
	seen := make([]map[string]bool, len(t.columns))
	for i, r := range t.rows {
		for c, v := range r {
			cells := flatten(t.columns[c], v)
			flat[i] = append(flat[i], cells...)
			if seen[c] == nil {
				seen[c] = map[string]bool{}
			}
			for _, fc := range cells {
				if !seen[c][fc.name] {
					seen[c][fc.name] = true
					subs[c] = append(subs[c], fc.name)
				}
			}
		}
	}
	var header []string
	for c, name := range t.columns {
		if len(subs[c]) == 0 {
			subs[c] = []string{name}
		}
		header = append(header, subs[c]...)
	}
	index := make(map[string]int, len(header))
	for i, h := range header {
		if _, dup := index[h]; !dup {
			index[h] = i
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for _, cells := range flat {
		clear(rec)
		for _, fc := range cells {
			rec[index[fc.name]] = fc.text
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// flatCell is one CSV cell of a flattened value.
type flatCell struct{ name, text string }

// flatten turns the value of column name into its CSV cells: an object one
// per member (recursively), anything else one.
func flatten(name string, v any) []flatCell {
	raw, ok := v.(json.RawMessage)
	if !ok || len(raw) == 0 || raw[0] != '{' {
		return []flatCell{{name, cellText(v)}}
	}
	obj, order, err := stages.DecodeOutput(raw)
	if err != nil || len(order) == 0 {
		return []flatCell{{name, cellText(v)}}
	}
	sort.Strings(order)
	var out []flatCell
	for _, k := range order {
		out = append(out, flatten(name+"."+k, stages.ColumnValue(obj[k]))...)
	}
	return out
}

func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	case json.RawMessage:
		return string(x)
	}
	return fmt.Sprint(v)
}

// writeJSONL writes one object per row with the columns in table order
// (encoding/json would sort a map's keys), empty cells as null.
func (t *table) writeJSONL(w io.Writer) error {
	var b bytes.Buffer
	for _, r := range t.rows {
		b.Reset()
		b.WriteByte('{')
		for i, v := range r {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := marshalPlain(t.columns[i])
			val, err := marshalPlain(v)
			if err != nil {
				return fmt.Errorf("encode %s: %w", t.columns[i], err)
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(val)
		}
		b.WriteString("}\n")
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
