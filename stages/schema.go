package stages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Schemas: what a stage type's nodes give and what it reads of each input.
//
// A node's output is JSON; downstream stages read fields of it by name (a
// judge reads an idea's "idea", an aggregate a score's "per_item"). A
// Schema names those fields on both sides, so that a wiring whose upstream
// cannot give what a stage reads is refused by validate, at the attribute,
// instead of failing every item once the upstream was paid for. Field names
// are the JSON members at the top of an output (or a dataset record); a
// name means the same thing wherever it appears, which is what lets one
// stage read another's output without knowing its type:
//
//	idea   the text of one idea (generate_from_keyword, a dataset column)
//	ideas  the texts of several ideas, in order (generate_ideas)
//	dropped, reason  the item was left out upstream, and why
//	value, count, missing, extra, per_item  a stages.Score
//	files, binary  a stages.Files
//
// Roles say what a field is to a reader that presents outputs (rows for
// export, ideas and judgements on the page, cells for tables), so a
// presenter can find a judgement's scores and rationale whatever a stage
// calls them.

// FieldType is the JSON shape of a field, as docs print it.
type FieldType string

const (
	TextField    FieldType = "text"    // a string
	TextsField   FieldType = "texts"   // an array of strings
	NumberField  FieldType = "number"  // a number
	NumbersField FieldType = "numbers" // an object of name -> number (scores by dimension)
	BoolField    FieldType = "bool"    // true or false
	ObjectField  FieldType = "object"  // an object
	ObjectsField FieldType = "objects" // an array of objects
)

// Role is what a field is to someone reading the outputs; "" for most.
type Role string

const (
	RoleIdea      Role = "idea"      // an idea's text (TextField), or several ideas (TextsField)
	RoleKeyword   Role = "keyword"   // the keyword or topic an idea was asked for
	RoleScores    Role = "scores"    // a judgement's scores by dimension (NumbersField)
	RoleScore     Role = "score"     // one number a judgement or a metric gives
	RoleRationale Role = "rationale" // a judge's or reviewer's reasons, as text
	RoleJudge     Role = "judge"     // the model that judged
	RoleRanking   Role = "ranking"   // candidates in order, best first
	RoleDropped   Role = "dropped"   // true when the item was left out upstream
)

// Field is one field of a node's output or of a dataset record.
type Field struct {
	Name string
	Type FieldType
	Role Role
	// Optional marks a field that some nodes (records) carry and others do
	// not: a dataset's idea column filled for some targets, the outputs of
	// a dropped item. A stage that needs an optional field fails on the
	// items without it, which plan counts where it can (dataset records).
	Optional bool
	// Only names the kind of node that carries the field when not every
	// node of the instance does ("the scores node", "the selection"): its
	// other nodes are helpers (service replies) that carry other fields.
	// Unlike Optional it depends on no item: a reader of the field reads
	// those nodes, and every one of them carries it.
	Only string
	// PerNode is, for a TextsField, how many texts each node carries when
	// the params fix it (generate_ideas' ideas: 1, or n in batch mode); 0
	// when it varies. A judge lays out one judgement per idea from it.
	PerNode int
	Doc     string
}

// Need is one field a stage needs from an input: a node of the input
// without any of Fields makes the stage's node fail.
type Need struct {
	// Input is the Input or Inputs param read.
	Input string
	// Source reads the item's dataset record (the input's Upstream.Source)
	// instead of the input's own outputs: the target abstract a similarity
	// compares ideas with is in the dataset the ideas were generated for.
	Source bool
	// Fields are the names any one of which satisfies the need ("idea" or
	// "ideas"); a dotted path reads into an object ("scores.originality").
	Fields []string
	// Why says what the stage reads it for, in its words ("the text to
	// judge"); errors quote it.
	Why string
	// Fix says how to supply it when the upstream does not, as a sentence
	// ("Add an extract_idea stage over the targets and set target = ...").
	// Validate adds the stage types and dataset formats that give it.
	Fix string
	// Optional marks fields read when present, every one of Fields: a node
	// without them does not fail (a target without references is dropped,
	// an idea without a domain is judged without one). Validate does not
	// check them; they complete what the stage reads, which stages/all
	// holds it to (a stage handed only its declared reads gives the same
	// outputs).
	Optional bool
}

// Schema is a stage type's declaration of its outputs and its reads.
type Schema struct {
	// Gives lists the fields of the nodes' outputs (all of them: an
	// instance whose nodes differ, service replies beside a result node,
	// marks the fields only some carry Optional). A downstream need is met
	// when one of its fields is given here.
	Gives []Field
	// Open says the outputs carry fields beyond Gives that depend on the
	// data (a dataset record's own columns): a need Gives does not meet is
	// then checked against the data where it can be, else allowed.
	Open bool
	// Needs lists what the stage reads of its inputs. A param without a
	// Need is read for its nodes' identities only (a report's rows) or not
	// at all.
	Needs []Need
}

// Field returns the field called name, if the schema gives it.
func (s *Schema) Field(name string) (Field, bool) {
	for _, f := range s.Gives {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// GivesAny reports whether the schema gives one of the names (a dotted path
// is given when its first part is: the object's members are not declared).
func (s *Schema) GivesAny(names ...string) bool {
	for _, n := range names {
		top, _, _ := strings.Cut(n, ".")
		if _, ok := s.Field(top); ok {
			return true
		}
	}
	return false
}

// Declarer is a stage type that declares its Schema. Every registered type
// is one (stages/all checks it). Schema is a function of the instance's
// params, read as Layout reads them: what similarity reads of a target
// depends on upper_limit, what an aggregate reads on its upstream, whose
// Upstream (with its Fields) is in p like any input. It must not fail or
// panic on params Layout would refuse: it is asked before layout, to
// check the wiring.
type Declarer interface {
	Type
	Schema(p Params) Schema
}

// SchemaOf returns t's schema for params p, and false when t declares none.
func SchemaOf(t Type, p Params) (Schema, bool) {
	d, ok := t.(Declarer)
	if !ok {
		return Schema{}, false
	}
	return d.Schema(p), true
}

// Fields shared by many stage types.
var (
	// DroppedFields are what a node of a dropped item carries instead of
	// its usual fields: {"dropped": true, "reason": "..."} (engine counts
	// them, see engine/drop.go).
	DroppedFields = []Field{
		{Name: "dropped", Type: BoolField, Role: RoleDropped, Optional: true, Doc: "true when the item was left out upstream"},
		{Name: "reason", Type: TextField, Optional: true, Doc: "why the item was left out (where it was)"},
	}
	// ScoreFields are a Score's.
	ScoreFields = []Field{
		{Name: "value", Type: NumberField, Role: RoleScore, Doc: "the score"},
		{Name: "count", Type: NumberField, Doc: "items that contributed"},
		{Name: "missing", Type: NumberField, Doc: "items whose inputs failed or were skipped"},
		{Name: "extra", Type: NumbersField, Optional: true, Doc: "named secondary values (ci_low, ci_high, ...)"},
		{Name: "per_item", Type: NumbersField, Optional: true, Doc: "each item's value"},
	}
	// FilesFields are a Files value's (a report, a plot).
	FilesFields = []Field{
		{Name: "files", Type: ObjectField, Doc: "file name -> text"},
		{Name: "binary", Type: ObjectField, Optional: true, Doc: "file name -> bytes (base64)"},
	}
)

// With returns fields followed by more: a schema's Gives built from shared
// sets without aliasing them.
func With(fields []Field, more ...Field) []Field {
	out := make([]Field, 0, len(fields)+len(more))
	return append(append(out, fields...), more...)
}

// ErrMissingField is wrapped by every *FieldError: a node's input lacks a
// field the stage needs. Its text, "missing field", is how a run's failure
// says so.
var ErrMissingField = errors.New("missing field")

// FieldError is a node's input without a field the stage needs: the error
// a wiring validate accepted must never give (stages/all tests it).
type FieldError struct {
	Address string   // the input node's address: "stage.rank_ideas.x/t1/perm 0", "dataset.targets/t1"
	From    string   // its instance's: "stage.rank_ideas.x", "dataset.targets"
	Fields  []string // the fields needed, any one of which would do
	Why     string   // what the stage reads it for
}

func (e *FieldError) Error() string { return e.text(e.Address) }

// Generic is the error without the node: the same for every item that
// lacks the field, so a plan or a run summary counts them as one reason.
func (e *FieldError) Generic() string {
	if e.From == "" {
		return e.text(e.Address)
	}
	return e.text(e.From)
}

func (e *FieldError) text(where string) string {
	why := ""
	if e.Why != "" {
		why = " (" + e.Why + ")"
	}
	return fmt.Sprintf("missing field %s in %s%s", quoteOr(e.Fields), where, why)
}

func (e *FieldError) Unwrap() error { return ErrMissingField }

// MissingField returns the *FieldError of input in lacking fields.
func MissingField(in In, why string, fields ...string) error {
	e := &FieldError{Address: NodeAddress(in), Fields: fields, Why: why}
	if in.From != nil {
		e.From = in.From.Address
	}
	return e
}

// NodeAddress is the address of an input's node, as the engine names it.
func NodeAddress(in In) string {
	if in.From == nil {
		return fmt.Sprintf("item %q", in.Node.Item) // a test's input, not the engine's
	}
	addr := in.From.Address
	switch {
	case in.Node.Item == "":
		return addr + "/*"
	case in.Node.Label != "":
		return addr + "/" + in.Node.Item + "/" + in.Node.Label
	}
	return addr + "/" + in.Node.Item
}

// quoteOr quotes names as a choice: `"idea" or "ideas"`.
func quoteOr(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) <= 2 {
		return strings.Join(q, " or ")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// QuoteOr is quoteOr for other packages' messages.
func QuoteOr(names []string) string { return quoteOr(names) }

// HasField reports whether a JSON object (an output, a record) has a value
// at path, a field name or a dotted path into objects: present, not null,
// and not an empty or blank string, which is how stages treat a text they
// need. It scans the object without decoding what it skips.
func HasField(doc []byte, path string) bool {
	v, ok := lookup(doc, path)
	if !ok {
		return false
	}
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0, string(v) == "null":
		return false
	case v[0] == '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return false
		}
		return strings.TrimSpace(s) != ""
	}
	return true
}

// LacksField reports whether doc is a JSON object without a value at path
// (see HasField): a missing field, where a doc that is no object at all is
// another mistake, which its decoder names.
func LacksField(doc []byte, path string) bool {
	d := bytes.TrimSpace(doc)
	return len(d) > 0 && d[0] == '{' && !HasField(d, path)
}

// lookup returns the raw value at path in doc.
func lookup(doc []byte, path string) ([]byte, bool) {
	for {
		head, rest, more := strings.Cut(path, ".")
		v, ok := member(doc, head)
		if !ok || !more {
			return v, ok
		}
		doc, path = v, rest
	}
}

// member returns the raw value of the top-level member name of the object
// doc (false when doc is no object or lacks it). It scans bytes, skipping
// the values before it without decoding them: a dataset of 100,000 targets
// is scanned for a field its records lack in one pass each.
func member(doc []byte, name string) ([]byte, bool) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, false
	}
	i = skipSpace(doc, i+1)
	for i < len(doc) && doc[i] == '"' {
		end, ok := skipString(doc, i)
		if !ok {
			return nil, false
		}
		key := doc[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal(doc[i:end], &k) != nil {
				return nil, false
			}
			key = []byte(k)
		}
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return nil, false
		}
		i = skipSpace(doc, i+1)
		vend, ok := skipValue(doc, i)
		if !ok {
			return nil, false
		}
		if string(key) == name {
			return doc[i:vend], true
		}
		i = skipSpace(doc, vend)
		if i < len(doc) && doc[i] == ',' {
			i = skipSpace(doc, i+1)
		}
	}
	return nil, false
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\t' || d[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at d[i] == '"'.
func skipString(d []byte, i int) (int, bool) {
	for j := i + 1; j < len(d); j++ {
		switch d[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index just past the JSON value starting at d[i].
func skipValue(d []byte, i int) (int, bool) {
	if i >= len(d) {
		return 0, false
	}
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				j, ok := skipString(d, i)
				if !ok {
					return 0, false
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	j := i
	for j < len(d) && !strings.ContainsRune(",}] \n\t\r", rune(d[j])) {
		j++
	}
	return j, j > i
}

// The fields of ideas, read alike by every stage that judges or reviews
// ideas, whichever benchmark generated them.
const (
	FieldIdea  = "idea"
	FieldIdeas = "ideas"
)

// AllFields in a Need's Fields reads the whole output or record (a prompt
// template that reads .Item sees every field of it): always optional.
const AllFields = "*"

// Whole is the optional Need of a stage that decodes the whole output of
// input, whose Accepts names the types it reads (a ScholarEval stage reading
// the one before it in its chain): what it reads is what they give.
func Whole(input string) Need {
	return Need{Input: input, Fields: []string{AllFields}, Optional: true, Why: "the whole output of the stage type it accepts"}
}

// ScoreReads are the fields a reader of a Score reads when present, beside
// its value (a table's counts and interval, an aggregate's per-item values).
var ScoreReads = []string{"count", "missing", "extra", "per_item"}

// IdeaFields are the names an idea's text may come under.
var IdeaFields = []string{FieldIdea, FieldIdeas}

// IdeasIn is what a judge or reviewer reads of one upstream node that gives
// ideas: a LiveIdeaBench idea ({"idea": ..., "keyword": ...}), an IdeaBench
// generation ({"ideas": [...]}) or a dataset record with an idea column.
type IdeasIn struct {
	Ideas   []string // its idea (one), or its ideas in order
	Keyword string   // "keyword", when it gives one
	Domain  string   // "domain", when it gives one
	Dropped bool     // the item was left out upstream: nothing to judge
}

// ReadIdeas reads the ideas of in's output. An output with neither a
// non-empty "idea" nor an "ideas" list (and not dropped) is a
// *FieldError, why naming what the caller reads them for.
func ReadIdeas(in In, why string) (*IdeasIn, error) {
	var o struct {
		Idea    string   `json:"idea"`
		Ideas   []string `json:"ideas"`
		Keyword string   `json:"keyword"`
		Domain  string   `json:"domain"`
		Dropped bool     `json:"dropped"`
	}
	if err := json.Unmarshal(in.Output, &o); err != nil {
		return nil, fmt.Errorf("%s: %w", NodeAddress(in), err)
	}
	out := &IdeasIn{Keyword: o.Keyword, Domain: o.Domain, Dropped: o.Dropped}
	if o.Dropped {
		return out, nil
	}
	if s := strings.TrimSpace(o.Idea); s != "" {
		out.Ideas = []string{o.Idea}
		return out, nil
	}
	if o.Ideas == nil {
		return nil, MissingField(in, why, IdeaFields...)
	}
	out.Ideas = o.Ideas
	return out, nil
}

// IdeasPerNode is how many ideas each node of up gives, from its declared
// fields: the declared count of an "ideas" list (0 when it varies), else 1
// (an "idea", a dataset record's idea column, or a type that declares no
// schema, read as one idea a node).
func IdeasPerNode(up *Upstream) int {
	if up == nil {
		return 0
	}
	var idea, ideas *Field
	for i := range up.Fields {
		switch up.Fields[i].Name {
		case FieldIdea:
			idea = &up.Fields[i]
		case FieldIdeas:
			ideas = &up.Fields[i]
		}
	}
	if ideas != nil && idea == nil {
		return ideas.PerNode
	}
	return 1
}
