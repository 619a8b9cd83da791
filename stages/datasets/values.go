package datasets

import (
	"maps"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// MaxValues caps the distinct values Values gathers per field: they are for
// checking a param's spelling against the data and a field's presence,
// never a full list. Without it, "references.id" gathered and sorted the
// 250,000 reference ids of 50,000 IdeaBench targets, as long as decoding
// them, before a run's first call.
const MaxValues = 1000

// Values returns the distinct string values each of fields takes across the
// items, sorted: all of them, or for a field with more than MaxValues, some
// MaxValues of them. A field is a dotted path through a record, walking
// through lists: "references.intents" is every intent of every reference. It
// lets a stage check a param against what the data holds (see
// stages.DatasetChecker) without reading the records itself.
func Values(items []Item, fields []string) map[string][]string {
	sets := make(map[string]map[string]bool, len(fields))
	paths := make([][]string, len(fields))
	for i, f := range fields {
		sets[f] = map[string]bool{}
		paths[i] = strings.Split(f, ".")
	}
	// Records decode independently: split them over the cores, each with
	// sets of its own, merged after.
	workers := runtime.GOMAXPROCS(0)
	per := (len(items) + workers - 1) / max(workers, 1)
	parts := make([]map[string]map[string]bool, 0, workers)
	for lo := 0; lo < len(items); lo += per {
		parts = append(parts, nil)
	}
	var wg sync.WaitGroup
	for w, lo := 0, 0; lo < len(items); w, lo = w+1, lo+per {
		hi := min(lo+per, len(items))
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make(map[string]map[string]bool, len(fields))
			into := make([]map[string]bool, len(fields))
			for i, f := range fields {
				if local[f] == nil { // a field named twice shares its set
					local[f] = map[string]bool{}
				}
				into[i] = local[f]
			}
			sc := newValueScanner(paths, into)
			for _, it := range items[lo:hi] {
				sc.scan(it.Record) // records are this package's own canonical JSON
			}
			parts[w] = local
		}()
	}
	wg.Wait()
	// Merged in item order, each part's values sorted: which values a
	// field over MaxValues keeps is the same on every run.
	for _, local := range parts {
		for f, set := range local {
			for _, v := range slices.Sorted(maps.Keys(set)) {
				if len(sets[f]) >= MaxValues {
					break
				}
				sets[f][v] = true
			}
		}
	}
	out := make(map[string][]string, len(fields))
	for f, set := range sets {
		vals := make([]string, 0, len(set))
		for v := range set {
			vals = append(vals, v)
		}
		sort.Strings(vals)
		out[f] = vals
	}
	return out
}
