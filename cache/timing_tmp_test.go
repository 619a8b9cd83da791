package cache

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTimingTmp(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	keep := map[string]bool{}
	var recs []*Record
	for i := range 3000 {
		r := sampleRecord(i)
		r.Raw = strings.Repeat(fmt.Sprintf("line %d of a long model answer\n", i), 150)
		if i%100 == 0 {
			keep[r.Key] = true
		}
		recs = append(recs, r)
	}
	t0 := time.Now()
	putConcurrently(t, s, recs, 16)
	t.Log("put", time.Since(t0))
	t0 = time.Now()
	s.GC(keep)
	t.Log("gc", time.Since(t0))
}
