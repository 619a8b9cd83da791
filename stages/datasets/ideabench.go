package datasets

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Paper is one IdeaBench target paper, the record of an "ideabench" item.
type Paper struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Abstract string `json:"abstract"`
	// Idea is the target's own research idea (IdeaBench's abstract summary).
	// Ranking compares generated ideas against it, or against the abstract
	// when it is empty.
	Idea       string      `json:"idea,omitempty"`
	Year       int         `json:"year,omitempty"`
	Keywords   []string    `json:"keywords,omitempty"`
	References []Reference `json:"references,omitempty"`
}

// Reference is one paper a target cites, with the metadata IdeaBench filters on.
type Reference struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Abstract  string   `json:"abstract"`
	Citations int      `json:"citations"`
	Types     []string `json:"types,omitempty"`   // Semantic Scholar publication types: JournalArticle, Review, ...
	Intents   []string `json:"intents,omitempty"` // Semantic Scholar citation intents: background, methodology, result
}

// checkCitations refuses a negative citation count: a count is 0 or more,
// and a negative one would pass every min_citations filter backwards.
func checkCitations(n int) error {
	if n < 0 {
		return fmt.Errorf("citations %d is negative; a citation count is 0 or more", n)
	}
	return nil
}

// TargetIdea is the text ranking compares generated ideas against.
func (p *Paper) TargetIdea() string {
	if strings.TrimSpace(p.Idea) != "" {
		return p.Idea
	}
	return p.Abstract
}

func (p *Paper) normalise() {
	if len(p.Keywords) == 0 {
		p.Keywords = nil
	}
	if len(p.References) == 0 {
		p.References = nil
	}
	for i := range p.References {
		r := &p.References[i]
		if len(r.Types) == 0 {
			r.Types = nil
		}
		if len(r.Intents) == 0 {
			r.Intents = nil
		}
	}
}

// readIdeaBench reads JSONL, one Paper per line. Unknown fields are errors:
// a misspelt "abstarct" would otherwise silently empty every prompt.
func readIdeaBench(name string, r io.Reader, opts Options) ([]Item, error) {
	c := newCollector(name, opts)
	type decoded struct {
		id  string
		rec []byte
	}
	err := decodeLines(name, r, opts.Limit, func(line int, text []byte) (decoded, error) {
		var p Paper
		if err := decodeStrict(text, &p, true); err != nil {
			return decoded{}, c.errorf(line, "%v", err)
		}
		if strings.TrimSpace(p.Abstract) == "" && strings.TrimSpace(p.Idea) == "" {
			return decoded{}, c.errorf(line, "paper %q has neither an abstract nor an idea to rank against", p.ID)
		}
		for i, r := range p.References {
			if err := checkCitations(r.Citations); err != nil {
				return decoded{}, c.errorf(line, "references[%d] (%q): %v", i, r.ID, err)
			}
		}
		p.normalise()
		b, err := json.Marshal(&p)
		if err != nil {
			return decoded{}, c.errorf(line, "encode record: %v", err)
		}
		return decoded{p.ID, b}, nil
	}, func(line int, d decoded) (bool, error) {
		if err := c.addEncoded(line, d.id, d.rec); err != nil {
			return false, err
		}
		return c.full(), nil
	})
	if err != nil {
		return nil, err
	}
	return c.items, nil
}

// readTargetsCSV reads the target list IdeaBench publishes (paperId, title,
// abstract, year, ..., abstract_summary). It carries no references; its
// abstract_summary is the paper's extracted research idea.
func readTargetsCSV(name string, r io.Reader, opts Options) ([]Item, error) {
	c := newCollector(name, opts)
	cr, cols, err := openCSV(name, r)
	if err != nil {
		return nil, err
	}
	for _, need := range []string{"paperId", "title", "abstract"} {
		if _, ok := cols[need]; !ok {
			return nil, fmt.Errorf("%s:1: no %q column (have %s)", name, need, columnList(cols))
		}
	}
	for !c.full() {
		rec, line, err := nextCSV(name, cr)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		p := Paper{
			ID:       rec[cols["paperId"]],
			Title:    rec[cols["title"]],
			Abstract: rec[cols["abstract"]],
		}
		if i, ok := cols["abstract_summary"]; ok {
			p.Idea = rec[i]
		}
		if i, ok := cols["year"]; ok && strings.TrimSpace(rec[i]) != "" {
			y, err := strconv.Atoi(strings.TrimSpace(rec[i]))
			if err != nil {
				return nil, c.errorf(line, "year %q is not a whole number", rec[i])
			}
			p.Year = y
		}
		if strings.TrimSpace(p.Abstract) == "" && strings.TrimSpace(p.Idea) == "" {
			return nil, c.errorf(line, "paper %q has neither an abstract nor an abstract_summary", p.ID)
		}
		if err := c.add(line, p.ID, &p); err != nil {
			return nil, err
		}
	}
	return c.items, nil
}

// openCSV reads the header row and maps column names to positions.
func openCSV(name string, r io.Reader) (*csv.Reader, map[string]int, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, fmt.Errorf("%s: empty file, expected a header row", name)
	}
	if err != nil {
		return nil, nil, csvError(name, err)
	}
	cols := make(map[string]int, len(header))
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		if h == "" && i > 0 {
			return nil, nil, fmt.Errorf("%s:1: column %d has no name", name, i+1)
		}
		if _, dup := cols[h]; dup {
			return nil, nil, fmt.Errorf("%s:1: duplicate column %q", name, h)
		}
		cols[h] = i
	}
	return cr, cols, nil
}

// nextCSV returns the next record and the line it starts on.
func nextCSV(name string, cr *csv.Reader) ([]string, int, error) {
	rec, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, 0, err
		}
		return nil, 0, csvError(name, err)
	}
	line, _ := cr.FieldPos(0)
	return rec, line, nil
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

func columnList(cols map[string]int) string {
	names := make([]string, len(cols))
	for n, i := range cols {
		names[i] = strconv.Quote(n)
	}
	return strings.Join(names, ", ")
}
