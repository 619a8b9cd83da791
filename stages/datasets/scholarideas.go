package datasets

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ScholarIdea is the record of one ScholarIdeas item (format scholarideas):
// a research plan, its literature cutoff and the expert rubric it is
// reviewed against.
type ScholarIdea struct {
	ID     string       `json:"id"`     // the folder name, "ai_1"
	Domain string       `json:"domain"` // the name before the last "_": ai, neuro, biochem, eco
	Idea   string       `json:"idea"`   // <id>.txt, the research plan as written
	Cutoff string       `json:"cutoff"` // cutoff.txt, YYYY-MM-DD: literature published after it is excluded
	Rubric []RubricLine `json:"rubric"` // <id>.jsonl, in file order
}

// RubricLine is one expert rubric statement of a ScholarIdeas item.
type RubricLine struct {
	Statement string `json:"statement"`
	Type      string `json:"type"`     // strength or weakness
	Axis      string `json:"axis"`     // soundness or contribution
	Severity  string `json:"severity"` // major or minor
}

// Rubric label values; anything else is an error at its line.
var (
	RubricTypes      = []string{"strength", "weakness"}
	RubricAxes       = []string{"soundness", "contribution"}
	RubricSeverities = []string{"major", "minor"}
)

// folderReaders are formats whose path is a folder, not a file. Each is also
// listed in readers (so Formats and the docs know it) with a reader that
// refuses a stream.
var folderReaders = map[string]func(path string, opts Options) ([]Item, error){
	"scholarideas": loadScholarIdeas,
}

func init() {
	readers["scholarideas"] = func(name string, _ io.Reader, _ Options) ([]Item, error) {
		return nil, fmt.Errorf("%s: format scholarideas reads a folder of idea folders; give its path to Load", name)
	}
	formatDocs["scholarideas"] = FormatDoc{
		Name: "scholarideas",
		Doc: "ScholarEval's ScholarIdeas: path is a folder holding one folder per idea, <domain>_<n>/, with <domain>_<n>.txt (the research plan), " +
			"<domain>_<n>.jsonl (the expert rubric: one JSON object per line with statement, type strength|weakness, axis soundness|contribution, severity major|minor; " +
			"the last line may lack its newline) and cutoff.txt (one date, YYYY-MM-DD: the literature cutoff). Items are ordered by domain, then by n. " +
			"Other files and folders not named <domain>_<n> are an error, so a mistyped path cannot load half a dataset.",
		ID: "the idea folder's name (ai_1)",
		Fields: []Field{
			{Name: "id", Type: "string", Required: true, Doc: "the folder name"},
			{Name: "domain", Type: "string", Required: true, Doc: "the discipline: the folder name before its last _"},
			{Name: "idea", Type: "string", Required: true, Doc: "the research plan (<id>.txt)"},
			{Name: "cutoff", Type: "string", Required: true, Doc: "the literature cutoff date (cutoff.txt), passed to literature searches as cutoff_date"},
			{Name: "rubric", Type: "list of objects", Required: true, Doc: "the rubric lines, in file order"},
			{Name: "rubric[].statement", Type: "string", Required: true, Doc: "what a review should express"},
			{Name: "rubric[].type", Type: "string", Required: true, Doc: "strength or weakness"},
			{Name: "rubric[].axis", Type: "string", Required: true, Doc: "soundness or contribution"},
			{Name: "rubric[].severity", Type: "string", Required: true, Doc: "major or minor"},
		},
	}
}

// scholarFolder is one idea folder's name split into its sort key.
type scholarFolder struct {
	name, domain string
	n            int
}

func parseScholarFolder(name string) (scholarFolder, bool) {
	i := strings.LastIndex(name, "_")
	if i <= 0 {
		return scholarFolder{}, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 {
		return scholarFolder{}, false
	}
	return scholarFolder{name: name, domain: name[:i], n: n}, true
}

func loadScholarIdeas(dir string, opts Options) ([]Item, error) {
	if opts.References != "" || opts.MinReferences > 0 || opts.IDField != "" {
		return nil, fmt.Errorf("%s: format scholarideas takes neither references, min_references nor id_field", dir)
	}
	if opts.Limit < 0 || opts.Sample < 0 {
		return nil, fmt.Errorf("%s: limit and sample must not be negative", dir)
	}
	if opts.Confine != nil {
		if err := opts.Confine(dir); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scholarideas: %w (path must be the ScholarIdeas folder)", err)
	}
	var folders []scholarFolder
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // .DS_Store, .git: not data
		}
		f, ok := parseScholarFolder(e.Name())
		if !ok || !e.IsDir() {
			return nil, fmt.Errorf("%s: %q is not an idea folder named <domain>_<n>", dir, e.Name())
		}
		folders = append(folders, f)
	}
	sort.Slice(folders, func(i, j int) bool {
		if folders[i].domain != folders[j].domain {
			return folders[i].domain < folders[j].domain
		}
		return folders[i].n < folders[j].n
	})
	c := newCollector(dir, opts)
	for _, f := range folders {
		if c.full() {
			break
		}
		rec, err := readScholarIdea(filepath.Join(dir, f.name), f, opts)
		if err != nil {
			return nil, err
		}
		if err := c.add(0, f.name, rec); err != nil {
			return nil, err
		}
	}
	if len(c.items) == 0 {
		return nil, fmt.Errorf("%s: no idea folders", dir)
	}
	return selectItems(dir, c.items, opts)
}

func readScholarIdea(folder string, f scholarFolder, opts Options) (*ScholarIdea, error) {
	readText := func(name string) (string, error) {
		p := filepath.Join(folder, name)
		b, err := opts.readFile(p, MaxIdeaFileBytes)
		if err != nil {
			return "", err
		}
		if !utf8.Valid(b) {
			return "", fmt.Errorf("%s: not UTF-8", p)
		}
		return string(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))), nil
	}
	idea, err := readText(f.name + ".txt")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(idea) == "" {
		return nil, fmt.Errorf("%s: empty research plan", filepath.Join(folder, f.name+".txt"))
	}
	cutoff, err := readText("cutoff.txt")
	if err != nil {
		return nil, err
	}
	cutoff = strings.TrimSpace(cutoff)
	if _, err := time.Parse(time.DateOnly, cutoff); err != nil {
		return nil, fmt.Errorf("%s: cutoff %q is not a date YYYY-MM-DD", filepath.Join(folder, "cutoff.txt"), cutoff)
	}
	rubricPath := filepath.Join(folder, f.name+".jsonl")
	rf, err := opts.open(rubricPath, MaxIdeaFileBytes)
	if err != nil {
		return nil, err
	}
	defer rf.Close()
	rec := &ScholarIdea{ID: f.name, Domain: f.domain, Idea: idea, Cutoff: cutoff}
	// eachLine's scanner takes a final line without its newline as a line.
	cr := newCheckedReader(rubricPath, rf)
	err = eachLine(rubricPath, cr, func(line int, text []byte) (bool, error) {
		var r RubricLine
		if err := decodeStrict(text, &r, true); err != nil {
			return false, fmt.Errorf("%s:%d: %v", rubricPath, line, err)
		}
		if strings.TrimSpace(r.Statement) == "" {
			return false, fmt.Errorf("%s:%d: empty statement", rubricPath, line)
		}
		for _, v := range []struct {
			field, value string
			allowed      []string
		}{{"type", r.Type, RubricTypes}, {"axis", r.Axis, RubricAxes}, {"severity", r.Severity, RubricSeverities}} {
			if !contains(v.allowed, v.value) {
				return false, fmt.Errorf("%s:%d: %s %q is not one of %s", rubricPath, line, v.field, v.value, strings.Join(v.allowed, ", "))
			}
		}
		rec.Rubric = append(rec.Rubric, r)
		return false, nil
	})
	if cr.err != nil {
		return nil, cr.err
	}
	if err != nil {
		return nil, err
	}
	if len(rec.Rubric) == 0 {
		return nil, fmt.Errorf("%s: no rubric lines", rubricPath)
	}
	return rec, nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
