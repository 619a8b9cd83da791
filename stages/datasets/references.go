package datasets

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// TargetIDColumn is the column (CSV) or member (JSONL) of a references file
// that names the target paper a row is a reference of: its paperId in the
// targets file.
const TargetIDColumn = "target_id"

// AuthorsTargetIDColumn is the same column as the IdeaBench authors'
// retrieve_references.py writes it (raw_references.csv, filtered_references.csv):
// a references file may use either name, not both.
const AuthorsTargetIDColumn = "targetPaperId"

// referenceColumns are the columns of a references file: Semantic Scholar's
// field names, as its references endpoint returns them (the citing
// paper's intents, contexts and isInfluential beside the cited paper's
// fields), plus TargetIDColumn. A record keeps only what filter_references
// reads; year, contexts and isInfluential are checked, so a file saved
// wrongly fails here, and not kept, so they are not key material.
var referenceColumns = []Field{
	{Name: TargetIDColumn, Type: "string", Required: true, Doc: "the paperId of the target the row is a reference of (or the column " + AuthorsTargetIDColumn + ", as the IdeaBench authors' files name it); rows of targets not loaded are skipped"},
	{Name: "paperId", Type: "string", Required: true, Doc: "becomes references[].id; may be empty or None (Semantic Scholar could not resolve the reference)"},
	{Name: "title", Type: "string", Required: true, Doc: "becomes references[].title"},
	{Name: "abstract", Type: "string", Required: true, Doc: "becomes references[].abstract; empty or None: no abstract (never kept by filter_references)"},
	{Name: "year", Type: "number (whole)", Doc: "checked, not kept"},
	{Name: "citationCount", Type: "number (whole)", Doc: "becomes references[].citations; empty, None or nan: 0; 12.0 is read as 12"},
	{Name: "publicationTypes", Type: "list of strings", Doc: "becomes references[].types"},
	{Name: "intents", Type: "list of strings", Doc: "becomes references[].intents"},
	{Name: "contexts", Type: "list of strings", Doc: "checked, not kept"},
	{Name: "isInfluential", Type: "bool", Doc: "True/False (or true/false); checked, not kept"},
}

// refRow is one row of a references file.
type refRow struct {
	line   int
	target string
	ref    Reference
}

// readReferences reads a references file, CSV or JSONL by its extension, in
// file order.
func readReferences(path string, opts Options) ([]refRow, error) {
	f, err := opts.open(path, MaxDatasetBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := newCheckedReader(path, f)
	var rows []refRow
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		rows, err = readReferencesCSV(path, cr)
	case ".jsonl":
		rows, err = readReferencesJSONL(path, cr)
	default:
		return nil, fmt.Errorf("%s: a references file is read by its extension, .csv or .jsonl; rename the file", path)
	}
	if cr.err != nil {
		return nil, cr.err
	}
	return rows, err
}

func readReferencesCSV(name string, r io.Reader) ([]refRow, error) {
	cr, cols, err := openCSV(name, r)
	if err != nil {
		return nil, err
	}
	_, ours := cols[TargetIDColumn]
	if theirs, ok := cols[AuthorsTargetIDColumn]; ok {
		if ours {
			return nil, fmt.Errorf("%s:1: both %q and %q columns name the target; keep one", name, TargetIDColumn, AuthorsTargetIDColumn)
		}
		cols[TargetIDColumn] = theirs
	}
	for _, c := range referenceColumns {
		if _, ok := cols[c.Name]; c.Required && !ok {
			or := ""
			if c.Name == TargetIDColumn {
				or = fmt.Sprintf(" (or %q)", AuthorsTargetIDColumn)
			}
			return nil, fmt.Errorf("%s:1: no %q column%s (have %s); a references file has the columns %s", name, c.Name, or, columnList(cols), refColumnNames())
		}
	}
	cell := func(rec []string, col string) (string, bool) {
		i, ok := cols[col]
		if !ok {
			return "", false
		}
		return rec[i], true
	}
	var rows []refRow
	for {
		rec, line, err := nextCSV(name, cr)
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		bad := func(col string, err error) error {
			return fmt.Errorf("%s:%d: column %s: %v", name, line, col, err)
		}
		row := refRow{line: line, target: rec[cols[TargetIDColumn]]}
		row.ref.ID = pyNone(rec[cols["paperId"]])
		row.ref.Title = pyNone(rec[cols["title"]])
		row.ref.Abstract = pyNone(rec[cols["abstract"]])
		if s, ok := cell(rec, "year"); ok {
			if _, err := parsePyInt(s); err != nil {
				return nil, bad("year", err)
			}
		}
		if s, ok := cell(rec, "citationCount"); ok {
			if row.ref.Citations, err = parsePyInt(s); err != nil {
				return nil, bad("citationCount", err)
			}
			if err := checkCitations(row.ref.Citations); err != nil {
				return nil, bad("citationCount", err)
			}
		}
		for _, l := range []struct {
			col string
			dst *[]string
		}{{"publicationTypes", &row.ref.Types}, {"intents", &row.ref.Intents}, {"contexts", new([]string)}} {
			if s, ok := cell(rec, l.col); ok {
				if *l.dst, err = parsePyList(s); err != nil {
					return nil, bad(l.col, err)
				}
			}
		}
		if s, ok := cell(rec, "isInfluential"); ok {
			if _, err := parsePyBool(s); err != nil {
				return nil, bad("isInfluential", err)
			}
		}
		rows = append(rows, row)
	}
}

// pyNone reads a text cell, where pandas writes a missing value as None or
// leaves it empty.
func pyNone(s string) string {
	if strings.TrimSpace(s) == "None" {
		return ""
	}
	return s
}

func refColumnNames() string {
	var names []string
	for _, c := range referenceColumns {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// refJSON is one line of a JSONL references file: the same fields, lists as
// JSON arrays, missing values as null.
type refJSON struct {
	TargetID         *string  `json:"target_id"`
	TargetPaperID    *string  `json:"targetPaperId"` // the authors' name for target_id
	PaperID          *string  `json:"paperId"`
	Title            *string  `json:"title"`
	Abstract         *string  `json:"abstract"`
	Year             *int     `json:"year"`
	CitationCount    *int     `json:"citationCount"`
	PublicationTypes []string `json:"publicationTypes"`
	Intents          []string `json:"intents"`
	Contexts         []string `json:"contexts"`
	IsInfluential    *bool    `json:"isInfluential"`
}

func readReferencesJSONL(name string, r io.Reader) ([]refRow, error) {
	var rows []refRow
	err := eachLine(name, r, func(line int, text []byte) (bool, error) {
		var j refJSON
		// Unknown members are errors, as in the ideabench format: a misspelt
		// "citationcount" would otherwise zero every count and drop every
		// reference at min_citations.
		if err := decodeStrict(text, &j, true); err != nil {
			return false, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		switch {
		case j.TargetID != nil && j.TargetPaperID != nil:
			return false, fmt.Errorf("%s:%d: both %q and %q name the target; keep one", name, line, TargetIDColumn, AuthorsTargetIDColumn)
		case j.TargetID == nil && j.TargetPaperID != nil:
			j.TargetID = j.TargetPaperID
		case j.TargetID == nil:
			return false, fmt.Errorf("%s:%d: no %q member (or %q): each line names the target it is a reference of", name, line, TargetIDColumn, AuthorsTargetIDColumn)
		}
		deref := func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		}
		row := refRow{line: line, target: *j.TargetID, ref: Reference{
			ID: deref(j.PaperID), Title: deref(j.Title), Abstract: deref(j.Abstract),
			Types: j.PublicationTypes, Intents: j.Intents,
		}}
		if j.CitationCount != nil {
			row.ref.Citations = *j.CitationCount
			if err := checkCitations(row.ref.Citations); err != nil {
				return false, fmt.Errorf("%s:%d: citationCount: %v", name, line, err)
			}
		}
		rows = append(rows, row)
		return false, nil
	})
	return rows, err
}

// joinReferences sets each item's references to the rows of the references
// file naming it, in file order. Rows of targets not among items are skipped
// (a references file may cover more targets than a subset or a limit loads),
// but a file of which no row names any item is an error: its target ids are
// of another list, or another column.
func joinReferences(name string, items []Item, opts Options) ([]Item, error) {
	rows, err := readReferences(opts.References, opts)
	if err != nil {
		return nil, err
	}
	byTarget := make(map[string][]Reference, len(items))
	index := make(map[string]int, len(items))
	for i, it := range items {
		index[it.ID] = i
	}
	type key struct{ target, ref string }
	first := map[key]int{}
	matched := 0
	for _, r := range rows {
		if strings.TrimSpace(r.target) == "" {
			return nil, fmt.Errorf("%s:%d: empty %s; each row names the paperId of the target it is a reference of", opts.References, r.line, TargetIDColumn)
		}
		if _, ok := index[r.target]; !ok {
			continue
		}
		if r.ref.ID != "" {
			k := key{r.target, r.ref.ID}
			if l, dup := first[k]; dup {
				return nil, fmt.Errorf("%s:%d: reference %q of target %q is listed twice (first on line %d); remove one row", opts.References, r.line, r.ref.ID, r.target, l)
			}
			first[k] = r.line
		}
		matched++
		byTarget[r.target] = append(byTarget[r.target], r.ref)
	}
	if len(rows) > 0 && matched == 0 {
		return nil, fmt.Errorf("%s: no row's %s is the id of a target in %s (first row: %q, first target: %q); the column must hold the targets' paperId",
			opts.References, TargetIDColumn, name, rows[0].target, items[0].ID)
	}
	out := make([]Item, len(items))
	for i, it := range items {
		var p Paper
		if err := json.Unmarshal(it.Record, &p); err != nil {
			return nil, fmt.Errorf("%s: target %q: %v", name, it.ID, err)
		}
		p.References = append(p.References, byTarget[it.ID]...)
		p.normalise()
		b, err := json.Marshal(&p)
		if err != nil {
			return nil, fmt.Errorf("%s: target %q: %v", name, it.ID, err)
		}
		out[i] = Item{ID: it.ID, Record: b}
	}
	return out, nil
}

// keepMinReferences keeps the targets with at least min references (the
// paper's ablation: at least 15), in file order.
func keepMinReferences(name string, items []Item, min int) ([]Item, error) {
	var out []Item
	most := 0
	for _, it := range items {
		var p struct {
			References []json.RawMessage `json:"references"`
		}
		if err := json.Unmarshal(it.Record, &p); err != nil {
			return nil, fmt.Errorf("%s: target %q: %v", name, it.ID, err)
		}
		most = max(most, len(p.References))
		if len(p.References) >= min {
			out = append(out, it)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: min_references = %d keeps none of the %d targets (the most references a target has is %d); lower min_references or give the targets references (a references file, or format ideabench with references)",
			name, min, len(items), most)
	}
	return out, nil
}

// sampleItems keeps k of items, chosen by seed, in file order. Each item is
// ranked by SHA-256 of the seed in decimal, a NUL byte and the item id; the k
// lowest are kept. An item's rank depends on its own id and the seed alone,
// so the sample is the same whatever the file order, and adding a target to
// the file changes at most one member of the sample. k at or above the
// number of items keeps them all.
func sampleItems(items []Item, k, seed int) []Item {
	if k <= 0 || k >= len(items) {
		return items
	}
	type ranked struct {
		i    int
		hash [32]byte
	}
	rs := make([]ranked, len(items))
	prefix := strconv.Itoa(seed) + "\x00"
	for i, it := range items {
		rs[i] = ranked{i, sha256.Sum256([]byte(prefix + it.ID))}
	}
	sort.Slice(rs, func(a, b int) bool { return bytes.Compare(rs[a].hash[:], rs[b].hash[:]) < 0 })
	rs = rs[:k]
	sort.Slice(rs, func(a, b int) bool { return rs[a].i < rs[b].i })
	out := make([]Item, k)
	for j, r := range rs {
		out[j] = items[r.i]
	}
	return out
}
