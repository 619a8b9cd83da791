package stats

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"testing"
)

// bcaCase is one golden vector of testdata/bca_ties.json (see its source).
type bcaCase struct {
	Name      string    `json:"name"`
	Values    []float64 `json:"values"`
	Statistic string    `json:"statistic"`
	Level     float64   `json:"level"`
	Seed      uint64    `json:"seed"`
	Resamples int       `json:"resamples"`
	Below     int       `json:"below"`
	Tied      int       `json:"tied"`
	Alpha1    float64   `json:"alpha1"`
	Alpha2    float64   `json:"alpha2"`
	Lower     float64   `json:"lower"`
	Upper     float64   `json:"upper"`
	Strict    *struct{ Lower, Upper float64 }
	Draws     [][]int `json:"draws"`
}

// TestBCaTiesSciPy: on tied data (binary and 1-5 scores, a minimum) the
// BCa interval is SciPy's to 1e-12, on the very draws the reference was
// computed from: the sampler's draws for each seed are pinned first.
func TestBCaTiesSciPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/bca_ties.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []bcaCase }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) != 5 {
		t.Fatalf("%d cases", len(doc.Cases))
	}
	stats := map[string]func([]float64) float64{"mean": MeanStat, "min": func(x []float64) float64 { return slices.Min(x) }}
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			s := newSampler(c.Seed)
			idx := make([]int, len(c.Values))
			for b, want := range c.Draws {
				s.draw(idx)
				if !slices.Equal(idx, want) {
					t.Fatalf("seed %d resample %d draws %v; the vector has %v", c.Seed, b, idx, want)
				}
			}
			stat := stats[c.Statistic]
			opts := Options{Seed: c.Seed, Resamples: c.Resamples, Level: c.Level, Method: BCa}
			iv, err := Bootstrap(c.Values, stat, opts)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(iv.Lower-c.Lower) > 1e-12 || math.Abs(iv.Upper-c.Upper) > 1e-12 {
				t.Errorf("BCa [%.17g, %.17g]; SciPy's definition gives [%.17g, %.17g]", iv.Lower, iv.Upper, c.Lower, c.Upper)
			}
			// The adjusted levels too, so a difference is located.
			est, boot, err := distribution(c.Values, stat, opts)
			if err != nil {
				t.Fatal(err)
			}
			a1, a2, err := bcaLevels(c.Values, stat, est, boot, (1-c.Level)/2, (1+c.Level)/2)
			if err != nil || math.Abs(a1-c.Alpha1) > 1e-12 || math.Abs(a2-c.Alpha2) > 1e-12 {
				t.Errorf("levels %.17g, %.17g (%v); want %.17g, %.17g", a1, a2, err, c.Alpha1, c.Alpha2)
			}
			// The strict count gave another interval (or none): what the
			// fix changed.
			if c.Strict != nil && c.Strict.Lower == c.Lower && c.Strict.Upper == c.Upper {
				t.Errorf("the strict count gives the same interval; the vector does not exercise ties")
			}
		})
	}
	// Where SciPy's BCa is NaN (constant data: a = 0/0), it is undefined here.
	if _, err := Bootstrap([]float64{3, 3, 3, 3}, MeanStat, Options{Method: BCa}); !errors.Is(err, ErrUndefined) {
		t.Errorf("constant data: %v; want ErrUndefined", err)
	}
}
