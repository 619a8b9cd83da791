package cache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const envFullCloseChild = "IDEAFLOW_CACHE_FULL_CLOSE_DIR"

// TestCloseOnAFullDisk: when the disk is full at Close, the cache gives its
// reserve back for Badger's flush; when even that is not room enough (the
// space stays taken), Close does not flush into a disk that cannot take it
// (a SIGBUS) but leaves the cache as a kill would, and says so. Every record
// written before is there on the next open. The child process plays the
// writer, since a cache left open holds its lock until its process exits.
func TestCloseOnAFullDisk(t *testing.T) {
	if dir := os.Getenv(envFullCloseChild); dir != "" {
		fullCloseChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCloseOnAFullDisk$")
	cmd.Env = append(os.Environ(), envFullCloseChild+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "CLOSE disk full at "+dir) || !strings.Contains(out.String(), "left as a killed process leaves it") ||
		!strings.Contains(out.String(), "HEADROOM released") {
		t.Fatalf("child:\n%s", out.String())
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 50 {
		assertRecord(t, s, sampleRecord(i))
	}
	if r := s.Recovery(); r.Damaged() {
		t.Fatalf("open after an unflushed close: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, headroomName)); err != nil {
		t.Fatalf("the next writable open did not take the reserve again: %v", err)
	}
}

func fullCloseChild(dir string) {
	var full atomic.Bool
	s, err := Create(dir, withFreeSpace(func(string) (int64, error) {
		if full.Load() {
			return 0, nil
		}
		return 1 << 40, nil
	}))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	for i := range 50 {
		if err := s.Put(sampleRecord(i)); err != nil {
			fmt.Println("put:", err)
			os.Exit(2)
		}
	}
	full.Store(true)
	err = s.Close()
	if !errors.Is(err, ErrDiskFull) {
		fmt.Println("Close on a full disk:", err)
		os.Exit(2)
	}
	fmt.Println("CLOSE", err)
	if _, err := os.Stat(filepath.Join(dir, headroomName)); errors.Is(err, os.ErrNotExist) {
		fmt.Println("HEADROOM released")
	}
	os.Exit(0)
}

// TestCloseGivesTheReserveToItsFlush: with the disk full but for the
// reserve, Close gives the reserve back and flushes; the cache closes
// cleanly.
func TestCloseGivesTheReserveToItsFlush(t *testing.T) {
	var full atomic.Bool
	dir := t.TempDir()
	s, err := Create(dir, withFreeSpace(func(string) (int64, error) {
		switch {
		case !full.Load():
			return 1 << 40, nil
		case errors.Is(statErr(filepath.Join(dir, headroomName)), os.ErrNotExist):
			return diskReserve(defaultMemTableSize), nil // what the reserve gave back
		}
		return 0, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, sampleRecord(0))
	full.Store(true)
	if err := s.Close(); err != nil {
		t.Fatalf("Close with the reserve as room: %v", err)
	}
	// A clean close flushed the memtable: no memtable log is left.
	if mems, _ := filepath.Glob(filepath.Join(dir, "*.mem")); len(mems) != 0 {
		t.Fatalf("Close left memtable logs %v: it did not flush", mems)
	}
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	assertRecord(t, ro, sampleRecord(0))
}

func statErr(p string) error {
	_, err := os.Stat(p)
	return err
}
