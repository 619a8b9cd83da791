package cache

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mixedRecords are records on both sides of valueThreshold: small ones live
// in the LSM tree only, large ones in the value log.
func mixedRecords(n int) []*Record {
	recs := make([]*Record, n)
	for i := range recs {
		r := sampleRecord(i)
		if i%2 == 1 {
			r.Raw = benchText(uint64(i), 3000)
			r.Attempts = []Attempt{{Raw: r.Raw, Status: 200}}
		}
		recs[i] = r
	}
	return recs
}

// fillMixed writes recs with their latest keys and memos, deletes every
// tenth, and closes the cache, so its tree is in a table.
func fillMixed(t *testing.T, dir string, recs []*Record) {
	t.Helper()
	s, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if err := s.PutIndexed(r, fmt.Sprintf("addr-%d", i), fmt.Sprintf("in-%d", i), memoFor(r.Key)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(recs); i += 10 {
		if err := s.Drop(recs[i].Key); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func garbleFile(t *testing.T, path string, off int64, n int, seed int64) {
	t.Helper()
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestBadgerFormatsReadBack is the guard on badgerfmt.go: files Badger
// wrote read back here as Badger reads them. A Badger upgrade that changes
// a format fails here first.
func TestBadgerFormatsReadBack(t *testing.T) {
	dir := t.TempDir()
	recs := mixedRecords(60)
	fillMixed(t, dir, recs)

	m, err := readManifest(dir)
	if err != nil || len(m.Tables) == 0 {
		t.Fatalf("readManifest = %d tables, %v", len(m.Tables), err)
	}
	logs := newLogReader(dir)
	defer logs.close()
	newest := map[string]tableEntry{} // newest version of each key, as the tables hold it
	for id, tm := range m.Tables {
		tb := readTable(tablePath(dir, id), id, tm.Compression, true)
		if tb.damaged() || len(tb.blocks) == 0 {
			t.Fatalf("a sound table reads as damaged: %s", tb.describe())
		}
		for i := range tb.blocks {
			if err := tb.entries(i, func(e tableEntry) error {
				k := string(userKey(e.key))
				if cur, ok := newest[k]; !ok || keyVersion(cur.key) < keyVersion(e.key) {
					newest[k] = tableEntry{key: bytes.Clone(e.key), meta: e.meta, val: bytes.Clone(e.val)}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, r := range recs {
		e, ok := newest[prefixRecord+r.Key]
		switch {
		case !ok:
			t.Fatalf("record %d is in no table", i)
		case i%10 == 0:
			if e.meta&bitDelete == 0 {
				t.Fatalf("dropped record %d: meta %#x, want a deletion", i, e.meta)
			}
		case i%2 == 1:
			if e.meta&bitValuePointer == 0 {
				t.Fatalf("large record %d: meta %#x, want a value pointer", i, e.meta)
			}
			val, ok := logs.value(e.val, userKey(e.key), keyVersion(e.key))
			if !ok {
				t.Fatalf("large record %d: its pointer does not lead to its log entry", i)
			}
			if rec, err := decodeRecord(val); err != nil || rec.Key != r.Key {
				t.Fatalf("large record %d from the log: %v", i, err)
			}
		default:
			if rec, err := decodeRecord(e.val); e.meta&(bitValuePointer|bitDelete) != 0 || err != nil || rec.Key != r.Key {
				t.Fatalf("small record %d in the table: meta %#x, %v", i, e.meta, err)
			}
		}
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	inLog := 0
	for _, p := range paths {
		s, err := scanFile(p, func(txn []logEntry, clean bool) {
			for _, e := range txn {
				if strings.HasPrefix(string(e.key), prefixRecord) {
					inLog++
				}
			}
		})
		if err != nil || s.cuts() || len(s.damage) > 0 {
			t.Fatalf("a sound log %s: %+v, %v", p, s, err)
		}
	}
	if inLog != 30 {
		t.Fatalf("%d records in the value logs, want the 30 large ones", inLog)
	}
}

// TestMemtableLogReadsBack: a cache a killed process left has memtable
// logs, in transactions, which read back whole.
func TestMemtableLogReadsBack(t *testing.T) {
	dir, acked := killedWriter(t, 200)
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	if len(mems) == 0 {
		t.Fatal("the killed writer left no memtable log")
	}
	seen := map[string]bool{}
	for _, p := range mems {
		s, err := scanFile(p, func(txn []logEntry, clean bool) {
			for _, e := range txn {
				seen[string(userKey(e.key))] = true
			}
		})
		if err != nil || len(s.damage) > 0 {
			t.Fatalf("%s: %+v, %v", p, s, err)
		}
	}
	for i := range acked {
		if !seen[prefixRecord+sampleRecord(i).Key] {
			t.Fatalf("acknowledged record %d is in no memtable log transaction", i)
		}
	}
}

// killedWriter runs TestCrashSafety's writer until it has acknowledged n
// records, kills it, and returns the folder and what it acknowledged.
func killedWriter(t *testing.T, n int) (string, map[int]bool) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashSafety$")
	cmd.Env = append(os.Environ(), envCrashChild+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[int]bool{}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "ACK "); ok {
			i, _ := strconv.Atoi(v)
			acked[i] = true
			if len(acked) == n {
				cmd.Process.Kill()
			}
		}
	}
	cmd.Wait()
	return dir, acked
}

// TestDamagedTableIsReadAroundAndRestored: 4 KiB of garbage in a table.
// A read-only open reads around it, changing nothing, and never returns a
// wrong value; a writable open sets the table aside, restores its sound
// blocks' entries and its damaged blocks' records from the value log, and
// the records lost are the small ones of the damaged blocks at most.
func TestDamagedTableIsReadAroundAndRestored(t *testing.T) {
	for _, where := range []string{"middle", "index"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			recs := mixedRecords(400)
			fillMixed(t, dir, recs)
			tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(tables) != 1 {
				t.Fatalf("%d tables, want 1", len(tables))
			}
			info, _ := os.Stat(tables[0])
			off := info.Size() * 3 / 4 // among the records ("r/" sorts last)
			if where == "index" {
				off = info.Size() - 4096
			}
			garbleFile(t, tables[0], off, 4096, 7)
			before := snapshotDir(t, dir)

			ro, err := OpenReadOnly(dir)
			if err != nil {
				t.Fatal(err)
			}
			if r := ro.Recovery(); len(r.Damage) != 1 || !strings.Contains(r.Damage[0], "index table") {
				t.Fatalf("read-only Recovery = %+v", r)
			}
			within(t, "reads around the damage", func() { checkNoWrongValue(t, ro, recs) })
			if rep, err := ro.Check(); err != nil || rep.Sound() || len(rep.Damage) != 1 {
				t.Fatalf("read-only Check = %+v, %v; want the table named", rep, err)
			}
			ro.Close()
			if after := snapshotDir(t, dir); !maps.Equal(before, after) {
				t.Fatal("a read-only open changed the folder")
			}

			rw, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			r := rw.Recovery()
			if r.Restored == 0 || len(r.Damage) != 1 {
				t.Fatalf("writable Recovery = %+v", r)
			}
			lost := checkNoWrongValue(t, rw, recs)
			for i := range lost {
				if i%2 == 1 {
					t.Errorf("large record %d was lost; its value log holds it", i)
				}
			}
			if len(lost) > 40 {
				t.Errorf("%d small records lost to a 4 KiB garble", len(lost))
			}
			if rep, err := rw.Check(); err != nil || !rep.Sound() {
				t.Fatalf("Check after the writable open: %+v, %v", rep, err)
			}
			rw.Close()
			if _, err := os.Stat(filepath.Join(dir, damagedDir)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("damaged/ left after its tables were restored: %v", err)
			}
			again, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if r := again.Recovery(); r.Damaged() {
				t.Fatalf("second open: %+v", r)
			}
			t.Logf("%s: %d entries restored, %d small records lost", where, r.Restored, len(lost))
		})
	}
}

// checkNoWrongValue reads every record: each is its own or a miss, never
// another value; it returns the records that are gone (dropped ones apart).
// A dropped record may come back when its deletion was in a damaged block
// and its value survived elsewhere: sound, the value of its key.
func checkNoWrongValue(t *testing.T, s Store, recs []*Record) map[int]bool {
	t.Helper()
	lost := map[int]bool{}
	for i, r := range recs {
		got, err := s.Get(r.Key)
		switch {
		case i%10 == 0 && err != nil:
		case err == nil:
			if got.Key != r.Key || string(got.Output) != string(r.Output) || got.Raw != r.Raw {
				t.Fatalf("record %d: a wrong value", i)
			}
		case errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt):
			lost[i] = true
		default:
			t.Fatalf("record %d: %v", i, err)
		}
	}
	return lost
}

// TestDamagedMemtableLogKeepsLaterTransactions: Badger cuts a memtable log
// at its first damaged entry; the open first restores the whole
// transactions after the damage, so only those under it are lost.
func TestDamagedMemtableLogKeepsLaterTransactions(t *testing.T) {
	dir, acked := killedWriter(t, 300)
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	if len(mems) == 0 {
		t.Fatal("no memtable log")
	}
	s, err := scanFile(mems[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	garbleFile(t, mems[0], int64(s.dataEnd/2), 64, 3)
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if r := st.Recovery(); r.Restored == 0 || r.BytesDropped != 0 {
		t.Fatalf("Recovery = %+v; want transactions restored and nothing dropped unrestored", r)
	}
	lost := 0
	for i := range acked {
		got, err := st.Get(sampleRecord(i).Key)
		if err != nil {
			lost++
			continue
		}
		if got.Key != sampleRecord(i).Key {
			t.Fatalf("record %d: a wrong value", i)
		}
	}
	if lost > 2 {
		t.Fatalf("%d of %d acknowledged records lost to 64 bytes of damage", lost, len(acked))
	}
}

// TestDamagedManifestAndKeyRegistry: a MANIFEST that does not decode is
// rebuilt from the tables, a garbled key registry rewritten; read-only opens
// read around both, changing nothing.
func TestDamagedManifestAndKeyRegistry(t *testing.T) {
	for _, file := range []string{"MANIFEST", "KEYREGISTRY"} {
		t.Run(file, func(t *testing.T) {
			dir := t.TempDir()
			recs := mixedRecords(100)
			fillMixed(t, dir, recs)
			info, _ := os.Stat(filepath.Join(dir, file))
			garbleFile(t, filepath.Join(dir, file), info.Size()-12, 12, 5)
			before := snapshotDir(t, dir)
			ro, err := OpenReadOnly(dir)
			if err != nil {
				t.Fatal(err)
			}
			if lost := checkNoWrongValue(t, ro, recs); len(lost) != 0 {
				t.Fatalf("read-only: %d records lost", len(lost))
			}
			ro.Close()
			if after := snapshotDir(t, dir); !maps.Equal(before, after) {
				t.Fatal("a read-only open changed the folder")
			}
			rw, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if r := rw.Recovery(); len(r.Damage) != 1 || !strings.Contains(r.Damage[0], file) {
				t.Fatalf("Recovery = %+v", r)
			}
			if lost := checkNoWrongValue(t, rw, recs); len(lost) != 0 {
				t.Fatalf("writable: %d records lost", len(lost))
			}
			rw.Close()
			again, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if r := again.Recovery(); r.Damaged() {
				t.Fatalf("second open: %+v", r)
			}
		})
	}
}

// TestGCKeepsRecordsPastLogDamage: Badger's value-log GC reads a log up to
// its first damaged entry and deletes the log: the records after the damage
// would go with it. GC writes them again first.
func TestGCKeepsRecordsPastLogDamage(t *testing.T) {
	dir := t.TempDir()
	recs := fillIncompressible(t, dir, 300, 11)
	// A second session, so the first log is an old one: value-log GC's.
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, sampleRecord(1000))
	s.Close()
	garble(t, dir, 3)

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, corrupt, _ := readable(s, recs)
	keep := map[string]bool{}
	for i, r := range recs {
		if i%5 == 0 || i > 250 {
			keep[r.Key] = true
		}
	}
	if _, err := s.GC(keep); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "000001.vlog")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("value-log GC left the damaged log (%v): this test needs it collected", err)
	}
	lost := 0
	for _, r := range recs {
		if keep[r.Key] {
			if _, err := s.Get(r.Key); err != nil {
				lost++
			}
		}
	}
	if lost > corrupt {
		t.Fatalf("GC lost %d kept records; %d were damaged", lost, corrupt)
	}
}
