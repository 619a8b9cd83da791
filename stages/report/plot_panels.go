package report

import (
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// drawOn draws f on c: one plot, or its panels side by side under the
// figure's title, each panel's ticks its own, one legend (the panels share
// their series) right of the last.
func drawOn(f *Figure, c draw.Canvas) error {
	if len(f.Panels) == 0 {
		p, err := buildPlot(f)
		if err != nil {
			return err
		}
		layout(p, f, c)
		return nil
	}
	title := f.Title
	if note := f.SyntheticNote(); note != "" {
		title += " (" + note + ")"
	}
	st := plot.New().Title.TextStyle
	title = wrapLine(st, title, c.Max.X-c.Min.X-vg.Points(8))
	lines := vg.Length(strings.Count(title, "\n") + 1)
	head := lines*st.Height("Ag") + vg.Points(6)
	st.XAlign, st.YAlign = draw.XCenter, draw.YTop
	c.FillText(st, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y - vg.Points(2)}, title)
	body := draw.Crop(c, 0, 0, 0, -head)
	var legend vg.Length
	var entries []string
	for _, pf := range f.Panels {
		for _, ser := range pf.Series {
			if ser.Name != "" && !slices.Contains(entries, ser.Name) {
				entries = append(entries, ser.Name)
			}
		}
	}
	if len(entries) > 0 {
		ls := plot.NewLegend()
		for _, e := range entries {
			legend = max(legend, ls.TextStyle.Width(e))
		}
		legend += ls.ThumbnailWidth + ls.Padding*2 + vg.Points(8)
	}
	total := body.Max.X - body.Min.X
	w := (total - legend) / vg.Length(len(f.Panels))
	for i, pf := range f.Panels {
		pf.XLabel, pf.YLabel = f.XLabel, ""
		if i == 0 {
			pf.YLabel = f.YLabel
		}
		p, err := buildPlot(pf)
		if err != nil {
			return err
		}
		p.Title.Text = pf.Title // the figure's title says it is synthetic, once
		right := -(total - vg.Length(i+1)*w)
		if i == len(f.Panels)-1 {
			right = 0 // the legend's strip is the last panel's
		} else {
			p.Legend = plot.NewLegend()
			pf.legend = nil
		}
		layout(p, pf, draw.Crop(body, vg.Length(i)*w, right, 0, 0))
	}
	return nil
}
