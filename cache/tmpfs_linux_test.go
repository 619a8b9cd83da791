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
