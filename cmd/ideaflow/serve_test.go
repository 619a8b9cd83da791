//go:build unix

package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ideaflow/ideaflow/cache"
)

// readCommands are the read-only commands that work beside a run; "OUT" is
// replaced by a fresh folder. The first two read what the held run changes
// (the records it stores for its dropped targets without a call); the
// others describe the last run's configuration, which it does not change.
var readCommands = [][]string{
	{"cache", "stats", "--json"},
	{"plan", "EXP", "-var", "n=4"},
	{"plan", "EXP", "--json"},
	{"show", `stage.generate_ideas.main["gen-a"]`, "EXP"},
	{"export", `stage.generate_ideas.main["gen-a"]`, "EXP"},
	{"report", "EXP", "--out", "OUT"},
}

var (
	recordsRe = regexp.MustCompile(`"records":(\d+)`)
	cachedRe  = regexp.MustCompile(`(\d+) nodes: (\d+) cached`)
)

// number is the n-th group of re in s.
func number(t *testing.T, re *regexp.Regexp, s string, n int) int {
	t.Helper()
	m := re.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s not in\n%s", re, s)
	}
	v, _ := strconv.Atoi(m[n])
	return v
}

// outFolder is what differs between two report commands: their --out.
var outFolder = regexp.MustCompile(`wrote \S+/`)

// readOutputs runs every read command and returns what each printed.
func readOutputs(t *testing.T, exp, cacheDir string) []string {
	t.Helper()
	var outs []string
	for _, args := range readCommands {
		args = append([]string(nil), args...)
		for i, a := range args {
			switch a {
			case "OUT":
				args[i] = t.TempDir()
			case "EXP":
				args[i] = exp
			}
		}
		code, stdout, stderr := cli(t, append(args, "--cache-dir", cacheDir)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		outs = append(outs, outFolder.ReplaceAllString(stdout, "wrote OUT/"))
	}
	return outs
}

// While a run holds the cache, plan, show, export, report and cache stats
// read it through the socket the run serves, and print exactly what they
// print on the same cache with no run going: the run here is held open by
// a fake server that blocks all of its calls (new samples, -var n=4) until
// released, so the cache holds what it held before it started. The run
// says where to look; the socket goes when it ends.
func TestReadOnlyCommandsWhileARunHoldsTheCache(t *testing.T) {
	srv, exp, cacheDir, _ := newScenario(t)
	var hold atomic.Bool
	var blocked atomic.Int32
	release := make(chan struct{})
	srv.SetResponder(func(req *openai.ChatCompletionRequest) string {
		if hold.Load() {
			blocked.Add(1)
			<-release
		}
		return responder(req)
	})
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir()); code != 0 {
		t.Fatalf("first run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	idle := readOutputs(t, exp, cacheDir)
	if !strings.Contains(idle[0], `"records":`) || !strings.Contains(idle[1], "to run") {
		t.Fatalf("outputs with no run going:\n%s", strings.Join(idle, "\n---\n"))
	}

	hold.Store(true)
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir(), "-var", "n=4")
		done <- result{code, stdout, stderr}
	}()
	// Wait for the run to settle: a call held, and what needs no call
	// stored (five reads in a row agree: two, 10 ms apart, were seen to
	// agree while a loaded machine's run was still storing).
	sock := cache.SocketPath(cacheDir)
	for prev, same := "", 0; same < 4; {
		if blocked.Load() == 0 {
			runtime.Gosched()
			continue
		}
		_, stats, _ := cli(t, "cache", "stats", "--json", "--cache-dir", cacheDir)
		if stats == prev {
			same++
		} else {
			same = 0
		}
		prev = stats
		time.Sleep(20 * time.Millisecond)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v, %v", sock, fi, err)
	}
	during := readOutputs(t, exp, cacheDir)
	// The records the run stored so far are the nodes plan now finds cached.
	stored := number(t, recordsRe, during[0], 1) - number(t, recordsRe, idle[0], 1)
	if found := number(t, cachedRe, during[1], 2) - number(t, cachedRe, idle[1], 2); stored <= 0 || found != stored {
		t.Errorf("during the run: %d records stored, plan finds %d more nodes cached", stored, found)
	}
	for i := 2; i < len(readCommands); i++ {
		if during[i] != idle[i] {
			t.Errorf("%v during the run printed\n%s\nwith no run going\n%s", readCommands[i], during[i], idle[i])
		}
	}
	// What a command reading the view says on stderr.
	if _, _, stderr := cli(t, "cache", "stats", "--cache-dir", cacheDir); !strings.Contains(stderr, "note: a run holds the cache; reading the view it serves at "+sock) {
		t.Errorf("stats during the run does not say where it reads:\n%s", stderr)
	}
	// Commands that need the cache itself still refuse.
	if code, _, stderr := cli(t, "cache", "verify", "--cache-dir", cacheDir); code != exitBadInput || !strings.Contains(stderr, "in use by another process") {
		t.Errorf("verify during the run: exit %d\n%s", code, stderr)
	}
	hold.Store(false)
	close(release)
	r := <-done
	if r.code != 0 || !strings.Contains(r.stdout, "While it runs, plan, show, export, report and cache stats read the cache through "+sock+".") {
		t.Fatalf("held run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left after the run: %v", err)
	}
	if _, stdout, _ := cli(t, "plan", exp, "-var", "n=4", "--cache-dir", cacheDir); !strings.Contains(stdout, " 0 to run.") {
		t.Fatalf("after the held run:\n%s", stdout)
	}
}

// A socket left by a killed run: commands read the cache itself (no run
// holds it), the next run replaces the socket and removes it at its end;
// and while something holds the cache without serving it, a reader says
// that nothing answers at the socket.
func TestStaleSocketFromAKilledRun(t *testing.T) {
	_, exp, cacheDir, _ := newScenario(t)
	if code, _, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir()); code != 0 {
		t.Fatal(stderr)
	}
	sock := cache.SocketPath(cacheDir)
	stale := func() {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false)
		ln.Close() // what kill -9 leaves
	}
	stale()
	if code, stdout, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir); code != 0 || !strings.Contains(stdout, "0 to run.") || strings.Contains(stderr, "serves") {
		t.Fatalf("plan beside a stale socket: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--out", t.TempDir()); code != 0 || !strings.Contains(stdout, sock) {
		t.Fatalf("run over a stale socket: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left after the run: %v", err)
	}
	// A holder that serves nothing (an older ideaflow) beside a stale socket.
	stale()
	holder, err := cache.Open(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	code, _, stderr := cli(t, "plan", exp, "--cache-dir", cacheDir)
	if code != exitBadInput || !strings.Contains(stderr, "cache is in use by another process") ||
		!strings.Contains(stderr, "the run serves no reads at "+sock) {
		t.Fatalf("plan beside a holder that does not serve: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, cache.SocketName)); err != nil && sock == filepath.Join(cacheDir, cache.SocketName) {
		t.Fatalf("a reader removed the socket: %v", err) // readers never change the folder
	}
}
