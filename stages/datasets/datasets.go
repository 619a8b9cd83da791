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
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	fastjson "github.com/segmentio/encoding/json"
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
	// References is a references file (CSV or JSONL, by extension) joined
	// to the targets of an ideabench-targets-csv dataset; see
	// referenceColumns. "": none.
	References string
	// Categories is a keyword,category file labelling the items of a
	// keyword format with their domain (see keywords.go). "": none.
	Categories string
	// MinReferences keeps only targets with at least this many references
	// (IdeaBench formats; 0: all).
	MinReferences int
	// Sample keeps a seeded random sample of this many items (0: all);
	// SampleSeed chooses it (see sampleItems).
	Sample, SampleSeed int
	// Confine, when set, is asked about every file and folder a load
	// opens (the references and categories files, a folder format's
	// files) and refuses those a confined run may not read (--confine).
	Confine func(path string) error
}

// open opens a file of the load: confined, a regular file, at most max bytes.
func (o Options) open(path string, max int64) (*os.File, error) {
	if o.Confine != nil {
		if err := o.Confine(path); err != nil {
			return nil, err
		}
	}
	return OpenRegular(path, max)
}

// readFile reads a file of the load whole, as open opens it.
func (o Options) readFile(path string, max int64) ([]byte, error) {
	if o.Confine != nil {
		if err := o.Confine(path); err != nil {
			return nil, err
		}
	}
	return ReadRegular(path, max)
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
	if load, ok := folderReaders[format]; ok {
		return load(path, opts) // a folder of files per item (scholarideas.go)
	}
	f, err := opts.open(path, MaxDatasetBytes)
	if err != nil {
		return nil, err
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
	for _, n := range []struct {
		name string
		v    int
	}{{"limit", opts.Limit}, {"min_references", opts.MinReferences}, {"sample", opts.Sample}} {
		if n.v < 0 {
			return nil, fmt.Errorf("%s: %s %d is negative", name, n.name, n.v)
		}
	}
	if opts.References != "" && format != "ideabench-targets-csv" {
		return nil, fmt.Errorf("%s: references joins a references file to format ideabench-targets-csv, not %s", name, format)
	}
	if opts.Categories != "" && !keywordFormats[format] {
		return nil, fmt.Errorf("%s: categories labels the keywords of format liveideabench-keywords or keywords, not %s", name, format)
	}
	if opts.MinReferences > 0 && !strings.HasPrefix(format, "ideabench") {
		return nil, fmt.Errorf("%s: min_references counts the references of IdeaBench targets; format %s has none", name, format)
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
	return selectItems(name, items, opts)
}

// selectItems applies what a dataset keeps beyond the file's first limit
// items, in this order: the references joined, the targets with at least
// min_references, a sample of those. The selection is part of what the
// dataset yields, so changing it changes the items and the keys downstream.
func selectItems(name string, items []Item, opts Options) ([]Item, error) {
	var err error
	if opts.References != "" {
		if items, err = joinReferences(name, items, opts); err != nil {
			return nil, err
		}
	}
	if opts.MinReferences > 0 {
		if items, err = keepMinReferences(name, items, opts.MinReferences); err != nil {
			return nil, err
		}
	}
	return sampleItems(items, opts.Sample, opts.SampleSeed), nil
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
	b, err := json.Marshal(rec)
	if err != nil {
		return c.errorf(line, "encode record: %v", err)
	}
	return c.addEncoded(line, id, b)
}

// MaxIDBytes bounds an item's id: it is part of the address of every node
// of the item (stage instance, id, sample, label), which the cache caps at
// 4 KiB, so a longer id passed validate and then made every run pay calls
// it could not store. 1 KiB leaves room for the rest of the address.
const MaxIDBytes = 1024

// CheckID refuses an id that cannot name an item: empty, longer than
// MaxIDBytes, or holding a control character (a NUL or a newline would
// garble every address, log line and table it reaches).
func CheckID(id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return fmt.Errorf("empty id")
	case len(id) > MaxIDBytes:
		return fmt.Errorf("id of %d bytes (%q...) is longer than %d bytes, the limit for an item id (it is part of every node address); shorten it, or give the dataset another id_field", len(id), truncate(id, 40), MaxIDBytes)
	}
	if i := strings.IndexFunc(id, unicode.IsControl); i >= 0 {
		return fmt.Errorf("id %q holds the control character %U at byte %d; remove it", truncate(id, 60), []rune(id[i:])[0], i)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// addEncoded appends an already encoded record under id.
func (c *collector) addEncoded(line int, id string, b []byte) error {
	if err := CheckID(id); err != nil {
		return c.errorf(line, "%v", err)
	}
	if first, dup := c.seen[id]; dup {
		return c.errorf(line, "duplicate id %q (first on line %d)", id, first)
	}
	c.seen[id] = line
	c.items = append(c.items, Item{ID: id, Record: b})
	return nil
}

// decodeLines reads the non-blank lines as eachLine does (at most max of
// them; 0: all), decodes them on every core in chunks, and hands each
// result to add in line order, stopping at the first error in line order:
// decoding the JSONL of 100k targets is most of a warm run's loading, and
// lines decode independently.
func decodeLines[T any](name string, r io.Reader, max int, decode func(line int, text []byte) (T, error), add func(line int, v T) (stop bool, err error)) error {
	const chunk = 1024
	workers := runtime.GOMAXPROCS(0)
	type job struct {
		line int
		text []byte
	}
	var batch []job
	read := 0
	flush := func() (bool, error) {
		vals := make([]T, len(batch))
		errs := make([]error, len(batch))
		var wg sync.WaitGroup
		per := (len(batch) + workers - 1) / workers
		for lo := 0; lo < len(batch); lo += per {
			hi := min(lo+per, len(batch))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := lo; i < hi; i++ {
					vals[i], errs[i] = decode(batch[i].line, batch[i].text)
				}
			}()
		}
		wg.Wait()
		for i, j := range batch {
			if errs[i] != nil {
				return true, errs[i]
			}
			if stop, err := add(j.line, vals[i]); err != nil || stop {
				return true, err
			}
		}
		batch = batch[:0]
		return false, nil
	}
	done := false
	err := eachLine(name, r, func(line int, text []byte) (bool, error) {
		batch = append(batch, job{line, append([]byte(nil), text...)})
		read++
		if len(batch) < chunk && (max == 0 || read < max) {
			return false, nil
		}
		stop, err := flush()
		done = stop
		if max > 0 && read >= max {
			return true, err
		}
		return stop, err
	})
	if err != nil || done || len(batch) == 0 {
		return err
	}
	_, err = flush()
	return err
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
//
// Lines are decoded by segmentio/encoding's Parse first: it reads the
// typed records of a 100,000-target dataset 3.8 times faster than
// encoding/json's Decoder (73 against 276 ms for 20,000 IdeaBench lines), and
// decoding is most of what loading a large dataset costs on a warm run. It
// applies the same rules (unknown fields refused, numbers kept as
// json.Number, one value per line). A line it refuses is decoded again by
// encoding/json, whose error messages are the ones users see: messages do
// not depend on which decoder ran, and a line only one of them refuses is
// judged by encoding/json.
func decodeStrict(text []byte, v any, disallowUnknown bool) error {
	flags := fastjson.UseNumber
	if disallowUnknown {
		flags |= fastjson.DisallowUnknownFields
	}
	if rest, err := fastjson.Parse(text, v, flags); err == nil && len(bytes.TrimSpace(rest)) == 0 {
		return nil
	}
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
