package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/internal/shareddata"
	"github.com/ideaflow/ideaflow/stages/report"
)

// browserPlot is the plot stage the browser test adds to the quickstart, so
// that its page has a figure to show.
const browserPlot = `
stage "plot" "novelty" {
  kind    = "bar"
  data    = [stage.insight_score.novelty]
  x       = "key"
  series  = ""
  title   = "Insight Score (novelty) by generator"
  y_label = "Insight Score"
}
`

// requireBrowser says whether a missing Chromium fails the test (CI, or a
// developer who asks for it) rather than skipping it.
func requireBrowser() bool {
	ci := strings.ToLower(os.Getenv("CI"))
	return (ci != "" && ci != "0" && ci != "false") || os.Getenv("IDEAFLOW_REQUIRE_BROWSER") == "1"
}

// chromiumPath finds Debian's chromium (or another Chrome) on PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const how = "no Chromium on PATH: install it with `apt-get install chromium` (or `make browser`) to run the report.html browser test"
	if requireBrowser() {
		t.Fatal(how + " (CI or IDEAFLOW_REQUIRE_BROWSER=1: the test must run)")
	}
	t.Skip(how)
	return ""
}

// pageState is what the test reads from the rendered DOM.
type pageState struct {
	Synthetic   bool     `json:"synthetic"`
	Tables      int      `json:"tables"`
	TableText   string   `json:"tableText"`
	PlotSVGs    int      `json:"plotSVGs"`
	PlotText    string   `json:"plotText"`
	Items       int      `json:"items"`
	Ideas       int      `json:"ideas"`
	Rationales  int      `json:"rationales"`
	Rationale   string   `json:"rationale"`
	Shown       string   `json:"shown"`
	Count       string   `json:"count"`
	GroupModels []string `json:"groupModels"`
	RunNodes    string   `json:"runNodes"`
}

const readState = `(() => {
  const q = s => document.querySelectorAll(s);
  const first = s => { const e = document.querySelector(s); return e ? e.textContent : ""; };
  return {
    synthetic: !!document.getElementById("synthetic-banner"),
    tables: q("#tables table").length,
    tableText: first("#tables table"),
    plotSVGs: q("#plots figure.plot svg").length,
    plotText: first("#plots figure.plot svg"),
    items: q("#item-list details.item").length,
    ideas: q("#item-list .idea").length,
    rationales: q("#item-list .rationale").length,
    rationale: first("#item-list .rationale"),
    shown: first("#item-list .shown"),
    count: first("#item-count"),
    groupModels: Array.from(q("#item-list .group")).map(g => g.dataset.model),
    runNodes: first("#run-nodes"),
  };
})()`

// The quickstart's report.html, opened in headless Chromium: its tables,
// plot, items with ideas and rationales are in the rendered DOM, the model
// and text filters work, and the page loads nothing but itself.
func TestBrowserReportPage(t *testing.T) {
	chrome := chromiumPath(t)
	exp := copyQuickstart(t)
	if err := os.WriteFile(filepath.Join(exp, "plot.hcl"), []byte(browserPlot), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	page := filepath.Join(out, "report.html")
	info, err := os.Stat(page)
	if err != nil {
		t.Fatalf("run wrote no report.html: %v", err)
	}
	t.Logf("report.html: %d bytes", info.Size())

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1200, 900), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // start the browser and open the tab
		t.Fatalf("start %s: %v", chrome, err)
	}
	var mu sync.Mutex
	var requests []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if r, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, r.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	// Bounds the whole browser session; a hung browser fails here rather
	// than at the go test timeout.
	tctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer tcancel()
	url := "file://" + page
	if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitReady(`body[data-ready]`)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	if ready, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.dataset.ready + " " + document.getElementById("item-count").textContent`)); err != nil || !strings.HasPrefix(ready, "1 ") {
		t.Fatalf("the item browser did not load: %q %v", ready, err)
	}
	state := func() pageState {
		t.Helper()
		s, err := chromedp.Run(tctx, chromedp.Evaluate[pageState](readState))
		if err != nil {
			t.Fatalf("read the DOM: %v", err)
		}
		return s
	}

	s := state()
	if !s.Synthetic {
		t.Error("the quickstart's page has no SYNTHETIC banner")
	}
	if s.Tables != 1 || !strings.Contains(s.TableText, "mock-generator-a") || !strings.Contains(s.TableText, "mock-generator-b") {
		t.Errorf("tables: %d, text %q; want table1 with both generators", s.Tables, s.TableText)
	}
	if s.PlotSVGs != 1 || !strings.Contains(s.PlotText, "Insight Score (novelty) by generator") {
		t.Errorf("plots: %d svg, text %q; want the novelty bar chart", s.PlotSVGs, s.PlotText)
	}
	// 4 targets; the first is opened: 2 generators x 3 ideas, one ranking each.
	if s.Items != 4 || s.Ideas != 6 || s.Rationales != 2 || s.Rationale == "" || !strings.Contains(s.Shown, "target") {
		t.Errorf("items %d (want 4), ideas shown %d (want 6), rationales %d (want 2), rationale %q, shown %q", s.Items, s.Ideas, s.Rationales, s.Rationale, s.Shown)
	}
	if s.Count != "4 of 4 items" || !strings.Contains(s.RunNodes, "ran") {
		t.Errorf("count %q, run %q", s.Count, s.RunNodes)
	}

	// The model filter: only mock-generator-b's groups remain.
	if err := chromedp.Do(tctx, chromedp.SetValue("#filter-model", "mock-generator-b"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("filter-model").dispatchEvent(new Event("change"))`)); err != nil {
		t.Fatal(err)
	}
	s = state()
	if len(s.GroupModels) != 1 || s.GroupModels[0] != "mock-generator-b" || s.Ideas != 3 {
		t.Errorf("model filter: groups %v, ideas %d; want mock-generator-b's 3 ideas only", s.GroupModels, s.Ideas)
	}
	// The text search, typed: a string no item has leaves none.
	if err := chromedp.Do(tctx, chromedp.SendKeys("#filter-text", "zzz-no-such-text")); err != nil {
		t.Fatal(err)
	}
	if s = state(); s.Count != "0 of 4 items" || s.Items != 0 {
		t.Errorf("search: count %q, %d items; want none", s.Count, s.Items)
	}

	// The score filter (a ranking's score is the target's rank): with the
	// search and model cleared, only judgements that ranked the target
	// first remain, in the items that have one.
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const set = (id, v) => { const e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event("input")); };
		set("filter-text", ""); set("filter-model", ""); set("filter-min", "1"); set("filter-max", "1");
		document.querySelectorAll("#item-list details.item").forEach(d => { d.open = true; });
	})()`)); err != nil {
		t.Fatal(err)
	}
	// An opened item renders on its toggle event, a task of its own: wait
	// until every open item has rendered.
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.querySelectorAll("#item-list details.item[open] .item-body:empty").length === 0`)); err != nil {
		t.Fatal(err)
	}
	scores, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#item-list .judgement .judge .score")).map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	// Every judgement the mock made carries its badge beside the score.
	badges, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll("#item-list .judgement .judge .badge.synthetic").length`))
	if err != nil {
		t.Fatal(err)
	}
	s = state()
	// The mock judge is seeded: 4 of the 8 rankings put the target first,
	// in 3 of the 4 targets.
	if len(scores) != 4 || s.Count != "3 of 4 items" {
		t.Errorf("score filter: judgements %q, count %q; want 4 rank-1 judgements in 3 of 4 items", scores, s.Count)
	}
	if badges != len(scores) {
		t.Errorf("%d judgements shown, %d with the mock's badge; want every one", len(scores), badges)
	}
	for _, j := range scores {
		if j != "score 1" {
			t.Errorf("score filter 1..1 shows %q", j)
		}
	}

	shot, err := chromedp.Run(tctx, chromedp.FullScreenshot(100)) // 100: a PNG (below 100 it is a JPEG)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shotPath := filepath.Join(t.ArtifactDir(), "report.png")
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (kept with go test -artifacts)", shotPath)

	mu.Lock()
	defer mu.Unlock()
	// Data URLs (the fonts hoisted from the SVGs) are not requests; every
	// other URL is one.
	var real []string
	for _, u := range requests {
		if !strings.HasPrefix(u, "data:") {
			real = append(real, u)
		}
	}
	t.Logf("requests: %d (%d data: URLs)", len(requests), len(requests)-len(real))
	if len(real) != 1 || real[0] != url {
		t.Errorf("the page made requests %v; want exactly one, itself (%s)", real, url)
	}
}

// fullSizePage is LiveIdeaBench at full size: 1,180 keywords x 40 models =
// 47,200 ideas of ~100 words, each judged by 3 judges with a rationale of
// ~50 words and three ratings. The words are drawn (seeded) from a
// vocabulary of 3,000, so the text compresses about as English does rather
// than as one word repeated.
func fullSizePage() *report.Page {
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
	p := &report.Page{Experiment: "liveideabench"}
	for k := 0; k < 1180; k++ {
		it := report.PageItem{ID: fmt.Sprintf("keyword-%04d", k)}
		for m := 0; m < 40; m++ {
			g := report.ItemGroup{Model: fmt.Sprintf("model-%02d", m), Ideas: []string{text(100)}}
			for j := 0; j < 3; j++ {
				s := float64((k + m + j) % 10)
				g.Judgements = append(g.Judgements, report.Judgement{Dimension: "liveideabench_judge.critique", Judge: fmt.Sprintf("judge-%d", j), Slot: j, Score: &s,
					Scores: map[string]float64{"originality": s, "feasibility": 10 - s, "clarity": 5}, Rationale: text(50)})
			}
			it.Groups = append(it.Groups, g)
		}
		p.Items = append(p.Items, it)
	}
	return p
}

// BenchmarkBrowserFullSize opens a report.html of LiveIdeaBench's full size
// in headless Chromium and reports the time until the item browser has
// rendered its first page (first_page_ms) and has read every item
// (all_items_ms), the time a search over every item
// takes to re-render (search_ms), and the page's size.
func BenchmarkBrowserFullSize(b *testing.B) {
	chrome := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chrome = p
			break
		}
	}
	if chrome == "" {
		b.Skip("no Chromium on PATH: apt-get install chromium (or make browser)")
	}
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, fullSizePage()); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "report.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(b.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		b.Fatal(err)
	}
	// Times are the page's own (performance marks from the navigation's
	// start): polling the DOM from here while a 100 MB page loads would
	// slow it (the devtools DOM domain mirrors its huge text nodes).
	var first, all, search float64
	for b.Loop() {
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
			b.Fatal(err)
		}
		marks, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`new Promise(resolve => {
			const done = () => { const m = n => performance.getEntriesByName(n)[0].startTime; resolve([m("ideaflow-first-page"), m("ideaflow-all-items")]); };
			if (document.body.dataset.loaded) return done();
			new MutationObserver(() => { if (document.body.dataset.loaded) done(); }).observe(document.body, {attributes: true});
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		first += marks[0]
		all += marks[1]
		res, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`(() => { const e = document.getElementById("filter-text"), t0 = performance.now();
			e.value = "keyword-0042"; e.dispatchEvent(new Event("input")); return [performance.now() - t0, document.getElementById("item-count").textContent]; })()`))
		if err != nil {
			b.Fatal(err)
		}
		search += res[0].(float64)
		if res[1] != "1 of 1180 items" {
			b.Fatalf("search: %q", res[1])
		}
	}
	n := float64(b.N)
	b.ReportMetric(first/n, "first_page_ms")
	b.ReportMetric(all/n, "all_items_ms")
	b.ReportMetric(search/n, "search_ms")
	b.ReportMetric(float64(buf.Len())/1e6, "MB/page")
}

// BenchmarkHTMLPageCollect measures what writing report.html adds to a run:
// planning again and reading every item-level node's output from the cache
// (20 models x 300 targets x 6 ideas = 36,000 ideas, 2 rankings each).
func BenchmarkHTMLPageCollect(b *testing.B) {
	dir := b.TempDir()
	exp := filepath.Join(dir, "exp")
	writeScaleExperiment(b, exp, 20, 300, 6, 2)
	store, err := cache.Create(filepath.Join(dir, "cache"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	g := loadGraph(b, exp)
	e := &engine.Engine{Store: store, Log: zerolog.Nop(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	sum, err := e.Run(context.Background(), g, engine.RunOptions{ReportDir: filepath.Join(dir, "results")})
	if err != nil || sum.Nodes.Failed != 0 {
		b.Fatalf("run: %v, %+v", err, sum.Nodes)
	}
	a := &app{stdout: io.Discard, stderr: io.Discard, log: zerolog.Nop()}
	var size int64
	for b.Loop() {
		path, err := a.writeHTMLPage(g, store, sum, filepath.Join(dir, "results"))
		if err != nil {
			b.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = info.Size()
	}
	b.ReportMetric(float64(sum.Nodes.Total), "nodes")
	b.ReportMetric(float64(size)/1e6, "MB/page")
}

// Without a browser: a run of the quickstart with a plot stage writes the
// plot's SVG, PNG and data, and report.html showing the table, the plot and
// every target's ideas; a second run, all cached, writes the same page but
// for the run summary.
func TestRunWritesReportPage(t *testing.T) {
	exp := copyQuickstart(t)
	if err := os.WriteFile(filepath.Join(exp, "plot.hcl"), []byte(browserPlot), 0o644); err != nil {
		t.Fatal(err)
	}
	out, cacheDir := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	run := func(say string, vars ...string) string {
		t.Helper()
		code, stdout, stderr := cli(t, append([]string{"run", exp, "--cache-dir", cacheDir, "--out", out}, vars...)...)
		if code != 0 {
			t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, say) {
			t.Errorf("run does not say %q:\n%s", say, stdout)
		}
		b, err := os.ReadFile(filepath.Join(out, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wrote := "wrote " + filepath.Join(out, "report.html")
	page := run(wrote)
	for _, f := range []string{"novelty.svg", "novelty.png", "novelty.json", "novelty.provenance.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("plot file: %v", err)
		}
	}
	png, _ := os.ReadFile(filepath.Join(out, "novelty.png"))
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Error("novelty.png is not a PNG")
	}
	// The table as table1.md lays it out: its title, labels, three digits,
	// the best value in bold and the notes; not the CSV's raw columns.
	for _, want := range []string{`id="synthetic-banner"`,
		`<figcaption>Quickstart: Insight Score (novelty) <span class="file">(table1)</span></figcaption>`,
		`<th>Model</th><th class="num">Novelty ↑</th>`, `<tr><td>mock-generator-a</td><td class="num">0.083<wbr><span class="ci"> [0.00, 0.25]</span></td></tr>`,
		`<tr><td>mock-generator-b</td><td class="num"><strong>0.500</strong><wbr><span class="ci"> [0.17, 0.83]</span></td></tr>`,
		`<li>Bold: the best value of each column (higher is better for Novelty).</li>`,
		`<figure class="plot" data-name="novelty">`, `4 item(s), 24 idea(s), 8 judgement(s).`,
		`<td id="run-nodes">49 total: 0 cached, 49 ran, 0 failed, 0 skipped</td>`, `<tr><th>var.n</th><td>3</td></tr>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// A warm re-run holds the same results: the page stays as it is.
	if again := run(filepath.Join(out, "report.html") + " is current"); again != page {
		t.Error("a warm re-run rewrote report.html")
	}
	// Other results (one more sample per target): the page is rebuilt.
	more := run(wrote, "-var", "n=4")
	if !strings.Contains(more, `<td id="run-nodes">59 total: 35 cached, 24 ran, 0 failed, 0 skipped</td>`) {
		t.Errorf("the page after n=4 does not show that run: %s", regexp.MustCompile(`<td id="run-nodes">[^<]*</td>`).FindString(more))
	}
}

// benchmarkPage is one benchmark's quick experiment and what of its
// exports the page's ideas and judgements must equal: the rows (not
// dropped) of the stages that generate ideas, or of the stages that give
// the ideas they review (counted once per item), and of the stages whose
// nodes judge them.
type benchmarkPage struct {
	name       string
	experiment string // under experiments/
	ideas      []string
	givenIdeas []string
	judgements []string
}

var benchmarkPages = []benchmarkPage{
	{name: "quickstart", experiment: "quickstart",
		ideas: []string{"stage.generate_ideas.main"}, judgements: []string{"stage.rank_ideas.novelty"}},
	{name: "ideabench", experiment: "ideabench/main.hcl",
		ideas:      []string{"stage.generate_ideas.table1"},
		judgements: []string{"stage.rank_ideas.novelty", "stage.rank_ideas.feasibility", "stage.overlap_rating.overlap"}},
	{name: "liveideabench", experiment: "liveideabench/quick.hcl",
		ideas: []string{"stage.generate_from_keyword.ideas"}, judgements: []string{"stage.judge_panel.scores", "stage.fluency.pairs"}},
	{name: "scholareval", experiment: "scholareval/quick.hcl",
		givenIdeas: []string{"stage.soundness_methods.se"},
		judgements: []string{"stage.soundness_review.se", "stage.contribution_review.se", "stage.llm_review.baseline",
			"stage.coverage.review", "stage.pairwise_preference.pairs"}},
}

// exportedRows counts the rows `ideaflow export --format jsonl` writes for
// address that are not dropped, and the distinct items among them.
func exportedRows(t *testing.T, exp, cacheDir, address string) (rows int, items map[string]bool) {
	t.Helper()
	code, stdout, stderr := cli(t, "export", address, exp, "--cache-dir", cacheDir, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export %s: exit %d\n%s", address, code, stderr)
	}
	items = map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var row struct {
			Item    string `json:"item"`
			Dropped any    `json:"dropped"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("export %s: %v in %q", address, err, line)
		}
		if row.Dropped == true {
			continue
		}
		rows++
		items[row.Item] = true
	}
	return rows, items
}

// shownItems is what one page of opened items shows.
type shownItems struct {
	Ideas      int      `json:"ideas"`
	Judgements int      `json:"judgements"`
	Raw        []string `json:"raw"` // numbers printed unformatted
	Bad        []string `json:"bad"` // judgements that say not what they judged, or no verdict
	Last       bool     `json:"last"`
}

// evalJS evaluates js in the page and returns its value.
func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%.60s: %v", js, err)
	}
	return v
}

// overflowScript lists what is wider than the viewport: the document, and
// each element whose box reaches past its right edge (10 at most).
const overflowScript = `(() => {
  const de = document.documentElement, w = de.clientWidth, bad = [];
  if (de.scrollWidth > w) bad.push("the document is " + de.scrollWidth + " px wide, the viewport " + w);
  for (const e of document.querySelectorAll("body *")) {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && (r.width > w || r.right > w + 0.5)) {
      bad.push(e.tagName.toLowerCase() + (e.className ? "." + e.className : "") + " spans " + Math.round(r.left) + ".." + Math.round(r.right));
      if (bad.length >= 10) break;
    }
  }
  return bad;
})()`

// Each benchmark's quick experiment, run and opened at 1400 px: the page
// shows every idea as an idea and every judgement as a judgement (with what
// was judged and by whom), as many as the exports hold; its numbers are
// formatted as the tables print them; nothing is wider than the window.
// A screenshot of each page is kept (go test -artifacts).
func TestBrowserBenchmarkPages(t *testing.T) {
	chrome := chromiumPath(t)
	for _, bp := range benchmarkPages {
		t.Run(bp.name, func(t *testing.T) {
			exp := filepath.Join("../../experiments", bp.experiment)
			if bp.name == "quickstart" {
				exp = copyQuickstart(t)
			}
			out, cacheDir := t.TempDir(), filepath.Join(t.TempDir(), "cache")
			if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", out); code != 0 {
				t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
			}
			wantIdeas, wantJudgements := 0, 0
			for _, a := range bp.ideas {
				n, _ := exportedRows(t, exp, cacheDir, a)
				wantIdeas += n
			}
			for _, a := range bp.givenIdeas {
				_, items := exportedRows(t, exp, cacheDir, a)
				wantIdeas += len(items)
			}
			for _, a := range bp.judgements {
				n, _ := exportedRows(t, exp, cacheDir, a)
				wantJudgements += n
			}
			if wantIdeas == 0 || wantJudgements == 0 {
				t.Fatalf("the exports hold %d ideas and %d judgements; the experiment should give both", wantIdeas, wantJudgements)
			}

			opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU,
				chromedp.WindowSize(1400, 900), chromedp.UserDataDir(t.TempDir()))
			actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
			defer cancelAlloc()
			ctx, cancel := chromedp.NewContext(actx)
			defer cancel()
			tctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
			defer tcancel()
			url := "file://" + filepath.Join(out, "report.html")
			if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitReady(`body[data-loaded]`)); err != nil {
				t.Fatalf("open %s: %v", url, err)
			}
			head := evalJS[string](t, tctx, `document.querySelector("#items > p").textContent`)
			if want := fmt.Sprintf("idea(s), %d judgement(s).", wantJudgements); !strings.Contains(head, fmt.Sprintf(" %d idea(s), ", wantIdeas)) || !strings.HasSuffix(head, want) {
				t.Errorf("the page says %q; the exports hold %d ideas and %d judgements", head, wantIdeas, wantJudgements)
			}
			// Every page of items, every item opened: what the DOM shows.
			ideas, judgements, pages := 0, 0, 0
			var rawNumbers, badJudgements []string
			for {
				pages++
				evalJS[bool](t, tctx, `document.querySelectorAll("#item-list details.item").forEach(d => { d.open = true; }); true`)
				if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.querySelectorAll("#item-list details.item[open] .item-body:empty").length === 0`)); err != nil {
					t.Fatal(err)
				}
				s := evalJS[shownItems](t, tctx, `(() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const raw = q("#item-list .judgement .score, #item-list .judgement .scores, #tables td").map(e => e.textContent)
    .filter(t => /\d\.\d{4,}|\btrue\b|\bfalse\b/.test(t));
  const bad = q("#item-list .judgement").filter(j => !j.querySelector(".dimension") || j.querySelector(".dimension").textContent === ""
    || !(j.querySelector(".score") || j.querySelector(".verdict") || j.querySelector(".scores") || j.querySelector(".order") || j.querySelector(".rationale")))
    .map(j => j.textContent.slice(0, 80));
  return {ideas: q("#item-list .idea").length, judgements: q("#item-list .judgement").length, raw: raw.slice(0, 5), bad: bad.slice(0, 5),
    last: document.getElementById("page-next").disabled};
})()`)
				ideas += s.Ideas
				judgements += s.Judgements
				rawNumbers = append(rawNumbers, s.Raw...)
				badJudgements = append(badJudgements, s.Bad...)
				wide := evalJS[[]string](t, tctx, overflowScript)
				if len(wide) > 0 {
					t.Errorf("page %d of items at 1400 px: wider than the window: %s", pages, strings.Join(wide, "; "))
				}
				if pages == 1 {
					shot, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
					if err != nil {
						t.Fatalf("screenshot: %v", err)
					}
					path := filepath.Join(t.ArtifactDir(), bp.name+".png")
					if err := os.WriteFile(path, shot, 0o644); err != nil {
						t.Fatal(err)
					}
					t.Logf("screenshot: %s", path)
				}
				if s.Last {
					break
				}
				evalJS[bool](t, tctx, `document.getElementById("page-next").click(); true`)
			}
			// The check sees what it looks for: an element wider than the
			// window, added for the purpose, is reported.
			evalJS[bool](t, tctx, `(() => { const d = document.createElement("div"); d.id = "too-wide"; d.style.width = "2000px"; document.querySelector("main").appendChild(d); return true; })()`)
			if wide := evalJS[[]string](t, tctx, overflowScript); len(wide) == 0 {
				t.Error("the overflow check misses a 2000 px element")
			}
			evalJS[bool](t, tctx, `(() => { document.getElementById("too-wide").remove(); return true; })()`)
			if ideas != wantIdeas || judgements != wantJudgements {
				t.Errorf("shown over %d page(s): %d ideas, %d judgements; the exports hold %d and %d", pages, ideas, judgements, wantIdeas, wantJudgements)
			}
			if len(rawNumbers) > 0 {
				t.Errorf("numbers not formatted as the tables print them: %q", rawNumbers)
			}
			if len(badJudgements) > 0 {
				t.Errorf("judgements without what was judged or a verdict: %q", badJudgements)
			}
		})
	}
}

// shippedFigures are the shipped experiments that draw figures, how each
// runs offline here (the LiveIdeaBench boards over three keywords, the
// authors' categories and board), and the plot stages each has. The
// .debiased twins draw the same plots from the same blocks.
func shippedFigures(t *testing.T) []struct {
	experiment string
	vars       []string
	figures    []string
} {
	board := []string{"-var", "offline=true", "-var", "keywords=" + absPath(t, "../../stages/report/testdata/latex_keywords.csv"),
		"-var", "categories=" + shareddata.Path(t, "liveideabench", "csvs/keyword_classifications.csv")}
	return []struct {
		experiment string
		vars       []string
		figures    []string
	}{
		{"ideabench/ablation_n.hcl", []string{"-var", "offline=true"}, []string{"figure6"}},
		{"ideabench/ablation_refs.hcl", []string{"-var", "offline=true"}, []string{"figure4", "figure4_similarity"}},
		{"liveideabench/leaderboard.hcl", append(board, "-var", "published="+shareddata.Path(t, "liveideabench", "results/LiveIdeaBench-202412.csv")), []string{"figure3", "figure5"}},
		{"liveideabench/leaderboard_v2.hcl", board, []string{"domains", "pareto"}},
		{"liveideabench/quick.hcl", nil, []string{"figure3", "figure5"}},
	}
}

func absPath(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var (
	plotStage = regexp.MustCompile(`(?m)^stage "plot" "([^"]+)"`)
	svgSize   = regexp.MustCompile(`<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`)
)

// Every shipped figure, as a run writes it and as report.html shows it:
// the run writes exactly the experiment's plot stages' PNGs, each decoding
// to the size its SVG declares (points at the PNG's 144 dpi); the page
// shows exactly those figures, each drawn at its declared aspect ratio and
// within the 1400 px window. Each PNG, and each figure as the browser
// renders it, is kept as an artifact (go test -artifacts): NAME.png and
// NAME.page.png, prefixed with the experiment.
func TestBrowserShippedFigures(t *testing.T) {
	chrome := chromiumPath(t)
	runs := shippedFigures(t)
	// Every shipped experiment with a plot stage is here, with its plots.
	files, err := filepath.Glob("../../experiments/*/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string][]string{}
	for _, r := range runs {
		listed[r.experiment] = r.figures
	}
	for _, f := range files {
		rel := strings.TrimPrefix(filepath.ToSlash(f), "../../experiments/")
		if strings.HasSuffix(rel, ".debiased.hcl") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range plotStage.FindAllStringSubmatch(string(b), -1) {
			names = append(names, m[1])
		}
		slices.Sort(names)
		if len(names) > 0 && !slices.Equal(names, listed[rel]) {
			t.Errorf("%s draws %v; shippedFigures lists %v", rel, names, listed[rel])
		}
	}
	for _, r := range runs {
		stem := strings.TrimSuffix(strings.ReplaceAll(r.experiment, "/", "-"), ".hcl")
		t.Run(stem, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", filepath.Join("../../experiments", r.experiment), "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--out", out}, r.vars...)
			if code, stdout, stderr := cli(t, args...); code != 0 {
				t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
			}
			pngs, err := filepath.Glob(filepath.Join(out, "*.png"))
			if err != nil {
				t.Fatal(err)
			}
			var written []string
			for _, p := range pngs {
				written = append(written, strings.TrimSuffix(filepath.Base(p), ".png"))
			}
			if !slices.Equal(written, r.figures) {
				t.Fatalf("the run wrote the PNGs of %v; want exactly %v", written, r.figures)
			}
			// The aspect ratio each SVG declares, for the page's check.
			aspect := map[string]float64{}
			for _, name := range r.figures {
				b, err := os.ReadFile(filepath.Join(out, name+".png"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(t.ArtifactDir(), stem+"-"+name+".png"), b, 0o644); err != nil {
					t.Fatal(err)
				}
				cfg, err := png.DecodeConfig(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("%s.png: %v", name, err)
				}
				if _, err := png.Decode(bytes.NewReader(b)); err != nil {
					t.Fatalf("%s.png: %v", name, err)
				}
				svg, err := os.ReadFile(filepath.Join(out, name+".svg"))
				if err != nil {
					t.Fatal(err)
				}
				m := svgSize.FindSubmatch(svg)
				if m == nil {
					t.Fatalf("%s.svg declares no size in points: %.200s", name, svg)
				}
				wPt, _ := strconv.ParseFloat(string(m[1]), 64)
				hPt, _ := strconv.ParseFloat(string(m[2]), 64)
				wantW, wantH := int(math.Round(wPt*144/72)), int(math.Round(hPt*144/72))
				if len(b) == 0 || cfg.Width != wantW || cfg.Height != wantH {
					t.Errorf("%s.png: %d bytes, %dx%d; its SVG declares %gx%g pt, %dx%d at 144 dpi", name, len(b), cfg.Width, cfg.Height, wPt, hPt, wantW, wantH)
				}
				aspect[name] = wPt / hPt
			}

			opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU,
				chromedp.WindowSize(1400, 900), chromedp.UserDataDir(t.TempDir()))
			actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
			defer cancelAlloc()
			ctx, cancel := chromedp.NewContext(actx)
			defer cancel()
			tctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
			defer tcancel()
			url := "file://" + filepath.Join(out, "report.html")
			if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitReady(`body[data-loaded]`)); err != nil {
				t.Fatalf("open %s: %v", url, err)
			}
			shown := evalJS[[]string](t, tctx, `Array.from(document.querySelectorAll("#plots figure.plot")).map(f => f.dataset.name).sort()`)
			if !slices.Equal(shown, r.figures) {
				t.Fatalf("the page shows the figures %v; want exactly %v", shown, r.figures)
			}
			for _, name := range r.figures {
				sel := `#plots figure.plot[data-name="` + name + `"] svg`
				box := evalJS[[]float64](t, tctx, `(() => { const r = document.querySelector('`+sel+`').getBoundingClientRect(); return [r.left, r.right, r.width, r.height]; })()`)
				if box[2] <= 0 || box[3] <= 0 || box[0] < 0 || box[1] > 1400 || math.Abs(box[2]/box[3]-aspect[name]) > 0.01*aspect[name] {
					t.Errorf("%s on the page: %v..%v px, %vx%v; want within the 1400 px window at its aspect ratio %.4f", name, box[0], box[1], box[2], box[3], aspect[name])
				}
				shot, err := chromedp.Run(tctx, chromedp.Screenshot(sel))
				if err != nil {
					t.Fatalf("screenshot of %s: %v", name, err)
				}
				cfg, err := png.DecodeConfig(bytes.NewReader(shot))
				if err != nil || cfg.Width == 0 || cfg.Height == 0 {
					t.Errorf("%s as rendered: %d bytes, %+v, %v", name, len(shot), cfg, err)
				}
				if err := os.WriteFile(filepath.Join(t.ArtifactDir(), stem+"-"+name+".page.png"), shot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("figures %v kept in %s", r.figures, t.ArtifactDir())
		})
	}
}
