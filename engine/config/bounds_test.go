package config

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

func TestCheckFormat(t *testing.T) {
	for _, c := range []struct {
		format string
		ok     bool
	}{
		{"%s and %d", true},
		{"%-10s|%5.2f|%%|%08d", true},
		{"100%% sure", true},
		{"%100000s", true},
		{"%100001s", false},
		{"%.999999999f", false},
		{"%1.1234567s", false},
		{"%%999999999s", true}, // a literal percent sign, then text
	} {
		err := checkFormat([]cty.Value{cty.StringVal(c.format)})
		if (err == nil) != c.ok {
			t.Errorf("checkFormat(%q) = %v, want ok %v", c.format, err, c.ok)
		}
	}
}

func TestCheckReplace(t *testing.T) {
	big := strings.Repeat("a", 4<<20)
	for _, c := range []struct {
		str, sub, repl string
		ok             bool
	}{
		{"abc", "b", "xyz", true},
		{big, "a", "aaaa", true},   // 16 MiB: the limit
		{big, "a", "aaaaa", false}, // 20 MiB
		{big, "a", "aaa", true},    // 12 MiB
		{big, "", "", true},        // inserts nothing
		{"abcd", "", strings.Repeat("x", 4<<20), false},
	} {
		err := checkReplace([]cty.Value{cty.StringVal(c.str), cty.StringVal(c.sub), cty.StringVal(c.repl)})
		if (err == nil) != c.ok {
			t.Errorf("checkReplace(%d bytes, %q, %d bytes) = %v, want ok %v", len(c.str), c.sub, len(c.repl), err, c.ok)
		}
	}
}
