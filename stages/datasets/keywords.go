package datasets

// LiveIdeaBench keyword lists: one scientific keyword per item, optionally
// labelled with its domain from a classifications file.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Keyword is the record of a keyword item (formats liveideabench-keywords
// and keywords).
type Keyword struct {
	Keyword string `json:"keyword"`
	// Domain is the keyword's category from the categories file; "" when
	// the dataset has none or the file does not list the keyword.
	Domain string `json:"domain,omitempty"`
}

// KeywordID is the item id of a keyword: lower case, runs of white space
// made one space, trimmed. The keyword itself rather than a slug or its row
// number keeps node addresses readable (`["meteorology"]`) and the id
// stable when the list is re-sorted or grows; two spellings that differ
// only in case or spacing are the same keyword and a duplicate.
func KeywordID(keyword string) string {
	return strings.ToLower(strings.Join(strings.Fields(keyword), " "))
}

// keywordFormats are the formats whose items are Keyword records, the only
// ones a categories file can label.
var keywordFormats = map[string]bool{"liveideabench-keywords": true, "keywords": true}

// IsKeywordFormat reports whether format's items are keywords.
func IsKeywordFormat(format string) bool { return keywordFormats[format] }

func init() {
	readers["liveideabench-keywords"] = readKeywordCSV
	readers["keywords"] = readKeywordLines
	formatDocs["liveideabench-keywords"] = FormatDoc{
		Name: "liveideabench-keywords",
		Doc: "LiveIdeaBench's keyword list (csvs/kws.csv): CSV with a header row and a Keyword column; " +
			"the unnamed index column pandas writes, and any other column, is ignored. " +
			"The categories attribute labels each keyword with its domain.",
		ID:      keywordIDDoc,
		Columns: []Field{{Name: "Keyword", Type: "string", Required: true, Doc: "the keyword (a column named keyword is read too)"}},
		Fields:  keywordFields,
	}
	formatDocs["keywords"] = FormatDoc{
		Name: "keywords",
		Doc: "A plain keyword list: one keyword per line; blank lines and lines starting with # are skipped. " +
			"The categories attribute labels each keyword with its domain.",
		ID:     keywordIDDoc,
		Fields: keywordFields,
	}
}

const keywordIDDoc = "the keyword in lower case with its white space collapsed (\"Machine  Learning\" -> \"machine learning\"); two lines that give the same id are an error"

var keywordFields = []Field{
	{Name: "keyword", Type: "string", Required: true, Doc: "the keyword as written, white space collapsed (generate_from_keyword template data .Keyword)"},
	{Name: "domain", Type: "string", Doc: "its category from the categories file (template data .Domain); absent when the file does not list it"},
}

func readKeywordCSV(name string, r io.Reader, opts Options) ([]Item, error) {
	c := newCollector(name, opts)
	cr, cols, err := openCSV(name, r)
	if err != nil {
		return nil, err
	}
	col, ok := cols["Keyword"]
	if !ok {
		col, ok = cols["keyword"]
	}
	if !ok {
		return nil, c.errorf(1, "no Keyword column (have %s); LiveIdeaBench's kws.csv has the header \",Keyword\"", columnList(cols))
	}
	var kws []keywordAt
	for !c.full() && (opts.Limit == 0 || len(kws) < opts.Limit) {
		rec, line, err := nextCSV(name, cr)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		kws = append(kws, keywordAt{line, rec[col]})
	}
	return addKeywords(c, kws, opts)
}

func readKeywordLines(name string, r io.Reader, opts Options) ([]Item, error) {
	c := newCollector(name, opts)
	var kws []keywordAt
	err := eachLine(name, r, func(line int, text []byte) (bool, error) {
		s := strings.TrimSpace(string(text))
		if strings.HasPrefix(s, "#") {
			return false, nil
		}
		kws = append(kws, keywordAt{line, s})
		return opts.Limit > 0 && len(kws) >= opts.Limit, nil
	})
	if err != nil {
		return nil, err
	}
	return addKeywords(c, kws, opts)
}

type keywordAt struct {
	line    int
	keyword string
}

// addKeywords labels the keywords from the categories file, if any, and
// collects them.
func addKeywords(c *collector, kws []keywordAt, opts Options) ([]Item, error) {
	var domains map[string]string
	if opts.Categories != "" {
		var err error
		if domains, err = loadCategories(opts.Categories, opts); err != nil {
			return nil, err
		}
	}
	for _, k := range kws {
		kw := strings.Join(strings.Fields(k.keyword), " ")
		if kw == "" {
			return nil, c.errorf(k.line, "empty keyword")
		}
		id := KeywordID(kw)
		if err := c.add(k.line, id, Keyword{Keyword: kw, Domain: domains[id]}); err != nil {
			return nil, err
		}
	}
	return c.items, nil
}

// loadCategories reads a keyword,category[,similarity_score] file
// (LiveIdeaBench's csvs/keyword_classifications.csv) into keyword id ->
// category. A keyword listed twice must have one category.
func loadCategories(path string, opts Options) (map[string]string, error) {
	f, err := opts.open(path, MaxDatasetBytes)
	if err != nil {
		return nil, fmt.Errorf("categories: %w", err)
	}
	defer f.Close()
	cr, cols, err := openCSV(path, newCheckedReader(path, f))
	if err != nil {
		return nil, err
	}
	kc, ok1 := cols["keyword"]
	cc, ok2 := cols["category"]
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s:1: a categories file needs keyword and category columns (have %s)", path, columnList(cols))
	}
	out := map[string]string{}
	lines := map[string]int{}
	for {
		rec, line, err := nextCSV(path, cr)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		id, cat := KeywordID(rec[kc]), strings.TrimSpace(rec[cc])
		if id == "" || cat == "" {
			return nil, fmt.Errorf("%s:%d: empty keyword or category", path, line)
		}
		if prev, dup := out[id]; dup && prev != cat {
			return nil, fmt.Errorf("%s:%d: keyword %q is in category %q here and %q on line %d", path, line, rec[kc], cat, prev, lines[id])
		}
		out[id], lines[id] = cat, line
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no categories", path)
	}
	return out, nil
}

// Unlabelled returns the ids of the keyword items that have no domain, in
// item order: the keywords a categories file did not list, which the
// domain heatmap leaves out.
func Unlabelled(items []Item) []string {
	var out []string
	for _, it := range items {
		var k Keyword
		if json.Unmarshal(it.Record, &k) == nil && k.Domain == "" {
			out = append(out, it.ID)
		}
	}
	return out
}
