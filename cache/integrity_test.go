package cache

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// fillIncompressible writes n records whose raw text is random, so every
// value is too large for the LSM tree and lands in the value log, closes the
// cache, and returns the records.
func fillIncompressible(t *testing.T, dir string, n int, seed int64) []*Record {
	t.Helper()
	s, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	recs := make([]*Record, n)
	for i := range recs {
		r := sampleRecord(i)
		raw := make([]byte, 2000)
		rng.Read(raw)
		r.Raw = string(raw)
		r.Attempts = []Attempt{{Raw: r.Raw, Status: 200}}
		recs[i] = r
		mustPut(t, s, r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// garble overwrites 4 KiB in the middle of the value log with bytes from seed.
func garble(t *testing.T, dir string, seed int64) {
	t.Helper()
	p := filepath.Join(dir, "000001.vlog")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	rand.New(rand.NewSource(seed)).Read(block)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(block, info.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// within fails the test if fn has not returned after a generous guard; it
// checks that damage cannot hang a command, not how fast anything is.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not return within 60 s", what)
	}
}

func readable(s Store, recs []*Record) (ok, corrupt int, other error) {
	for _, r := range recs {
		_, err := s.Get(r.Key)
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrCorrupt):
			corrupt++
		default:
			other = err
		}
	}
	return ok, corrupt, other
}

func TestMissingCacheIsNotCreated(t *testing.T) {
	for name, open := range map[string]func(string, ...Option) (*Badger, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		t.Run(name, func(t *testing.T) {
			missing := filepath.Join(t.TempDir(), "a", "typo")
			_, err := open(missing)
			if !errors.Is(err, ErrNoCache) || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "does not exist") {
				t.Fatalf("err = %v, want ErrNoCache naming %s", err, missing)
			}
			if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s created the folder (stat: %v)", name, err)
			}
			empty := t.TempDir()
			if _, err := open(empty); !errors.Is(err, ErrNoCache) || !strings.Contains(err.Error(), "holds no cache") {
				t.Fatalf("empty folder: err = %v, want ErrNoCache", err)
			}
			if ents, _ := os.ReadDir(empty); len(ents) != 0 {
				t.Fatalf("%s wrote %d files into an empty folder", name, len(ents))
			}
		})
	}
	dir := filepath.Join(t.TempDir(), "new")
	s, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, sampleRecord(0))
	s.Close()
	s, err = Open(dir)
	if err != nil {
		t.Fatalf("Open after Create: %v", err)
	}
	assertRecord(t, s, sampleRecord(0))
	s.Close()
}

// TestMissingManifestIsRefused: Badger treats a folder without MANIFEST as a
// new cache beside the old data; every open must refuse instead.
func TestMissingManifestIsRefused(t *testing.T) {
	dir := t.TempDir()
	fillIncompressible(t, dir, 50, 1)
	if err := os.Remove(filepath.Join(dir, "MANIFEST")); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(string, ...Option) (*Badger, error){"Open": Open, "OpenReadOnly": OpenReadOnly, "Create": Create} {
		_, err := open(dir)
		if !errors.Is(err, ErrNoManifest) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "restore MANIFEST") {
			t.Fatalf("%s: err = %v, want ErrNoManifest naming the folder and what to do", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("an open wrote a new MANIFEST")
	}
}

// TestDamagedLastLogCostsOnlyTheDamagedRecords: a 4 KiB garbled block in
// the newest value log. Badger's writable open would cut the log there and
// lose every record after it. A read-only open leaves the file alone and
// reads every undamaged record; a writable open keeps the log too (it
// starts a new one instead), drops exactly the records under the damage,
// and says so.
func TestDamagedLastLogCostsOnlyTheDamagedRecords(t *testing.T) {
	dir := t.TempDir()
	recs := fillIncompressible(t, dir, 300, 0)
	garble(t, dir, 7)
	vlog := filepath.Join(dir, "000001.vlog")
	before, _ := os.ReadFile(vlog)

	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ok, corrupt int
	var other error
	within(t, "read-only reads and Close", func() {
		ok, corrupt, other = readable(ro, recs)
		if err := ro.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if other != nil || corrupt == 0 || corrupt > 3 || ok+corrupt != len(recs) {
		t.Fatalf("read-only: %d readable, %d corrupt, other error %v; want only the records under the 4 KiB block corrupt", ok, corrupt, other)
	}
	if after, _ := os.ReadFile(vlog); !bytes.Equal(after, before) {
		t.Fatal("a read-only open changed the value log")
	}

	var logBuf bytes.Buffer
	rw, err := Open(dir, WithLogger(zerolog.New(zerolog.SyncWriter(&logBuf))))
	if err != nil {
		t.Fatal(err)
	}
	rec := rw.Recovery()
	okRW, corruptRW, otherRW := readable(rw, recs)
	rw.Close() // Badger's goroutines log until Close; read the log after it
	if rec.BytesDropped != 0 || len(rec.Files) != 0 || rec.RecordsUnreadable != corrupt || rec.Repaired.Records != corrupt ||
		len(rec.Damage) != 1 || !strings.Contains(rec.Damage[0], "000001.vlog: damaged") {
		t.Fatalf("Recovery = %+v; want the damage named, nothing cut, the %d damaged records dropped", rec, corrupt)
	}
	// The dropped records are misses; every other record reads.
	if okRW != ok || corruptRW != 0 || !errors.Is(otherRW, ErrNotFound) {
		t.Fatalf("after the writable open: %d readable (want %d), %d corrupt, other %v", okRW, ok, corruptRW, otherRW)
	}
	if after, _ := os.ReadFile(vlog); !bytes.Equal(after, before) {
		t.Fatal("the writable open cut or changed the damaged value log")
	}
	if !strings.Contains(logBuf.String(), `"level":"warn"`) || !strings.Contains(logBuf.String(), `"records_unreadable":`) {
		t.Fatalf("the damage was not logged as a warning:\n%s", logBuf.String())
	}
	// Healed: the next open finds nothing to do.
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if r := again.Recovery(); r.Damaged() {
		t.Fatalf("second open: %+v", r)
	}
	if bad, err := again.Verify(); err != nil || len(bad) != 0 {
		t.Fatalf("Verify after the repair = %v, %v", bad, err)
	}
}

// TestCleanOpenReportsNoRecovery: routine opens, including crash recovery
// that only cuts preallocated zeros, must not warn.
func TestCleanOpenReportsNoRecovery(t *testing.T) {
	dir := t.TempDir()
	fillIncompressible(t, dir, 20, 2)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := s.Recovery(); r.BytesDropped != 0 || len(r.Files) != 0 {
		t.Fatalf("Recovery = %+v on a clean cache", r)
	}
}

// TestGarbledValueLogCannotHang: with this damage Badger used to decode a
// garbage entry header, leak a file lock and hang in Close (or panic in a
// prefetch goroutine). Verify must finish and name the damaged records.
func TestGarbledValueLogCannotHang(t *testing.T) {
	for seed := int64(0); seed < 4; seed++ {
		dir := t.TempDir()
		fillIncompressible(t, dir, 300, seed)
		garble(t, dir, seed+100)
		s, err := OpenReadOnly(dir)
		if err != nil {
			t.Fatal(err)
		}
		within(t, "Verify and Close", func() {
			bad, err := s.Verify()
			if err != nil || len(bad) == 0 {
				t.Errorf("seed %d: Verify = %d bad, %v; want the damaged records", seed, len(bad), err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("seed %d: Close: %v", seed, err)
			}
		})
	}
}

// TestTruncatedValueLogReadsCorrupt: the records past the end of a cut log
// read as ErrCorrupt until a writable open drops them (then ErrNotFound).
func TestTruncatedValueLogReadsCorrupt(t *testing.T) {
	dir := t.TempDir()
	recs := fillIncompressible(t, dir, 200, 3)
	vlog := filepath.Join(dir, "000001.vlog")
	info, _ := os.Stat(vlog)
	if err := os.Truncate(vlog, info.Size()/2); err != nil {
		t.Fatal(err)
	}
	// Read-only first: the writable open drops what it cannot read.
	for _, o := range []struct {
		name string
		open func(string, ...Option) (*Badger, error)
	}{{"read-only", OpenReadOnly}, {"read-write", Open}} {
		name := o.name
		s, err := o.open(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		within(t, name+" reads", func() {
			ok, corrupt, other := readable(s, recs)
			missed := 0
			for _, r := range recs {
				if _, err := s.Get(r.Key); errors.Is(err, ErrNotFound) {
					missed++
				}
			}
			switch name {
			case "read-only":
				if other != nil || ok == 0 || corrupt == 0 || ok+corrupt != len(recs) {
					t.Errorf("%s: %d readable, %d corrupt, other %v", name, ok, corrupt, other)
				}
			default:
				if ok == 0 || corrupt != 0 || ok+missed != len(recs) {
					t.Errorf("%s: %d readable, %d corrupt, %d dropped", name, ok, corrupt, missed)
				}
			}
			for _, r := range recs {
				if _, err := s.Parts(r.Key); err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotFound) {
					t.Errorf("%s: Parts %s: %v", name, r.Key, err)
				}
			}
			s.Close()
		})
	}
}

func TestLockedNamesTheHolder(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, open := range map[string]func(string, ...Option) (*Badger, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		_, err := open(dir)
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid") {
			t.Fatalf("%s while held: err = %v, want ErrLocked naming the pid", name, err)
		}
	}
}
