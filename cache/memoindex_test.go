package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memoKey is the i-th input key, a hex SHA-256 digest as the engine's.
func memoKey(i int) string {
	d := sha256.Sum256(fmt.Appendf(nil, "input %d", i))
	return hex.EncodeToString(d[:])
}

func memoValue(i, version int) []byte {
	return fmt.Appendf(nil, "record-%d\x00digest-%d\x00v%d", i, i, version)
}

// badgerReads is how many memo lookups the handle sent to Badger.
func badgerReads(b *Badger) int64 { return b.b.(*badgerBackend).memo.reads.Load() }

func indexLoaded(b *Badger) bool { return b.b.(*badgerBackend).memo.idx.Load() != nil }

func reopen(t *testing.T, dir string, opts ...Option) *Badger {
	t.Helper()
	s, err := Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantMemo(t *testing.T, s Store, i, version int) {
	t.Helper()
	v, ok, err := s.Memo(memoKey(i))
	if err != nil || !ok || !bytes.Equal(v, memoValue(i, version)) {
		t.Fatalf("memo %d: %q, %v, %v; want %q", i, v, ok, err, memoValue(i, version))
	}
}

// writeIndexed makes a cache of n memos whose Close wrote the index.
func writeIndexed(t *testing.T, dir string, n int) {
	t.Helper()
	s, err := Create(dir, withIndexAfter(int64(n)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, ok, _ := s.Memo(memoKey(i)); ok { // a cold run's lookup, a miss
			t.Fatal("memo before it was set")
		}
		if err := s.SetMemo(memoKey(i), memoValue(i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := s.MemoIndexed(); got != n {
		t.Fatalf("Close indexed %d memos, want %d", got, n)
	}
}

// A warm open reads every memo, and every absence, from the index: no
// lookup reaches Badger while the token holds.
func TestMemoIndexServesLookups(t *testing.T) {
	dir := t.TempDir()
	writeIndexed(t, dir, 200)
	s := reopen(t, dir)
	defer s.Close()
	if !indexLoaded(s) {
		t.Fatal("the index was not loaded")
	}
	for i := range 200 {
		wantMemo(t, s, i, 1)
	}
	if _, ok, err := s.Memo(memoKey(200)); ok || err != nil {
		t.Fatalf("memo never set: %v, %v", ok, err)
	}
	if _, ok, _ := s.Memo("not-a-digest"); ok {
		t.Fatal("a key the index cannot hold was found")
	}
	if n := badgerReads(s); n != 0 {
		t.Fatalf("%d lookups reached Badger", n)
	}
}

// Any memo change (a new memo, a changed one, a deletion by gc) makes the
// index stale before it lands, in this handle and in every later open,
// until a Close writes a new one.
func TestMemoIndexStaleAfterAnyChange(t *testing.T) {
	changes := []struct {
		name   string
		change func(t *testing.T, s *Badger)
		check  func(t *testing.T, s *Badger)
	}{
		{"new memo", func(t *testing.T, s *Badger) {
			if err := s.SetMemo(memoKey(500), memoValue(500, 1)); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, s *Badger) { wantMemo(t, s, 500, 1) }},
		{"changed memo", func(t *testing.T, s *Badger) {
			if err := s.SetMemo(memoKey(7), memoValue(7, 2)); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, s *Badger) { wantMemo(t, s, 7, 2) }},
		{"gc", func(t *testing.T, s *Badger) {
			if _, err := s.GC(map[string]bool{}); err != nil { // no record is kept: every memo goes
				t.Fatal(err)
			}
		}, func(t *testing.T, s *Badger) {
			if _, ok, _ := s.Memo(memoKey(7)); ok {
				t.Fatal("a memo gc deleted is still found")
			}
		}},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeIndexed(t, dir, 50)
			s := reopen(t, dir, withIndexAfter(1<<40)) // this Close writes no index
			c.change(t, s)
			if indexLoaded(s) {
				t.Fatal("the index is still read after a memo changed")
			}
			c.check(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = reopen(t, dir, withIndexAfter(1<<40))
			if indexLoaded(s) {
				t.Fatal("a later open reads the stale index")
			}
			c.check(t, s)
			if badgerReads(s) == 0 {
				t.Fatal("the check did not read Badger")
			}
			s.Close()
		})
	}
}

// A read-only open reads the index and writes none.
func TestMemoIndexReadOnly(t *testing.T) {
	dir := t.TempDir()
	writeIndexed(t, dir, 30)
	before, err := os.ReadFile(filepath.Join(dir, memoIndexName))
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantMemo(t, s, 3, 1)
	if n := badgerReads(s); n != 0 {
		t.Fatalf("%d lookups reached Badger", n)
	}
	s.Close()
	after, _ := os.ReadFile(filepath.Join(dir, memoIndexName))
	if !bytes.Equal(before, after) {
		t.Fatal("a read-only open changed the index")
	}
}

// A Close that did not send enough lookups to Badger keeps the stale index
// (it is not read), and one over a quarter of the last index's size
// rewrites it.
func TestMemoIndexRewriteWhenItPays(t *testing.T) {
	dir := t.TempDir()
	writeIndexed(t, dir, 100)
	s := reopen(t, dir, withIndexAfter(10))
	if err := s.SetMemo(memoKey(100), memoValue(100, 1)); err != nil {
		t.Fatal(err)
	}
	for i := range 24 { // under a quarter of 100
		wantMemo(t, s, i, 1)
	}
	s.Close()
	if n := s.MemoIndexed(); n != 0 {
		t.Fatalf("24 lookups rewrote the index of 100 (%d)", n)
	}
	s = reopen(t, dir, withIndexAfter(10))
	for i := range 26 {
		wantMemo(t, s, i, 1)
	}
	s.Close()
	if n := s.MemoIndexed(); n != 101 {
		t.Fatalf("rewrote %d memos, want 101", n)
	}
	s = reopen(t, dir)
	defer s.Close()
	wantMemo(t, s, 100, 1)
	if n := badgerReads(s); n != 0 {
		t.Fatalf("%d lookups reached Badger", n)
	}
}

// A damaged index never serves a wrong memo: every byte of a small index,
// flipped in turn, leaves each lookup either the right value or a miss.
func TestMemoIndexByteFlipsNeverHitWrongly(t *testing.T) {
	dir := t.TempDir()
	writeIndexed(t, dir, 12)
	path := filepath.Join(dir, memoIndexName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	token := good[8:24]
	sealed := map[string][]byte{}
	for i := range 12 {
		sealed[memoKey(i)] = sealMemo(memoValue(i, 1))
	}
	flipped := filepath.Join(t.TempDir(), memoIndexName)
	misses := 0
	for pos := range good {
		bad := bytes.Clone(good)
		bad[pos] ^= 0x20
		if err := os.WriteFile(flipped, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		x, _, err := openMemoIndex(flipped, token)
		if err != nil || x == nil {
			continue // refused whole: every lookup goes to Badger
		}
		for k, want := range sealed {
			got, ok := x.lookup([]byte(k))
			switch {
			case !ok:
				misses++
			case !bytes.Equal(got, want):
				t.Fatalf("byte %d flipped: memo %s read %q, want %q", pos, k, got, want)
			}
		}
		x.close()
	}
	if misses == 0 {
		t.Fatal("no flip made a miss: the flips did not reach the entries")
	}
	// A file cut short (a copy interrupted; a Close's own write is renamed
	// into place only once synced) is no index at all.
	for _, n := range []int{0, 10, memoHeaderLen, len(good) / 2, len(good) - 1} {
		if err := os.WriteFile(flipped, good[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if x, _, err := openMemoIndex(flipped, token); x != nil || (n > 0 && err == nil) {
			t.Fatalf("cut to %d bytes: opened %v, %v", n, x != nil, err)
		}
	}
}

// An open that finds damage reads no index, and a writable one makes the
// token new, so the heal's restores and drops are never hidden by it.
func TestMemoIndexNotReadAfterDamage(t *testing.T) {
	for _, readOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("read-only=%v", readOnly), func(t *testing.T) {
			dir := t.TempDir()
			writeIndexed(t, dir, 40)
			tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(tables) != 1 {
				t.Fatalf("%d tables, want 1", len(tables))
			}
			info, _ := os.Stat(tables[0])
			garbleFile(t, tables[0], info.Size()/2, 512, 3)
			open := Open
			if readOnly {
				open = OpenReadOnly
			}
			s, err := open(dir, withIndexAfter(1<<40))
			if err != nil {
				t.Fatal(err)
			}
			if !s.Recovery().Damaged() {
				t.Fatal("the garbled table was not found")
			}
			if indexLoaded(s) {
				t.Fatal("the index is read after damage")
			}
			s.Close()
			s = reopen(t, dir, withIndexAfter(1<<40))
			defer s.Close()
			if indexLoaded(s) {
				t.Fatal("the index of before the damage is read by a later open")
			}
		})
	}
}

// cache verify compares the index with the tables: an exact copy passes,
// an index that differs is reported as damage and no longer read.
func TestMemoIndexVerified(t *testing.T) {
	dir := t.TempDir()
	writeIndexed(t, dir, 25)
	s := reopen(t, dir)
	r, err := s.Check()
	if err != nil || !r.Sound() || r.MemoIndex != 25 {
		t.Fatalf("Check = %+v, %v; want sound, 25 memos compared", r, err)
	}
	s.Close()

	// An index entry rewritten to another sound memo of the same key: the
	// lookup cannot tell, the comparison does.
	path := filepath.Join(dir, memoIndexName)
	data, _ := os.ReadFile(path)
	old := sealMemo(memoValue(4, 1))
	i := bytes.Index(data, old)
	if i < 0 {
		t.Fatal("memo 4 not found in the index")
	}
	copy(data[i:], sealMemo(memoValue(4, 9)))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, dir, withIndexAfter(1<<40))
	r, err = s.Check()
	if err != nil || r.Sound() || len(r.Damage) != 1 || !strings.Contains(r.Damage[0], "1 of the 25 memos differ") {
		t.Fatalf("Check = %+v, %v; want the index named", r, err)
	}
	wantMemo(t, s, 4, 1)
	s.Close()
	s = reopen(t, dir, withIndexAfter(1<<40))
	defer s.Close()
	if indexLoaded(s) {
		t.Fatal("the differing index is read again")
	}
}
