package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure size: a column of a two-column paper at readable font sizes.
const (
	figWidth  = 16 * vg.Centimeter
	figHeight = 10 * vg.Centimeter
	pngDPI    = 144
)

// drawFigure draws f as an SVG (its fonts embedded: the page and the
// paper show the same glyphs whatever fonts the reader has) or a PNG.
func drawFigure(w io.Writer, f *Figure, format string) error {
	var err error
	switch format {
	case "svg":
		c := vgsvg.NewWith(vgsvg.UseWH(figWidth, figHeight), vgsvg.EmbedFonts(true))
		if err = drawOn(f, draw.New(c)); err == nil {
			_, err = c.WriteTo(w)
		}
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(figWidth, figHeight), vgimg.UseDPI(pngDPI))
		if err = drawOn(f, draw.New(c)); err == nil {
			_, err = vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		}
	default:
		err = fmt.Errorf("unknown format %q", format)
	}
	return err
}

func buildPlot(f *Figure) (*plot.Plot, error) {
	f.legend, f.heat = nil, nil // drawing sets them again, once per format
	p := plot.New()
	p.Title.Text = f.Title
	if note := f.SyntheticNote(); note != "" {
		p.Title.Text += " (" + note + ")"
	}
	p.X.Label.Text, p.Y.Label.Text = f.XLabel, f.YLabel
	p.Legend.Top = true
	var err error
	switch f.Kind {
	case "line":
		err = addLines(p, f)
	case "bar":
		err = addBars(p, f)
	case "heatmap":
		err = addHeatmap(p, f)
	case "scatter":
		err = addScatter(p, f)
	default:
		err = fmt.Errorf("unknown plot kind %q", f.Kind)
	}
	if err != nil {
		return nil, err
	}
	if len(f.XNames) > 0 {
		p.NominalX(f.XNames...)
	}
	if f.Kind == "line" || f.Kind == "scatter" {
		pad(&p.X)
		pad(&p.Y)
		if len(f.XNames) == 0 {
			p.X.Tick.Marker = distinctTicks{}
			if f.Kind == "line" {
				if xs := distinctX(f); len(xs) > 0 && len(xs) <= 12 {
					// Few x values (n = 1, 3, 5, 10): a tick at each, not at 2, 6, 10.
					ticks := make([]plot.Tick, len(xs))
					for i, x := range xs {
						ticks[i] = plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)}
					}
					p.X.Tick.Marker = plot.ConstantTicks(ticks)
				}
			}
		}
		p.Y.Tick.Marker = distinctTicks{}
	}
	if f.Kind == "bar" {
		p.Y.Tick.Marker = distinctTicks{}
	}
	if points(f) == 0 {
		// An empty frame that says so, rather than no file or a broken one.
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		p.Title.Text += " (no data)"
	}
	return p, nil
}

// layout draws p on c with its legend in a strip of its own right of the
// data (never over a point), its category labels rotated (or thinned)
// when the font's metrics say they would overlap, and a heatmap's colour
// bar beside it.
func layout(p *plot.Plot, f *Figure, c draw.Canvas) {
	main := c
	leg := p.Legend
	if len(f.legend) > 0 {
		var w vg.Length
		for _, e := range f.legend {
			w = max(w, leg.TextStyle.Width(e))
		}
		w += leg.ThumbnailWidth + leg.Padding*2 + vg.Points(8)
		p.Legend = plot.NewLegend()
		main = draw.Crop(c, 0, -w, 0, 0)
		leg.Top, leg.Left = true, true
		leg.YOffs = -vg.Points(24)
		if f.SizeLabel != "" {
			leg.Padding = vg.Points(2*maxRadius) - leg.TextStyle.Height("Ag") // rows as tall as the largest circle
		}
		defer leg.Draw(draw.Crop(c, c.Max.X-c.Min.X-w, 0, 0, 0))
	}
	if (f.Kind == "heatmap" || f.Kind == "scatter") && f.heat != nil {
		bar := vg.Points(48)
		top := -vg.Points(30)
		if f.Kind == "scatter" {
			top = -vg.Points(170) // below the legend
		}
		floor := 0.0
		if f.Kind == "scatter" {
			floor = scatterFloor
		}
		drawColorBar(draw.Crop(c, c.Max.X-c.Min.X-bar, 0, vg.Points(40), top), *f.heat, f.ColorLabel, floor)
		main = draw.Crop(main, 0, -bar, 0, 0)
	}
	p.Title.Text = wrapLine(p.Title.TextStyle, p.Title.Text, main.Max.X-main.Min.X-vg.Points(8))
	if n := len(f.XNames); n > 0 {
		slot := p.DataCanvas(main).Size().X / vg.Length(n)
		angle, every := tickAngle(p.X.Tick.Label, f.XNames, slot)
		if angle != 0 {
			p.X.Tick.Label.Rotation = angle
			p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		}
		if every > 1 {
			names := make([]string, n)
			for i := 0; i < n; i += every {
				names[i] = f.XNames[i]
			}
			p.NominalX(names...)
		}
	}
	p.Draw(main)
}

// heatRange is a heatmap's value range, for its colour bar.
type heatRange struct{ lo, hi float64 }

// drawColorBar draws the heatmap's colour scale, lo at the bottom.
// scatterFloor is where a scatter's colour scale starts on heatColor's,
// so its lowest point is still visible on white.
const scatterFloor = 0.15

func drawColorBar(c draw.Canvas, r heatRange, label string, floor float64) {
	const steps = 32
	x0, x1 := c.Min.X, c.Min.X+vg.Points(10)
	h := (c.Max.Y - c.Min.Y) / steps
	for i := 0; i < steps; i++ {
		y := c.Min.Y + vg.Length(i)*h
		pts := []vg.Point{{X: x0, Y: y}, {X: x1, Y: y}, {X: x1, Y: y + h + 0.5}, {X: x0, Y: y + h + 0.5}}
		c.FillPolygon(heatColor(floor+(1-floor)*(float64(i)+0.5)/steps), pts)
	}
	st := text.Style{Color: color.Black, Font: plot.DefaultFont, XAlign: draw.XLeft, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	st.Font.Size = vg.Points(8)
	if label != "" {
		c.FillText(st, vg.Point{X: x0, Y: c.Max.Y + vg.Points(8)}, label)
	}
	for _, t := range (distinctTicks{}).Ticks(r.lo, r.hi) {
		if t.Label == "" || t.Value < r.lo || t.Value > r.hi {
			continue
		}
		y := c.Min.Y
		if r.hi > r.lo {
			y += vg.Length((t.Value - r.lo) / (r.hi - r.lo) * float64(c.Max.Y-c.Min.Y))
		}
		c.FillText(st, vg.Point{X: x1 + vg.Points(3), Y: y}, t.Label)
	}
}

// pad widens an axis by 5% of its range on each side, so that a point,
// its error bar or its label at the edge is not cut by the frame.
func pad(a *plot.Axis) {
	if span := a.Max - a.Min; span > 0 && !math.IsInf(span, 0) {
		a.Min -= 0.05 * span
		a.Max += 0.05 * span
	}
}

// distinctX lists a figure's x values, ascending, each once.
func distinctX(f *Figure) []float64 {
	var xs []float64
	for _, s := range f.Series {
		for _, q := range s.Points {
			if !slices.Contains(xs, q.X) {
				xs = append(xs, q.X)
			}
		}
	}
	slices.Sort(xs)
	return xs
}

func points(f *Figure) int {
	n := 0
	for _, s := range f.Series {
		n += len(s.Points)
	}
	return n
}

// errPoints are the points of a series that have a CI, as gonum's error
// bars want them: offsets below and above the value.
type errPoints struct {
	xys  plotter.XYs
	low  []float64
	high []float64
}

func (e errPoints) Len() int                        { return len(e.xys) }
func (e errPoints) XY(i int) (float64, float64)     { return e.xys[i].X, e.xys[i].Y }
func (e errPoints) YError(i int) (float64, float64) { return e.low[i], e.high[i] }
func (e errPoints) XError(i int) (float64, float64) { return e.low[i], e.high[i] }

// yErrors collects the y CIs of pts, x shifted by dx (bars in a group).
func yErrors(pts []Point, dx float64) errPoints {
	var e errPoints
	for _, q := range pts {
		if q.Lo != nil && q.Hi != nil {
			e.xys = append(e.xys, plotter.XY{X: q.X + dx, Y: q.Y})
			e.low = append(e.low, math.Max(0, q.Y-*q.Lo))
			e.high = append(e.high, math.Max(0, *q.Hi-q.Y))
		}
	}
	return e
}

func xErrors(pts []Point) errPoints {
	var e errPoints
	for _, q := range pts {
		if q.XLo != nil && q.XHi != nil {
			e.xys = append(e.xys, plotter.XY{X: q.X, Y: q.Y})
			e.low = append(e.low, math.Max(0, q.X-*q.XLo))
			e.high = append(e.high, math.Max(0, *q.XHi-q.X))
		}
	}
	return e
}

func addYErrorBars(p *plot.Plot, e errPoints, c color.Color) error {
	if e.Len() == 0 {
		return nil
	}
	bars, err := plotter.NewYErrorBars(e)
	if err != nil {
		return fmt.Errorf("error bars: %w", err)
	}
	bars.Color = c
	p.Add(bars)
	return nil
}

func addLines(p *plot.Plot, f *Figure) error {
	for j, s := range f.Series {
		xys := make(plotter.XYs, len(s.Points))
		for i, q := range s.Points {
			xys[i] = plotter.XY{X: q.X, Y: q.Y}
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("series %q: %w", s.Name, err)
		}
		c := plotutil.Color(j)
		l.Color, sc.Color, sc.Shape = c, c, plotutil.Shape(j)
		p.Add(l, sc)
		if err := addYErrorBars(p, yErrors(s.Points, 0), c); err != nil {
			return err
		}
		if s.Name != "" {
			p.Legend.Add(s.Name, l, sc)
			f.legend = append(f.legend, s.Name)
		}
	}
	return nil
}

// rects is a plotter of filled rectangles in data coordinates: gonum's
// bar chart sizes bars in points, which would leave the error bars of a
// group's bars at the wrong x.
type rects struct {
	cells []rect
}

type rect struct {
	x0, x1, y0, y1 float64
	fill           color.Color
	text, short    string // the cell's text, and the value alone
	textColor      color.Color
}

func (r *rects) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, q := range r.cells {
		pts := []vg.Point{{X: trX(q.x0), Y: trY(q.y0)}, {X: trX(q.x1), Y: trY(q.y0)}, {X: trX(q.x1), Y: trY(q.y1)}, {X: trX(q.x0), Y: trY(q.y1)}}
		c.FillPolygon(q.fill, c.ClipPolygonXY(pts))
		if q.text != "" {
			st := text.Style{Color: q.textColor, Font: plot.DefaultFont, XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
			st.Font.Size = vg.Points(8)
			// Only where the cell holds it: the value alone when its
			// interval does not fit, nothing when neither does.
			w, h := trX(q.x1)-trX(q.x0), trY(q.y1)-trY(q.y0)
			if h < 0 {
				h = -h
			}
			txt := q.text
			if st.Width(txt)+labelGap > w && q.short != "" {
				txt = q.short
			}
			if st.Width(txt)+labelGap <= w && st.Height(txt) <= h {
				c.FillText(st, vg.Point{X: trX((q.x0 + q.x1) / 2), Y: trY((q.y0 + q.y1) / 2)}, txt)
			}
		}
	}
}

func (r *rects) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, q := range r.cells {
		xmin, xmax = math.Min(xmin, q.x0), math.Max(xmax, q.x1)
		ymin, ymax = math.Min(ymin, math.Min(q.y0, q.y1)), math.Max(ymax, math.Max(q.y0, q.y1))
	}
	return
}

// legendBox is a legend thumbnail: a filled square of the series' colour.
type legendBox struct{ c color.Color }

func (l legendBox) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(l.c, c.ClipPolygonY(pts))
}

func addBars(p *plot.Plot, f *Figure) error {
	k := float64(len(f.Series))
	if k == 0 {
		return nil
	}
	width := 0.8 / k // a group fills 80% of its category
	for j, s := range f.Series {
		c := plotutil.Color(j)
		dx := -0.4 + width*(float64(j)+0.5)
		r := &rects{}
		for _, q := range s.Points {
			r.cells = append(r.cells, rect{x0: q.X + dx - width/2, x1: q.X + dx + width/2, y0: 0, y1: q.Y, fill: c})
		}
		p.Add(r)
		if err := addYErrorBars(p, yErrors(s.Points, dx), color.Black); err != nil {
			return err
		}
		if s.Name != "" {
			p.Legend.Add(s.Name, legendBox{c})
			f.legend = append(f.legend, s.Name)
		}
	}
	p.X.Min, p.X.Max = -0.5, float64(len(f.XNames))-0.5
	// Bars start at zero and keep a little room above the tallest.
	p.Y.Min = math.Min(0, p.Y.Min)
	p.Y.Max += 0.05 * (p.Y.Max - p.Y.Min)
	return nil
}

// heatColor maps t in [0,1] from white to a dark blue.
func heatColor(t float64) color.Color {
	lerp := func(a, b float64) uint8 { return uint8(math.Round(a + (b-a)*t)) }
	return color.RGBA{R: lerp(247, 8), G: lerp(251, 48), B: lerp(255, 107), A: 255}
}

func addHeatmap(p *plot.Plot, f *Figure) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range f.Series {
		for _, q := range s.Points {
			lo, hi = math.Min(lo, q.Y), math.Max(hi, q.Y)
		}
	}
	r := &rects{}
	names := make([]string, len(f.Series))
	for row, s := range f.Series {
		names[row] = s.Name
		for _, q := range s.Points {
			t := 0.5
			if hi > lo {
				t = (q.Y - lo) / (hi - lo)
			}
			txt := color.Color(color.Black)
			if t > 0.55 {
				txt = color.White
			}
			short := fmt.Sprintf("%.3g", q.Y)
			label := short
			if q.Lo != nil && q.Hi != nil {
				label += fmt.Sprintf(" [%.3g, %.3g]", *q.Lo, *q.Hi)
			}
			r.cells = append(r.cells, rect{x0: q.X - 0.5, x1: q.X + 0.5, y0: float64(row) - 0.5, y1: float64(row) + 0.5,
				fill: heatColor(t), text: label, short: short, textColor: txt})
		}
	}
	if len(r.cells) > 0 {
		p.Add(r)
		f.heat = &heatRange{lo, hi}
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(f.XNames))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(f.Series))-0.5
	return nil
}

// Point radii of a scatter whose points are sized: the smallest and the
// largest size value map to these, linearly.
const (
	minRadius = 3
	maxRadius = 12
)

func addScatter(p *plot.Plot, f *Figure) error {
	if len(f.Series) == 0 || len(f.Series[0].Points) == 0 {
		return nil
	}
	pts := f.Series[0].Points
	xys := make(plotter.XYs, len(pts))
	labels := make([]string, len(pts))
	zlo, zhi := math.Inf(1), math.Inf(-1)
	clo, chi := math.Inf(1), math.Inf(-1)
	for i, q := range pts {
		xys[i] = plotter.XY{X: q.X, Y: q.Y}
		labels[i] = q.Label
		if q.Size != nil {
			zlo, zhi = math.Min(zlo, *q.Size), math.Max(zhi, *q.Size)
		}
		if q.Color != nil {
			clo, chi = math.Min(clo, *q.Color), math.Max(chi, *q.Color)
		}
	}
	if chi >= clo {
		f.heat = &heatRange{clo, chi}
	}
	if len(f.Pareto) > 1 {
		front := make(plotter.XYs, len(f.Pareto))
		for i, k := range f.Pareto {
			front[i] = xys[k]
		}
		l, err := plotter.NewLine(front)
		if err != nil {
			return fmt.Errorf("pareto front: %w", err)
		}
		l.Color = color.RGBA{R: 200, G: 30, B: 30, A: 255}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("Pareto front", l)
		f.legend = append(f.legend, "Pareto front")
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return fmt.Errorf("scatter: %w", err)
	}
	sc.GlyphStyleFunc = func(i int) draw.GlyphStyle {
		g := draw.GlyphStyle{Color: plotutil.Color(0), Shape: draw.CircleGlyph{}, Radius: vg.Points(minRadius + (maxRadius-minRadius)/2)}
		if q := pts[i]; q.Color != nil {
			t := 0.5
			if chi > clo {
				t = (*q.Color - clo) / (chi - clo)
			}
			g.Color = heatColor(scatterFloor + (1-scatterFloor)*t)
			g.Shape = draw.CircleGlyph{}
		} else if f.heat != nil {
			g.Color = color.Gray{Y: 160}
		}
		if q := pts[i]; q.Size != nil {
			t := 0.5
			if zhi > zlo {
				t = (*q.Size - zlo) / (zhi - zlo)
			}
			g.Radius = vg.Points(minRadius + (maxRadius-minRadius)*t)
		} else if zhi >= zlo {
			g.Radius = vg.Points(minRadius)
		}
		return g
	}
	p.Add(sc)
	if zhi > zlo {
		// The size legend: the smallest and largest sizes and one between.
		name := f.SizeLabel
		if name == "" {
			name = "size"
		}
		for _, t := range []float64{0, 0.5, 1} {
			z := zlo + t*(zhi-zlo)
			p.Legend.Add(fmt.Sprintf("%s %.3g", name, z), sizeGlyph{vg.Points(minRadius + (maxRadius-minRadius)*t)})
			f.legend = append(f.legend, fmt.Sprintf("%s %.3g", name, z))
		}
	}
	if err := addYErrorBars(p, yErrors(pts, 0), color.Gray{Y: 90}); err != nil {
		return err
	}
	if e := xErrors(pts); e.Len() > 0 {
		bars, err := plotter.NewXErrorBars(e)
		if err != nil {
			return fmt.Errorf("error bars: %w", err)
		}
		bars.Color = color.Gray{Y: 90}
		p.Add(bars)
	}
	radius := make([]vg.Length, len(pts))
	for i := range pts {
		radius[i] = sc.GlyphStyleFunc(i).Radius
	}
	p.Add(&pointLabels{xys: xys, labels: labels, radius: radius})
	return nil
}

// sizeGlyph is a size legend's thumbnail: an open circle of the radius a
// point of that size is drawn with.
type sizeGlyph struct{ r vg.Length }

func (g sizeGlyph) Thumbnail(c *draw.Canvas) {
	ctr := vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2}
	c.DrawGlyph(draw.GlyphStyle{Color: color.Gray{Y: 60}, Shape: draw.RingGlyph{}, Radius: g.r}, ctr)
}

// pointLabels draws a scatter's point labels where placeLabels finds room
// for them, measured in the font on the drawn canvas.
type pointLabels struct {
	xys    plotter.XYs
	labels []string
	radius []vg.Length
}

func labelStyle() text.Style {
	st := text.Style{Color: color.Black, Font: plot.DefaultFont, XAlign: draw.XLeft, YAlign: draw.YBottom, Handler: plot.DefaultTextHandler}
	st.Font.Size = vg.Points(8)
	return st
}

func (l *pointLabels) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	st := labelStyle()
	pts := make([]vg.Point, len(l.xys))
	w, h := make([]vg.Length, len(l.xys)), make([]vg.Length, len(l.xys))
	for i, xy := range l.xys {
		pts[i] = vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
		w[i], h[i] = st.Width(l.labels[i]), st.Height(l.labels[i])
	}
	boxes, ok, leader := placeLabels(pts, l.radius, w, h, box{c.Min.X, c.Min.Y, c.Max.X, c.Max.Y})
	line := draw.LineStyle{Color: color.Gray{Y: 120}, Width: vg.Points(0.5)}
	for i, b := range boxes {
		if !ok[i] {
			continue
		}
		if leader[i] {
			// From the glyph's edge to the label's nearest point.
			end := b.nearest(pts[i])
			dx, dy := float64(end.X-pts[i].X), float64(end.Y-pts[i].Y)
			if n := math.Hypot(dx, dy); n > float64(l.radius[i]) {
				from := vg.Point{X: pts[i].X + vg.Length(dx/n)*l.radius[i], Y: pts[i].Y + vg.Length(dy/n)*l.radius[i]}
				c.StrokeLine2(line, from.X, from.Y, end.X, end.Y)
			}
		}
		c.FillText(st, vg.Point{X: b.x0, Y: b.y0}, l.labels[i])
	}
}
