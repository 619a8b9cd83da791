package batch

import (
	"os"
	"os/signal"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestJournalWriteFailsCleanly: a write the file system refuses halfway (a
// full disk, played by RLIMIT_FSIZE) fails Record and leaves no torn
// entry behind, so the entries after it, once space is back, are read.
func TestJournalWriteFailsCleanly(t *testing.T) {
	path := t.TempDir() + "/j"
	j, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Record(Entry{Op: OpIntent, Submission: "s1", Keys: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	signal.Ignore(syscall.SIGXFSZ) // else the kernel kills the process at the limit
	defer signal.Reset(syscall.SIGXFSZ)
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := unix.Rlimit{Cur: uint64(st.Size()) + 20, Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	err = j.Record(Entry{Op: OpUploaded, Submission: "s1", FileID: "file-with-a-long-enough-id"})
	if rerr := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("write past the limit succeeded")
	}
	if st2, _ := os.Stat(path); st2.Size() != st.Size() {
		t.Fatalf("file is %d bytes after the failed write, want %d (cut back)", st2.Size(), st.Size())
	}
	if err := j.Record(Entry{Op: OpUploaded, Submission: "s1", FileID: "f2"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j2, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	es, _ := j2.Entries()
	if len(es) != 2 || es[1].FileID != "f2" {
		t.Fatalf("entries %+v", es)
	}
}
