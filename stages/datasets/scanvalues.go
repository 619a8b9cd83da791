package datasets

import (
	fastjson "github.com/segmentio/encoding/json"
)

// valueScanner gathers, in one pass over a record's JSON tokens, the string
// values at each of a set of dotted paths, with collect's rules: objects
// are walked by key, lists are transparent at any level, only strings at a
// path's end count, and a set holds at most MaxValues. Decoding a record
// into maps and slices to walk it (fastjson.Parse into any) allocated every
// value of it and was half of a 50,000-item experiment's load; the scanner
// allocates only the strings it keeps.
type valueScanner struct {
	t     *fastjson.Tokenizer
	paths [][]string
	into  []map[string]bool
	buf   []live // one slice for every level's live paths
}

// live is a path still matched at the current value: field is its index in
// paths, at the number of its segments matched so far.
type live struct{ field, at int }

func newValueScanner(paths [][]string, into []map[string]bool) *valueScanner {
	return &valueScanner{t: fastjson.NewTokenizer(nil), paths: paths, into: into}
}

// scan collects from one record; false when it is not valid JSON (what was
// collected before the error stays, as a record is this package's own
// canonical JSON and never invalid in practice).
func (s *valueScanner) scan(record []byte) bool {
	s.t.Reset(record)
	if !s.t.Next() {
		return false
	}
	s.buf = s.buf[:0]
	for i := range s.paths {
		s.buf = append(s.buf, live{field: i})
	}
	return s.value(0, len(s.buf))
}

// value consumes the value the tokenizer is on, with buf[lo:hi] the paths
// live at it.
func (s *valueScanner) value(lo, hi int) bool {
	t := s.t
	switch t.Delim {
	case '{':
		for t.Next() {
			switch t.Delim {
			case '}':
				return true
			case ',':
				continue
			}
			if !t.IsKey {
				return false
			}
			// The paths that go on through this key, after buf[hi:]: the
			// levels below append theirs after these.
			key := t.String()
			sub := len(s.buf)
			for _, l := range s.buf[lo:hi] {
				if p := s.paths[l.field]; l.at < len(p) && p[l.at] == string(key) {
					s.buf = append(s.buf, live{l.field, l.at + 1})
				}
			}
			subHi := len(s.buf)
			if !t.Next() || t.Delim != ':' || !t.Next() {
				return false
			}
			ok := s.value(sub, subHi)
			s.buf = s.buf[:sub]
			if !ok {
				return false
			}
		}
		return false
	case '[':
		for t.Next() {
			switch t.Delim {
			case ']':
				return true
			case ',':
				continue
			}
			if !s.value(lo, hi) {
				return false
			}
		}
		return false
	case 0:
		if lo == hi || t.Kind().Class() != fastjson.String {
			return true
		}
		var v []byte
		for _, l := range s.buf[lo:hi] {
			if l.at == len(s.paths[l.field]) && len(s.into[l.field]) < MaxValues {
				if v == nil {
					v = t.String()
				}
				s.into[l.field][string(v)] = true
			}
		}
		return true
	}
	return false
}
