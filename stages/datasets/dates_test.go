package datasets

import "testing"

func TestMayPredate(t *testing.T) {
	jan, _ := ParseDate("2024-01-01")
	jun, _ := ParseDate("2024-06-01")
	for _, tc := range []struct {
		year int
		jan  bool // may predate 2024-01-01
		jun  bool // may predate 2024-06-01
	}{
		{2023, true, true},
		{2024, false, true}, // a year only counts from 1 January
		{2025, false, false},
		{0, true, true}, // no year: may predate anything
	} {
		if got := MayPredate(tc.year, jan); got != tc.jan {
			t.Errorf("%d vs 2024-01-01: %v", tc.year, got)
		}
		if got := MayPredate(tc.year, jun); got != tc.jun {
			t.Errorf("%d vs 2024-06-01: %v", tc.year, got)
		}
	}
	if _, err := ParseDate("2024-1-1"); err == nil {
		t.Error("2024-1-1 parsed")
	}
}
