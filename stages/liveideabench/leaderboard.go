package liveideabench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/datasets"
	"github.com/ideaflow/ideaflow/stages/report"
	"github.com/ideaflow/ideaflow/stages/stats"
)

func init() {
	stages.Register(scoreType{})
	stages.Register(leaderboardType{})
}

// The aggregates' params, declared once for both.
var (
	percentileParam = stages.Param{Name: "flexibility_percentile", Kind: stages.Number, Default: 30.0,
		Doc: "flexibility is this percentile (0-100, linear interpolation) of the composite scores (the paper: 30)"}
	flexibilityParam = stages.Param{Name: "flexibility", Kind: stages.String, Default: FlexibilityPaper,
		Doc: `flexibility's composite: "paper" (per judgement, the mean of its originality, its feasibility and its keyword's fluency, as the paper's Methods; the published December 2024 values are all of this form), "per_keyword" (per keyword, the mean of its mean originality, mean feasibility and fluency) or "judged_mean" (per judgement, the mean of the judged dimensions, fluency left out: the authors' stats.ipynb plot)`}
	parseParam = stages.Param{Name: "parse", Kind: stages.String, Default: ParseStrict,
		Doc: `the scores and letters aggregated: "strict" (ideaflow's parse, which re-asks an answer it cannot read) or "authors" (the authors' parser's read of the same answers, authors_parse; an answer it read nothing from is left out and counted as unread, where the authors' code would have asked again)`}
)

func aggregateParams(p stages.Params) (aggOptions, error) {
	mapping, err := fluencyMapping(p)
	if err != nil {
		return aggOptions{}, err
	}
	pc := p.Number("flexibility_percentile")
	if math.IsNaN(pc) || pc < 0 || pc > 100 {
		return aggOptions{}, stages.ParamErrorf("flexibility_percentile", "flexibility_percentile = %v is not in 0..100", pc)
	}
	o := aggOptions{mapping: mapping, percentile: pc, flexibility: p.String("flexibility"), parse: p.String("parse")}
	switch o.flexibility {
	case FlexibilityPaper, FlexibilityPerKeyword, FlexibilityJudgedMean:
	default:
		return aggOptions{}, stages.ParamErrorf("flexibility", `flexibility = %q is not one of %q (the paper's Methods), %q, %q`, o.flexibility, FlexibilityPaper, FlexibilityPerKeyword, FlexibilityJudgedMean)
	}
	switch o.parse {
	case ParseStrict, ParseAuthors:
	default:
		return aggOptions{}, stages.ParamErrorf("parse", `parse = %q is not one of %q (ideaflow's parse) or %q (the authors' parser's read, authors_parse)`, o.parse, ParseStrict, ParseAuthors)
	}
	return o, nil
}

// metrics a liveideabench_score column can show.
var scoreMetrics = []string{"average", "originality", "feasibility", "clarity", "fluency", "flexibility"}

// scoreType (liveideabench_score) is one model's LiveIdeaBench scores as a
// stages.Score, so a report tabulates them: Value is the chosen metric,
// Extra every metric and count of the model's ModelStats.
type scoreType struct{}

func (scoreType) Name() string    { return "liveideabench_score" }
func (scoreType) Version() string { return "4" } // 2: Extra "domain=NAME"; 3: flexibility the paper's composite, parse, mapping v1 to six decimals; 4: the interval over keywords

func (scoreType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Input, Required: true, Doc: "the model's ideas (generate_from_keyword): refusals and drops are counted from them, and keyword domains read"},
		{Name: "judgements", Kind: stages.Input, Required: true, Accepts: []string{"judge_panel"}, Doc: "the judgements of those ideas"},
		{Name: "fluency", Kind: stages.Input, Accepts: []string{"fluency"}, Doc: "the fluency pairs of those ideas; without it there is no fluency and no average"},
		{Name: "metric", Kind: stages.String, Default: "average", Doc: `the Score's value: "average", "originality", "feasibility", "clarity" (or any judged dimension), "fluency" or "flexibility"`},
		mappingParam,
		flexibilityParam,
		percentileParam,
		parseParam,
	}
}

func (scoreType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	opts, err := aggregateParams(p)
	if err != nil {
		return nil, err
	}
	metric := p.String("metric")
	if metric == "" {
		return nil, stages.ParamErrorf("metric", "metric is empty; use one of %s", strings.Join(scoreMetrics, ", "))
	}
	var deps []stages.Dep
	for _, name := range []string{"ideas", "judgements", "fluency"} {
		u := p.Input(name)
		if u == nil {
			if name != "fluency" {
				return nil, stages.ParamErrorf(name, "%s is required", name)
			}
			continue
		}
		deps = append(deps, stages.AllDeps(name, u)...)
	}
	return []stages.Node{{Deps: deps, AllowMissing: true, Prepare: func(in []stages.In) (*stages.Work, error) {
		return &stages.Work{Compute: func() ([]byte, error) {
			g := newAggregator(opts)
			if err := g.addAll(in); err != nil {
				return nil, err
			}
			ms, err := g.finish()
			if err != nil {
				return nil, err
			}
			if len(ms) != 1 {
				return nil, fmt.Errorf("the inputs come from %d models; liveideabench_score scores one (give it one model's instances, or use leaderboard)", len(ms))
			}
			s, err := modelScore(g, g.models[ms[0].Model], metric)
			if err != nil {
				return nil, stages.ParamErrorf("metric", "%v", err)
			}
			return json.Marshal(s)
		}}, nil
	}}}, nil
}

// addAll feeds inputs by the param they come through: ideas first (they
// give the domains), then judgements and fluency.
func (g *aggregator) addAll(in []stages.In) error {
	by := map[string][]stages.In{}
	for _, x := range in {
		by[x.Input] = append(by[x.Input], x)
	}
	if err := g.addIdeas(by["ideas"]); err != nil {
		return err
	}
	if err := g.addJudgements(by["judgements"]); err != nil {
		return err
	}
	return g.addFluency(by["fluency"])
}

// modelScore is a model's Score for metric: Count is what the metric
// averages (judgements, or pairs for fluency), Missing what failed,
// PerItem the per-keyword mean (dimensions and fluency), and Extra
// ci_low, ci_high, ci_level and resamples its 95% bootstrap interval over
// the model's keywords (intervals.go), which a report prints as the
// stage's interval and a plot draws as its error bar.
func modelScore(g *aggregator, a *modelAcc, metric string) (*stages.Score, error) {
	s := a.stats
	v, ok := s.Scores[metric]
	if !ok {
		have := make([]string, 0, len(s.Scores))
		for m := range s.Scores {
			have = append(have, m)
		}
		sort.Strings(have)
		return nil, fmt.Errorf("metric %q has no value for %s (it has %s)", metric, s.Model, strings.Join(have, ", "))
	}
	out := &stages.Score{Value: v, Count: s.Judgements, Missing: s.Missing, Extra: map[string]float64{
		"ideas": float64(s.Ideas), "refusals": float64(s.Refusals), "dropped": float64(s.Dropped),
		"failed_ideas": float64(s.FailedIdeas), "judgements": float64(s.Judgements), "missing_judgements": float64(s.Missing),
		"pairs": float64(s.Pairs), "missing_pairs": float64(s.MissingPair),
	}}
	for m, x := range s.Scores {
		out.Extra[m] = x
	}
	// The metric's mean in each keyword domain, "domain=NAME": the cells of
	// a model x domain heatmap (plot value = "domain=*").
	for d, ms := range s.Domains {
		if x, ok := ms[metric]; ok {
			out.Extra["domain="+d] = x
		}
	}
	if metric == "fluency" {
		out.Count, out.Missing = s.Pairs, s.MissingPair
	}
	if ci, ok := g.keywordSample(a).interval(metric); ok {
		out.Extra["ci_low"], out.Extra["ci_high"] = ci.Low, ci.High
		out.Extra["ci_level"], out.Extra["resamples"] = keywordLevel, keywordResamples
	}
	if metric != "average" && metric != "flexibility" {
		out.PerItem = perItemMeans(a.perItem[metric])
	}
	return out, nil
}

// leaderboardType (leaderboard) ranks every model: one node over all the
// ideas, judgements and fluency pairs, writing NAME.json (Leaderboard:
// what plots need), NAME.md and NAME.csv, with a published leaderboard
// beside the run's when given.
type leaderboardType struct{}

func (leaderboardType) Name() string    { return "leaderboard" }
func (leaderboardType) Version() string { return "3" } // 2: flexibility the paper's composite, parse, mapping v1 to six decimals; 3: intervals over keywords

func (leaderboardType) Params() []stages.Param {
	return []stages.Param{
		{Name: "ideas", Kind: stages.Inputs, Required: true, Doc: "every model's ideas (generate_from_keyword instances)"},
		{Name: "judgements", Kind: stages.Inputs, Required: true, Doc: "every model's judgements (judge_panel instances)"},
		{Name: "fluency", Kind: stages.Inputs, Doc: "every model's fluency pairs (fluency instances)"},
		{Name: "published", Kind: stages.Input, Accepts: []string{"dataset"}, Doc: "a published leaderboard (a liveideabench-leaderboard dataset) to show beside the run's, with Kendall's tau-b between the two"},
		{Name: "formats", Kind: stages.StringList, Default: []string{"markdown", "csv", "json"}, Doc: `files to write: "markdown", "csv", "json"`},
		{Name: "title", Kind: stages.String, Doc: "the Markdown title; default: the stage's name"},
		mappingParam,
		flexibilityParam,
		percentileParam,
		parseParam,
	}
}

// Leaderboard is the content of NAME.json.
type Leaderboard struct {
	Title       string        `json:"title"`
	Synthetic   bool          `json:"synthetic,omitempty"`
	Mapping     string        `json:"mapping"`
	Flexibility string        `json:"flexibility"` // the composite (flexibility param)
	Parse       string        `json:"parse"`       // strict or authors
	Models      []*ModelStats `json:"models"`      // by rank
	// Pareto lists the models on the originality-feasibility front, by
	// originality (highest first).
	Pareto []string `json:"pareto"`
	// Domains lists every keyword domain seen, sorted: the heatmap's columns
	// (each model's Domains holds the cells).
	Domains   []string   `json:"domains,omitempty"`
	Published *Published `json:"published,omitempty"`
	// CILevel and Resamples are the models' Intervals' (over keywords,
	// percentile method, seed 0).
	CILevel   float64 `json:"ci_level"`
	Resamples int     `json:"resamples"`
}

// Published compares the run with a published leaderboard over the models
// both have (matched by name, else by the published short name).
type Published struct {
	Rows []PublishedRow `json:"rows"`
	// TauB is Kendall's tau-b between the run's and the published values of
	// the matched models, per metric (average, originality, ...); absent
	// when undefined (fewer than two models, or a constant column).
	TauB      map[string]float64 `json:"tau_b,omitempty"`
	Unmatched []string           `json:"unmatched,omitempty"` // run models the published board lacks
}

// PublishedRow is one matched model.
type PublishedRow struct {
	Model     string                  `json:"model"`
	Run       map[string]float64      `json:"run"`
	RunRank   int                     `json:"run_rank"`
	Published datasets.LeaderboardRow `json:"published"`
}

func (leaderboardType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	p := inst.Params
	opts, err := aggregateParams(p)
	if err != nil {
		return nil, err
	}
	formats := p.Strings("formats")
	if len(formats) == 0 {
		return nil, stages.ParamErrorf("formats", `formats is empty; give at least one of "markdown", "csv", "json"`)
	}
	for _, f := range formats {
		if f != "markdown" && f != "csv" && f != "json" {
			return nil, stages.ParamErrorf("formats", `formats: unknown format %q (known: "markdown", "csv", "json")`, f)
		}
	}
	var deps []stages.Dep
	for _, name := range []string{"ideas", "judgements", "fluency"} {
		ups := p.Inputs(name)
		if len(ups) == 0 && name != "fluency" {
			return nil, stages.ParamErrorf(name, "%s is empty; give the stage whose instances hold every model's %s", name, name)
		}
		off := 0
		for _, u := range ups {
			for i := range u.Nodes {
				deps = append(deps, stages.Dep{Input: name, Index: off + i})
			}
			off += len(u.Nodes)
		}
	}
	if pub := p.Input("published"); pub != nil {
		deps = append(deps, stages.AllDeps("published", pub)...)
	}
	name := strings.TrimPrefix(inst.Address, "stage.")
	name = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:" []`, r) {
			return '_'
		}
		return r
	}, name)
	title := p.String("title")
	if title == "" {
		title = name
	}
	mappingName := p.String("mapping")
	return []stages.Node{{Deps: deps, AllowMissing: true, WritesFiles: true, Prepare: func(in []stages.In) (*stages.Work, error) {
		return &stages.Work{Compute: func() ([]byte, error) {
			g := newAggregator(opts)
			var published []stages.In
			var rest []stages.In
			for _, x := range in {
				if x.Input == "published" {
					published = append(published, x)
				} else {
					rest = append(rest, x)
				}
			}
			if err := g.addAll(rest); err != nil {
				return nil, err
			}
			ms, err := g.finish()
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				m.Intervals = g.keywordSample(g.models[m.Model]).intervals(m)
			}
			lb := &Leaderboard{Title: title, Synthetic: anySynthetic(rest), Mapping: mappingName, Flexibility: opts.flexibility, Parse: opts.parse, Models: sortedByRank(ms),
				CILevel: keywordLevel, Resamples: keywordResamples}
			lb.fill()
			if len(published) > 0 {
				if lb.Published, err = compare(lb.Models, published); err != nil {
					return nil, err
				}
			}
			files, err := lb.files(name, formats)
			if err != nil {
				return nil, err
			}
			return json.Marshal(files)
		}}, nil
	}}}, nil
}

// fill lists the Pareto front and the domains.
func (lb *Leaderboard) fill() {
	var front []*ModelStats
	domains := map[string]bool{}
	for _, m := range lb.Models {
		if m.Pareto {
			front = append(front, m)
		}
		for d := range m.Domains {
			domains[d] = true
		}
	}
	sort.SliceStable(front, func(i, j int) bool { return front[i].Scores["originality"] > front[j].Scores["originality"] })
	lb.Pareto = []string{}
	for _, m := range front {
		lb.Pareto = append(lb.Pareto, m.Model)
	}
	for d := range domains {
		lb.Domains = append(lb.Domains, d)
	}
	sort.Strings(lb.Domains)
}

// compare matches the run's models with the published rows and computes
// Kendall's tau-b per metric over the matched ones.
func compare(models []*ModelStats, in []stages.In) (*Published, error) {
	rows := make([]datasets.LeaderboardRow, 0, len(in))
	byName, byShort := map[string]int{}, map[string]int{}
	for _, x := range in {
		if x.Output == nil {
			return nil, fmt.Errorf("published leaderboard row %q is missing", x.Node.Item)
		}
		if !stages.HasField(x.Output, "model") {
			return nil, stages.MissingField(x, "a published leaderboard row's model", "model")
		}
		var r datasets.LeaderboardRow
		if err := json.Unmarshal(x.Output, &r); err != nil {
			return nil, fmt.Errorf("published leaderboard row %q is not a liveideabench-leaderboard row: %w", x.Node.Item, err)
		}
		byName[r.Model] = len(rows)
		if r.ModelShort != "" {
			byShort[r.ModelShort] = len(rows)
		}
		rows = append(rows, r)
	}
	out := &Published{Rows: []PublishedRow{}}
	for _, m := range models {
		i, ok := byName[m.Model]
		if !ok {
			i, ok = byShort[m.Model]
		}
		if !ok {
			short := m.Model[strings.LastIndexByte(m.Model, '/')+1:]
			i, ok = byShort[short]
		}
		if !ok {
			out.Unmatched = append(out.Unmatched, m.Model)
			continue
		}
		out.Rows = append(out.Rows, PublishedRow{Model: m.Model, Run: m.Scores, RunRank: m.Rank, Published: rows[i]})
	}
	pub := func(r *datasets.LeaderboardRow, metric string) float64 {
		return map[string]float64{"average": r.Average, "originality": r.Originality, "feasibility": r.Feasibility,
			"fluency": r.Fluency, "flexibility": r.Flexibility}[metric]
	}
	for _, metric := range []string{"average", "originality", "feasibility", "fluency", "flexibility"} {
		var x, y []float64
		for i := range out.Rows {
			if v, ok := out.Rows[i].Run[metric]; ok {
				x = append(x, v)
				y = append(y, pub(&out.Rows[i].Published, metric))
			}
		}
		if tau, err := stats.KendallTauB(x, y); err == nil {
			if out.TauB == nil {
				out.TauB = map[string]float64{}
			}
			out.TauB[metric] = tau
		}
	}
	return out, nil
}

// columns of the tables, in order; a judged dimension beyond the paper's
// three goes after clarity.
func (lb *Leaderboard) columns() []string {
	cols := []string{"originality", "feasibility", "clarity"}
	extra := map[string]bool{}
	for _, m := range lb.Models {
		for k := range m.Scores {
			extra[k] = true
		}
	}
	for _, k := range []string{"originality", "feasibility", "clarity", "fluency", "flexibility", "average"} {
		delete(extra, k)
	}
	var more []string
	for k := range extra {
		more = append(more, k)
	}
	sort.Strings(more)
	return append(append(cols, more...), "fluency", "flexibility", "average")
}

func num(v float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	s := strconv.FormatFloat(v, 'f', 3, 64)
	if s == "-0.000" {
		s = "0.000"
	}
	return s
}

// ciText is a metric's interval as the tables print it, " [5.31, 5.66]"
// (two decimals, as a report's ci_digits), "" without one.
func (m *ModelStats) ciText(metric string) string {
	ci, ok := m.Intervals[metric]
	if !ok {
		return ""
	}
	return " [" + strconv.FormatFloat(ci.Low, 'f', 2, 64) + ", " + strconv.FormatFloat(ci.High, 'f', 2, 64) + "]"
}

// intervalNote says what the brackets are.
func (lb *Leaderboard) intervalNote() string {
	for _, m := range lb.Models {
		if len(m.Intervals) > 0 {
			return fmt.Sprintf("In brackets: %s%% bootstrap intervals [low, high] over the model's keywords (%d resamples of its keywords, each bringing all its judgements and fluency pairs, the value recomputed from them; percentile method, seed 0).",
				strconv.FormatFloat(lb.CILevel*100, 'g', -1, 64), lb.Resamples)
		}
	}
	return ""
}

func (lb *Leaderboard) files(name string, formats []string) (*stages.Files, error) {
	out := &stages.Files{Files: map[string]string{}}
	cols := lb.columns()
	for _, f := range formats {
		switch f {
		case "json":
			b, err := json.MarshalIndent(lb, "", "  ")
			if err != nil {
				return nil, fmt.Errorf("encode leaderboard: %w", err)
			}
			out.Files[name+".json"] = string(b) + "\n"
		case "csv":
			var buf bytes.Buffer
			w := csv.NewWriter(&buf)
			header := []string{"rank", "model", "family"}
			for _, c := range cols {
				header = append(header, c, c+"_ci_low", c+"_ci_high")
			}
			header = append(header, "pareto", "ideas", "refusals", "dropped", "failed_ideas", "judgements", "missing_judgements", "pairs", "missing_pairs")
			if lb.Synthetic {
				header = append(header, "synthetic")
			}
			_ = w.Write(header)
			for _, m := range lb.Models {
				row := []string{rankText(m.Rank), m.Model, m.Family}
				for _, c := range cols {
					v, ok := m.Scores[c]
					if ok {
						row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
					} else {
						row = append(row, "")
					}
					if ci, ok := m.Intervals[c]; ok {
						row = append(row, strconv.FormatFloat(ci.Low, 'g', -1, 64), strconv.FormatFloat(ci.High, 'g', -1, 64))
					} else {
						row = append(row, "", "")
					}
				}
				row = append(row, strconv.FormatBool(m.Pareto), strconv.Itoa(m.Ideas), strconv.Itoa(m.Refusals), strconv.Itoa(m.Dropped),
					strconv.Itoa(m.FailedIdeas), strconv.Itoa(m.Judgements), strconv.Itoa(m.Missing), strconv.Itoa(m.Pairs), strconv.Itoa(m.MissingPair))
				if lb.Synthetic {
					row = append(row, "true")
				}
				_ = w.Write(row)
			}
			w.Flush()
			out.Files[name+".csv"] = buf.String()
		case "markdown":
			out.Files[name+".md"] = lb.markdown(cols)
		}
	}
	return out, nil
}

var (
	flexibilityText = map[string]string{
		FlexibilityPaper:      "each judgement's mean of originality, feasibility and its keyword's fluency (the paper's Methods)",
		FlexibilityPerKeyword: "each keyword's mean of originality, feasibility and fluency",
		FlexibilityJudgedMean: "each judgement's mean of its judged dimensions",
	}
	parseText = map[string]string{ParseStrict: "ideaflow's strict parse", ParseAuthors: "the authors' parser (authors_parse)"}
)

func (lb *Leaderboard) unread() int {
	n := 0
	for _, m := range lb.Models {
		n += m.Unread
	}
	return n
}

func rankText(r int) string {
	if r == 0 {
		return ""
	}
	return strconv.Itoa(r)
}

func (lb *Leaderboard) markdown(cols []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", lb.Title)
	if lb.Synthetic {
		b.WriteString("**" + report.SyntheticBanner + "**\n\n")
	}
	b.WriteString("| Rank | Model |")
	for _, c := range cols {
		b.WriteString(" " + strings.ToUpper(c[:1]) + c[1:] + " |")
	}
	b.WriteString(" Pareto | Ideas | Refusals | Dropped | Missing judgements |\n|---:|---|")
	for range cols {
		b.WriteString("---:|")
	}
	b.WriteString(":---:|---:|---:|---:|---:|\n")
	for _, m := range lb.Models {
		fmt.Fprintf(&b, "| %s | %s |", rankText(m.Rank), m.Model)
		for _, c := range cols {
			v, ok := m.Scores[c]
			b.WriteString(" " + num(v, ok) + m.ciText(c) + " |")
		}
		pareto := ""
		if m.Pareto {
			pareto = "*"
		}
		fmt.Fprintf(&b, " %s | %d | %d | %d | %d |\n", pareto, m.Ideas, m.Refusals, m.Dropped, m.Missing)
	}
	fmt.Fprintf(&b, "\nFluency mapping %s; flexibility: the percentile of %s; scores read by %s; average: mean of fluency, feasibility, originality and flexibility. Pareto (*): the originality-feasibility front.\n", lb.Mapping, flexibilityText[lb.Flexibility], parseText[lb.Parse])
	if note := lb.intervalNote(); note != "" {
		b.WriteString("\n" + note + "\n")
	}
	if unread := lb.unread(); unread > 0 {
		fmt.Fprintf(&b, "\nThe authors' parser read nothing from %d answers (left out; the authors' code would have asked again).\n", unread)
	}
	if p := lb.Published; p != nil {
		b.WriteString("\n## Beside the published leaderboard\n\n| Model | Run rank | Run average | Published rank | Published average |\n|---|---:|---:|---:|---:|\n")
		for _, r := range p.Rows {
			v, ok := r.Run["average"]
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s |\n", r.Model, rankText(r.RunRank), num(v, ok), r.Published.Rank, num(r.Published.Average, true))
		}
		b.WriteString("\nKendall's tau-b, run vs published, over the " + strconv.Itoa(len(p.Rows)) + " models both have:")
		if len(p.TauB) == 0 {
			b.WriteString(" undefined (fewer than two models, or a constant column).")
		}
		for _, m := range []string{"average", "originality", "feasibility", "fluency", "flexibility"} {
			if t, ok := p.TauB[m]; ok {
				fmt.Fprintf(&b, " %s %s;", m, num(t, true))
			}
		}
		b.WriteString("\n")
		if len(p.Unmatched) > 0 {
			fmt.Fprintf(&b, "\nNot on the published leaderboard: %s.\n", strings.Join(p.Unmatched, ", "))
		}
	}
	return b.String()
}

// anySynthetic reports whether any input rests on an answer of the mock, as
// the records it was computed from say.
func anySynthetic(in []stages.In) bool {
	for _, x := range in {
		if x.Provenance.IsSynthetic() {
			return true
		}
	}
	return false
}
