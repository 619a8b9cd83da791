package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// A worker process killed (SIGKILL) with tasks taken: the run on the
// coordinator does not notice but waits; the tasks are redelivered after
// the worker's --ack-wait (1 s here) to another worker, and the run ends
// as a local run does (exit 0, the same results digest). The killed worker
// takes tasks until the first ranking request, which the endpoint holds
// (with every later one) until the kill cuts it, so the kill always lands
// with tasks in its hands. What is paid twice is only what the killed
// worker had been answered and not yet stored: at most its 4 tasks in
// flight. Requests are told apart by the key each worker sends.
func TestKilledWorkerTasksRedelivered(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	gate := newRankingGate()
	srv.SetHook(gate.hook)
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "KILL_API_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5})
	f := startFleet(t, 0)

	child := startWorkerProcess(t, []string{"KILL_API_KEY=sk-killed"}, "--connect", f.url, "--ack-wait", "1s", "--concurrency", "4")

	t.Setenv("KILL_API_KEY", "sk-resume") // the in-process worker's, read when its client is made
	type outcome struct {
		code           int
		stdout, stderr string
	}
	ran := make(chan outcome, 1)
	go func() {
		code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "nats-cache"), "--summary-json", filepath.Join(dir, "nats.json"), "--executor", f.url)
		ran <- outcome{code, stdout, stderr}
	}()
	select {
	case <-gate.closed:
	case <-child.exited:
		t.Fatalf("the worker ended (%v) before it asked for a ranking", child.err)
	}
	if err := child.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-child.exited
	srv.SetHook(nil)
	resumed := f.addWorker(t)
	run := <-ran
	if run.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}

	killedAnswered, resumedAnswered, held := 0, 0, 0
	for _, r := range srv.Requests() {
		switch key := r.Header.Get("Authorization"); {
		case key == "Bearer sk-killed" && r.Answered:
			killedAnswered++
		case key == "Bearer sk-killed":
			held++
		case key == "Bearer sk-resume" && r.Answered:
			resumedAnswered++
		}
	}
	st := resumed.Stats()
	t.Logf("killed worker: %d answered, %d held at the kill; resuming worker: %+v, %d answered", killedAnswered, held, st, resumedAnswered)
	if held == 0 || st.Ran == 0 || int64(resumedAnswered) != st.Ran {
		t.Errorf("%d request(s) held at the kill; the resuming worker ran %d task(s) with %d answered request(s): want at least one of each, and one request a task", held, st.Ran, resumedAnswered)
	}
	if paidTwice := killedAnswered + resumedAnswered - 32; paidTwice < 0 || paidTwice > 4 {
		t.Errorf("%d answer(s) paid twice (%d by the killed worker, %d after it); want at most the 4 it had in flight", paidTwice, killedAnswered, resumedAnswered)
	}
	if n := f.pending(t); n != 0 {
		t.Errorf("%d task(s) never acked", n)
	}

	t.Setenv("KILL_API_KEY", "sk-local")
	if code, stdout, stderr := cli(t, "run", exp, "--cache-dir", filepath.Join(dir, "local-cache"), "--summary-json", filepath.Join(dir, "local.json")); code != 0 {
		t.Fatalf("local run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if l, n := readSummary(t, filepath.Join(dir, "local.json")), readSummary(t, filepath.Join(dir, "nats.json")); l.ResultsDigest != n.ResultsDigest {
		t.Errorf("results digest local %s, after the kill %s", l.ResultsDigest, n.ResultsDigest)
	}
}

// A run on a queue with no worker, interrupted (SIGINT) once its tasks
// wait there: it exits as an interrupted local run does (130), withdraws
// every task it published (the queue is empty after: no worker started
// later pays for them) and says so; a run after it, with a worker, makes
// every call and ends as a local run.
func TestInterruptedRunWithdrawsItsTasks(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder))
	t.Cleanup(srv.Close)
	t.Setenv("WITHDRAW_API_KEY", "sk-test")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "WITHDRAW_API_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5})
	f := startFleet(t, 0)
	cacheDir := filepath.Join(dir, "cache")

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "IDEAFLOW_TEST_AS_CLI=1",
		"IDEAFLOW_TEST_ARGS="+strings.Join([]string{"run", exp, "--cache-dir", cacheDir, "--executor", f.url, "--log-level", "warn"}, "\x1f"))
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	// The run has as many tasks in flight as the provider's
	// max_concurrency (4) and early slots allow; wait for 4.
	for f.pending(t) < 4 {
		select {
		case err := <-exited:
			t.Fatalf("the run ended (%v) before its tasks were queued:\n%s", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := child.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	queued := f.published(t) // every task the run published, none answered
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want %d\n%s", err, exitInterrupted, out.String())
	}
	if want := fmt.Sprintf("%d withdrawn before a worker took them", queued); !strings.Contains(out.String(), want) {
		t.Errorf("the run does not say %q:\n%s", want, out.String())
	}
	if n := f.pending(t); n != 0 {
		t.Errorf("%d task(s) left in the queue", n)
	}

	f.addWorker(t)
	code, stdout, stderr := cli(t, "run", exp, "--cache-dir", cacheDir, "--executor", f.url, "--summary-json", filepath.Join(dir, "s.json"))
	if code != 0 {
		t.Fatalf("re-run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := srv.Count(); n != 32 {
		t.Errorf("%d endpoint calls over both runs, want 32 (none before the interrupt)", n)
	}
}
