package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// setStored writes a raw stored value under key in either implementation,
// standing in for damage on disk.
func setStored(t *testing.T, s Store, key string, val []byte) {
	t.Helper()
	switch s := s.(type) {
	case *Memory:
		s.mem.mu.Lock()
		s.mem.kv[key] = val
		s.mem.mu.Unlock()
	case *Badger:
		setRaw(t, s, key, val)
	default:
		t.Fatalf("no raw access to %T", s)
	}
}

func memoFor(key string) []byte { return []byte(key + "\x00digest\x00call") }

// TestDamageReadsAsCorrupt: a damaged record, parts or memo value is
// ErrCorrupt from the accessor that reads it.
func TestDamageReadsAsCorrupt(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		rec := sampleRecord(0)
		if err := s.PutIndexed(rec, "addr", "in-0", memoFor(rec.Key)); err != nil {
			t.Fatal(err)
		}
		v, ok, err := s.Memo("in-0")
		if err != nil || !ok || string(v) != string(memoFor(rec.Key)) {
			t.Fatalf("Memo = %q %v %v", v, ok, err)
		}
		good := sealMemo(memoFor(rec.Key))
		bad := slices.Clone(good)
		bad[3] ^= 0x10
		setStored(t, s, prefixMemo+"in-0", bad)
		if _, _, err := s.Memo("in-0"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Memo of a damaged value: err = %v, want ErrCorrupt", err)
		}
		// A memo written before memos were sealed is damage too: it costs a re-render.
		setStored(t, s, prefixMemo+"in-0", memoFor(rec.Key))
		if _, _, err := s.Memo("in-0"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Memo of an unsealed value: err = %v, want ErrCorrupt", err)
		}
		enc := encodeRecord(rec)
		enc[len(enc)/2] ^= 0x01
		setStored(t, s, prefixRecord+rec.Key, enc)
		if _, err := s.Get(rec.Key); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), rec.Key) {
			t.Fatalf("Get: err = %v, want ErrCorrupt naming the key", err)
		}
		setStored(t, s, prefixRecord+rec.Key, nil)
		if _, err := s.Get(rec.Key); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Get of an empty value (what Badger reads for a damaged log entry): err = %v", err)
		}
		parts := encodeParts(rec.Parts)
		parts[2] ^= 0x01
		setStored(t, s, prefixParts+rec.Key, parts)
		if _, err := s.Parts(rec.Key); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Parts: err = %v, want ErrCorrupt", err)
		}
	})
}

// TestOverwriteRepairsDamagedRecord is the engine's repair: recompute and
// PutIndexed over the damaged record; later reads get the new record.
func TestOverwriteRepairsDamagedRecord(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		rec := sampleRecord(1)
		mustPut(t, s, rec)
		enc := encodeRecord(rec)
		enc[len(enc)/3] ^= 0x80
		setStored(t, s, prefixRecord+rec.Key, enc)
		setStored(t, s, prefixParts+rec.Key, []byte{1, 2})
		if _, err := s.Get(rec.Key); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Get before repair: %v", err)
		}
		fresh := sampleRecord(1)
		fresh.Output = []byte(`{"recomputed":true}`)
		fresh.OutputDigest = ""
		if err := s.PutIndexed(fresh, "addr", "in-1", memoFor(fresh.Key)); err != nil {
			t.Fatalf("PutIndexed over a damaged record: %v", err)
		}
		assertRecord(t, s, fresh)
		if bad, err := s.Verify(); err != nil || len(bad) != 0 {
			t.Fatalf("Verify after overwrite = %v, %v", bad, err)
		}
	})
}

func TestDrop(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		mustPut(t, s, sampleRecord(0), sampleRecord(1))
		if err := s.Drop(sampleRecord(0).Key); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(sampleRecord(0).Key); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after Drop: %v", err)
		}
		if _, err := s.Parts(sampleRecord(0).Key); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Parts after Drop: %v", err)
		}
		if has, _ := s.Has(sampleRecord(0).Key); has {
			t.Fatal("Has after Drop")
		}
		if err := s.Drop(sampleRecord(0).Key); err != nil {
			t.Fatalf("second Drop: %v", err)
		}
		assertRecord(t, s, sampleRecord(1))
	})
}

// TestRepairDropsExactlyTheDamage: the records Verify names, the index
// entries naming them and damaged memos go; nothing else does.
func TestRepairDropsExactlyTheDamage(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		for i := range 4 {
			r := sampleRecord(i)
			if err := s.PutIndexed(r, fmt.Sprintf("addr-%d", i), fmt.Sprintf("in-%d", i), memoFor(r.Key)); err != nil {
				t.Fatal(err)
			}
		}
		enc := encodeRecord(sampleRecord(1))
		enc[len(enc)/2] ^= 0x01
		setStored(t, s, prefixRecord+sampleRecord(1).Key, enc)
		memo := sealMemo(memoFor(sampleRecord(3).Key))
		memo[0] ^= 0x01
		setStored(t, s, prefixMemo+"in-3", memo)

		bad, err := s.Verify()
		if err != nil || !slices.Equal(bad, []string{sampleRecord(1).Key}) {
			t.Fatalf("Verify = %v, %v", bad, err)
		}
		rep, err := s.Check()
		if err != nil || !slices.Equal(rep.BadRecords, []string{sampleRecord(1).Key}) || !slices.Equal(rep.BadIndex, []string{prefixMemo + "in-3"}) {
			t.Fatalf("Check = %+v, %v", rep, err)
		}
		res, err := s.Repair(rep)
		if err != nil {
			t.Fatal(err)
		}
		if res != (RepairResult{Records: 1, Latest: 1, Memos: 2}) {
			t.Fatalf("Repair = %+v; want 1 record, 1 latest, 2 memos", res)
		}
		if bad, err := s.Verify(); err != nil || len(bad) != 0 {
			t.Fatalf("Verify after Repair = %v, %v", bad, err)
		}
		if _, ok, _ := s.Latest("addr-1"); ok {
			t.Fatal("latest entry of the dropped record survived")
		}
		if _, ok, err := s.Memo("in-1"); ok || err != nil {
			t.Fatalf("memo of the dropped record: ok %v err %v", ok, err)
		}
		for _, i := range []int{0, 2, 3} {
			assertRecord(t, s, sampleRecord(i))
		}
		if _, ok, err := s.Memo("in-0"); !ok || err != nil {
			t.Fatalf("a sound memo was dropped: %v %v", ok, err)
		}
	})
}

func TestPutRefusesGiantRecord(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		rec := sampleRecord(0)
		// Incompressible, over the cap after compression.
		big := make([]byte, MaxRecordBytes+1024)
		for i := range big {
			big[i] = byte(i*7919>>3) ^ byte(i>>11)
		}
		x := uint64(88172645463325252)
		for i := range big {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			big[i] = byte(x)
		}
		rec.Raw = string(big)
		rec.Attempts = []Attempt{{Raw: rec.Raw, Status: 200}}
		err := s.Put(rec)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), rec.Key) || !strings.Contains(err.Error(), "32 MiB") {
			t.Fatalf("Put of a giant record: err = %v, want ErrTooLarge naming the key and the limit", err)
		}
		if _, err := s.Get(rec.Key); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after a refused Put: %v", err)
		}
		// Just under the cap (the raw text is stored once) works.
		rec.Raw = string(big[:MaxRecordBytes-64<<10])
		rec.Attempts = []Attempt{{Raw: rec.Raw, Status: 200}}
		if err := s.Put(rec); err != nil {
			t.Fatalf("Put under the cap: %v", err)
		}
		got, err := s.Get(rec.Key)
		if err != nil || got.Attempts[0].Raw != rec.Raw {
			t.Fatalf("Get of a large record: %v", err)
		}
	})
}

// faultBackend injects a write error beneath the store.
type faultBackend struct {
	backend
	err error
}

func (f *faultBackend) apply(...[]op) error { return f.err }

func TestFullDiskIsErrDiskFull(t *testing.T) {
	m := NewMemory()
	s := store{b: &faultBackend{backend: m.mem, err: fmt.Errorf("write vlog: %w", syscall.ENOSPC)}, where: "/caches/x", now: m.now}
	for name, write := range map[string]func() error{
		"Put":        func() error { return s.Put(sampleRecord(0)) },
		"PutIndexed": func() error { return s.PutIndexed(sampleRecord(0), "a", "in", memoFor(sampleRecord(0).Key)) },
		"SetMemo":    func() error { return s.SetMemo("in", memoFor("k")) },
		"PutRun":     func() error { return s.PutRun(&RunRecord{ID: "r"}) },
		"Drop":       func() error { return s.Drop("k") },
	} {
		err := write()
		if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "disk full at /caches/x") {
			t.Fatalf("%s: err = %v, want ErrDiskFull naming the folder", name, err)
		}
	}
}

// TestLowDiskRefusesBeforeBadger: Badger writes through memory maps, where a
// full disk is a SIGBUS, so the store refuses writes while headroom remains.
func TestLowDiskRefusesBeforeBadger(t *testing.T) {
	var free int64 = 1 << 40
	s := openTemp(t, withFreeSpace(func(string) (int64, error) { return free, nil }))
	defer s.Close()
	mustPut(t, s, sampleRecord(0))
	// The reserve is held as a file, so writes go on until the margin.
	if info, err := os.Stat(filepath.Join(s.Dir(), headroomName)); err != nil || info.Size() != diskReserve(defaultMemTableSize) {
		t.Fatalf("no reserve held: %v", err)
	}
	free = headroomMargin + 100
	err := s.Put(sampleRecord(1))
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "disk full at "+s.Dir()) {
		t.Fatalf("Put on a nearly full disk: err = %v, want ErrDiskFull", err)
	}
	assertRecord(t, s, sampleRecord(0))
	free = 1 << 40
	mustPut(t, s, sampleRecord(1))
}
