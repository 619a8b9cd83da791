package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/engine"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// A full disk is an error, not a crash: on a small tmpfs that fills mid-run,
// the run stops dispatching, says how much it saved and exits 1; once space
// is freed, the next run asks only for what was not saved.
func TestFullDiskStopsTheRunAndResumes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=72m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); the cache's fault-injection tests cover the logic", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })

	// Answers of ~400 KB of incompressible words: a few dozen fill the disk.
	big := func(req *openai.ChatCompletionRequest) string {
		h := fnv.New64a()
		h.Write([]byte(req.Messages[len(req.Messages)-1].Content))
		r := rand.New(rand.NewSource(int64(h.Sum64())))
		raw := make([]byte, 200<<10)
		r.Read(raw)
		return hex.EncodeToString(raw) // 400 KB that compress to no less than half
	}
	srv := llmtest.New(llmtest.WithResponder(big))
	defer srv.Close()
	t.Setenv("DISK_API_KEY", "sk-disk-full-test")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExpandExperiment(t, exp, srv.URL)
	// 40 items, each one list call: 40 x 400 KB does not fit in what the
	// cache may use of 72 MiB.
	var items strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&items, "{\"id\":\"i%02d\"}\n", i)
	}
	if err := os.WriteFile(filepath.Join(exp, "items.jsonl"), []byte(items.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(exp, "exp.hcl"), []byte(strings.Replace(fmt.Sprintf(expandExperiment, srv.URL),
		"api_key_env     = \"EXPAND_API_KEY\"", "api_key_env     = \"DISK_API_KEY\"", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(mnt, "cache")
	sumPath := filepath.Join(dir, "summary.json")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--log-level", "error", "--summary-json", sumPath)
	if code != exitEnvironment || !strings.Contains(stderr, "disk full at "+cacheDir) || !strings.Contains(stderr, "computed and saved") {
		t.Fatalf("full disk: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// 40 lists of one method each, then 40 children: 80 calls in all.
	first := settledCount(srv)
	saved := readSummary(t, sumPath).LLMCalls
	if saved == 0 || first >= 80 {
		t.Fatalf("the disk filled after %d of 80 calls, %d saved", first, saved)
	}

	// Free space, run again: only what was not saved is asked.
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=512m"); err != nil {
		t.Fatalf("grow the tmpfs: %v", err)
	}
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", cacheDir, "--log-level", "error")
	if code != 0 {
		t.Fatalf("after freeing space: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if resumed := srv.Count() - first; resumed != 80-saved {
		t.Fatalf("the resumed run made %d calls; want %d (80 - %d saved before the disk filled)\n%s\n%s", resumed, 80-saved, saved, stdout, stderr)
	}
}

// TestDiskFilledByAnotherProcess: another process fills the disk while a
// run writes the cache, at a different moment in each trial. The run must
// end with the disk-full error (exit 74), never a crash (Badger writes
// through memory maps: a page the file system cannot back is a SIGBUS), and
// the next run, once space is freed, asks only for what the first did not
// save.
func TestDiskFilledByAnotherProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=128m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); the cache's fault-injection tests cover the logic", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	trials := 4
	if n, err := strconv.Atoi(os.Getenv("IDEAFLOW_DISKFILL_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	big := func(req *openai.ChatCompletionRequest) string {
		h := fnv.New64a()
		h.Write([]byte(req.Messages[len(req.Messages)-1].Content))
		raw := make([]byte, 50<<10)
		rand.New(rand.NewSource(int64(h.Sum64()))).Read(raw)
		return hex.EncodeToString(raw) // 100 KB that compress to no less than half
	}
	srv := llmtest.New(llmtest.WithResponder(big), llmtest.WithLatency(15*time.Millisecond))
	defer srv.Close()
	t.Setenv("DISK_API_KEY", "sk-disk-full-test")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExpandExperiment(t, exp, srv.URL)
	var items strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&items, "{\"id\":\"i%02d\"}\n", i)
	}
	if err := os.WriteFile(filepath.Join(exp, "items.jsonl"), []byte(items.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(exp, "exp.hcl"), []byte(strings.Replace(fmt.Sprintf(expandExperiment, srv.URL),
		"api_key_env     = \"EXPAND_API_KEY\"", "api_key_env     = \"DISK_API_KEY\"", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	const total = 80 // 40 lists of one method each, then 40 children
	crashes := 0
	for trial := 0; trial < trials; trial++ {
		cacheDir := filepath.Join(mnt, fmt.Sprintf("cache%d", trial))
		sumPath := filepath.Join(dir, fmt.Sprintf("summary%d.json", trial))
		fill := filepath.Join(mnt, "fill")
		start := srv.Count()
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1", "IDEAFLOW_TEST_ARGS="+strings.Join([]string{
			"run", exp, "--cache-dir", cacheDir, "--log-level", "error", "--summary-json", sumPath, "--out", filepath.Join(dir, "out")}, "\x1f"))
		var stderr strings.Builder
		child.Stderr = &stderr
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- child.Wait() }()
		// Fill the disk after a different number of calls in each trial.
		after := 2 + trial*(total-4)/max(trials-1, 1)
		deadline := time.Now().Add(60 * time.Second)
		for srv.Count()-start < after && len(done) == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		filled := fillDisk(t, fill)
		err := <-done
		code := child.ProcessState.ExitCode()
		crashed := code != exitEnvironment && code != 0 || strings.Contains(stderr.String(), "SIGBUS") ||
			strings.Contains(stderr.String(), "fatal error") || strings.Contains(stderr.String(), "panic:")
		if crashed {
			crashes++
			t.Errorf("trial %d (disk filled after %d calls): the run crashed: exit %d (%v)\n%s", trial, after, code, err, tail(stderr.String(), 2000))
		} else if code == exitEnvironment && !strings.Contains(stderr.String(), "disk full at "+cacheDir) {
			t.Errorf("trial %d: exit 74 without the disk-full error:\n%s", trial, tail(stderr.String(), 2000))
		}
		os.Remove(fill)
		saved := 0
		if sum, err := os.ReadFile(sumPath); err == nil && !crashed {
			var s engine.Summary
			if json.Unmarshal(sum, &s) == nil {
				saved = s.Stages["stage.test_list.methods"].Ran + s.Stages["stage.test_each.search"].Ran
			}
		}
		// Nothing reported saved is lost: the next run asks for the rest.
		before := srv.Count()
		rc, stdout, rerr := cli(t, "run", exp, "--cache-dir", cacheDir, "--log-level", "error", "--out", filepath.Join(dir, "out"))
		if rc != 0 {
			t.Errorf("trial %d: the run after freeing space: exit %d\n%s\n%s", trial, rc, stdout, rerr)
		} else if asked := srv.Count() - before; !crashed && asked != total-saved {
			t.Errorf("trial %d: the next run asked %d calls; want %d (%d - %d reported saved)", trial, asked, total-saved, total, saved)
		}
		t.Logf("trial %d: filled %d MiB after %d calls: exit %d, %d calls saved", trial, filled>>20, after, code, saved)
		os.RemoveAll(cacheDir)
	}
	t.Logf("%d crash(es) in %d trials", crashes, trials)
}

// fillDisk writes zeros to path until the file system holding it is full,
// as another process filling the disk would, and returns how many bytes.
func fillDisk(t *testing.T, path string) int64 {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if err != nil {
			return n
		}
	}
}

// tail keeps the start of a long output (where a crash says what it was)
// and its end.
func tail(s string, n int) string {
	if len(s) > 2*n {
		return s[:n] + "\n...\n" + s[len(s)-n:]
	}
	return s
}
