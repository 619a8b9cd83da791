// Package datasets loads the item lists experiments run over: target papers
// with their references (IdeaBench), or generic JSONL/CSV records. Every
// item's record is re-encoded canonically so that the same data always gives
// the same bytes, whatever the file's spacing or key order, and so the same
// cache keys downstream.
package datasets

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Item is one dataset item: its id and its canonical JSON record.
type Item struct {
	ID     string
	Record json.RawMessage
}

// Options tune a load.
type Options struct {
	// IDField names the field (jsonl) or column (csv) holding each item's id;
	// "" means "id". The IdeaBench formats have a fixed id field.
	IDField string
	// Limit keeps only the first Limit items (0: all). Items past the limit are
	// not read, so their errors are not reported.
	Limit int
}

func (o Options) idField() string {
	if o.IDField == "" {
		return "id"
	}
	return o.IDField
}

type reader func(name string, r io.Reader, opts Options) ([]Item, error)

var readers = map[string]reader{
	"ideabench":             readIdeaBench,
	"ideabench-targets-csv": readTargetsCSV,
	"jsonl":                 readJSONL,
	"csv":                   readCSV,
}

// Formats lists the formats Load understands, sorted.
func Formats() []string {
	out := make([]string, 0, len(readers))
	for f := range readers {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Load reads the dataset file at path in format. Errors name the file and the
// line ("targets.jsonl:12: duplicate id \"p3\" (first on line 4)").
func Load(format, path string, opts Options) ([]Item, error) {
	if _, ok := readers[format]; !ok {
		return nil, unknownFormat(format)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *fs.PathError already says "open PATH: ..."
	}
	defer f.Close()
	return Read(format, path, f, opts)
}

// Read is Load over an open reader; name is used in error messages.
func Read(format, name string, r io.Reader, opts Options) ([]Item, error) {
	read, ok := readers[format]
	if !ok {
		return nil, unknownFormat(format)
	}
	if opts.Limit < 0 {
		return nil, fmt.Errorf("%s: limit %d is negative", name, opts.Limit)
	}
	cr := newCheckedReader(name, r)
	items, err := read(name, cr, opts)
	if cr.err != nil {
		// The reader saw at most the start of the offending line: whatever it
		// made of that is a follow-on of this.
		return nil, cr.err
	}
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no items", name)
	}
	return items, nil
}

func unknownFormat(format string) error {
	return fmt.Errorf("unknown dataset format %q (known: %s)", format, strings.Join(Formats(), ", "))
}

// collector gathers items in file order, rejecting empty and duplicate ids.
type collector struct {
	name  string
	limit int
	seen  map[string]int // id -> line it was first seen on
	items []Item
}

func newCollector(name string, opts Options) *collector {
	return &collector{name: name, limit: opts.Limit, seen: map[string]int{}}
}

// full reports whether the limit has been reached.
func (c *collector) full() bool { return c.limit > 0 && len(c.items) >= c.limit }

// add encodes rec canonically and appends it under id.
func (c *collector) add(line int, id string, rec any) error {
	if strings.TrimSpace(id) == "" {
		return c.errorf(line, "empty id")
	}
	if first, dup := c.seen[id]; dup {
		return c.errorf(line, "duplicate id %q (first on line %d)", id, first)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return c.errorf(line, "encode record: %v", err)
	}
	c.seen[id] = line
	c.items = append(c.items, Item{ID: id, Record: b})
	return nil
}

func (c *collector) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", c.name, line, fmt.Sprintf(format, args...))
}

// eachLine calls fn with every non-blank line and its 1-based number until fn
// asks to stop. Lines may be long (abstracts), so the scanner's buffer grows,
// past MaxLineBytes so that the checkedReader in front reports a long line.
func eachLine(name string, r io.Reader, fn func(line int, text []byte) (stop bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), MaxLineBytes+64*1024)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if line == 1 {
			text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf")) // spreadsheet tools add a BOM
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		stop, err := fn(line, text)
		if err != nil || stop {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}

// decodeStrict decodes exactly one JSON value from text into v.
func decodeStrict(text []byte, v any, disallowUnknown bool) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if disallowUnknown {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("invalid JSON: more than one value on the line")
	}
	return nil
}
