package engine

import "testing"

func TestDropOf(t *testing.T) {
	cases := []struct {
		out     string
		dropped bool
		why     string
	}{
		{`{"ideas":["a"]}`, false, ""},
		{`{"ideas":[],"dropped":true}`, true, ""},
		{`{"dropped":false,"reason":"x"}`, false, ""},
		{`{"target":{"id":"t"},"references":[],"dropped":true,"reason":"2 of 5 references kept, fewer than min_references = 3"}`,
			true, "N of N references kept, fewer than min_references = 3"},
		{`{"note":"\"dropped\":true inside a string","dropped":false}`, false, ""},
	}
	for _, c := range cases {
		d, why := dropOf([]byte(c.out))
		if d != c.dropped || why != c.why {
			t.Errorf("dropOf(%s) = %v, %q; want %v, %q", c.out, d, why, c.dropped, c.why)
		}
	}
}
