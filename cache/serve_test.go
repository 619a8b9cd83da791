//go:build unix

package cache

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// serving opens a writable cache in a fresh folder with n records, a
// failure and a run, and serves it.
func serving(t *testing.T, n int) (*Badger, *Server) {
	t.Helper()
	b := openTemp(t)
	for i := 0; i < n; i++ {
		mustPut(t, b, sampleRecord(i))
	}
	if err := b.SetLatest("a", sampleRecord(0).Key); err != nil {
		t.Fatal(err)
	}
	if err := b.PutFailure(&Failure{Key: "f", Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	if err := b.PutRun(&RunRecord{ID: "exp-1", Experiment: "exp", Started: time.Unix(5, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	srv, err := b.Serve()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); b.Close() })
	return b, srv
}

// A cache read through the socket of the run that holds it reads exactly
// what the run's own handle reads: records, parts, index entries, runs,
// stats, and a bundle byte for byte (1,200 records: scans take pages).
func TestServedReadsEqualDirectReads(t *testing.T) {
	b, srv := serving(t, 1200)
	if fi, err := os.Stat(srv.Path()); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %s: %v %v", srv.Path(), fi, err)
	}
	if srv.Path() != filepath.Join(b.Dir(), SocketName) {
		t.Fatalf("socket at %s, want beside the cache", srv.Path())
	}
	r, err := DialServed(b.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, i := range []int{0, 7, 1199} {
		want, _ := b.Get(sampleRecord(i).Key)
		got, err := r.Get(sampleRecord(i).Key)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Get %d: %v\n got %+v\nwant %+v", i, err, got, want)
		}
		wp, _ := b.Parts(sampleRecord(i).Key)
		if gp, err := r.Parts(sampleRecord(i).Key); err != nil || !reflect.DeepEqual(gp, wp) {
			t.Fatalf("Parts %d: %v %v", i, gp, err)
		}
	}
	if _, err := r.Get("absent"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get absent: %v", err)
	}
	if k, ok, err := r.Latest("a"); err != nil || !ok || k != sampleRecord(0).Key {
		t.Fatalf("Latest: %q %v %v", k, ok, err)
	}
	if has, err := r.Has(sampleRecord(3).Key); err != nil || !has {
		t.Fatalf("Has: %v %v", has, err)
	}
	if f, err := r.Failure("f"); err != nil || f.Error != "boom" {
		t.Fatalf("Failure: %v %v", f, err)
	}
	if runs, err := r.Runs(); err != nil || len(runs) != 1 || runs[0].ID != "exp-1" {
		t.Fatalf("Runs: %v %v", runs, err)
	}
	ws, _ := b.Stats()
	gs, err := r.Stats()
	if err != nil || gs != ws || gs.Records != 1200 {
		t.Fatalf("Stats: %v\n got %+v\nwant %+v", err, gs, ws)
	}
	var direct, served bytes.Buffer
	if _, err := b.Export(&direct, nil); err != nil {
		t.Fatal(err)
	}
	if res, err := r.Export(&served, nil); err != nil || res.Written != 1200 || !bytes.Equal(served.Bytes(), direct.Bytes()) {
		t.Fatalf("Export through the socket: %+v, %v, equal %v", res, err, bytes.Equal(served.Bytes(), direct.Bytes()))
	}
	if err := r.Put(sampleRecord(5000)); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Put through the socket: %v", err)
	}
}

// A reader sees one snapshot, from when it connected, however the run
// writes meanwhile; the next reader sees the writes.
func TestServedReadsAreOneSnapshot(t *testing.T) {
	b, _ := serving(t, 3)
	r, err := DialServed(b.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before, _ := r.Stats()
	mustPut(t, b, sampleRecord(10), sampleRecord(11))
	if err := b.Drop(sampleRecord(0).Key); err != nil {
		t.Fatal(err)
	}
	after, _ := r.Stats()
	if after.Records != before.Records || after.Records != 3 {
		t.Fatalf("one reader saw %d then %d records", before.Records, after.Records)
	}
	if _, err := r.Get(sampleRecord(10).Key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a write after connecting is visible: %v", err)
	}
	if _, err := r.Get(sampleRecord(0).Key); err != nil {
		t.Fatalf("a drop after connecting is visible: %v", err)
	}
	r2, err := DialServed(b.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if s, _ := r2.Stats(); s.Records != 4 {
		t.Fatalf("a new reader sees %d records, want 4", s.Records)
	}
}

// Close removes the socket; a reader still connected gets ErrServeGone,
// and a new one cannot connect.
func TestServerCloseRemovesTheSocket(t *testing.T) {
	b, srv := serving(t, 2)
	r, err := DialServed(b.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Get(sampleRecord(1).Key); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(srv.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket still there: %v", err)
	}
	if _, err := r.Get(sampleRecord(1).Key); !errors.Is(err, ErrServeGone) {
		t.Fatalf("read after Close: %v", err)
	}
	if _, err := DialServed(b.Dir()); err == nil {
		t.Fatal("dialled a closed server")
	}
}

// A socket left by a killed run answers nothing: a reader cannot connect
// (and says where it tried), and the next run's Serve replaces it.
func TestStaleSocket(t *testing.T) {
	b := openTemp(t)
	defer b.Close()
	path := SocketPath(b.Dir())
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() // as a kill -9 leaves it
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if _, err := DialServed(b.Dir()); err == nil {
		t.Fatal("dialled a stale socket")
	}
	srv, err := b.Serve()
	if err != nil {
		t.Fatalf("Serve over a stale socket: %v", err)
	}
	defer srv.Close()
	r, err := DialServed(b.Dir())
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// A cache folder whose socket path would be too long for a socket address
// is served from the temporary folder, under a name both sides derive.
func TestLongCachePathSocket(t *testing.T) {
	dir := filepath.Join(t.TempDir(), string(bytes.Repeat([]byte("d"), 120)))
	b, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srv, err := b.Serve()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if filepath.Dir(srv.Path()) != os.TempDir() || len(srv.Path()) > maxSocketPath {
		t.Fatalf("socket at %s", srv.Path())
	}
	r, err := DialServed(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// A read-only cache does not serve: only the process holding the lock may.
func TestOnlyAWritableCacheServes(t *testing.T) {
	b := openTemp(t)
	dir := b.Dir()
	b.Close()
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Serve(); err == nil {
		t.Fatal("a read-only cache served")
	}
}
