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
// point, and stay inside the frame; the ones without room are left out,
// and most have room.
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
	boxes, ok := placeLabels(pts, radius, w, h, bounds)
	placed := 0
	for i := range boxes {
		if !ok[i] {
			continue
		}
		placed++
		b := boxes[i]
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
	if placed < 10 {
		t.Errorf("%d of 20 labels placed", placed)
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
