package report

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// Label layout computed from the font's metrics rather than left to
// chance: tick labels that would overlap are rotated, numeric tick labels
// get the decimals that keep them distinct, and a scatter's point labels
// are placed where they cover no other label.

// labelGap is the least space between two labels.
const labelGap = vg.Length(2)

// distinctTicks is plot.DefaultTicks with labels printed to the fewest
// decimals that tell every labelled tick apart ("5.45", "5.5", "5.55"
// rather than "5.5" three times).
type distinctTicks struct{}

func (distinctTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	var major []int
	for i, t := range ticks {
		if t.Label != "" {
			major = append(major, i)
		}
	}
	for prec := 0; prec <= 10; prec++ {
		seen := map[string]bool{}
		ok := true
		for _, i := range major {
			l := strconv.FormatFloat(ticks[i].Value, 'f', prec, 64)
			if seen[l] || math.Abs(mustFloat(l)-ticks[i].Value) > 1e-9*math.Max(1, math.Abs(ticks[i].Value)) {
				ok = false
				break
			}
			seen[l] = true
		}
		if ok {
			for _, i := range major {
				ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', prec, 64)
			}
			break
		}
	}
	return ticks
}

func mustFloat(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// tickAngle is the rotation that keeps category labels, each centred in
// a slot this wide, from overlapping: none when the widest fits its slot,
// 45 degrees when the slanted labels' spacing (slot * sin 45) clears a
// line's height, else 90 degrees. every says which labels to print (1:
// all; 2: every other one) when even upright ones would touch.
func tickAngle(style text.Style, labels []string, slot vg.Length) (angle float64, every int) {
	widest := vg.Length(0)
	for _, l := range labels {
		widest = max(widest, style.Width(l))
	}
	h := style.Height("Ag")
	switch {
	case widest+labelGap <= slot:
		return 0, 1
	case vg.Length(float64(slot)*math.Sin(math.Pi/4)) >= h+labelGap:
		return math.Pi / 4, 1
	}
	every = 1
	for vg.Length(every)*slot < h+labelGap {
		every++
	}
	return math.Pi / 2, every
}

// box is a label's rectangle on the canvas.
type box struct{ x0, y0, x1, y1 vg.Length }

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// placeLabels puts each point's label (w x h) beside its point, at the
// first of eight places (right, left, above, below, then the corners)
// that overlaps no label placed before it, no point and stays inside
// bounds; a label with no free place is dropped (ok[i] false) rather than
// printed over another. Points come with their glyph radius.
func placeLabels(pts []vg.Point, radius []vg.Length, w, h []vg.Length, bounds box) (boxes []box, ok []bool) {
	boxes, ok = make([]box, len(pts)), make([]bool, len(pts))
	var placed []box
	glyph := make([]box, len(pts))
	for i, p := range pts {
		r := radius[i]
		glyph[i] = box{p.X - r, p.Y - r, p.X + r, p.Y + r}
	}
	for i, p := range pts {
		r, g := radius[i]+labelGap, labelGap
		cands := []box{
			{p.X + r, p.Y - h[i]/2, p.X + r + w[i], p.Y + h[i]/2},
			{p.X - r - w[i], p.Y - h[i]/2, p.X - r, p.Y + h[i]/2},
			{p.X - w[i]/2, p.Y + r, p.X + w[i]/2, p.Y + r + h[i]},
			{p.X - w[i]/2, p.Y - r - h[i], p.X + w[i]/2, p.Y - r},
			{p.X + r - g, p.Y + r - g, p.X + r - g + w[i], p.Y + r - g + h[i]},
			{p.X - r + g - w[i], p.Y + r - g, p.X - r + g, p.Y + r - g + h[i]},
			{p.X + r - g, p.Y - r + g - h[i], p.X + r - g + w[i], p.Y - r + g},
			{p.X - r + g - w[i], p.Y - r + g - h[i], p.X - r + g, p.Y - r + g},
		}
	next:
		for _, c := range cands {
			if c.x0 < bounds.x0 || c.x1 > bounds.x1 || c.y0 < bounds.y0 || c.y1 > bounds.y1 {
				continue
			}
			for _, q := range placed {
				if c.overlaps(q) {
					continue next
				}
			}
			for j, q := range glyph {
				if j != i && c.overlaps(q) {
					continue next
				}
			}
			boxes[i], ok[i] = c, true
			placed = append(placed, c)
			break
		}
	}
	return boxes, ok
}

// wrapLine breaks s at spaces into lines no wider than width in style,
// as far as its words allow (a title wider than the figure is cut).
func wrapLine(style text.Style, s string, width vg.Length) string {
	if style.Width(s) <= width {
		return s
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case style.Width(line+" "+w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return strings.Join(append(lines, line), "\n")
}
