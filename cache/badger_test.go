package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"
)

func TestDurableAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs := []*Record{sampleRecord(0), sampleRecord(1)}
	mustPut(t, s, recs...)
	if err := s.SetLatest("addr", recs[1].Key); err != nil {
		t.Fatal(err)
	}
	if err := s.PutFailure(&Failure{Key: "f1", Error: "bad"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRun(&RunRecord{ID: "run-1", Experiment: "quickstart"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range recs {
		assertRecord(t, s, r)
	}
	if key, ok, err := s.Latest("addr"); err != nil || !ok || key != recs[1].Key {
		t.Fatalf("Latest after reopen = %q %v %v", key, ok, err)
	}
	if f, err := s.Failure("f1"); err != nil || f.Error != "bad" {
		t.Fatalf("Failure after reopen = %+v, %v", f, err)
	}
	if runs, err := s.Runs(); err != nil || len(runs) != 1 || runs[0].Experiment != "quickstart" {
		t.Fatalf("Runs after reopen = %+v, %v", runs, err)
	}
}

// setRaw writes a value straight into Badger, bypassing the store's checks.
func setRaw(t *testing.T, s *Badger, key string, val []byte) {
	t.Helper()
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(key), val) }); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyFindsCorruptedRecords(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	var recs []*Record
	for i := range 6 {
		recs = append(recs, sampleRecord(i))
	}
	mustPut(t, s, recs...)

	// 1: one flipped byte in the stored record.
	flipped := encodeRecord(recs[1])
	flipped[len(flipped)/2] ^= 0x04
	setRaw(t, s, prefixRecord+recs[1].Key, flipped)
	// 2: a sound value filed under another key.
	setRaw(t, s, prefixRecord+recs[2].Key, encodeRecord(recs[3]))
	// 4: checksum intact, but the output does not hash to its digest.
	lying := *recs[4]
	lying.Output = []byte(`{"idea":"edited"}`)
	setRaw(t, s, prefixRecord+recs[4].Key, encodeRecord(&lying))
	// 5: damaged parts.
	parts := encodeParts(recs[5].Parts)
	parts[3] ^= 0xff
	setRaw(t, s, prefixParts+recs[5].Key, parts)

	bad, err := s.Verify()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{recs[1].Key, recs[2].Key, recs[4].Key, recs[5].Key}
	if !slices.Equal(bad, want) {
		t.Fatalf("Verify = %v, want %v", bad, want)
	}
	if _, err := s.Get(recs[1].Key); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get of a flipped record: err = %v, want ErrCorrupt", err)
	}
	if _, err := s.Parts(recs[5].Key); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Parts of damaged parts: err = %v, want ErrCorrupt", err)
	}
	if _, err := s.Get(recs[2].Key); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), recs[2].Key) {
		t.Fatalf("Get of a record filed under another key: err = %v, want ErrCorrupt (never the other record)", err)
	}
	// Stats counts what it cannot read instead of refusing.
	if st, err := s.Stats(); err != nil || st.Records != 4 || st.Damaged != 2 {
		t.Fatalf("Stats over a flipped and a misfiled record = %+v, %v; want 4 records, 2 damaged", st, err)
	}
	// GC is how a user drops the damaged records.
	keep := map[string]bool{recs[0].Key: true, recs[3].Key: true}
	if removed, err := s.GC(keep); err != nil || removed != 4 {
		t.Fatalf("GC = %d, %v; want 4, nil", removed, err)
	}
	if bad, err := s.Verify(); err != nil || len(bad) != 0 {
		t.Fatalf("Verify after GC = %v, %v; want none", bad, err)
	}
}

func TestConcurrentPuts(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	const writers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				rec := sampleRecord(w*each + i)
				if err := s.Put(rec); err != nil {
					errs <- err
				}
				if err := s.SetLatest(rec.Address, rec.Key); err != nil {
					errs <- err
				}
				if _, err := s.Get(rec.Key); err != nil {
					errs <- fmt.Errorf("read own write %s: %w", rec.Key, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := s.Stats()
	if err != nil || st.Records != writers*each {
		t.Fatalf("Stats = %+v, %v; want %d records", st, err, writers*each)
	}
	for i := range writers * each {
		assertRecord(t, s, sampleRecord(i))
	}
}

// With a 1 MiB memtable a Badger transaction holds about 150 KiB, so a group
// of concurrent 20 KiB Puts must be split across transactions.
func TestGroupCommitSplitsLargeGroups(t *testing.T) {
	s := openTemp(t, withMemTableSize(1<<20))
	defer s.Close()
	big := func(i int) *Record {
		r := sampleRecord(i)
		r.Output = bytes.Repeat([]byte{byte('a' + i%26)}, 20<<10)
		r.OutputDigest = ""
		return r
	}
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Put(big(i))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := big(i)
		want.OutputDigest = DigestOutput(want.Output)
		got, err := s.Get(want.Key)
		if err != nil || !bytes.Equal(got.Output, want.Output) {
			t.Fatalf("record %d after split commit: %v", i, err)
		}
	}
}

// A unit too large for any transaction fails alone; its neighbours commit.
func TestGroupCommitIsolatesOversizedUnit(t *testing.T) {
	s := openTemp(t, withMemTableSize(1<<20))
	defer s.Close()
	var huge []op
	for i := range 20000 {
		huge = append(huge, setOp(fmt.Sprintf("l/huge-%05d", i), []byte("k")))
	}
	small := func(addr string) []op { return []op{setOp(prefixLatest+addr, []byte("key-"+addr))} }
	err := s.b.apply(small("a"), huge, small("b"))
	if !errors.Is(err, badger.ErrTxnTooBig) {
		t.Fatalf("apply: err = %v, want ErrTxnTooBig", err)
	}
	for _, addr := range []string{"a", "b"} {
		if key, ok, err := s.Latest(addr); err != nil || !ok || key != "key-"+addr {
			t.Fatalf("Latest(%s) = %q %v %v; the small unit was lost", addr, key, ok, err)
		}
	}
	if _, ok, _ := s.Latest("huge-00000"); ok {
		t.Fatal("part of the oversized unit was written")
	}
}

func TestOpenTwiceIsLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Open(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: err = %v, want ErrLocked", err)
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, sampleRecord(0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(dir, ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	assertRecord(t, ro, sampleRecord(0))
	if err := ro.Put(sampleRecord(1)); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Put: err = %v, want ErrReadOnly", err)
	}
	if _, err := ro.GC(nil); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("GC: err = %v, want ErrReadOnly", err)
	}
	if _, err := Open(t.TempDir()+"/absent", ReadOnly()); err == nil {
		t.Fatal("read-only Open of a missing directory succeeded")
	}
}

// TestBadgerLogLevels: every line Badger logs reaches the cache's logger at
// debug (errors and warnings: its tuning notes such as "Block cache might be
// too small" and "Unable to fill tables") or trace (the rest, and a
// checksum failure the cache reports itself as ErrCorrupt), never above:
// nothing of Badger's reaches a console at info, warn or error.
func TestBadgerLogLevels(t *testing.T) {
	tests := []struct {
		log    func(badgerLogger)
		format string
		want   string
	}{
		{func(l badgerLogger) { l.Errorf("Error while compacting: %v\n", "x") }, "Error while compacting", "debug"},
		{func(l badgerLogger) { l.Errorf("Unable to read: Key: %v\n", "k") }, "Unable to read", "trace"},
		{func(l badgerLogger) { l.Warningf("Block cache might be too small. Metrics: %v\n", "m") }, "Block cache might be too small", "debug"},
		{func(l badgerLogger) { l.Warningf("Unable to fill tables\n") }, "Unable to fill tables", "debug"},
		{func(l badgerLogger) { l.Infof("All 1 tables opened in %s\n", "1ms") }, "All 1 tables opened", "trace"},
		{func(l badgerLogger) { l.Debugf("Flushing memtable\n") }, "Flushing memtable", "trace"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(badgerLogger{zerolog.New(&buf).Level(zerolog.TraceLevel)})
			var line struct{ Level, Component, Message string }
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("%v: %q", err, buf.String())
			}
			if line.Level != tt.want || line.Component != "badger" || !strings.HasPrefix(line.Message, tt.format) || strings.HasSuffix(line.Message, "\n") {
				t.Fatalf("logged %+v, want level %s, component badger, message %q without its newline", line, tt.want, tt.format)
			}
		})
	}
}

// TestCompactAtClose: a handle that made flattenAfter writes compacts at
// Close, and says so in exactly two lines at info (with the count of writes
// that made it worth it, then how long it took); one write fewer, and Close
// neither compacts nor logs. At info nothing of Badger's is logged, though a
// compaction makes it talk (at debug and trace, as the second log shows).
// After the compaction every table but the memtable flushed by Close is on
// one level. Compact does the same on demand.
func TestCompactAtClose(t *testing.T) {
	const after = 3000
	tests := []struct {
		writes  int
		compact bool
	}{{after - 1, false}, {after, true}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.writes), func(t *testing.T) {
			dir := t.TempDir()
			var info, trace bytes.Buffer
			log := zerolog.New(zerolog.MultiLevelWriter(levelWriter{&info, zerolog.InfoLevel}, levelWriter{&trace, zerolog.TraceLevel}))
			s, err := Create(dir, WithLogger(log), withFlattenAfter(after), withMemTableSize(256<<10))
			if err != nil {
				t.Fatal(err)
			}
			var recs []*Record
			for i := range tt.writes {
				r := sampleRecord(i)
				r.Raw = benchText(uint64(i), 300) // below the value threshold: the records live in the tables
				recs = append(recs, r)
			}
			putConcurrently(t, s, recs, 8)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			var lines []map[string]any
			for _, l := range strings.Split(strings.TrimSpace(info.String()), "\n") {
				if l == "" {
					continue
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatal(err)
				}
				lines = append(lines, m)
			}
			if !tt.compact {
				if len(lines) != 0 {
					t.Fatalf("logged at info without compacting: %v", lines)
				}
				// `ideaflow cache compact` does it on demand, saying so the same way.
				info.Reset()
				s, err := Open(dir, WithLogger(log))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if err := s.Compact(); err != nil {
					t.Fatal(err)
				}
				if got := strings.Count(info.String(), "\n"); got != 2 || !strings.Contains(info.String(), `"message":"cache: compacted"`) || strings.Contains(info.String(), `"writes"`) {
					t.Fatalf("Compact logged:\n%s", info.String())
				}
				return
			}
			if len(lines) != 2 || lines[0]["level"] != "info" || lines[0]["writes"] != float64(after) ||
				!strings.HasPrefix(lines[0]["message"].(string), "cache: compacting") ||
				lines[1]["level"] != "info" || lines[1]["message"] != "cache: compacted" || lines[1]["took"] == nil {
				t.Fatalf("info log = %v, want the compaction's two lines, %d writes", lines, after)
			}
			if !strings.Contains(trace.String(), `"component":"badger"`) {
				t.Fatalf("Badger logged nothing at trace while compacting:\n%s", trace.String())
			}
			for _, l := range strings.Split(strings.TrimSpace(trace.String()), "\n") {
				if strings.Contains(l, `"component":"badger"`) && !strings.Contains(l, `"level":"debug"`) && !strings.Contains(l, `"level":"trace"`) {
					t.Fatalf("a Badger line above debug: %s", l)
				}
			}
			s, err = Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			levels := 0
			for _, l := range s.db.Levels() {
				switch {
				case l.Level == 0 && l.NumTables > 1:
					t.Errorf("level 0 holds %d tables after compacting, want at most the memtable Close flushed", l.NumTables)
				case l.Level > 0 && l.NumTables > 0:
					levels++
				}
			}
			if levels != 1 {
				t.Errorf("tables on %d levels below 0 after compacting, want 1: %+v", levels, s.db.Levels())
			}
			assertRecord(t, s, recs[0])
		})
	}
}

// levelWriter keeps the lines at or above a level: a console at that level.
type levelWriter struct {
	w   io.Writer
	min zerolog.Level
}

func (l levelWriter) Write(p []byte) (int, error) { return l.w.Write(p) }

func (l levelWriter) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	if level < l.min {
		return len(p), nil
	}
	return l.w.Write(p)
}

// GC runs as its own command after runs have written the cache, so the
// records sit in value-log files that are no longer being written: the ones
// value-log GC can reclaim.
func TestGCShrinksDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{}
	var recs []*Record
	for i := range 1200 {
		r := sampleRecord(i)
		r.Raw = benchText(uint64(i), 4000)
		if i%40 == 0 {
			keep[r.Key] = true
		}
		recs = append(recs, r)
	}
	putConcurrently(t, s, recs, 16)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	removed, err := s.GC(keep)
	if err != nil || removed != 1170 {
		t.Fatalf("GC = %d, %v; want 1170", removed, err)
	}
	after, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("disk %d -> %d bytes", before.DiskBytes, after.DiskBytes)
	if after.Records != 30 || after.DiskBytes >= before.DiskBytes/4 {
		t.Fatalf("after GC: %d records on %d bytes (before %d); want 30 on less than a quarter", after.Records, after.DiskBytes, before.DiskBytes)
	}
	for _, r := range recs {
		if keep[r.Key] {
			assertRecord(t, s, r)
		}
	}
}

// putConcurrently puts recs from several goroutines so group commit batches them.
func putConcurrently(t testing.TB, s Store, recs []*Record, workers int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(recs); i += workers {
				if err := s.Put(recs[i]); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}
