package stages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Presenters: how a stage type's outputs read to a person or a script.
//
// The CLI shows, exports and lays out report.html from cached outputs of
// every stage type, its own and those a new benchmark adds. It must not
// know any of them: what a field means is the stage's to say. A stage type
// says it in one of two ways:
//
//   - its Schema's roles (schema.go): the default presenter (DefaultPresent)
//     reads an idea's text from a RoleIdea field, a judgement's scores,
//     judge and rationale from RoleScore(s), RoleJudge and RoleRationale
//     fields of a model call's output, and exports one row per node of its
//     top-level fields, declared ones first;
//   - a Presenter, when the roles do not say enough: a generation that
//     exports one row per idea, a review that copies the idea it reviews
//     (not an idea of its own), a report whose tables the page shows.
//
// stages/all checks every registered type is one or the other.

// Presenter is a stage type that says itself how one node's output reads.
// Present must not fail on an output its own stage wrote (a dropped item's
// included); it may on one it cannot decode.
type Presenter interface {
	Type
	Present(out *NodeOutput) (*Presented, error)
}

// NodeOutput is one cached node as a presenter reads it.
type NodeOutput struct {
	// Params are the instance's params (a presenter reads them as Schema
	// does: what a similarity's output holds depends on its method).
	Params Params
	// Block is the stage block, "rank_ideas.novelty" (no "stage." prefix):
	// what a judgement judged when its stage does not say more.
	Block string
	Node  NodeInfo
	// Work is "call", "service" or "compute".
	Work   string
	Output []byte
	// Raw is a call's answer text ("" otherwise): a judgement's rationale
	// when its output keeps none.
	Raw string
	// Model is the model that answered a call (the served name when the
	// endpoint said one), "" otherwise.
	Model string
	// IdeasBefore is how many ideas the item's earlier nodes of the same
	// instance presented, in node order (rank_ideas letters ideas that
	// way); -1 when one of them has no cached output.
	IdeasBefore int
}

// Presented is how one node's output reads.
type Presented struct {
	// Rows are the node's rows for export, each its columns in order.
	Rows []Row
	// Ideas are the ideas the node generated, or (Given) the ideas it was
	// given and shows beside its judgements.
	Ideas []Idea
	// Judgements are the node's judgements of its item's ideas.
	Judgements []Judgement
	// Tables are the tables the node lays out (a report, a leaderboard).
	Tables []Table
	// Dropped: the node's item was left out upstream; it has nothing to
	// show (export still writes its rows).
	Dropped bool
	// Helper: the node serves another of its instance (an embedding reply
	// beside the scores node) and has no rows of its own.
	Helper bool
}

// Row is one export row: columns in order.
type Row []Column

// Column is one named value of a row. Value is nil (empty), a string, a
// bool, an int, a float64, a json.Number, or a json.RawMessage holding an
// object or array (written as nested JSON to JSONL, flattened in CSV).
type Column struct {
	Name  string
	Value any
}

// Idea is one idea as the page shows it.
type Idea struct {
	Text    string `json:"text"`
	Keyword string `json:"keyword,omitempty"`
	// Given marks an idea the stage was given (the idea a review
	// reviews), not one it generated: shown once per item, however many
	// stages copy it.
	Given bool `json:"given,omitempty"`
}

// Judgement is one judgement of an item's ideas: who judged, what, the
// verdict and why.
type Judgement struct {
	// Judge is the model that judged; "" takes NodeOutput.Model.
	Judge string `json:"judge,omitempty"`
	// Dimension is what was judged: "rank_ideas.novelty", "soundness", a
	// rubric line.
	Dimension string `json:"dimension"`
	// Score is the judgement's number (the target's rank, a rating, a
	// mean of ratings); nil when it has none.
	Score *float64 `json:"score,omitempty"`
	// Verdict is a judgement that is no number (a letter, "a" / "b" /
	// "tie"); "" when Score says it all.
	Verdict string `json:"verdict,omitempty"`
	// Scores are named ratings (by dimension).
	Scores map[string]float64 `json:"scores,omitempty"`
	// Order is a ranking, best first; Shown what each of its labels stood
	// for ("idea 2", "target").
	Order     []string          `json:"order,omitempty"`
	Shown     map[string]string `json:"shown,omitempty"`
	Rationale string            `json:"rationale,omitempty"`
}

// Table is a table as a page shows it: cells already formatted as the
// stage formats them (digits, bold best, intervals, notes).
type Table struct {
	Name      string
	Title     string
	Header    []string
	Numeric   []bool // per column: right-aligned (a score column)
	Rows      [][]Cell
	Notes     []string // the table's general notes
	Footnotes []string // footnote i+1's text
	// Synthetic is the sentence the table opens with when some of its
	// values are synthetic; Mixed says only some are, each cell marked
	// (Cell.Synthetic).
	Synthetic string
	Mixed     bool
}

// IsNumeric reports whether column i is right-aligned (false past Numeric).
func (t Table) IsNumeric(i int) bool { return i < len(t.Numeric) && t.Numeric[i] }

// Cell is one table cell: Value (bold when it is the column's best), then
// Rest (an interval), then footnote Note (0: none). Synthetic marks a value
// of a partly synthetic table that comes from the mock.
type Cell struct {
	Value     string
	Bold      bool
	Underline bool // the better of a pivot's pair (a report's Table 2)
	Rest      string
	Note      int
	Synthetic bool
}

// Present says how out reads: t's Presenter, else the default.
func Present(t Type, out *NodeOutput) (*Presented, error) {
	if p, ok := t.(Presenter); ok {
		return p.Present(out)
	}
	return DefaultPresent(t, out)
}

// DefaultPresent reads out by t's schema roles (nil schema: every field a
// column, nothing on the page). A model call's RoleIdea fields are ideas
// it generated; a call's RoleScore / RoleScores fields make it a
// judgement (unless it gave ideas), with its RoleJudge, RoleRationale (else
// the raw answer) and RoleRanking fields. A stages.Files output exports
// its file names, not their text.
func DefaultPresent(t Type, out *NodeOutput) (*Presented, error) {
	obj, order, err := decodeObject(out.Output)
	if err != nil {
		return nil, err
	}
	schema, _ := SchemaOf(t, out.Params)
	pr := &Presented{Dropped: isTrue(obj["dropped"])}
	pr.Rows = []Row{DefaultRow(schema, obj, order)}
	if pr.Dropped || out.Work != "call" {
		return pr, nil
	}
	pr.Ideas = RoleIdeas(schema, obj)
	if len(pr.Ideas) > 0 {
		return pr, nil
	}
	if j, ok := RoleJudgement(schema, obj, out); ok {
		pr.Judgements = []Judgement{j}
	}
	return pr, nil
}

// DefaultRow is an output's one export row: the schema's fields in their
// declared order (absent ones empty, but for fields Only some nodes
// carry, which appear where they are present), then undeclared fields in
// name order. Objects and arrays stay nested (json.RawMessage).
func DefaultRow(s Schema, obj map[string]json.RawMessage, order []string) Row {
	var row Row
	declared := map[string]bool{}
	files := false
	for _, f := range s.Gives {
		declared[f.Name] = true
		raw, ok := obj[f.Name]
		if !ok && f.Only != "" {
			continue
		}
		if f.Name == "files" || f.Name == "binary" {
			files = true
		}
		row = append(row, Column{f.Name, ColumnValue(raw)})
	}
	var rest []string
	for _, k := range order {
		if !declared[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		row = append(row, Column{k, ColumnValue(obj[k])})
	}
	if files {
		// A file's text is the file's, not a cell's: name the files.
		for i, c := range row {
			if raw, ok := c.Value.(json.RawMessage); ok && (c.Name == "files" || c.Name == "binary") {
				row[i].Value = fileNames(raw)
			}
		}
	}
	return row
}

func fileNames(raw json.RawMessage) any {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return nil
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, "; ")
}

// RoleIdeas are the ideas of obj's RoleIdea fields (keyword from its
// RoleKeyword field).
func RoleIdeas(s Schema, obj map[string]json.RawMessage) []Idea {
	keyword := ""
	for _, f := range s.Gives {
		if f.Role == RoleKeyword {
			_ = json.Unmarshal(obj[f.Name], &keyword)
		}
	}
	var ideas []Idea
	for _, f := range s.Gives {
		if f.Role != RoleIdea {
			continue
		}
		switch f.Type {
		case TextField:
			var text string
			if json.Unmarshal(obj[f.Name], &text) == nil && strings.TrimSpace(text) != "" {
				ideas = append(ideas, Idea{Text: text, Keyword: keyword})
			}
		case TextsField:
			var texts []string
			if json.Unmarshal(obj[f.Name], &texts) == nil {
				for _, text := range texts {
					ideas = append(ideas, Idea{Text: text, Keyword: keyword})
				}
			}
		}
	}
	return ideas
}

// RoleJudgement is the judgement obj's roles say, false when it has no
// RoleScore or RoleScores value. Dimension is the block; Judge the
// RoleJudge field, else who answered; Rationale the RoleRationale text,
// else the raw answer.
func RoleJudgement(s Schema, obj map[string]json.RawMessage, out *NodeOutput) (Judgement, bool) {
	j := Judgement{Dimension: out.Block, Judge: out.Model}
	scored := false
	for _, f := range s.Gives {
		raw, ok := obj[f.Name]
		if !ok {
			continue
		}
		switch f.Role {
		case RoleScore:
			var x float64
			var text string
			switch {
			case json.Unmarshal(raw, &x) == nil:
				if j.Score == nil {
					j.Score, scored = &x, true
				}
			case json.Unmarshal(raw, &text) == nil && text != "":
				j.Verdict, scored = text, true
			}
		case RoleScores:
			var m map[string]float64
			if json.Unmarshal(raw, &m) == nil && len(m) > 0 {
				j.Scores, scored = m, true
			}
		case RoleJudge:
			var name string
			if json.Unmarshal(raw, &name) == nil && name != "" {
				j.Judge = name
			}
		case RoleRationale:
			var text string
			if json.Unmarshal(raw, &text) == nil && j.Rationale == "" {
				j.Rationale = text
			}
		case RoleRanking:
			_ = json.Unmarshal(raw, &j.Order)
		}
	}
	if j.Rationale == "" {
		j.Rationale = out.Raw
	}
	return j, scored
}

// DecodeOutput decodes a node's output as an object; names lists its
// members in name order. An output that is no object is one member,
// "output".
func DecodeOutput(b []byte) (map[string]json.RawMessage, []string, error) {
	return decodeObject(b)
}

func decodeObject(b []byte) (map[string]json.RawMessage, []string, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		// Not an object: one column holding it.
		return map[string]json.RawMessage{"output": json.RawMessage(b)}, []string{"output"}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, nil, fmt.Errorf("decode output: %w", err)
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	return obj, names, nil
}

// ColumnValue is a JSON value as a Column's Value: a string, bool or
// number as such (a number as json.Number, its digits kept), an object or
// array nested, null or absent nil.
func ColumnValue(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	switch raw[0] {
	case '{', '[':
		return raw
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case 't', 'f':
		var b bool
		if json.Unmarshal(raw, &b) == nil {
			return b
		}
	default:
		if _, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return json.Number(raw)
		}
	}
	return string(raw)
}

func isTrue(raw json.RawMessage) bool {
	var b bool
	return json.Unmarshal(raw, &b) == nil && b
}

// FormatNumber prints a number as report tables do: an integral value
// without decimals, any other to digits decimals (never "-0.000").
func FormatNumber(v float64, digits int) string {
	if v == float64(int64(v)) && v > -1e15 && v < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
		s = s[1:]
	}
	return s
}
