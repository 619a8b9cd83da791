package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// workerProcess is an `ideaflow worker` in a process of its own: the test
// binary run as the CLI.
type workerProcess struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been waited for
	err    error         // its Wait's, once exited is closed
}

// startWorkerProcess starts `ideaflow worker` with args (after "worker")
// and env added to the test's, and returns once it says it is ready ("Worker
// on ..."); a worker that ends before that fails the test with its stderr.
// The worker is interrupted, and waited for, when the test ends, unless it
// has ended already (killed by the test).
func startWorkerProcess(tb testing.TB, env []string, args ...string) *workerProcess {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), "IDEAFLOW_TEST_AS_CLI=1",
		"IDEAFLOW_TEST_ARGS="+strings.Join(append([]string{"worker"}, args...), "\x1f"))
	stderr, err := os.Create(filepath.Join(tb.TempDir(), "worker.log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	w := &workerProcess{cmd: cmd, exited: make(chan struct{})}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		said := false
		for sc.Scan() {
			if !said && strings.HasPrefix(sc.Text(), "Worker on ") {
				said = true
				ready <- true
			}
		}
		if !said {
			ready <- false
		}
		w.err = cmd.Wait()
		stderr.Close()
		close(w.exited)
	}()
	if !<-ready {
		<-w.exited
		log, _ := os.ReadFile(stderr.Name())
		tb.Fatalf("the worker ended (%v) before it was ready:\n%s", w.err, log)
	}
	tb.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			_ = cmd.Process.Signal(os.Interrupt)
			<-w.exited
		}
	})
	return w
}
