package report

// report.html: one self-contained page per experiment — its tables, its
// plots, the run summary, provenance and a browser of items.
//
// Why the page is not a stage: a stage node's output is cached content, a
// function of its inputs only, while the page shows what one run did
// (nodes cached/ran/failed, tokens, cost, wall time, the models that
// answered): no node can know that. So the CLI writes the page after a run
// (cmd/ideaflow, writeHTMLPage), from the run's summary, the files the
// report and plot nodes wrote, and the cached outputs of the item-level
// nodes; this file only lays out a Page it is given and knows nothing of
// the engine.
//
// Self-contained: CSS, JavaScript, SVGs and data are inline; the page makes
// no request but its own (the browser test checks it). The SVGs' embedded
// fonts are hoisted into one page-level style, so several plots do not
// carry the same 400 kB font each.
//
// Size: the items travel as chunks of gzipped JSON that the script reads
// one at a time, showing the first page once the first is read; it renders a
// page of items at a time (each item's ideas and judgements only
// when opened), so the DOM stays small at LiveIdeaBench's 47,200 ideas;
// BenchmarkHTMLFullSize measures it.

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

//go:embed html_assets/page.css
var pageCSS string

//go:embed html_assets/page.js
var pageJS string

//go:embed html_assets/page.tmpl
var pageTmpl string

// Page is everything report.html shows.
type Page struct {
	Experiment string
	// ResultsDigest names the results the page shows (engine's
	// Summary.ResultsDigest); written into the page so a later run holding
	// the same results can leave the page as it is (PageDigest).
	ResultsDigest string
	// Synthetic says some result on the page rests on an answer of the
	// mock, as the records say; SyntheticAll says every answer the run
	// read is the mock's, and SyntheticText says how many are when not.
	Synthetic     bool
	SyntheticAll  bool
	SyntheticText string
	Partial       bool // some inputs of this run did not complete
	Summary       RunSummary
	Provenance    PageProvenance
	Tables        []PageTable
	Plots         []PagePlot
	Items         []PageItem
}

// RunSummary is the run's summary as the page shows it.
type RunSummary struct {
	Total, Cached, Ran, Failed, Skipped int
	LLMCalls, ServiceCalls              int
	TokensIn, TokensOut                 int64
	CostUSD                             float64
	WallSeconds                         float64
	// ServedModels: requested model -> model the endpoint said answered -> answers.
	ServedModels map[string]map[string]int
	// Answered lists who answered the run's model and service nodes, as
	// their records say.
	Answered []PageAnswerer
	Failures []string // "address: error"
	// Unpriced names the models without a price block whose calls CostUSD
	// leaves out: the page says the cost is unknown, never $0.
	Unpriced []string
}

// PageAnswerer is one answerer and the model and service nodes it answered.
type PageAnswerer struct {
	Name      string // "endpoint https://api.openai.com/v1", "mock seed 7"
	Nodes     int
	Synthetic bool
}

// PageProvenance is what produced the results.
type PageProvenance struct {
	Ideaflow, ExperimentDigest, GitCommit string
	Variables                             map[string]string
	Datasets                              map[string]string // name -> digest
}

// PagePlot is one plot: its SVG and the figure's data.
type PagePlot struct {
	Name   string
	SVG    string
	Figure *Figure
}

// PageItem is one target paper or keyword with what was generated and
// judged for it, per generating instance (model).
type PageItem struct {
	ID string `json:"id"`
	// Given are the ideas the item's stages were given rather than
	// generated (the idea a ScholarEval review reviews), each once.
	Given  []string    `json:"given,omitempty"`
	Groups []ItemGroup `json:"groups"`
}

// ItemGroup is one generating instance's ideas for an item and the
// judgements of them.
type ItemGroup struct {
	Model      string      `json:"model"` // the instance key or generator name
	Ideas      []string    `json:"ideas"`
	Judgements []Judgement `json:"judgements,omitempty"`
	// Synthetic: some of the ideas were made up by the mock, as their
	// records say.
	Synthetic bool `json:"synthetic,omitempty"`
}

// Judgement is one judge node's answer about an item's ideas, as its
// stage presents it (stages.Judgement).
type Judgement struct {
	// Dimension is what was judged: the judging stage block
	// ("rank_ideas.novelty"), or more where the stage says (a review's
	// kind, a rubric line).
	Dimension string `json:"dimension"`
	Judge     string `json:"judge,omitempty"` // the model that answered
	Slot      int    `json:"slot"`            // permutation or sample index
	Label     string `json:"label,omitempty"`
	// Shown is the order the judge saw: letter -> what it was ("idea 2", "target").
	Shown map[string]string `json:"shown,omitempty"`
	// Order is the judge's ranking, best first (letters).
	Order []string `json:"order,omitempty"`
	// Score is the judgement's number: the target's rank for a ranking,
	// the rating for a rating; nil when it has none.
	Score *float64 `json:"score,omitempty"`
	// Verdict is a judgement that is no number (a letter, a winner).
	Verdict   string             `json:"verdict,omitempty"`
	Scores    map[string]float64 `json:"scores,omitempty"` // named ratings
	Rationale string             `json:"rationale,omitempty"`
	// Synthetic: the judgement rests on an answer of the mock (its own, or
	// the ideas it judged), as the records say.
	Synthetic bool `json:"synthetic,omitempty"`
}

// itemsMarker stands in the template where the items block goes.
const itemsMarker = "ITEMS-DATA-GOES-HERE"

var fontFace = regexp.MustCompile(`@font-face\{[^}]*\}`)

// inlineSVG strips an SVG's XML prolog and moves its @font-face rules into
// fonts (deduplicated across the page), returning the rest.
func inlineSVG(svg string, fonts map[string]bool, order *[]string) string {
	if i := strings.Index(svg, "<svg"); i >= 0 {
		svg = svg[i:]
	}
	return fontFace.ReplaceAllStringFunc(svg, func(rule string) string {
		if !fonts[rule] {
			fonts[rule] = true
			*order = append(*order, rule)
		}
		return ""
	})
}

// pageData is what the template sees.
type pageData struct {
	*Page
	CSS, Fonts template.CSS
	JS         template.JS
	Plots      []plotView
	Models     []string
	Ideas      int
	Judgements int
	Served     []servedView
	Variables  []kv
	Datasets   []kv
}

type plotView struct {
	Name      string
	SVG       template.HTML
	Omitted   []string
	Synthetic string // the figure's SyntheticNote
}

type servedView struct {
	Requested string
	Answered  string
	Rerouted  bool
}

type kv struct{ K, V string }

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"secs": func(v float64) string { return fmt.Sprintf("%.1f s", v) },
	"inc":  func(i int) int { return i + 1 },
	"cost": func(s RunSummary) string {
		if len(s.Unpriced) == 0 {
			return fmt.Sprintf("$%.4f", s.CostUSD)
		}
		unknown := "unknown (no price for " + strings.Join(s.Unpriced, ", ") + ")"
		if s.CostUSD == 0 {
			return unknown
		}
		return fmt.Sprintf("$%.4f for priced models; %s", s.CostUSD, unknown)
	},
	"mark": func() string { return MixedMark },
}).Parse(pageTmpl))

// WriteHTML writes p as one self-contained HTML page.
// PageDigest reads the results digest an existing page was written with
// from its head ("" when it has none): the first 4 KiB hold it.
func PageDigest(head []byte) string {
	const tag = `<meta name="ideaflow-results" content="`
	i := bytes.Index(head, []byte(tag))
	if i < 0 {
		return ""
	}
	rest := head[i+len(tag):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

func WriteHTML(w io.Writer, p *Page) error {
	d := &pageData{Page: p, CSS: template.CSS(pageCSS), JS: template.JS(pageJS)}
	fonts := map[string]bool{}
	var order []string
	for _, pl := range p.Plots {
		v := plotView{Name: pl.Name, SVG: template.HTML(inlineSVG(pl.SVG, fonts, &order))} // our own drawing, not user text
		if pl.Figure != nil {
			v.Omitted = pl.Figure.Omitted
			if note := pl.Figure.SyntheticNote(); note != "" {
				v.Synthetic = note + ": the drawing's values rest on answers the mock made up"
			}
		}
		d.Plots = append(d.Plots, v)
	}
	d.Fonts = template.CSS(strings.Join(order, "\n"))
	models := map[string]bool{}
	for _, it := range p.Items {
		d.Ideas += len(it.Given)
		for _, g := range it.Groups {
			models[g.Model] = true
			d.Ideas += len(g.Ideas)
			d.Judgements += len(g.Judgements)
		}
	}
	for m := range models {
		d.Models = append(d.Models, m)
	}
	sort.Strings(d.Models)
	items := p.Items
	if items == nil {
		items = []PageItem{}
	}
	chunks, err := itemChunks(items, chunkBytes)
	if err != nil {
		return err
	}
	items64 := strings.Join(chunks, "</script>\n<script class=\"items-chunk\" type=\"application/gzip;base64\">")
	for _, req := range slices.Sorted(maps.Keys(p.Summary.ServedModels)) {
		served := p.Summary.ServedModels[req]
		var parts []string
		rerouted := false
		for _, name := range slices.Sorted(maps.Keys(served)) {
			parts = append(parts, fmt.Sprintf("%s (%d)", name, served[name]))
			rerouted = rerouted || name != req
		}
		d.Served = append(d.Served, servedView{Requested: req, Answered: strings.Join(parts, ", "), Rerouted: rerouted})
	}
	for _, k := range slices.Sorted(maps.Keys(p.Provenance.Variables)) {
		d.Variables = append(d.Variables, kv{k, p.Provenance.Variables[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(p.Provenance.Datasets)) {
		d.Datasets = append(d.Datasets, kv{k, p.Provenance.Datasets[k]})
	}
	// The data goes in after the template ran: html/template would escape
	// it as text, and base64 needs no escaping.
	var page bytes.Buffer
	if err := pageTemplate.Execute(&page, d); err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	before, after, ok := strings.Cut(page.String(), itemsMarker)
	if !ok {
		return fmt.Errorf("write report.html: the page template has no items marker")
	}
	for _, part := range []string{before, items64, after} {
		if _, err := io.WriteString(w, part); err != nil {
			return fmt.Errorf("write report.html: %w", err)
		}
	}
	return nil
}

// chunkBytes is the JSON size at which the items start a new chunk: the
// first chunk renders while the rest inflate (at LiveIdeaBench's size,
// 56 chunks: see BenchmarkBrowserFullSize).
const chunkBytes = 2 << 20

// itemChunks encodes the items as chunks of JSON arrays, each at most
// about limit bytes of JSON (an item is never split), gzipped and in
// base64, whose alphabet cannot close the script element a chunk sits in.
// The script shows the first page of items after inflating the first chunk
// (the browser's own DecompressionStream: no request, no library).
//
// Measured at LiveIdeaBench's size (BenchmarkBrowserFullSize, Chromium on
// 2 cores): plain JSON chunks made a 112 MB page, first page after 1.2 s,
// every item read after 1.6 s; gzipped (fastest level, so writing stays
// quick) 57 MB, 0.47 s and 1.7 s.
func itemChunks(items []PageItem, limit int) ([]string, error) {
	var chunks []string
	var cur bytes.Buffer
	flush := func() error {
		cur.WriteByte(']')
		var z bytes.Buffer
		zw, err := gzip.NewWriterLevel(&z, gzip.BestSpeed)
		if err != nil {
			return fmt.Errorf("compress items: %w", err)
		}
		if _, err := zw.Write(cur.Bytes()); err != nil {
			return fmt.Errorf("compress items: %w", err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("compress items: %w", err)
		}
		chunks = append(chunks, base64.StdEncoding.EncodeToString(z.Bytes()))
		cur.Reset()
		return nil
	}
	for _, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, fmt.Errorf("encode item %s: %w", it.ID, err)
		}
		if cur.Len() > 0 && cur.Len()+len(b) > limit {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if cur.Len() == 0 {
			cur.WriteByte('[')
		} else {
			cur.WriteByte(',')
		}
		cur.Write(b)
	}
	if cur.Len() == 0 {
		cur.WriteByte('[')
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return chunks, nil
}
