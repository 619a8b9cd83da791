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
	"github.com/ideaflow/ideaflow/stages/ideabench"
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

generate_ideas gives one row per idea (idea_index within its node;
item_idea_index is the "idea I" of rank_ideas' labels), rank_ideas one row
per ranking (order best first, target_rank), aggregates one row per score;
other stages one row per node with their output's top-level fields. Every
row names its item, instance key, slot and label, the generating model and
the model that answered. Only cached nodes have rows; the others are counted
on stderr.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "csv" && format != "jsonl" {
				return &exitError{exitBadInput, fmt.Errorf("--format %q: use csv or jsonl", format)}
			}
			views, err := a.inspect(args[0], expArg(args[1:]), engine.InspectOptions{})
			if err != nil {
				return err
			}
			t, err := exportTable(views)
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
				fmt.Fprintf(a.stderr, "note: %d node(s) belong to dropped targets and have no ideas\n", t.dropped)
			}
			if t.services > 0 {
				fmt.Fprintf(a.stderr, "note: %d embedding reply node(s) have no rows of their own: each item's scores node has its ideas' rows\n", t.services)
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
// row (nil: empty).
type table struct {
	columns  []string
	rows     [][]any
	missing  int // nodes without a cached result
	dropped  int // generation nodes of dropped targets
	services int // embedding replies, whose rows are their item's scores node's
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

// outputColumns are the columns of known stage types' outputs, in order;
// another stage's columns are its output's top-level fields, sorted.
var outputColumns = map[string][]string{
	"generate_ideas":    {"idea_index", "item_idea_index", "idea"},
	"rank_ideas":        {"order", "target_letter", "target_rank", "n", "labels", "dropped"},
	"filter_references": {"dropped", "reason", "references", "reference_ids"},
	"insight_score":     {"value", "count", "missing", "extra", "per_item"},
	"similarity":        {"method", "idea_index", "precision", "recall", "f1", "dropped"},
}

// exportTable turns nodes of one stage type into rows.
func exportTable(views []engine.NodeView) (*table, error) {
	typ := ""
	for _, v := range views {
		if typ != "" && v.Type != typ {
			return nil, fmt.Errorf("the address holds nodes of stage types %s and %s: export one stage at a time", typ, v.Type)
		}
		typ = v.Type
	}
	t := &table{}
	outCols, known := outputColumns[typ]
	var generic []map[string]json.RawMessage
	if !known {
		// Columns of an unknown output are the union of its fields.
		set := map[string]bool{}
		for _, v := range views {
			var m map[string]json.RawMessage
			if v.Status == "cached" && v.Result != nil && json.Unmarshal(v.Result.Output, &m) == nil {
				for k := range m {
					set[k] = true
				}
			}
			generic = append(generic, m)
		}
		for k := range set {
			outCols = append(outCols, k)
		}
		sort.Strings(outCols)
	}
	t.columns = append(append(append([]string{}, leadColumns...), outCols...), tailColumns...)

	// ideasSoFar counts an item's ideas over its nodes in order, as
	// rank_ideas letters them; -1 once a node of the item has no result.
	ideasSoFar := map[string]int{}
	for i, v := range views {
		if v.Status != "cached" || v.Result == nil {
			t.missing++
			ideasSoFar[v.Instance+"\x00"+v.Item] = -1
			continue
		}
		v := &views[i]
		row := func(fields map[string]any) {
			vals := []any{v.Address, v.Instance, v.InstanceKey, v.Item, v.Slot, v.Label}
			for _, c := range outCols {
				vals = append(vals, fields[c])
			}
			var gen, family any
			if g := v.Generator; g != nil {
				gen, family = g.Name, nonEmpty(g.Family)
			}
			r := v.Result
			class, identity := answererColumns(v)
			synthetic := r.Synthetic || (v.Provenance != nil && v.Provenance.Synthetic)
			vals = append(vals, gen, family, nonEmpty(r.Model), nonEmpty(r.ServedModel), nonEmpty(r.Fingerprint),
				class, identity, synthetic, v.Key)
			t.rows = append(t.rows, vals)
		}
		out := v.Result.Output
		switch typ {
		case "generate_ideas":
			var o struct {
				Ideas   []string `json:"ideas"`
				Dropped bool     `json:"dropped"`
			}
			if err := json.Unmarshal(out, &o); err != nil {
				return nil, fmt.Errorf("decode %s: %w", v.Address, err)
			}
			if o.Dropped {
				t.dropped++
			}
			k := v.Instance + "\x00" + v.Item
			for j, idea := range o.Ideas {
				var itemIndex any
				if n := ideasSoFar[k]; n >= 0 {
					itemIndex = n + j
				}
				row(map[string]any{"idea_index": j, "item_idea_index": itemIndex, "idea": idea})
			}
			if ideasSoFar[k] >= 0 {
				ideasSoFar[k] += len(o.Ideas)
			}
		case "rank_ideas":
			var o struct {
				Order        []string          `json:"order"`
				Labels       map[string]string `json:"labels"`
				TargetLetter string            `json:"target_letter"`
				TargetRank   int               `json:"target_rank"`
				N            int               `json:"n"`
				Dropped      bool              `json:"dropped"`
			}
			if err := json.Unmarshal(out, &o); err != nil {
				return nil, fmt.Errorf("decode %s: %w", v.Address, err)
			}
			f := map[string]any{"dropped": o.Dropped}
			if !o.Dropped {
				f["order"] = strings.Join(o.Order, " > ")
				f["target_letter"], f["target_rank"], f["n"] = o.TargetLetter, o.TargetRank, o.N
				f["labels"] = labelsText(o.Labels)
			}
			row(f)
		case "filter_references":
			var o struct {
				References []struct {
					ID string `json:"id"`
				} `json:"references"`
				Dropped bool   `json:"dropped"`
				Reason  string `json:"reason"`
			}
			if err := json.Unmarshal(out, &o); err != nil {
				return nil, fmt.Errorf("decode %s: %w", v.Address, err)
			}
			ids := make([]string, len(o.References))
			for j, r := range o.References {
				ids[j] = r.ID
			}
			row(map[string]any{"dropped": o.Dropped, "reason": nonEmpty(o.Reason), "references": len(ids), "reference_ids": strings.Join(ids, ";")})
		case "similarity":
			o, ok, err := ideabench.DecodeSimilarity(v.Label, out)
			if err != nil {
				return nil, fmt.Errorf("decode %s: %w", v.Address, err)
			}
			if !ok {
				t.services++ // an embedding reply: its item's scores node has the rows
				continue
			}
			if o.Dropped {
				t.dropped++
				row(map[string]any{"dropped": true})
				continue
			}
			for j, sc := range o.Scores {
				row(map[string]any{"method": o.Method, "idea_index": j, "precision": sc.Precision, "recall": sc.Recall, "f1": sc.F1, "dropped": false})
			}
		case "insight_score":
			var o struct {
				Value   float64         `json:"value"`
				Count   int             `json:"count"`
				Missing int             `json:"missing"`
				Extra   json.RawMessage `json:"extra"`
				PerItem json.RawMessage `json:"per_item"`
			}
			if err := json.Unmarshal(out, &o); err != nil {
				return nil, fmt.Errorf("decode %s: %w", v.Address, err)
			}
			row(map[string]any{"value": o.Value, "count": o.Count, "missing": o.Missing, "extra": rawText(o.Extra), "per_item": rawText(o.PerItem)})
		default:
			f := map[string]any{}
			for k, raw := range generic[i] {
				f[k] = scalar(raw)
			}
			row(f)
		}
	}
	return t, nil
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

// labelsText writes rank labels in letter order: "A=idea 1; B=target".
func labelsText(labels map[string]string) string {
	letters := make([]string, 0, len(labels))
	for l := range labels {
		letters = append(letters, l)
	}
	sort.Strings(letters)
	parts := make([]string, len(letters))
	for i, l := range letters {
		parts[i] = l + "=" + labels[l]
	}
	return strings.Join(parts, "; ")
}

// scalar keeps a JSON string, number or bool as a value and leaves anything
// else as its JSON text, so a cell holds one value either way.
func scalar(raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	switch x := v.(type) {
	case nil:
		return nil
	case string, bool:
		return x
	case float64:
		return json.Number(string(bytes.TrimSpace(raw)))
	}
	return string(raw)
}

func rawText(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return string(raw)
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

func (t *table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.columns); err != nil {
		return err
	}
	rec := make([]string, len(t.columns))
	for _, r := range t.rows {
		for i, v := range r {
			rec[i] = cellText(v)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
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
