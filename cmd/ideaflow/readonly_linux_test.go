package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOnlyCacheServes mounts a read-only view of a cache (what a shared
// copy is) and runs every reading command, and an offline run, against it.
func TestReadOnlyCacheServes(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatal(stderr)
	}
	shared := t.TempDir()
	if os.Geteuid() != 0 {
		// Without root, permission bits make the folder read-only.
		shared = cacheDir
		if err := filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				err = os.Chmod(p, map[bool]fs.FileMode{true: 0o555, false: 0o444}[d.IsDir()])
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			filepath.WalkDir(cacheDir, func(p string, _ fs.DirEntry, _ error) error { return os.Chmod(p, 0o755) })
		})
	} else {
		// Root ignores permission bits; a read-only bind mount is what stops it.
		if err := syscall.Mount(cacheDir, shared, "", syscall.MS_BIND, ""); err != nil {
			t.Skipf("cannot bind-mount here (%v), and root ignores permission bits", err)
		}
		t.Cleanup(func() { syscall.Unmount(shared, syscall.MNT_DETACH) })
		if err := syscall.Mount("", shared, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			t.Skipf("cannot remount read-only here: %v", err)
		}
	}
	for _, args := range [][]string{{"cache", "stats"}, {"cache", "ls"}, {"cache", "verify"}, {"plan", exp}, {"cache", "export", filepath.Join(t.TempDir(), "x.bundle")}} {
		if code, stdout, stderr := cli(t, append(args, "--cache-dir", shared)...); code != 0 {
			t.Fatalf("%v on a read-only cache: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	before := srv.Count()
	t.Setenv("CLI_TEST_KEY", "")
	code, stdout, stderr := cli(t, "run", exp, "--offline", "--cache-dir", shared, "--out", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "48 cached") {
		t.Fatalf("run --offline on a read-only cache: exit %d\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "warn") || strings.Contains(stderr, "error") {
		t.Fatalf("run --offline (which opens the cache read-only) complained:\n%s", stderr)
	}
	if srv.Count() != before {
		t.Fatal("an offline run called the model")
	}
}
