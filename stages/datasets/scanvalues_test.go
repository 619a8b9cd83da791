package datasets

import (
	"fmt"
	"maps"
	"math/rand"
	"strings"
	"testing"

	fastjson "github.com/segmentio/encoding/json"
)

// collectDecoded is the reference the scanner is held to: the record
// decoded into maps and slices, walked by path (Values before the scanner).
func collectDecoded(v any, path []string, into map[string]bool) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			collectDecoded(e, path, into)
		}
	case map[string]any:
		if len(path) > 0 {
			collectDecoded(x[path[0]], path[1:], into)
		}
	case string:
		if len(path) == 0 && len(into) < MaxValues {
			into[x] = true
		}
	}
}

func scanOne(record string, fields []string) []map[string]bool {
	paths := make([][]string, len(fields))
	into := make([]map[string]bool, len(fields))
	for i, f := range fields {
		paths[i], into[i] = strings.Split(f, "."), map[string]bool{}
	}
	newValueScanner(paths, into).scan([]byte(record))
	return into
}

func TestValueScannerCases(t *testing.T) {
	fields := []string{"id", "references.intents", "references.id", "a.b.c", "tags", "references"}
	cases := []struct {
		name, record string
		want         [][]string // per field
	}{
		{"flat", `{"id":"t1","tags":["x","y"]}`, [][]string{{"t1"}, nil, nil, nil, {"x", "y"}, nil}},
		{"nested lists", `{"references":[{"id":"r1","intents":["background","method"]},{"id":"r2","intents":[["deep"]]}]}`,
			[][]string{nil, {"background", "deep", "method"}, {"r1", "r2"}, nil, nil, nil}},
		{"non-strings ignored", `{"id":3,"tags":[1,true,null,{"x":"y"}],"a":{"b":{"c":false}}}`, [][]string{nil, nil, nil, nil, nil, nil}},
		{"string mid-path ignored", `{"a":"b","references":"flat"}`, [][]string{nil, nil, nil, nil, nil, {"flat"}}},
		{"escapes", `{"id":"t\u00e9\"q","a":{"b":{"c":["\n"]}}}`, [][]string{{"té\"q"}, nil, nil, {"\n"}, nil, nil}},
		{"escaped key", `{"i\u0064":"k"}`, [][]string{{"k"}, nil, nil, nil, nil, nil}},
		{"other keys skipped", `{"x":{"id":"no","references":[{"id":"no"}]},"id":"yes"}`, [][]string{{"yes"}, nil, nil, nil, nil, nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := scanOne(c.record, fields)
			var rec any
			if _, err := fastjson.Parse([]byte(c.record), &rec, 0); err != nil {
				t.Fatal(err)
			}
			for i, f := range fields {
				ref := map[string]bool{}
				collectDecoded(rec, strings.Split(f, "."), ref)
				want := map[string]bool{}
				for _, v := range c.want[i] {
					want[v] = true
				}
				if !maps.Equal(got[i], want) || !maps.Equal(ref, want) {
					t.Errorf("%s: scanned %v, decoded %v, want %v", f, got[i], ref, want)
				}
			}
		})
	}
}

// Random records: the scanner and the decoded walk agree on every field.
func TestValueScannerMatchesDecoding(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	keys := []string{"a", "b", "c", "id"}
	var gen func(depth int) string
	gen = func(depth int) string {
		switch k := r.Intn(6); {
		case depth > 3 || k == 0:
			return fmt.Sprintf("%q", fmt.Sprintf("v%d", r.Intn(20)))
		case k == 1:
			return fmt.Sprint(r.Intn(9))
		case k == 2:
			return "null"
		case k == 3:
			var els []string
			for range r.Intn(4) {
				els = append(els, gen(depth+1))
			}
			return "[" + strings.Join(els, ",") + "]"
		default:
			var kv []string
			for _, key := range keys {
				if r.Intn(2) == 0 {
					kv = append(kv, fmt.Sprintf("%q:%s", key, gen(depth+1)))
				}
			}
			return "{" + strings.Join(kv, ",") + "}"
		}
	}
	fields := []string{"a", "a.b", "b.c.id", "id", "c.a.b.c", "a.a"}
	for n := range 3000 {
		record := gen(0)
		got := scanOne(record, fields)
		var rec any
		if _, err := fastjson.Parse([]byte(record), &rec, 0); err != nil {
			t.Fatal(err)
		}
		for i, f := range fields {
			ref := map[string]bool{}
			collectDecoded(rec, strings.Split(f, "."), ref)
			if !maps.Equal(got[i], ref) {
				t.Fatalf("record %d %s, field %s: scanned %v, decoded %v", n, record, f, got[i], ref)
			}
		}
	}
}

// BenchmarkValues gathers two fields of 10,000 IdeaBench-shaped records (5
// references each): by the scanner (Values) and by decoding each record as
// Values did before it.
func BenchmarkValues(b *testing.B) {
	items := make([]Item, 10_000)
	for i := range items {
		var refs []string
		for r := range 5 {
			refs = append(refs, fmt.Sprintf(`{"id":"t%d-r%d","title":"Reference %d of target %d","abstract":"We study mechanism %d in system %d and report a measurable effect.","citations":%d,"types":["JournalArticle"],"intents":["background"]}`, i, r, r, i, r, i, 10+r))
		}
		items[i] = Item{ID: fmt.Sprint(i), Record: fmt.Appendf(nil, `{"id":"t%d","title":"Target paper %d","abstract":"Target %d shows a new effect.","references":[%s]}`, i, i, i, strings.Join(refs, ","))}
	}
	fields := []string{"references.id", "references.intents"}
	b.Run("scan", func(b *testing.B) {
		for range b.N {
			Values(items, fields)
		}
	})
	b.Run("decode", func(b *testing.B) {
		paths := [][]string{strings.Split(fields[0], "."), strings.Split(fields[1], ".")}
		for range b.N {
			for _, it := range items {
				var rec any
				if _, err := fastjson.Parse(it.Record, &rec, 0); err != nil {
					b.Fatal(err)
				}
				for i := range fields {
					collectDecoded(rec, paths[i], map[string]bool{})
				}
			}
		}
	})
}
