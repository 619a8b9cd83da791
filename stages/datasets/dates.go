package datasets

import (
	"fmt"
	"time"
)

// DateLayout is how ideaflow writes a calendar date: a model's
// knowledge_cutoff, filter_references' published_after.
const DateLayout = "2006-01-02"

// ParseDate reads a YYYY-MM-DD date.
func ParseDate(s string) (time.Time, error) {
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date written YYYY-MM-DD, such as \"2024-01-01\"", s)
	}
	return t, nil
}

// MayPredate reports whether a target published in year may predate date:
// the IdeaBench records carry a year only, so a target counts from 1
// January of its year (2024 is on or after 2024-01-01, but may predate
// 2024-06-01). A target without a year (0) may predate anything. It is the
// contamination rule: a model whose knowledge cutoff is date may have read
// such a target.
func MayPredate(year int, date time.Time) bool {
	if year == 0 {
		return true
	}
	return time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Before(date)
}
