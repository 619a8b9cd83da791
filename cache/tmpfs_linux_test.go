package cache

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFullTmpfs fills a real small file system, where mounting is allowed.
func TestFullTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=48m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); TestFullDiskIsErrDiskFull and TestLowDiskRefusesBeforeBadger cover the logic", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	dir := filepath.Join(mnt, "cache")
	s, err := Create(dir, withMemTableSize(4<<20))
	if err != nil {
		t.Fatalf("Create on a small tmpfs: %v", err)
	}
	defer s.Close()
	var putErr error
	var first *Record
	n := 0
	for i := 0; i < 100000 && putErr == nil; i++ {
		r := sampleRecord(i)
		raw := make([]byte, 64<<10)
		x := uint64(i + 1)
		for j := range raw {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			raw[j] = byte(x)
		}
		r.Raw = string(raw)
		if putErr = s.Put(r); putErr == nil {
			n++
		}
		if first == nil {
			first = r
		}
	}
	if !errors.Is(putErr, ErrDiskFull) || n == 0 {
		t.Fatalf("filling a 48 MiB tmpfs: err = %v after %d records, want ErrDiskFull", putErr, n)
	}
	t.Logf("%d records of 64 KiB, then: %v", n, putErr)
	assertRecord(t, s, first)
}

// A sparse log on a full tmpfs faults when its holes are read through a
// mapping (a read fault needs a page the file system cannot give): the scan
// is ErrDiskFull, never a SIGBUS that kills the process.
func TestScanOfSparseLogOnFullTmpfsIsAnError(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v)", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	// A 64 MiB log with a written head and a hole after it, as Badger
	// preallocates them; then the file system filled by another file.
	log := filepath.Join(mnt, "000001.mem")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for {
		if _, err := filler.Write(chunk); err != nil {
			break
		}
	}
	filler.Close()
	_, err = scanFile(log, func([]logEntry, bool) {})
	if !errors.Is(err, ErrDiskFull) {
		// On a kernel that maps holes to the zero page the scan simply
		// reads zeros: no fault to turn into an error.
		if err == nil {
			t.Skip("this kernel reads a tmpfs hole without allocating: nothing faulted")
		}
		t.Fatalf("scan of a sparse log on a full tmpfs: %v; want ErrDiskFull", err)
	}
	t.Logf("scan: %v", err)
}
