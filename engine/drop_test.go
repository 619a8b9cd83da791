package engine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

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
			true, "2 of 5 references kept, fewer than min_references = 3"},
		{`{"note":"\"dropped\":true inside a string","dropped":false}`, false, ""},
	}
	for _, c := range cases {
		d, why := dropOf([]byte(c.out))
		if d != c.dropped || why != c.why {
			t.Errorf("dropOf(%s) = %v, %q; want %v, %q", c.out, d, why, c.dropped, c.why)
		}
	}
}

// Reasons that differ only in their counts count together, written with each
// count's range over the items; a setting's value stays as written; nothing
// reads as an unfilled template.
func TestDropReasonsGiveTheDistribution(t *testing.T) {
	const refs = "%d of %d references kept, fewer than min_references = 3"
	cases := []struct {
		name    string
		reasons []string
		want    map[string]int
	}{
		{"one item", []string{"2 of 5 references kept, fewer than min_references = 3"},
			map[string]int{"2 of 5 references kept, fewer than min_references = 3": 1}},
		{"same counts", []string{"2 of 5 references kept, fewer than min_references = 3", "2 of 5 references kept, fewer than min_references = 3"},
			map[string]int{"2 of 5 references kept, fewer than min_references = 3": 2}},
		{"ranges", []string{
			"2 of 5 references kept, fewer than min_references = 3",
			"0 of 9 references kept, fewer than min_references = 3",
			"1 of 4 references kept, fewer than min_references = 3",
		}, map[string]int{"0-2 of 4-9 references kept, fewer than min_references = 3": 3}},
		{"one count varies", []string{"2 of 5 references kept, fewer than min_references = 3", "2 of 7 references kept, fewer than min_references = 3"},
			map[string]int{"2 of 5-7 references kept, fewer than min_references = 3": 2}},
		{"another setting is another reason", []string{
			"2 of 5 references kept, fewer than min_references = 3",
			"3 of 5 references kept, fewer than min_references = 4",
		}, map[string]int{
			"2 of 5 references kept, fewer than min_references = 3": 1,
			"3 of 5 references kept, fewer than min_references = 4": 1,
		}},
		{"a date setting stays whole", []string{
			"may be published before published_after = 2024-05-01",
			"may be published before published_after = 2024-05-01",
		}, map[string]int{"may be published before published_after = 2024-05-01": 2}},
		{"reasons without counts", []string{"too_long", "too_short", "too_long", "dropped upstream"},
			map[string]int{"too_long": 2, "too_short": 1, "dropped upstream": 1}},
		{"different texts stay apart", []string{"1 of 2 references kept, fewer than min_references = 3", "1 idea of 2 too long"},
			map[string]int{"1 of 2 references kept, fewer than min_references = 3": 1, "1 idea of 2 too long": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := map[string]int{}
			for _, r := range c.reasons {
				addDropReason(got, r)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
			for k := range got {
				if strings.Contains(k, "N of N") || strings.Contains(k, slotMark) {
					t.Errorf("reason %q reads as a template", k)
				}
			}
		})
	}
	// 26 targets over the whole spread, added in any order: one reason.
	got := map[string]int{}
	for i := 0; i < 26; i++ {
		addDropReason(got, fmt.Sprintf(refs, i%3, 4+i%6))
	}
	if want := map[string]int{"0-2 of 4-9 references kept, fewer than min_references = 3": 26}; !reflect.DeepEqual(got, want) {
		t.Errorf("26 targets: %v, want %v", got, want)
	}
}
