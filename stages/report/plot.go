package report

// The "plot" stage type: a figure drawn from aggregate scores (any stage
// producing stages.Score), written as SVG (fonts embedded, so it renders
// the same in any browser or paper) and PNG.
//
// It is a stage type, used as `stage "plot" "fig4" { ... }`, not a block
// kind of its own: a plot needs nothing a stage block lacks (typed params,
// references as DAG edges, file outputs through Node.WritesFiles), and a
// stage type leaves engine/config untouched. A report block is a block kind
// only because it predates that; a plot is addressed as stage.plot.NAME.
//
// The points are the listed Score instances. Which dimension goes on x,
// which tells the series apart, comes from each instance's for_each key,
// split on `separator`: x = "key[1]" puts the second part of
// "filtered/3" on x, series = "key[0]" draws one line per first part, and
// series = "stage" one line per listed stage block (filtered and unfiltered
// as two stages). Error bars come from the score's Extra ci_low / ci_high
// (the bootstrap stage's) wherever they are present.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ideaflow/ideaflow/stages"
)

func init() { stages.Register(plotType{}) }

// plotKinds are the figures a plot stage draws.
var plotKinds = []string{"line", "bar", "scatter", "heatmap"}

// plotFormats maps each plot file format to its extension.
var plotFormats = map[string]string{"svg": ".svg", "png": ".png"}

type plotType struct{}

func (plotType) Name() string { return "plot" }

// Version 3: points are marked synthetic one by one, from their inputs'
// records, and the figure counts them.
// Version 4: intervals from per-item values, tick and point labels laid
// out from the font's metrics, legend outside the data, colour bar.
func (plotType) Version() string { return "4" }

func (plotType) Params() []stages.Param {
	return []stages.Param{
		{Name: "kind", Kind: stages.String, Default: "line", Doc: `"line" (a line per series, x numeric when every x is a number: IdeaBench Fig. 4, 6), "bar" (grouped bars), "scatter" (data on x, y on y, size as point size, with the Pareto front: LiveIdeaBench Fig. 5), "heatmap" (x by series: IdeaBench Fig. 3)`},
		{Name: "data", Kind: stages.Inputs, Required: true, Doc: "aggregate stages (one node per instance) whose scores are the points; the x value of a scatter"},
		{Name: "y", Kind: stages.Inputs, Doc: "scatter only: aggregate stages giving each point's y, matched to data by instance key"},
		{Name: "size", Kind: stages.Inputs, Doc: "scatter only: aggregate stages giving each point's size (fluency), matched to data by instance key"},
		{Name: "color", Kind: stages.Inputs, Doc: "scatter only: aggregate stages giving each point's colour (flexibility, on a scale shown as a colour bar), matched to data by instance key"},
		{Name: "size_label", Kind: stages.String, Doc: `scatter only: what size shows, for its legend ("fluency"); default: the size stage's name`},
		{Name: "color_label", Kind: stages.String, Doc: `scatter only: what colour shows, for its colour bar ("flexibility"); default: the colour stage's name`},
		{Name: "value", Kind: stages.String, Doc: `which number of each score to plot: "" for its value, else the name of one of its extra values; a name ending in * ("domain=*") plots every extra value so named, x the rest of the name (a model x domain heatmap; x is then ignored)`},
		{Name: "x", Kind: stages.String, Default: "key", Doc: `what labels a point on x: "key" (the instance key), "key[N]" (part N, from 0, of the key split on separator), "stage" (the listed stage's name); ignored by scatter`},
		{Name: "series", Kind: stages.String, Default: "stage", Doc: `what tells the series apart (lines, bar groups, heatmap rows): "stage", "key", "key[N]", or "" for one series; ignored by scatter, whose points are labelled by their instance key`},
		{Name: "separator", Kind: stages.String, Default: "/", Doc: "splits instance keys into parts for key[N]"},
		{Name: "title", Kind: stages.String, Doc: "figure title; default: the plot's name"},
		{Name: "x_label", Kind: stages.String, Doc: "x axis label"},
		{Name: "y_label", Kind: stages.String, Doc: "y axis label"},
		{Name: "pareto", Kind: stages.Bool, Default: true, Doc: "scatter only: draw the Pareto front (higher is better on both axes)"},
		{Name: "formats", Kind: stages.StringList, Default: []string{"svg", "png"}, Doc: `files to write: "svg", "png"`},
		{Name: "panels", Kind: stages.String, Doc: `"stage": one panel per data stage, side by side in one figure with one legend (IdeaBench Fig. 4: novelty and feasibility); default: one panel`},
		{Name: "panel_titles", Kind: stages.StringMap, Doc: `with panels, each data stage's panel title: { "insight_score.novelty_insight_score" = "Novelty" }; default: the stage's name`},
		{Name: "intervals", Kind: stages.Bool, Default: true, Doc: "draw a 95% percentile bootstrap interval (1000 resamples over the items, seed 0) as the error bar of each value whose stage gave none, when the value is a mean or percentile of its per-item values, as report's intervals; false: only the stages' own"},
	}
}

// selector picks a label from an instance: its key, a key part or its stage.
type selector struct {
	what string // "key", "part", "stage", "none"
	part int
}

func parseSelector(param, s string) (selector, error) {
	switch {
	case s == "":
		return selector{what: "none"}, nil
	case s == "key" || s == "stage":
		return selector{what: s}, nil
	case strings.HasPrefix(s, "key[") && strings.HasSuffix(s, "]"):
		n, err := strconv.Atoi(s[4 : len(s)-1])
		if err == nil && n >= 0 && n < 16 {
			return selector{what: "part", part: n}, nil
		}
	}
	return selector{}, stages.ParamErrorf(param, `%s = %q: use "key", "key[N]" (N from 0: a part of the key split on separator), "stage" or ""`, param, s)
}

// pick returns the label sel chooses for an instance.
func (sel selector) pick(key, stage, sep string) (string, error) {
	switch sel.what {
	case "key":
		return key, nil
	case "stage":
		return stage, nil
	case "part":
		parts := strings.Split(key, sep)
		if sel.part >= len(parts) {
			return "", fmt.Errorf("key %q has %d part(s) split on %q, no part %d", key, len(parts), sep, sel.part)
		}
		return parts[sel.part], nil
	}
	return "", nil
}

// plotInput is one listed Score instance.
type plotInput struct {
	role    string // the param: data, y or size
	address string
	key     string
	stage   string // the stage block's name, "insight_score.novelty"
}

// plotSpec is a plot stage instance laid out.
type plotSpec struct {
	name, title, kind     string
	xLabel, yLabel, value string
	sep                   string
	x, series             selector
	pareto                bool
	intervals             bool
	sizeLabel, colorLabel string
	panels                bool
	panelTitles           map[string]string
	formats               []string
	inputs                []plotInput // in dep order
	byRoleKey             map[string]map[string]int
	dataOrder             []int // indexes into inputs of the data instances
}

func (plotType) Layout(inst *stages.Instance) ([]stages.Node, error) {
	spec, deps, err := layoutPlot(inst)
	if err != nil {
		return nil, err
	}
	return []stages.Node{{
		Deps:         deps,
		AllowMissing: true,
		WritesFiles:  true,
		Prepare: func(in []stages.In) (*stages.Work, error) {
			scores, err := spec.index(in)
			if err != nil {
				return nil, err
			}
			return &stages.Work{Compute: func() ([]byte, error) {
				fig, err := spec.panelled(scores)
				if err != nil {
					return nil, err
				}
				out, err := spec.render(fig)
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(out)
				if err != nil {
					return nil, fmt.Errorf("encode plot: %w", err)
				}
				return b, nil
			}}, nil
		},
	}}, nil
}

func layoutPlot(inst *stages.Instance) (*plotSpec, []stages.Dep, error) {
	p := inst.Params
	s := &plotSpec{
		name: plotName(inst.Address), title: p.String("title"), kind: p.String("kind"),
		xLabel: p.String("x_label"), yLabel: p.String("y_label"), value: p.String("value"),
		sep: p.String("separator"), pareto: p.Bool("pareto"), intervals: p.Bool("intervals"),
		sizeLabel: p.String("size_label"), colorLabel: p.String("color_label"),
		panelTitles: p.StringMap("panel_titles"),
		formats:     p.Strings("formats"), byRoleKey: map[string]map[string]int{},
	}
	if s.title == "" {
		s.title = s.name
	}
	if !containsStr(plotKinds, s.kind) {
		return nil, nil, stages.ParamErrorf("kind", "kind = %q: use one of %s", s.kind, quoteList(plotKinds))
	}
	if len(s.formats) == 0 {
		return nil, nil, stages.ParamErrorf("formats", `formats is empty; give "svg", "png" or both`)
	}
	for _, f := range s.formats {
		if _, ok := plotFormats[f]; !ok {
			return nil, nil, stages.ParamErrorf("formats", `formats: unknown format %q (known: "png", "svg")`, f)
		}
	}
	switch pn := p.String("panels"); pn {
	case "":
	case "stage":
		if s.kind == "scatter" || s.kind == "heatmap" {
			return nil, nil, stages.ParamErrorf("panels", "panels is for line and bar plots; a %s is one panel", s.kind)
		}
		s.panels = true
	default:
		return nil, nil, stages.ParamErrorf("panels", `panels = %q; use "stage" (a panel per data stage) or leave it out`, pn)
	}
	if s.sep == "" {
		return nil, nil, stages.ParamErrorf("separator", "separator is empty; give the text between key parts (\"/\")")
	}
	var err error
	if s.x, err = parseSelector("x", p.String("x")); err != nil {
		return nil, nil, err
	}
	if s.series, err = parseSelector("series", p.String("series")); err != nil {
		return nil, nil, err
	}
	if s.kind != "scatter" {
		for _, role := range []string{"y", "size", "color"} {
			if len(p.Inputs(role)) > 0 {
				return nil, nil, stages.ParamErrorf(role, "%s is for kind = \"scatter\" only; a %s plot draws data alone", role, s.kind)
			}
		}
	} else if len(p.Inputs("y")) == 0 {
		return nil, nil, stages.ParamErrorf("y", "a scatter needs y: the aggregate stages giving each point's y (data gives x)")
	}
	if len(p.Inputs("data")) == 0 {
		return nil, nil, stages.ParamErrorf("data", "data is empty; give at least one aggregate stage")
	}
	var deps []stages.Dep
	for _, role := range []string{"data", "y", "size", "color"} {
		offset := 0
		s.byRoleKey[role] = map[string]int{}
		for _, u := range p.Inputs(role) {
			if len(u.Nodes) != 1 || u.Nodes[0].Item != "" {
				return nil, nil, stages.ParamErrorf(role, "%s: %s has %d nodes; a plot reads aggregate stages with one node (insight_score, bootstrap, ...)", role, u.Address, len(u.Nodes))
			}
			if prev, dup := s.byRoleKey[role][u.Key]; dup && role != "data" {
				return nil, nil, stages.ParamErrorf(role, "%s: %s and %s have the same instance key %q; a scatter matches %s to data by key, so list one stage per key", role, s.inputs[prev].address, u.Address, u.Key, role)
			}
			s.byRoleKey[role][u.Key] = len(s.inputs)
			if role == "data" {
				s.dataOrder = append(s.dataOrder, len(s.inputs))
			}
			s.inputs = append(s.inputs, plotInput{role: role, address: u.Address, key: u.Key,
				stage: strings.TrimPrefix(stageAddress(u.Address), "stage.")})
			deps = append(deps, stages.Dep{Input: role, Index: offset})
			offset += len(u.Nodes)
		}
	}
	if s.kind == "scatter" {
		for _, i := range s.dataOrder {
			k := s.inputs[i].key
			if _, ok := s.byRoleKey["y"][k]; !ok {
				return nil, nil, stages.ParamErrorf("y", "y: no instance has key %q of %s; list the y stage whose instances match data's", k, s.inputs[i].address)
			}
		}
	}
	// Labels must be computable from every key: check now, at the block.
	for _, i := range s.dataOrder {
		in := s.inputs[i]
		if _, err := s.x.pick(in.key, in.stage, s.sep); err != nil && s.kind != "scatter" {
			return nil, nil, stages.ParamErrorf("x", "x: %s: %v", in.address, err)
		}
		if _, err := s.series.pick(in.key, in.stage, s.sep); err != nil && s.kind != "scatter" {
			return nil, nil, stages.ParamErrorf("series", "series: %s: %v", in.address, err)
		}
	}
	return s, deps, nil
}

// plotScore is one listed instance's score (nil when it failed) and
// whether the records it rests on say it is made up.
type plotScore struct {
	*stages.Score
	synthetic bool
}

// index maps (role, address) to each input's score; nil for a failed one.
func (s *plotSpec) index(in []stages.In) ([]plotScore, error) {
	if len(in) != len(s.inputs) {
		return nil, fmt.Errorf("plot got %d inputs, want %d (one per listed instance)", len(in), len(s.inputs))
	}
	pos := map[string]int{}
	for i, x := range s.inputs {
		pos[x.role+"\x00"+x.address] = i
	}
	out := make([]plotScore, len(s.inputs))
	seen := make([]bool, len(s.inputs))
	for _, x := range in {
		if x.From == nil {
			return nil, fmt.Errorf("input %s node %d does not say which instance it comes from (In.From is nil)", x.Input, x.Index)
		}
		i, ok := pos[x.Input+"\x00"+x.From.Address]
		if !ok || seen[i] {
			return nil, fmt.Errorf("unexpected input %s from %s", x.Input, x.From.Address)
		}
		seen[i] = true
		if x.Output == nil {
			continue
		}
		if stages.LacksField(x.Output, "value") {
			return nil, stages.MissingField(x, "the score plotted", "value")
		}
		var sc stages.Score
		if err := json.Unmarshal(x.Output, &sc); err != nil {
			return nil, fmt.Errorf("%s: not a score: %w", x.From.Address, err)
		}
		if s.intervals && !hasCI(&sc) && sc.Count > 0 {
			if st := inferStatistic(&sc); st != nil {
				addInterval(&sc, st, 0)
			}
		}
		out[i] = plotScore{Score: &sc, synthetic: x.Provenance.IsSynthetic()}
	}
	return out, nil
}

// Figure is what a plot shows, before drawing: tests assert on it exactly
// (the drawn SVG is checked for structure only).
type Figure struct {
	Kind   string `json:"kind"`
	Title  string `json:"title"`
	XLabel string `json:"x_label,omitempty"`
	YLabel string `json:"y_label,omitempty"`
	// XNames are the categories on x (empty: x is numeric).
	XNames []string `json:"x_names,omitempty"`
	Series []Series `json:"series"`
	// SizeLabel and ColorLabel say what a scatter's point size and colour
	// show (its size legend and colour bar).
	SizeLabel  string `json:"size_label,omitempty"`
	ColorLabel string `json:"color_label,omitempty"`
	// heat is a drawn heatmap's value range (its colour bar), set by drawing.
	heat *heatRange
	// Panels are the figure's panels, side by side (panels = "stage"), each
	// a figure of its own; Series then lists all of theirs.
	Panels []*Figure `json:"panels,omitempty"`
	// legend are the legend's entries, as drawing adds them.
	legend []string
	// Pareto lists the points (by series 0 index) on the Pareto front of a scatter.
	Pareto []int `json:"pareto,omitempty"`
	// Omitted says which instances have no point and why.
	Omitted []string `json:"omitted,omitempty"`
	// Synthetic says some point is made up (it rests on an answer of the
	// mock, as the records say); SyntheticPoints of Points are, and their
	// Point.Synthetic says which. The title says so too.
	Synthetic       bool `json:"synthetic,omitempty"`
	SyntheticPoints int  `json:"synthetic_points,omitempty"`
	Points          int  `json:"points"`
}

// countSynthetic counts the figure's points and its synthetic ones.
func (f *Figure) countSynthetic() {
	f.Points, f.SyntheticPoints = 0, 0
	for _, ser := range f.Series {
		for _, p := range ser.Points {
			f.Points++
			if p.Synthetic {
				f.SyntheticPoints++
			}
		}
	}
	f.Synthetic = f.SyntheticPoints > 0
}

// SyntheticNote is what a figure's title adds about made-up points: "" for
// none, every point, or how many of them.
func (f *Figure) SyntheticNote() string {
	switch {
	case f.SyntheticPoints == 0:
		return ""
	case f.SyntheticPoints == f.Points:
		return "SYNTHETIC: mock provider"
	}
	return fmt.Sprintf("%d of %d points SYNTHETIC: mock provider", f.SyntheticPoints, f.Points)
}

// Series is one line, bar group, heatmap row, or a scatter's points.
type Series struct {
	Name   string  `json:"name"`
	Points []Point `json:"points"`
}

// Point is one plotted score. X is the numeric x (or the category's index);
// Lo/Hi are the CI bounds when the score has them.
type Point struct {
	Label string   `json:"label,omitempty"`
	X     float64  `json:"x"`
	Y     float64  `json:"y"`
	XLo   *float64 `json:"x_lo,omitempty"`
	XHi   *float64 `json:"x_hi,omitempty"`
	Lo    *float64 `json:"lo,omitempty"`
	Hi    *float64 `json:"hi,omitempty"`
	Size  *float64 `json:"size,omitempty"`
	// Color is the value a scatter point's colour shows (color input).
	Color *float64 `json:"color,omitempty"`
	// Synthetic: a score the point shows rests on an answer of the mock.
	Synthetic bool `json:"synthetic,omitempty"`
}

// pick reads the plotted number of a score and its CI, if any. A CI is
// read only for the value itself: ci_low/ci_high bound Score.Value.
func (s *plotSpec) pick(ps plotScore) (v float64, lo, hi *float64, ok bool) {
	sc := ps.Score
	if sc == nil || sc.Count == 0 {
		return 0, nil, nil, false
	}
	if s.value != "" {
		v, ok = sc.Extra[s.value]
		return v, nil, nil, ok
	}
	if l, ok1 := sc.Extra["ci_low"]; ok1 {
		if h, ok2 := sc.Extra["ci_high"]; ok2 {
			lo, hi = &l, &h
		}
	}
	return sc.Value, lo, hi, true
}

func (s *plotSpec) why(in plotInput, ps plotScore) string {
	sc := ps.Score
	switch {
	case sc == nil:
		return in.address + ": not computed (failed or skipped)"
	case sc.Count == 0:
		return in.address + ": no items scored"
	default:
		return fmt.Sprintf("%s: the score has no extra value %q", in.address, s.value)
	}
}

// panelled is the figure, with a panel per data stage when panels says so:
// each panel laid out as a figure of that stage's instances alone, the
// figure's series all the panels' (named "PANEL: SERIES") so a reader of
// its JSON sees every point.
func (s *plotSpec) panelled(scores []plotScore) (*Figure, error) {
	if !s.panels {
		f, err := s.figure(scores)
		if err == nil {
			f.countSynthetic()
		}
		return f, err
	}
	f := &Figure{Kind: s.kind, Title: s.title, XLabel: s.xLabel, YLabel: s.yLabel, Series: []Series{}}
	var order []string
	groups := map[string][]int{}
	for _, i := range s.dataOrder {
		st := s.inputs[i].stage
		if groups[st] == nil {
			order = append(order, st)
		}
		groups[st] = append(groups[st], i)
	}
	for _, st := range order {
		sub := *s
		sub.dataOrder, sub.panels = groups[st], false
		sub.title = st
		if t, ok := s.panelTitles[st]; ok {
			sub.title = t
		}
		pf, err := sub.figure(scores)
		if err != nil {
			return nil, fmt.Errorf("panel %s: %w", st, err)
		}
		pf.countSynthetic()
		f.Panels = append(f.Panels, pf)
		for _, ser := range pf.Series {
			ser.Name = pf.Title + ": " + ser.Name
			f.Series = append(f.Series, ser)
		}
		f.Omitted = append(f.Omitted, pf.Omitted...)
	}
	f.countSynthetic()
	return f, nil
}

// figure lays the scores out as series and points.
func (s *plotSpec) figure(scores []plotScore) (*Figure, error) {
	f := &Figure{Kind: s.kind, Title: s.title, XLabel: s.xLabel, YLabel: s.yLabel}
	if s.kind == "scatter" {
		return s.scatter(f, scores)
	}
	type raw struct {
		x, series string
		p         Point
	}
	var pts []raw
	for _, i := range s.dataOrder {
		in := s.inputs[i]
		if prefix, many := strings.CutSuffix(s.value, "*"); many {
			// value = "domain=*": a point per extra value named so, its
			// x the rest of the name (a model x domain heatmap).
			sc := scores[i]
			if sc.Score == nil || sc.Count == 0 {
				f.Omitted = append(f.Omitted, s.why(in, sc))
				continue
			}
			ser, _ := s.series.pick(in.key, in.stage, s.sep)
			n := 0
			for _, k := range slices.Sorted(maps.Keys(sc.Extra)) {
				if x, ok := strings.CutPrefix(k, prefix); ok && x != "" {
					pts = append(pts, raw{x: x, series: ser, p: Point{Label: x, Y: sc.Extra[k], Synthetic: sc.synthetic}})
					n++
				}
			}
			if n == 0 {
				f.Omitted = append(f.Omitted, fmt.Sprintf("%s: the score has no extra value named %s", in.address, s.value))
			}
			continue
		}
		v, lo, hi, ok := s.pick(scores[i])
		if !ok {
			f.Omitted = append(f.Omitted, s.why(in, scores[i]))
			continue
		}
		x, _ := s.x.pick(in.key, in.stage, s.sep)
		ser, _ := s.series.pick(in.key, in.stage, s.sep)
		pts = append(pts, raw{x: x, series: ser, p: Point{Label: x, Y: v, Lo: lo, Hi: hi, Synthetic: scores[i].synthetic}})
	}
	// x is numeric for a line when every label is a number; else categories:
	// the numeric ones first, ascending ("1", "3", ..., "15"), then the rest
	// in first-seen order ("all"). Instance keys reach a stage sorted as
	// strings (HCL sorts an object's keys), so first-seen alone would put
	// "10" before "3".
	numeric := s.kind == "line" && len(pts) > 0
	for _, r := range pts {
		if _, err := strconv.ParseFloat(r.x, 64); err != nil {
			numeric = false
		}
	}
	cat := map[string]int{}
	if !numeric {
		seen := map[string]bool{}
		for _, r := range pts {
			if !seen[r.x] {
				seen[r.x] = true
				f.XNames = append(f.XNames, r.x)
			}
		}
		sort.SliceStable(f.XNames, func(a, b int) bool {
			va, ea := strconv.ParseFloat(f.XNames[a], 64)
			vb, eb := strconv.ParseFloat(f.XNames[b], 64)
			switch {
			case ea == nil && eb == nil:
				return va < vb
			default:
				return ea == nil && eb != nil
			}
		})
		for i, x := range f.XNames {
			cat[x] = i
		}
	}
	bySeries := map[string]int{}
	for _, r := range pts {
		j, ok := bySeries[r.series]
		if !ok {
			j = len(f.Series)
			bySeries[r.series] = j
			f.Series = append(f.Series, Series{Name: r.series})
		}
		p := r.p
		if numeric {
			p.X, _ = strconv.ParseFloat(r.x, 64)
		} else {
			p.X = float64(cat[r.x])
		}
		for _, q := range f.Series[j].Points {
			if q.X == p.X {
				return nil, fmt.Errorf("series %q has two points at x = %q: choose x and series so that each instance has its own place (x = \"key[N]\", series = \"key[M]\")", r.series, r.x)
			}
		}
		f.Series[j].Points = append(f.Series[j].Points, p)
	}
	for j := range f.Series {
		sort.SliceStable(f.Series[j].Points, func(a, b int) bool { return f.Series[j].Points[a].X < f.Series[j].Points[b].X })
	}
	return f, nil
}

func (s *plotSpec) scatter(f *Figure, scores []plotScore) (*Figure, error) {
	ser := Series{Name: "models"}
	for _, i := range s.dataOrder {
		in := s.inputs[i]
		yi := s.byRoleKey["y"][in.key]
		x, xlo, xhi, okx := s.pick(scores[i])
		y, lo, hi, oky := s.pick(scores[yi])
		switch {
		case !okx:
			f.Omitted = append(f.Omitted, s.why(in, scores[i]))
			continue
		case !oky:
			f.Omitted = append(f.Omitted, s.why(s.inputs[yi], scores[yi]))
			continue
		}
		label := in.key // a scatter's points are models: their key names them
		if label == "" {
			label = in.stage
		}
		p := Point{Label: label, X: x, Y: y, XLo: xlo, XHi: xhi, Lo: lo, Hi: hi, Synthetic: scores[i].synthetic || scores[yi].synthetic}
		if zi, ok := s.byRoleKey["size"][in.key]; ok {
			if z, _, _, okz := s.pick(scores[zi]); okz {
				p.Size = &z
				p.Synthetic = p.Synthetic || scores[zi].synthetic
			} else {
				f.Omitted = append(f.Omitted, s.why(s.inputs[zi], scores[zi])+" (drawn at the smallest size)")
			}
		}
		if ci, ok := s.byRoleKey["color"][in.key]; ok {
			if z, _, _, okz := s.pick(scores[ci]); okz {
				p.Color = &z
				p.Synthetic = p.Synthetic || scores[ci].synthetic
			} else {
				f.Omitted = append(f.Omitted, s.why(s.inputs[ci], scores[ci])+" (drawn grey)")
			}
		}
		ser.Points = append(ser.Points, p)
	}
	f.Series = []Series{ser}
	f.SizeLabel, f.ColorLabel = s.roleLabel("size", s.sizeLabel), s.roleLabel("color", s.colorLabel)
	if s.pareto {
		f.Pareto = paretoFront(ser.Points)
	}
	return f, nil
}

// roleLabel names what a scatter's size or colour shows: the param, else
// the stage of its first instance, "" without one.
func (s *plotSpec) roleLabel(role, given string) string {
	if given != "" {
		return given
	}
	for _, in := range s.inputs {
		if in.role == role {
			return in.stage
		}
	}
	return ""
}

// paretoFront returns the indexes of the points no other point dominates
// (at least as high on both axes and higher on one), ordered by x: the
// models one cannot improve on in originality without losing feasibility.
func paretoFront(pts []Point) []int {
	var front []int
	for i, p := range pts {
		dominated := false
		for j, q := range pts {
			if j != i && q.X >= p.X && q.Y >= p.Y && (q.X > p.X || q.Y > p.Y) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, i)
		}
	}
	sort.SliceStable(front, func(a, b int) bool { return pts[front[a]].X < pts[front[b]].X })
	return front
}

// render draws the figure in each format. A figure with no point is still
// drawn (an empty frame saying so) so a page never shows a broken image.
func (s *plotSpec) render(f *Figure) (*stages.Files, error) {
	out := &stages.Files{Files: map[string]string{}}
	for _, format := range s.formats {
		var buf bytes.Buffer
		if err := drawFigure(&buf, f, format); err != nil {
			return nil, fmt.Errorf("plot %s: draw %s: %w", s.name, format, err)
		}
		name := s.name + plotFormats[format]
		if format == "svg" {
			out.Files[name] = buf.String()
		} else {
			if out.Binary == nil {
				out.Binary = map[string][]byte{}
			}
			out.Binary[name] = buf.Bytes()
		}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode figure: %w", err)
	}
	// The figure's data beside the drawing: what the HTML page lists under
	// the plot, and what a reader re-plots in another tool.
	out.Files[s.name+".json"] = string(b) + "\n"
	return out, nil
}

// plotName is NAME of stage.plot.NAME (with its key, if any), for files.
func plotName(address string) string {
	return reportName(strings.TrimPrefix(address, "stage.plot."))
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
