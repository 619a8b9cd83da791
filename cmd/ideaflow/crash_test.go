package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// TestKilledRunLosesOnlyInFlightCalls SIGKILLs a run part-way, re-runs it,
// and checks that every node completed before the kill is served from the
// cache (the server never sees its request again) and that the final
// outputs equal those of an uninterrupted run.
//
// Nothing in it waits for time to pass. The server is the synchronisation:
// it answers until the first ranking request arrives, which the walker sends
// only once that target's generations are durable (a call settles after its
// record is synced), and holds that request and every later one until the
// client goes away. The kill therefore always lands part-way, with at least
// one target's generations stored and no ranking answered. Each phase sends
// its own API key, so a request of the killed child that reaches the server
// late is never counted as the resume's.
func TestKilledRunLosesOnlyInFlightCalls(t *testing.T) {
	const totalRequests = 32 // 2 generators x (4 targets x 3 samples + 4 rankings)
	srv := llmtest.New(llmtest.WithResponder(responder))
	defer srv.Close()
	gate := newRankingGate()
	srv.SetHook(gate.hook)
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "CRASH_API_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5, MaxConcurrency: 2})
	killedCache := filepath.Join(dir, "killed-cache")

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1", "CRASH_API_KEY=sk-killed",
		"IDEAFLOW_TEST_ARGS="+strings.Join([]string{"run", exp, "--cache-dir", killedCache, "--out", filepath.Join(dir, "killed-results")}, "\x1f"))
	var childOut strings.Builder
	child.Stdout, child.Stderr = &childOut, &childOut
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	select {
	case <-gate.closed:
	case err := <-exited:
		t.Fatalf("the child ended (%v) before it asked for a ranking:\n%s", err, childOut.String())
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	srv.SetHook(nil) // the phases below are answered in full

	store, err := cache.Open(killedCache)
	if err != nil {
		t.Fatal(err)
	}
	completedCalls := 0
	err = store.List(func(e cache.Entry) error {
		rec, err := store.Get(e.Key)
		if err != nil {
			return err
		}
		if rec.Model != "" {
			completedCalls++
		}
		return nil
	})
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	if completedCalls < 3 || completedCalls >= totalRequests {
		t.Fatalf("the kill was not part-way: %d of %d model nodes completed, want at least one target's 3 generations and no ranking", completedCalls, totalRequests)
	}

	t.Setenv("CRASH_API_KEY", "sk-resume")
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", killedCache, "--out", filepath.Join(dir, "resumed"))
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := sentWithKey(srv, "sk-resume"); got != totalRequests-completedCalls {
		t.Errorf("resume sent %d requests; want %d (%d total - %d completed before the kill)",
			got, totalRequests-completedCalls, totalRequests, completedCalls)
	}

	t.Setenv("CRASH_API_KEY", "sk-clean")
	code, stdout, stderr = cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "clean-cache"), "--out", filepath.Join(dir, "clean"))
	if code != 0 {
		t.Fatalf("clean run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := sentWithKey(srv, "sk-clean"); got != totalRequests {
		t.Errorf("the uninterrupted run sent %d requests, want %d", got, totalRequests)
	}
	for _, f := range []string{"table1.md", "table1.csv"} {
		resumed, err1 := os.ReadFile(filepath.Join(dir, "resumed", f))
		clean, err2 := os.ReadFile(filepath.Join(dir, "clean", f))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if string(resumed) != string(clean) {
			t.Errorf("%s differs between resumed and uninterrupted runs:\n%s\n---\n%s", f, resumed, clean)
		}
	}
}

// rankingGate is a server hook that answers requests until the first ranking
// request arrives, then holds that one and every later one until its client
// goes away (a Delay far beyond any test; the server cuts it short when the
// connection closes). closed is closed when the first ranking arrives.
type rankingGate struct {
	once   sync.Once
	shut   bool // read and written under the server's lock (the hook runs under it)
	closed chan struct{}
}

func newRankingGate() *rankingGate { return &rankingGate{closed: make(chan struct{})} }

func (g *rankingGate) hook(r *llmtest.Request) (llmtest.Fault, bool) {
	if !g.shut && r.Chat != nil && len(r.Chat.Messages) > 0 &&
		rankInstruction.MatchString(r.Chat.Messages[len(r.Chat.Messages)-1].Content) {
		g.shut = true
		g.once.Do(func() { close(g.closed) })
	}
	if g.shut {
		return llmtest.Fault{Delay: 24 * time.Hour}, true
	}
	return llmtest.Fault{}, false
}

// sentWithKey counts the requests the server received with API key key.
func sentWithKey(s *llmtest.Server, key string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Header.Get("Authorization") == "Bearer "+key {
			n++
		}
	}
	return n
}

func answered(s *llmtest.Server) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Answered {
			n++
		}
	}
	return n
}

// TestSIGINTStopsCleanly interrupts a run with SIGINT: it stops dispatching,
// exits 130, and a re-run asks only for what was not completed. As in
// TestKilledRunLosesOnlyInFlightCalls, the server holds every request from
// the first ranking on, so the interrupt lands part-way whatever the
// machine's speed, and the re-run's requests are told apart by their key.
func TestSIGINTStopsCleanly(t *testing.T) {
	const totalRequests = 32
	srv := llmtest.New(llmtest.WithResponder(responder))
	defer srv.Close()
	gate := newRankingGate()
	srv.SetHook(gate.hook)
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "SIGINT_API_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5, MaxConcurrency: 2})
	cacheDir := filepath.Join(dir, "cache")

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1", "SIGINT_API_KEY=sk-interrupted",
		"IDEAFLOW_TEST_ARGS="+strings.Join([]string{"run", exp, "--cache-dir", cacheDir, "--log-level", "warn"}, "\x1f"))
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	select {
	case <-gate.closed:
	case err := <-exited:
		t.Fatalf("the child ended (%v) before it asked for a ranking:\n%s", err, out.String())
	}
	if err := child.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	srv.SetHook(nil)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want %d\n%s", err, exitInterrupted, out.String())
	}
	if !strings.Contains(out.String(), "interrupted: completed nodes are in the cache") {
		t.Errorf("output does not say what happened:\n%s", out.String())
	}
	store, err := cache.Open(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	completed := 0
	_ = store.List(func(e cache.Entry) error {
		if rec, err := store.Get(e.Key); err == nil && rec.Model != "" {
			completed++
		}
		return nil
	})
	store.Close()
	if completed < 3 || completed >= totalRequests {
		t.Fatalf("not interrupted part-way: %d of %d model nodes completed", completed, totalRequests)
	}
	t.Setenv("SIGINT_API_KEY", "sk-rerun")
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("re-run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := sentWithKey(srv, "sk-rerun"); got != totalRequests-completed {
		t.Errorf("re-run sent %d requests, want %d", got, totalRequests-completed)
	}
}

// settledCount is the server's request count once requests still in the
// network when a client was killed have arrived: the count stops changing.
func settledCount(s *llmtest.Server) int {
	n := s.Count()
	for stable := 0; stable < 5; {
		time.Sleep(20 * time.Millisecond)
		if m := s.Count(); m != n {
			n, stable = m, 0
		} else {
			stable++
		}
	}
	return n
}
