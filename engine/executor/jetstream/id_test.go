package jetstream

import (
	"regexp"
	"testing"
)

// A task's id is its node key when that is plain; a task of several
// samples gets an id of its own per sample set (its key is its first
// sample's, and a sample the batch left unanswered goes alone under it);
// every id is a valid KV key and message id.
func TestTaskID(t *testing.T) {
	kvKey := regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)
	const key = "3f2a9c"
	cases := []struct {
		key     string
		samples []int
		plain   bool
	}{
		{key, nil, true},
		{key, []int{4}, true},
		{key, []int{0, 1, 2}, false},
		{key, []int{0, 1}, false},
		{"key with spaces/and:colons", nil, false},
	}
	seen := map[string]int{}
	for i, c := range cases {
		id := TaskID(c.key, c.samples)
		if !kvKey.MatchString(id) {
			t.Errorf("%q %v: id %q is no valid KV key", c.key, c.samples, id)
		}
		if (id == c.key) != c.plain {
			t.Errorf("%q %v: id %q, want the key itself: %v", c.key, c.samples, id, c.plain)
		}
		if j, ok := seen[id]; ok && !(cases[j].plain && c.plain) {
			t.Errorf("cases %d and %d share id %q", j, i, id)
		}
		seen[id] = i
	}
}
