package report

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages"
)

func drawn(t testing.TB, kind string) string {
	t.Helper()
	f := &Figure{Kind: kind, Title: "t", Series: []Series{{Name: "s", Points: []Point{{X: 0, Y: 1}, {X: 1, Y: 2}}}}, XNames: []string{"a", "b"}}
	var buf bytes.Buffer
	if err := drawFigure(&buf, f, "svg"); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func samplePage(t testing.TB) *Page {
	rank := 2.0
	return &Page{
		Experiment: "exp", Synthetic: true, SyntheticAll: true,
		Summary: RunSummary{Total: 10, Cached: 4, Ran: 5, Failed: 1, LLMCalls: 5, TokensIn: 100, TokensOut: 50, CostUSD: 0.01, WallSeconds: 1.5,
			ServedModels: map[string]map[string]int{"gpt-4o": {"gpt-4o-2024-08-06": 3}, "judge": {"judge": 2}},
			Failures:     []string{`stage.rank_ideas.novelty["b"]/p2: boom`}},
		Provenance: PageProvenance{Ideaflow: "v1.2", ExperimentDigest: "abc", Variables: map[string]string{"n": "3"}, Datasets: map[string]string{"targets": "sha256:def"}},
		Tables: []PageTable{gridTable(t), {Name: "raw", Header: []string{"row", "novelty"}, Numeric: []bool{false, true},
			Rows: [][]PageCell{{{Value: "gpt-4o"}, {Value: "0.614"}}}}},
		Plots: []PagePlot{{Name: "fig4", SVG: drawn(t, "bar"), Figure: &Figure{Omitted: []string{"x: not computed"}}}, {Name: "fig6", SVG: drawn(t, "bar")}},
		Items: []PageItem{{ID: "p1", Groups: []ItemGroup{{Model: "gpt-4o", Ideas: []string{"idea </script><script>alert(1)</script> & <b>"},
			Judgements: []Judgement{{Dimension: "rank_ideas.novelty", Judge: "judge", Shown: map[string]string{"A": "idea 0", "B": "target"}, Order: []string{"B", "A"}, Score: &rank, Rationale: "B is better"}}}}}},
	}
}

func TestWriteHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, samplePage(t)); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<p id="synthetic-banner"`,
		`<th>row</th><th class="num">novelty</th>`, `<td>gpt-4o</td><td class="num">0.614</td>`,
		// grid.md read back: title, alignment, bold, interval, footnotes.
		`<figcaption>Novelty &amp; feasibility by model and scenario <span class="file">(grid)</span></figcaption>`,
		`<th>Model</th><th>Scenario</th><th class="num">Novelty ↑</th><th class="num">Feasibility (0-10) ↓</th>`,
		`<tr><td></td><td>high</td><td class="num"><strong>0.614</strong><wbr><span class="ci"> [0.58, 0.65]</span></td><td class="num">6.2</td></tr>`,
		`<td class="num">0.401<wbr><span class="ci"> [0.35, 0.45]</span><sup><a href="#fn-grid-2">2</a></sup></td><td class="num">n/a<sup><a href="#fn-grid-3">3</a></sup></td>`,
		`<li>Novelty: each value is over 20 items, except where a note says otherwise.</li>`,
		`<li id="fn-grid-3">Feasibility (0-10), Llama 3.1 70B / low: not computed (the stage failed or was skipped).</li>`,
		`<li>not plotted: x: not computed</li>`,
		`<td id="run-nodes">10 total: 4 cached, 5 ran, 1 failed, 0 skipped</td>`,
		`<tr class="rerouted"><td>gpt-4o</td><td>gpt-4o-2024-08-06 (3)</td></tr>`,
		`<tr><td>judge</td><td>judge (2)</td></tr>`,
		`<li>stage.rank_ideas.novelty[&#34;b&#34;]/p2: boom</li>`,
		`<tr><th>var.n</th><td>3</td></tr>`, `<tr><th>dataset.targets</th><td>sha256:def</td></tr>`,
		`<option>gpt-4o</option>`,
		`1 item(s), 1 idea(s), 1 judgement(s).`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Self-contained: nothing to fetch.
	for _, bad := range []string{`src="http`, `href="http`, `<link`, `@import`, `url(http`} {
		if strings.Contains(page, bad) {
			t.Errorf("page refers to something outside itself: %q", bad)
		}
	}
	// Two plots share one font, hoisted once into the page's style.
	if n := strings.Count(page, "@font-face"); n != 1 {
		t.Errorf("%d @font-face rules, want 1 (hoisted from both SVGs)", n)
	}
	if n := strings.Count(page, "<svg"); n != 2 || strings.Contains(page, "<?xml") {
		t.Errorf("%d inline svgs (want 2), xml prolog left: %v", n, strings.Contains(page, "<?xml"))
	}
	// Item text cannot leave its script element: one </script> closes the
	// data, one the code, and the idea's markup is escaped inside the JSON.
	if n := strings.Count(page, "</script>"); n != 2 {
		t.Errorf("%d </script>, want 2", n)
	}
	items := pageItems(t, page)
	if len(items) != 1 || items[0].Groups[0].Ideas[0] != "idea </script><script>alert(1)</script> & <b>" || *items[0].Groups[0].Judgements[0].Score != 2 {
		t.Errorf("items round trip: %+v", items)
	}
}

// pageItems decodes the page's item chunks: gzipped JSON in base64.
func pageItems(t *testing.T, page string) []PageItem {
	t.Helper()
	found := regexp.MustCompile(`(?s)<script class="items-chunk" type="application/gzip;base64">(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if found == nil {
		t.Fatal("no items chunk")
	}
	var chunks []string
	for _, m := range found {
		chunks = append(chunks, m[1])
	}
	return decodeChunks(t, chunks)
}

func decodeChunks(t *testing.T, chunks []string) []PageItem {
	t.Helper()
	items := []PageItem{}
	for i, c := range chunks {
		z, err := base64.StdEncoding.DecodeString(strings.TrimSpace(c))
		if err != nil {
			t.Fatalf("chunk %d is not base64: %v", i, err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		var part []PageItem
		if err := json.Unmarshal(b, &part); err != nil {
			t.Fatalf("chunk %d is not a JSON list: %v", i, err)
		}
		items = append(items, part...)
	}
	return items
}

// Chunks split at the byte limit, never inside an item, and together hold
// every item in order; an item larger than the limit has a chunk of its own.
func TestItemChunks(t *testing.T) {
	var items []PageItem
	for i := range 10 {
		items = append(items, PageItem{ID: fmt.Sprintf("p%d", i), Groups: []ItemGroup{{Model: "m", Ideas: []string{strings.Repeat("x", 100*(i%3))}}}})
	}
	chunks, err := itemChunks(items, 300)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeChunks(t, chunks)
	if len(chunks) != 6 || len(got) != 10 {
		t.Fatalf("%d chunks holding %d items; want 6 chunks, 10 items", len(chunks), len(got))
	}
	for i := range got {
		if got[i].ID != items[i].ID || got[i].Groups[0].Ideas[0] != items[i].Groups[0].Ideas[0] {
			t.Fatalf("item %d: %+v", i, got[i])
		}
	}
	empty, err := itemChunks(nil, 300)
	if err != nil || len(empty) != 1 || len(decodeChunks(t, empty)) != 0 {
		t.Errorf("no items: %d chunks, %v", len(empty), err)
	}
}

func TestWriteHTMLNotSynthetic(t *testing.T) {
	p := samplePage(t)
	p.Synthetic, p.Partial, p.Items = false, true, nil
	var buf bytes.Buffer
	if err := WriteHTML(&buf, p); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, "synthetic-banner") || strings.Contains(page, "SYNTHETIC") {
		t.Error("a page of real results says SYNTHETIC")
	}
	if !strings.Contains(page, `id="partial-banner"`) {
		t.Error("partial banner missing")
	}
	if items := pageItems(t, page); items == nil || len(items) != 0 {
		t.Errorf("items %v, want an empty list", items)
	}
}

// fullSizePage is LiveIdeaBench at full size: 1,180 keywords x 40 models =
// 47,200 ideas of 100 words, each judged by 3 judges with a rationale of 50
// words and three ratings. The words are drawn (seeded) from a vocabulary
// of 3,000, so the text compresses about as English does. (The same page
// as cmd/ideaflow's BenchmarkBrowserFullSize.)
func fullSizePage(tb testing.TB) *Page {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 3000)
	for i := range vocab {
		w := make([]byte, 3+rng.IntN(8))
		for j := range w {
			w[j] = byte('a' + rng.IntN(26))
		}
		vocab[i] = string(w)
	}
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(ws, " ")
	}
	p := &Page{Experiment: "liveideabench", Plots: []PagePlot{{Name: "fig5", SVG: drawn(tb, "bar")}}}
	for k := 0; k < 1180; k++ {
		it := PageItem{ID: fmt.Sprintf("keyword-%04d", k)}
		for m := 0; m < 40; m++ {
			g := ItemGroup{Model: fmt.Sprintf("model-%02d", m), Ideas: []string{text(100)}}
			for j := 0; j < 3; j++ {
				s := float64((k + m + j) % 10)
				g.Judgements = append(g.Judgements, Judgement{Dimension: "liveideabench_judge.critique", Judge: fmt.Sprintf("judge-%d", j), Slot: j, Score: &s,
					Scores: map[string]float64{"originality": s, "feasibility": 10 - s, "clarity": 5}, Rationale: text(50)})
			}
			it.Groups = append(it.Groups, g)
		}
		p.Items = append(p.Items, it)
	}
	return p
}

// BenchmarkHTMLFullSize writes the page at LiveIdeaBench's full size and
// reports its size (the Chromium load time is BenchmarkBrowserFullSize in
// cmd/ideaflow).
func BenchmarkHTMLFullSize(b *testing.B) {
	p := fullSizePage(b)
	var n int
	for b.Loop() {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, p); err != nil {
			b.Fatal(err)
		}
		n = buf.Len()
	}
	b.ReportMetric(float64(n)/1e6, "MB/page")
}

func gridTable(t testing.TB) PageTable {
	return presentedTable(t, "grid")
}

// presentedTable is the table the report presenter lays out from a report
// node's output carrying testdata/NAME.json, the JSON format's golden.
func presentedTable(t testing.TB, name string) PageTable {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(reportOutput{Files: &stages.Files{Files: map[string]string{name + ".md": "..."}}, Table: b})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := stages.Present(reportType{}, &stages.NodeOutput{Block: "report." + name, Work: "compute", Output: out, Params: stages.Params{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Tables) != 1 || len(pr.Rows) != 1 || pr.Rows[0][0].Name != "files" || pr.Rows[0][0].Value != name+".md" {
		t.Fatalf("%s: presented %d tables, rows %+v; want one table and a row naming the files", name, len(pr.Tables), pr.Rows)
	}
	return pr.Tables[0]
}

// The page's table is the report's JSON output laid out as the Markdown
// prints it: for every golden report, the presented table's title,
// header, alignment, cells (value, bold, interval, note, mixed mark),
// notes and footnotes are those of the Markdown golden.
func TestPresentedTablesReadAsTheMarkdown(t *testing.T) {
	for _, name := range []string{"table1", "pivot", "grid", "table1_mixed", "table1_synthetic"} {
		md, err := os.ReadFile("testdata/" + name + ".md")
		if err != nil {
			t.Fatal(err)
		}
		want, ok := TableFromMarkdown(name, string(md))
		if !ok {
			t.Fatalf("%s.md does not read as a report table", name)
		}
		got := presentedTable(t, name)
		if got.Synthetic != want.Synthetic && !(want.Synthetic == "" && got.Synthetic == SyntheticBanner && strings.Contains(string(md), SyntheticBanner)) {
			t.Errorf("%s: synthetic %q, the Markdown %q", name, got.Synthetic, want.Synthetic)
		}
		got.Synthetic, want.Synthetic = "", ""
		// The Markdown reader splits an interval off a bold value only;
		// the page prints Value then Rest either way.
		for _, tab := range []*PageTable{&got, &want} {
			for _, row := range tab.Rows {
				for i := range row {
					row[i].Value, row[i].Rest = row[i].Value+row[i].Rest, ""
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: presented\n%+v\nthe Markdown reads\n%+v", name, got, want)
		}
	}
	// What the JSON lacks before a report's output carried it: no table.
	pr, err := stages.Present(reportType{}, &stages.NodeOutput{Block: "report.x", Work: "compute", Output: []byte(`{"files":{"x.md":"# x"}}`)})
	if err != nil || len(pr.Tables) != 0 {
		t.Errorf("an output without a table: %+v, %v", pr, err)
	}
}

var (
	mdNoteRef  = regexp.MustCompile(`\[\^(\d+)\]$`)
	mdFootnote = regexp.MustCompile(`^\[\^(\d+)\]: (.*)$`)
	mdRule     = regexp.MustCompile(`^:?-+:?$`)
)

// TableFromMarkdown reads a table the report stage wrote as Markdown: the
// title, the table, the "- " notes and the "[^n]: " footnotes. The page
// never does (it shows the JSON output); tests hold the two alike.
func TableFromMarkdown(name, md string) (t PageTable, ok bool) {
	t = PageTable{Name: name}
	inTable, ruled := false, false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case line == "---" && ruled:
			return t, true
		case strings.HasPrefix(line, "|"):
			if ruled && !inTable {
				return t, false
			}
			inTable = true
			cells := splitMarkdownRow(line)
			switch {
			case t.Header == nil:
				t.Header = cells
			case !ruled:
				for _, c := range cells {
					if !mdRule.MatchString(c) {
						return t, false
					}
					t.Numeric = append(t.Numeric, strings.HasSuffix(c, ":"))
				}
				ruled = true
			default:
				row := make([]PageCell, len(cells))
				for i, c := range cells {
					row[i] = markdownCell(c)
				}
				t.Rows = append(t.Rows, row)
			}
		case inTable:
			inTable = false
			fallthrough
		default:
			switch {
			case t.Header == nil && t.Title == "" && (line == SyntheticBanner || strings.HasPrefix(line, MixedPrefix)):
				t.Synthetic, t.Mixed = strings.ReplaceAll(line, `\|`, "|"), line != SyntheticBanner
			case t.Header == nil && strings.HasPrefix(line, "# ") && t.Title == "":
				t.Title = strings.TrimPrefix(line, "# ")
			case ruled && strings.HasPrefix(line, "- "):
				t.Notes = append(t.Notes, strings.ReplaceAll(strings.TrimPrefix(line, "- "), `\|`, "|"))
			case ruled && mdFootnote.MatchString(line):
				m := mdFootnote.FindStringSubmatch(line)
				t.Footnotes = append(t.Footnotes, strings.ReplaceAll(m[2], `\|`, "|"))
			}
		}
	}
	return t, ruled
}

func splitMarkdownRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func markdownCell(c string) PageCell {
	var cell PageCell
	if m := mdNoteRef.FindStringSubmatchIndex(c); m != nil {
		cell.Note, _ = strconv.Atoi(c[m[2]:m[3]])
		c = c[:m[0]]
	}
	c, cell.Synthetic = strings.CutSuffix(c, MixedMark)
	if rest, ok := strings.CutPrefix(c, "**"); ok {
		if i := strings.Index(rest, "**"); i >= 0 {
			cell.Value, cell.Bold, cell.Rest = rest[:i], true, rest[i+2:]
			cell.Value, cell.Underline = underlined(cell.Value)
			return cell
		}
	}
	if rest, ok := strings.CutPrefix(c, "<u>"); ok {
		if i := strings.Index(rest, "</u>"); i >= 0 {
			cell.Value, cell.Underline, cell.Rest = rest[:i], true, rest[i+4:]
			return cell
		}
	}
	cell.Value = c
	return cell
}

// underlined reads Markdown's underline, <u>v</u>.
func underlined(v string) (string, bool) {
	if in, ok := strings.CutPrefix(v, "<u>"); ok {
		if in, ok := strings.CutSuffix(in, "</u>"); ok {
			return in, true
		}
	}
	return v, false
}

// TestWriteHTMLMarksMixedResults: a page some of whose results rest on the
// mock says how many at the top, and marks exactly those: the table's
// cells, the plot, the items.
func TestWriteHTMLMarksMixedResults(t *testing.T) {
	table := presentedTable(t, "table1_mixed")
	p := &Page{Experiment: "exp", Synthetic: true, SyntheticText: "12 of 32 model and service nodes were answered by the mock",
		Tables: []PageTable{table},
		Plots:  []PagePlot{{Name: "fig", SVG: drawn(t, "bar"), Figure: &Figure{Points: 4, SyntheticPoints: 1, Synthetic: true}}},
		Items: []PageItem{{ID: "p1", Groups: []ItemGroup{
			{Model: "gen-a", Ideas: []string{"made up"}, Synthetic: true, Judgements: []Judgement{{Dimension: "rank_ideas.novelty", Synthetic: true}}},
			{Model: "gen-b", Ideas: []string{"real"}, Judgements: []Judgement{{Dimension: "rank_ideas.novelty"}}}}}},
		Summary: RunSummary{Answered: []PageAnswerer{{Name: "endpoint http://gw/v1", Nodes: 20}, {Name: "mock seed 7", Nodes: 12, Synthetic: true}}},
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, p); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`PARTLY SYNTHETIC: some results on this page come from the mock provider (12 of 32 model and service nodes were answered by the mock)`,
		`<p class="banner synthetic table-synthetic">PARTLY SYNTHETIC: 1 of 4 cells (marked †) come from the mock provider`,
		`<td class="num synthetic-cell">0.667<span class="mark" title="from the mock provider">†</span></td>`,
		`<p class="banner synthetic plot-synthetic">1 of 4 points SYNTHETIC: mock provider`,
		`<tr><td>endpoint http://gw/v1</td><td>20</td></tr>`,
		`<tr class="synthetic"><td>mock seed 7</td><td>12 (SYNTHETIC)</td></tr>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, `synthetic-cell"`); n != 1 {
		t.Errorf("%d cells marked, want 1", n)
	}
	items := pageItems(t, page)
	if len(items) != 1 || !items[0].Groups[0].Synthetic || !items[0].Groups[0].Judgements[0].Synthetic ||
		items[0].Groups[1].Synthetic || items[0].Groups[1].Judgements[0].Synthetic {
		t.Errorf("items %+v", items)
	}
}

// TestWriteHTMLUnderlinesAndArrows: the page marks what the Markdown
// marks: the header's better direction, the better of a pivot's pair
// underlined (bold too where it is the measure's best).
func TestWriteHTMLUnderlinesAndArrows(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, &Page{Experiment: "exp", Tables: []PageTable{presentedTable(t, "pivot")}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<th class="num">Novelty (Filtered) ↑</th>`,
		`<td class="num"><u>0.750</u><wbr><span class="ci"> [0.70, 0.80]</span></td>`,
		`<td class="num"><strong><u>0.875</u></strong><wbr><span class="ci"> [0.82, 0.93]</span></td>`,
		`<td class="num"><strong><u>0.438</u></strong></td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<u>"); n != 6 {
		t.Errorf("%d underlined cells, want 6 (one per row and measure)", n)
	}
}
