package datasets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// readJSONL reads one JSON object per line; the id is the Options.IDField
// member (a string, or a number kept exactly as written).
func readJSONL(name string, r io.Reader, opts Options) ([]Item, error) {
	c := newCollector(name, opts)
	field := opts.idField()
	err := eachLine(name, r, func(line int, text []byte) (bool, error) {
		var rec map[string]any
		if err := decodeStrict(text, &rec, false); err != nil {
			return false, c.errorf(line, "%v", err)
		}
		if rec == nil {
			return false, c.errorf(line, "expected a JSON object, got null")
		}
		var id string
		switch v := rec[field].(type) {
		case string:
			id = v
		case json.Number:
			id = v.String()
		case nil:
			return false, c.errorf(line, "no %q field", field)
		default:
			return false, c.errorf(line, "field %q must be a string or a number", field)
		}
		if err := c.add(line, id, rec); err != nil {
			return false, err
		}
		return c.full(), nil
	})
	if err != nil {
		return nil, err
	}
	return c.items, nil
}

// readCSV reads a header row then records; each record becomes an object of
// column name -> cell text.
func readCSV(name string, r io.Reader, opts Options) ([]Item, error) {
	c := newCollector(name, opts)
	cr, cols, err := openCSV(name, r)
	if err != nil {
		return nil, err
	}
	field := opts.idField()
	idCol, ok := cols[field]
	if !ok {
		return nil, c.errorf(1, "no %q column for item ids (have %s); set the id field", field, columnList(cols))
	}
	for !c.full() {
		rec, line, err := nextCSV(name, cr)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		obj := make(map[string]string, len(cols))
		for col, i := range cols {
			obj[col] = rec[i]
		}
		if err := c.add(line, rec[idCol], obj); err != nil {
			return nil, err
		}
	}
	return c.items, nil
}

// RecordFields decodes an item's record for prompt templates, which see it
// as .Item: {{ .Item.keyword }} reads a record's keyword field (a csv
// column, a jsonl member), {{ index .Item "Search Volume" }} one whose name
// is not a Go identifier. Values are as in the record: csv cells are
// strings; jsonl numbers keep their exact text (json.Number), objects are
// maps and arrays lists. A template naming a field the record lacks fails,
// listing the fields it has (stages.Render).
func RecordFields(rec json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(rec))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode record: %w", err)
	}
	if m == nil {
		return nil, fmt.Errorf("decode record: not a JSON object")
	}
	return m, nil
}
