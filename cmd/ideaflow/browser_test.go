package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
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
	if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.WaitReady(`body[data-ready="1"]`)); err != nil {
		t.Fatalf("open %s: %v", url, err)
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

	shot, err := chromedp.Run(tctx, chromedp.FullScreenshot(90))
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
