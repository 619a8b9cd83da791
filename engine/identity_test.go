package engine

import (
	"strings"
	"testing"

	"github.com/ideaflow/ideaflow/engine/config"
)

func TestOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b []string
		want float64
	}{
		{nil, nil, 0},
		{[]string{"a", "b"}, []string{"a", "b"}, 1},
		{[]string{"a", "b"}, []string{"b", "c"}, 1.0 / 3},
		{[]string{"a", "b", "c", "d"}, []string{"a", "b", "c", "e"}, 3.0 / 5},
		{[]string{"a"}, []string{"b"}, 0},
	} {
		if got := overlap(c.a, c.b); got != c.want {
			t.Errorf("overlap(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestLatestPrefix: same-named experiments at two paths get two prefixes,
// a prefix starts with the name (cache gc prints it) and holds one colon,
// at its end.
func TestLatestPrefix(t *testing.T) {
	a := latestPrefix(&config.Experiment{Name: "exp", ID: "path:/a/exp"})
	b := latestPrefix(&config.Experiment{Name: "exp", ID: "path:/b/exp"})
	if a == b || !strings.HasPrefix(a, "exp@") || !strings.HasSuffix(a, ":") {
		t.Errorf("prefixes %q and %q", a, b)
	}
	if p := latestPrefix(&config.Experiment{Name: "a:b", ID: "name:a:b"}); strings.Count(p, ":") != 1 {
		t.Errorf("prefix %q holds a colon before its end", p)
	}
}
