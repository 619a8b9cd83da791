package report

import (
	"math"
	"sort"
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

// distinctTicks is niceTicks with labels printed to the fewest decimals
// that tell every labelled tick apart ("5.45", "5.5", "5.55" rather than
// "5.5" three times).
type distinctTicks struct{}

// niceTicks are labelled ticks at the largest step of 1, 2 or 5 times a
// power of ten that gives at least four of them in [min, max] (ranks 1-10
// read 2, 4, 6, 8, 10 rather than plot.DefaultTicks' 2, 6, 10), with an
// unlabelled tick halfway between; plot.DefaultTicks where the range is
// empty or not finite.
func niceTicks(min, max float64) []plot.Tick {
	span := max - min
	if !(span > 0) || math.IsInf(span, 0) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	top := math.Floor(math.Log10(span))
	for e := top; e >= top-2; e-- {
		for _, m := range []float64{5, 2, 1} {
			step := m * math.Pow(10, e)
			first, last := math.Ceil(min/step-1e-9), math.Floor(max/step+1e-9)
			if last-first+1 < 4 {
				continue
			}
			var ticks []plot.Tick
			for k := first; k <= last; k++ {
				ticks = append(ticks, plot.Tick{Value: k*step + 0, Label: "x"}) // + 0: never -0
				if half := (k + 0.5) * step; half <= max && k < last {
					ticks = append(ticks, plot.Tick{Value: half})
				}
			}
			if lo := (first - 0.5) * step; lo >= min {
				ticks = append([]plot.Tick{{Value: lo}}, ticks...)
			}
			return ticks
		}
	}
	return plot.DefaultTicks{}.Ticks(min, max)
}

func (distinctTicks) Ticks(min, max float64) []plot.Tick {
	ticks := niceTicks(min, max)
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
// bounds. A label with no such place beside its point goes further out,
// on rings of growing radius around it (36 directions each), to the
// first place that is free in the same way and whose leader line (from
// the point to the label, drawn: leader[i]) crosses no other label; the
// papers label every model of a crowded scatter (LiveIdeaBench Fig. 5).
// Failing that, the nearest such place anywhere in bounds; only a label
// with no free place at all is dropped (ok[i] false) rather than printed
// over another. Points come with their glyph
// radius.
func placeLabels(pts []vg.Point, radius []vg.Length, w, h []vg.Length, bounds box) (boxes []box, ok, leader []bool) {
	boxes, ok, leader = make([]box, len(pts)), make([]bool, len(pts)), make([]bool, len(pts))
	var placed []box
	glyph := make([]box, len(pts))
	for i, p := range pts {
		r := radius[i]
		glyph[i] = box{p.X - r, p.Y - r, p.X + r, p.Y + r}
	}
	free := func(i int, c box) bool {
		if c.x0 < bounds.x0 || c.x1 > bounds.x1 || c.y0 < bounds.y0 || c.y1 > bounds.y1 {
			return false
		}
		for _, q := range placed {
			if c.overlaps(q) {
				return false
			}
		}
		for j, q := range glyph {
			if j != i && c.overlaps(q) {
				return false
			}
		}
		return true
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
		for _, c := range cands {
			if free(i, c) {
				boxes[i], ok[i] = c, true
				placed = append(placed, c)
				break
			}
		}
	}
	// The widest first: they have the fewest places.
	var rest []int
	for i := range pts {
		if !ok[i] {
			rest = append(rest, i)
		}
	}
	sort.SliceStable(rest, func(a, b int) bool { return w[rest[a]] > w[rest[b]] })
	for _, i := range rest {
		p := pts[i]
	rings:
		for k := 1; k <= 24; k++ {
			d := radius[i] + labelGap + vg.Length(k)*(h[i]+labelGap)
			for a := 0; a < 36; a++ {
				th := float64(a) * math.Pi / 18
				cx := p.X + (d+w[i]/2)*vg.Length(math.Cos(th))
				cy := p.Y + (d+h[i]/2)*vg.Length(math.Sin(th))
				c := box{cx - w[i]/2, cy - h[i]/2, cx + w[i]/2, cy + h[i]/2}
				if !free(i, c) {
					continue
				}
				end := c.nearest(p)
				crossed := false
				for _, q := range placed {
					if q.crosses(p, end) {
						crossed = true
						break
					}
				}
				if crossed {
					continue
				}
				boxes[i], ok[i], leader[i] = c, true, true
				placed = append(placed, c)
				break rings
			}
		}
		if !ok[i] {
			// Anywhere in the frame, nearest first, in steps of 4 pt.
			best, bestD := box{}, math.Inf(1)
			for y := bounds.y0; y+h[i] <= bounds.y1; y += 4 {
				for x := bounds.x0; x+w[i] <= bounds.x1; x += 4 {
					c := box{x, y, x + w[i], y + h[i]}
					end := c.nearest(p)
					d := math.Hypot(float64(end.X-p.X), float64(end.Y-p.Y))
					if d >= bestD || !free(i, c) || crossesAny(placed, p, end) {
						continue
					}
					best, bestD = c, d
				}
			}
			if !math.IsInf(bestD, 1) {
				boxes[i], ok[i], leader[i] = best, true, true
				placed = append(placed, best)
			}
		}
	}
	return boxes, ok, leader
}

func crossesAny(bs []box, p, q vg.Point) bool {
	for _, b := range bs {
		if b.crosses(p, q) {
			return true
		}
	}
	return false
}

// nearest is the point of a closest to p.
func (a box) nearest(p vg.Point) vg.Point {
	return vg.Point{X: min(max(p.X, a.x0), a.x1), Y: min(max(p.Y, a.y0), a.y1)}
}

// crosses reports whether the segment p-q passes through a (Liang-Barsky
// clipping: some part of the segment lies strictly inside the box).
func (a box) crosses(p, q vg.Point) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(q.X-p.X), float64(q.Y-p.Y)
	for _, e := range [4][2]float64{
		{-dx, float64(p.X - a.x0)}, {dx, float64(a.x1 - p.X)},
		{-dy, float64(p.Y - a.y0)}, {dy, float64(a.y1 - p.Y)},
	} {
		pe, qe := e[0], e[1]
		if pe == 0 {
			if qe <= 0 {
				return false
			}
			continue
		}
		t := qe / pe
		if pe < 0 {
			t0 = max(t0, t)
		} else {
			t1 = min(t1, t)
		}
		if t0 >= t1 {
			return false
		}
	}
	return true
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
