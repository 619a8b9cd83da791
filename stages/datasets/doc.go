package datasets

// Documentation of the dataset formats, for `ideaflow doc dataset` and
// docs/REFERENCE.md. It sits beside the readers so that a format added to
// readers without a FormatDoc, or a field added to Paper without a Field,
// fails doc_test.go rather than going undocumented.

// Field is one field of an item's record (what stages read) or one column
// of an input file.
type Field struct {
	Name string
	Type string
	// Required says every record has it (non-empty). A record field not
	// Required is optional per item: some records carry it, others do not
	// (an IdeaBench target's idea), and a stage that needs it fails on
	// those, which validate warns about and plan counts (stages.Schema).
	Required bool
	Doc      string
}

// FormatDoc documents one dataset format.
type FormatDoc struct {
	Name string
	Doc  string
	// ID says where each item's id comes from.
	ID string
	// Columns are the columns a CSV format reads (nil for JSON formats).
	Columns []Field
	// Fields are the fields of each item's record, as stages see it; nil
	// when the record is whatever the file holds.
	Fields []Field
}

// Attributes are the attributes of a dataset block.
var Attributes = []Field{
	{Name: "format", Type: "string", Required: true, Doc: "one of the formats below"},
	{Name: "path", Type: "string", Required: true, Doc: "the file, relative to the experiment folder"},
	{Name: "id_field", Type: "string", Doc: `jsonl and csv: the field or column holding each item's id (default "id"); the IdeaBench formats have a fixed one`},
	{Name: "limit", Type: "number (whole)", Doc: "keep only the first limit items (0: all); items past it are not read"},
	{Name: "references", Type: "string", Doc: "ideabench-targets-csv: a references file (.csv or .jsonl, relative to the experiment folder) joined to the targets by its target_id column; see that format"},
	{Name: "categories", Type: "string", Doc: "liveideabench-keywords and keywords: a keyword,category[,similarity_score] CSV (relative to the experiment folder; LiveIdeaBench's csvs/keyword_classifications.csv) giving each keyword its domain; keywords it does not list are loaded without one, and validate warns how many"},
	{Name: "min_references", Type: "number (whole)", Doc: "IdeaBench formats: keep only targets with at least this many references (0: all; the paper's ablation: 15). Applied after limit and references"},
	{Name: "sample", Type: "number (whole)", Doc: "keep a seeded random sample of this many items (0: all), after min_references: the items with the lowest SHA-256 of sample_seed (decimal), a NUL byte and the item id, in file order; a new item changes at most one member"},
	{Name: "sample_seed", Type: "number (whole)", Doc: "the seed of sample (default 0)"},
}

// paperFields are the fields of a Paper record (formats ideabench and
// ideabench-targets-csv), in Paper's order.
var paperFields = []Field{
	{Name: "id", Type: "string", Required: true, Doc: "the item id; unique within the file"},
	{Name: "title", Type: "string", Doc: "the target paper's title"},
	{Name: "abstract", Type: "string", Doc: "the target paper's abstract; required unless idea is given. Never shown to a generator"},
	{Name: "idea", Type: "string", Doc: "the target's own research idea (IdeaBench's abstract summary); rank_ideas compares generated ideas with it, else with the abstract"},
	{Name: "year", Type: "number (whole)", Doc: "publication year"},
	{Name: "keywords", Type: "list of strings", Doc: "topic keywords (generate_ideas template data .Keywords)"},
	{Name: "references", Type: "list of objects", Doc: "the papers the target cites, in order; filter_references keeps some of them"},
	{Name: "references[].id", Type: "string", Doc: "the reference's id"},
	{Name: "references[].title", Type: "string", Doc: "the reference's title"},
	{Name: "references[].abstract", Type: "string", Doc: "the reference's abstract (a reference without one is never kept)"},
	{Name: "references[].citations", Type: "number (whole)", Doc: "how often the reference is cited (filter_references: min_citations)"},
	{Name: "references[].types", Type: "list of strings", Doc: "Semantic Scholar publication types: JournalArticle, Review, ... (filter_references: exclude_types)"},
	{Name: "references[].intents", Type: "list of strings", Doc: "Semantic Scholar citation intents: background, methodology, result (filter_references: require_intent)"},
}

var formatDocs = map[string]FormatDoc{
	"ideabench": {
		Name: "ideabench",
		Doc: "IdeaBench target papers with their references, as JSONL: one JSON object per line. " +
			"An unknown field is an error, so a misspelt field cannot silently empty every prompt.",
		ID:     "the id field",
		Fields: paperFields,
	},
	"ideabench-targets-csv": {
		Name: "ideabench-targets-csv",
		Doc: "The target list IdeaBench publishes, as CSV with a header row; other columns are ignored. " +
			"It carries no references, so filter_references has nothing to keep until the dataset's references attribute joins a references file: " +
			"one row (CSV) or JSON object per line (.jsonl) per target and reference, with Semantic Scholar's reference fields and target_id, the target's paperId. " +
			"In a CSV, lists are Python literals as pandas writes them (['Review', 'JournalArticle'], [], None); in JSONL, JSON arrays or null. " +
			"A row's references keep file order; rows of targets not loaded are skipped.",
		ID: "the paperId column",
		Columns: append([]Field{
			{Name: "paperId", Type: "string", Required: true, Doc: "becomes id"},
			{Name: "title", Type: "string", Required: true, Doc: "becomes title"},
			{Name: "abstract", Type: "string", Required: true, Doc: "becomes abstract (a row needs an abstract or an abstract_summary)"},
			{Name: "year", Type: "number (whole)", Doc: "becomes year; empty cells are allowed"},
			{Name: "abstract_summary", Type: "string", Doc: "becomes idea: the paper's extracted research idea"},
		}, refFileColumns()...),
		Fields: append([]Field{paperFields[0], paperFields[1], paperFields[2], paperFields[3], paperFields[4]}, paperFields[6:]...),
	},
	"jsonl": {
		Name: "jsonl",
		Doc: "Any records, as JSONL: one JSON object per line. The record is the object as written " +
			"(re-encoded canonically), numbers kept exactly. " + itemTemplateDoc,
		ID: "the id_field member (default \"id\"): a string, or a number kept as written",
	},
	"csv": {
		Name: "csv",
		Doc:  "Any records, as CSV with a header row. The record is an object of column name -> cell text: every value is a string. " + itemTemplateDoc,
		ID:   "the id_field column (default \"id\")",
	},
}

// itemTemplateDoc says how prompt templates reach a generic record (see
// RecordFields).
const itemTemplateDoc = "A prompt template that reads the item (generate_from_keyword's prompt) sees the record as .Item, its id as .ID: " +
	"{{ .Item.keyword }} is the keyword field or column, {{ index .Item \"Search Volume\" }} one whose name has spaces. " +
	"A field the record lacks is an error that lists the fields it has."

// refFileColumns documents the references file's columns beside the
// targets file's, named as such.
func refFileColumns() []Field {
	out := make([]Field, len(referenceColumns))
	for i, c := range referenceColumns {
		c.Name = "references file: " + c.Name
		out[i] = c
	}
	return out
}

// Docs returns the documentation of every format Load understands, in the
// order of Formats. A format without documentation is listed with an empty
// Doc (doc_test.go fails on it).
func Docs() []FormatDoc {
	out := make([]FormatDoc, 0, len(readers))
	for _, f := range Formats() {
		d, ok := formatDocs[f]
		if !ok {
			d = FormatDoc{Name: f}
		}
		out = append(out, d)
	}
	return out
}

// FormatFields returns the fields every item's record of format carries,
// as FormatDoc.Fields declares them: a Required field is in every record;
// any other is optional per item (an IdeaBench target's idea is filled for
// some targets only), and a stage that needs it fails on the records
// without it, which plan counts. open is true when the records are
// whatever the file holds (jsonl, csv): the fields are then the data's.
// ok is false for an unknown format.
func FormatFields(format string) (fields []Field, open, ok bool) {
	if _, known := readers[format]; !known {
		return nil, false, false
	}
	d := formatDocs[format]
	return d.Fields, d.Fields == nil, true
}
