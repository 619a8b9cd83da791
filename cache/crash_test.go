package cache

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// envCrashChild makes the test binary act as the writer that gets killed.
const envCrashChild = "IDEAFLOW_CACHE_CRASH_CHILD_DIR"

// TestCrashSafety re-runs this test binary as a child that Puts records from
// several goroutines and prints "ACK <i>" after each Put returns. The parent
// SIGKILLs it mid-stream, reopens the cache and requires every acknowledged
// record to be there, intact.
func TestCrashSafety(t *testing.T) {
	if dir := os.Getenv(envCrashChild); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashSafety$")
	cmd.Env = append(os.Environ(), envCrashChild+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const killAfter = 300
	acked := map[int]bool{}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		n, ok := strings.CutPrefix(lines.Text(), "ACK ")
		if !ok {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil {
			t.Fatalf("child printed %q", lines.Text())
		}
		acked[i] = true
		if len(acked) == killAfter {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Acknowledgements already in the pipe when the kill landed count too.
	state, _ := cmd.Process.Wait()
	if len(acked) < killAfter {
		t.Fatalf("child stopped after %d acknowledgements (%v); stderr:\n%s", len(acked), state, stderr.String())
	}
	if state.Success() {
		t.Fatal("child exited normally; it should have been killed")
	}

	// A read-only open after the kill reads every acknowledged record and
	// changes nothing (Badger alone would refuse until a writable open had
	// replayed the memtable log).
	before := snapshotDir(t, dir)
	ro, err := Open(dir, ReadOnly())
	if err != nil {
		t.Fatalf("read-only open after kill: %v", err)
	}
	for i := range acked {
		assertRecord(t, ro, sampleRecord(i))
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after := snapshotDir(t, dir); !maps.Equal(before, after) {
		t.Fatal("a read-only open after the kill changed the cache folder")
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	for i := range acked {
		assertRecord(t, s, sampleRecord(i))
	}
	if bad, err := s.Verify(); err != nil || len(bad) != 0 {
		t.Fatalf("Verify after kill = %v, %v", bad, err)
	}
	t.Logf("%d acknowledged records all survived SIGKILL", len(acked))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err = Open(dir, ReadOnly())
	if err != nil {
		t.Fatalf("read-only open after recovery: %v", err)
	}
	ro.Close()
}

// crashChild writes until killed; it never returns normally.
func crashChild(dir string) {
	s, err := Create(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	const writers = 8
	var out sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i += writers {
				if err := s.Put(sampleRecord(i)); err != nil {
					fmt.Fprintln(os.Stderr, "put:", err)
					os.Exit(3)
				}
				out.Lock()
				fmt.Fprintf(os.Stdout, "ACK %d\n", i)
				out.Unlock()
			}
		}()
	}
	wg.Wait()
}
