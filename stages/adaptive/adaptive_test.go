package adaptive

import (
	"slices"
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/stages/stats"
)

func TestRuleCheck(t *testing.T) {
	ok := Rule{Separated: 0.95, Round: 10, Lo: 1, Hi: 10}
	for _, c := range []struct {
		name string
		edit func(*Rule)
		want string // "" accepted
	}{
		{"ok", func(*Rule) {}, ""},
		{"round", func(r *Rule) { r.Round = 0 }, "round"},
		{"level", func(r *Rule) { r.Separated = 1 }, "separated"},
		{"half", func(r *Rule) { r.HalfWidth = -1 }, "half_width"},
		{"tie", func(r *Rule) { r.Tie = -1 }, "tie"},
		{"calls", func(r *Rule) { r.MaxCalls = -1 }, "max_calls"},
		{"bounds", func(r *Rule) { r.Lo = 10 }, "bounds"},
		{"none", func(r *Rule) { r.Separated = 0 }, "no condition"},
		{"budget only", func(r *Rule) { r.Separated, r.MaxCalls = 0, 100 }, ""},
	} {
		r := ok
		c.edit(&r)
		err := r.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Check() = %v; want %q", c.name, err, c.want)
		}
	}
	if got := (Rule{HalfWidth: 1}).Level(); got != DefaultLevel {
		t.Errorf("Level without separated = %v; want %v", got, DefaultLevel)
	}
}

// board feeds rows (one per item, a score per model) to a fresh board.
func board(t *testing.T, r Rule, total int, rows [][]float64) *Board {
	t.Helper()
	b, err := NewBoard(r, len(rows[0]), total)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if err := b.Add(row); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// rows repeats a pattern of per-model scores n times.
func rows(n int, pattern ...[]float64) [][]float64 {
	out := make([][]float64, 0, n)
	for i := 0; len(out) < n; i++ {
		out = append(out, pattern[i%len(pattern)])
	}
	return out
}

func TestDecide(t *testing.T) {
	// Three models on [0, 1]: model 0 always 0.9, model 1 always 0.1,
	// model 2 alternates 0.85 / 0.95 (mean 0.9, tied with model 0).
	data := rows(400, []float64{0.9, 0.1, 0.85}, []float64{0.9, 0.1, 0.95})
	base := Rule{Separated: 0.95, Round: 10, Lo: 0, Hi: 1, Method: stats.CSBernstein}
	for _, c := range []struct {
		name      string
		rule      Rule
		items     int
		calls     int
		stop      bool
		reason    string
		separated []Pair
		tied      []Pair
		open      int
	}{
		{"too few", base, 5, 0, false, "", nil, nil, 3},
		{"separated, tie open", base, 400, 0, false, "", []Pair{{0, 1}, {2, 1}}, nil, 1},
		{"tie settles", func() Rule { r := base; r.Tie = 0.3; return r }(), 400, 0, true, "separated", []Pair{{0, 1}, {2, 1}}, []Pair{{0, 2}}, 0},
		{"budget", func() Rule { r := base; r.MaxCalls = 100; return r }(), 20, 100, true, "max_calls", nil, nil, 3},
		{"half width", Rule{HalfWidth: 0.5, Round: 10, Lo: 0, Hi: 1}, 100, 0, true, "half_width", []Pair{{0, 1}, {2, 1}}, nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := board(t, c.rule, 1000, data[:c.items])
			d := b.Decide(c.calls)
			if d.Stop != c.stop || d.Reason != c.reason || !slices.Equal(d.Separated, c.separated) || !slices.Equal(d.Tied, c.tied) || d.Open != c.open {
				t.Errorf("Decide = stop %v %q separated %v tied %v open %d; want %v %q %v %v %d",
					d.Stop, d.Reason, d.Separated, d.Tied, d.Open, c.stop, c.reason, c.separated, c.tied, c.open)
			}
		})
	}
	// Every item in: the full run's own fixed-n answer, even for the tie
	// the sequences could not settle (model 2's spread gives it an interval).
	b := board(t, base, 400, data)
	d := b.Decide(0)
	if !d.Stop || d.Reason != "exhausted" || !slices.Equal(d.Separated, []Pair{{0, 1}, {2, 1}}) {
		t.Errorf("exhausted: %v %q %v", d.Stop, d.Reason, d.Separated)
	}
	if err := b.Add([]float64{1}); err == nil {
		t.Error("Add with one score for three models: no error")
	}
	if err := b.Add([]float64{1, 2, 0}); err == nil {
		t.Error("Add of a score outside [0, 1]: no error")
	}
}

func TestRounds(t *testing.T) {
	for _, c := range [][4]int{{1, 20, 1180, 20}, {59, 20, 1180, 1180}, {60, 20, 1180, 1180}, {3, 50, 120, 120}} {
		if got := Rounds(c[0], c[1], c[2]); got != c[3] {
			t.Errorf("Rounds(%d, %d, %d) = %d; want %d", c[0], c[1], c[2], got, c[3])
		}
	}
}
