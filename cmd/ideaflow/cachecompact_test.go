package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheCompact: `ideaflow cache compact` compacts an existing cache and
// the next run reads it all back; on a missing cache it fails as the other
// cache commands do, creating nothing.
func TestCacheCompact(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := cli(t, "cache", "compact", "--cache-dir", cacheDir)
	if code != 0 || stdout != "compacted\n" || !strings.Contains(stderr, "cache: compacting") || !strings.Contains(stderr, "cache: compacted") {
		t.Fatalf("compact: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--offline"); code != 0 {
		t.Fatalf("after compact the experiment must run offline: %s", stderr)
	}
	missing := filepath.Join(t.TempDir(), "absent")
	if code, _, stderr := cli(t, "cache", "compact", "--cache-dir", missing); code != exitBadInput || !strings.Contains(stderr, "no cache at "+missing) {
		t.Fatalf("compact of a missing cache: exit %d\n%s", code, stderr)
	}
}
