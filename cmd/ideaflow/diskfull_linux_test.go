package main

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	openai "github.com/sashabaranov/go-openai"

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
	if code != exitFailedNodes || !strings.Contains(stderr, "disk full at "+cacheDir) || !strings.Contains(stderr, "completed and saved") {
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
