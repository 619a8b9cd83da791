package literature

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ideaflow/ideaflow/stages"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// dateLayout is the layout of CutoffDate and Paper.PublicationDate.
const dateLayout = "2006-01-02"

// ParseCutoff reads a CutoffDate: "" (none) or YYYY-MM-DD. The error says
// what a valid value looks like.
func ParseCutoff(s string) (time.Time, bool, error) {
	if s == "" {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(dateLayout, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, false, fmt.Errorf("cutoff_date %q is not a date YYYY-MM-DD such as 2024-06-30", s)
	}
	return t, true, nil
}

// After reports whether p was published after cutoff: by its publication
// date when known, else by its year (a paper of the cutoff's own year with
// no date is kept: it may precede the cutoff, and dropping it would lose
// evidence that was available). A paper with neither is kept, for the same
// reason; Semantic Scholar leaves both empty only for a few records.
func (p *Paper) After(cutoff time.Time) bool {
	if d, err := time.Parse(dateLayout, p.PublicationDate); err == nil {
		return d.After(cutoff)
	}
	return p.Year > cutoff.Year()
}

// encode marshals a reply body; the reply types cannot fail to marshal.
func encode(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("literature: encode reply: %v", err))
	}
	return b
}

// yearRange is a Semantic Scholar year filter: "2019", "2016-2020",
// "2010-", "-2015". lo/hi are 0 where open.
type yearRange struct{ lo, hi int }

func parseYearRange(s string) (yearRange, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return yearRange{}, nil
	}
	bad := fmt.Errorf("year %q is not a year or range such as 2019, 2016-2020, 2010- or -2015", s)
	lo, hi, isRange := strings.Cut(s, "-")
	num := func(x string) (int, error) {
		if x == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(x)
		if err != nil || n < 1000 || n > 9999 {
			return 0, bad
		}
		return n, nil
	}
	a, err := num(lo)
	if err != nil {
		return yearRange{}, err
	}
	if !isRange {
		if a == 0 {
			return yearRange{}, bad
		}
		return yearRange{a, a}, nil
	}
	b, err := num(hi)
	if err != nil || (a == 0 && b == 0) || (b != 0 && a > b) {
		return yearRange{}, bad
	}
	return yearRange{a, b}, nil
}

func (r yearRange) holds(year int) bool {
	if r.lo == 0 && r.hi == 0 {
		return true
	}
	if year == 0 {
		return false
	}
	return (r.lo == 0 || year >= r.lo) && (r.hi == 0 || year <= r.hi)
}

// dateRange is a publicationDateOrYear filter: "2019-03-05:2020-06-06",
// either side open ("2019-03:", ":2020"), each side a date, a month or a
// year. A paper with only a year matches by its year.
type dateRange struct{ lo, hi string } // normalised YYYY-MM-DD bounds, "" open

func parseDateRange(s string) (dateRange, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return dateRange{}, nil
	}
	bad := fmt.Errorf("publication_date_or_year %q is not a range such as 2019-03-05:2020-06-06, 2019-03: or :2020", s)
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		lo, hi = s, s // one date: that day (month, year)
	}
	norm := func(x string, end bool) (string, error) {
		if x == "" {
			return "", nil
		}
		for _, layout := range []struct {
			l    string
			next func(time.Time) time.Time
		}{{"2006-01-02", func(t time.Time) time.Time { return t }},
			{"2006-01", func(t time.Time) time.Time { return t.AddDate(0, 1, -1) }},
			{"2006", func(t time.Time) time.Time { return t.AddDate(1, 0, -1) }}} {
			if t, err := time.Parse(layout.l, x); err == nil {
				if end {
					t = layout.next(t)
				}
				return t.Format(dateLayout), nil
			}
		}
		return "", bad
	}
	a, err := norm(lo, false)
	if err != nil {
		return dateRange{}, err
	}
	b, err := norm(hi, true)
	if err != nil {
		return dateRange{}, err
	}
	if a == "" && b == "" {
		return dateRange{}, bad
	}
	return dateRange{a, b}, nil
}

func (r dateRange) holds(p *Paper) bool {
	if r.lo == "" && r.hi == "" {
		return true
	}
	d := p.PublicationDate
	if d == "" {
		if p.Year == 0 {
			return false
		}
		// Only a year: it matches when the year overlaps the range.
		y := strconv.Itoa(p.Year)
		return (r.lo == "" || y+"-12-31" >= r.lo) && (r.hi == "" || y+"-01-01" <= r.hi)
	}
	return (r.lo == "" || d >= r.lo) && (r.hi == "" || d <= r.hi)
}

// filter is a SearchQuery's filters, checked client-side: the corpus
// applies them all, the Semantic Scholar client re-checks the cutoff.
type filter struct {
	cutoff    time.Time
	hasCutoff bool
	years     yearRange
	dates     dateRange
	fields    map[string]bool
	venues    map[string]bool
	exclude   map[string]bool
	minCites  int
}

func newFilter(q SearchQuery) (filter, error) {
	var f filter
	var err error
	if f.cutoff, f.hasCutoff, err = ParseCutoff(q.CutoffDate); err != nil {
		return f, err
	}
	if f.years, err = parseYearRange(q.Year); err != nil {
		return f, err
	}
	if f.dates, err = parseDateRange(q.PublicationDateOrYear); err != nil {
		return f, err
	}
	if q.MinCitationCount < 0 {
		return f, fmt.Errorf("min_citation_count is %d; it must be 0 or more", q.MinCitationCount)
	}
	f.minCites = q.MinCitationCount
	if len(q.FieldsOfStudy) > 0 {
		f.fields = map[string]bool{}
		for _, s := range q.FieldsOfStudy {
			f.fields[strings.ToLower(s)] = true
		}
	}
	if len(q.ExcludeVenues) > 0 {
		f.exclude = map[string]bool{}
		for _, s := range q.ExcludeVenues {
			f.exclude[strings.ToLower(s)] = true
		}
	}
	if len(q.Venues) > 0 {
		f.venues = map[string]bool{}
		for _, s := range q.Venues {
			f.venues[strings.ToLower(s)] = true
		}
	}
	return f, nil
}

func (f filter) holds(p *Paper) bool {
	if f.hasCutoff && p.After(f.cutoff) {
		return false
	}
	if !f.years.holds(p.Year) || !f.dates.holds(p) || p.CitationCount < f.minCites {
		return false
	}
	if f.venues != nil && !f.venues[strings.ToLower(p.Venue)] || f.exclude[strings.ToLower(p.Venue)] {
		return false
	}
	if f.fields != nil {
		ok := false
		for _, s := range p.FieldsOfStudy {
			ok = ok || f.fields[strings.ToLower(s)]
		}
		if !ok {
			return false
		}
	}
	return true
}

// checkAsOf refuses a query without a snapshot: AsOf is what makes
// refreshing evidence a visible key change, so a query that forgot it
// would silently pin whatever the first run retrieved.
func checkAsOf(s Snapshot) error {
	if strings.TrimSpace(s.AsOf) == "" {
		return fmt.Errorf("as_of is empty: every literature query names the snapshot it reads (e.g. \"2026-12-01\"), so that refreshing evidence changes its cache key")
	}
	return nil
}

// serviceRequest is the request of a literature operation to model m.
func serviceRequest(m *stages.Model, op string, body []byte) llm.ServiceRequest {
	return llm.ServiceRequest{Op: op, Model: m.Name, Body: body}
}
