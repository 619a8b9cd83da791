package main

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

// TestMain lets tests re-execute the test binary as the ideaflow CLI, so a
// run can be killed with SIGKILL like a real process, and as the CLI under
// its supervisor (IDEAFLOW_TEST_SUPERVISE=1), as main runs it.
func TestMain(m *testing.M) {
	if os.Getenv("IDEAFLOW_TEST_SUPERVISE") == "1" {
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "IDEAFLOW_TEST_SUPERVISE=") {
				env = append(env, kv)
			}
		}
		code, ok := supervise(os.Args[0], []string{"-test.run=^$"}, append(env, "IDEAFLOW_TEST_AS_CLI=1"), os.Stderr)
		if !ok {
			code = 99
		}
		os.Exit(code)
	}
	if os.Getenv("IDEAFLOW_TEST_AS_CLI") == "1" {
		stderr := os.Stderr
		if f, ok := childSetup(); ok {
			stderr = f
		}
		if os.Getenv("IDEAFLOW_TEST_CRASH") == "stack overflow" {
			debug.SetMaxStack(1 << 20) // a fatal error, which no recover can catch
			recurse(0)
		}
		code := Main(strings.Split(os.Getenv("IDEAFLOW_TEST_ARGS"), "\x1f"), os.Stdout, stderr)
		if f := os.Getenv("IDEAFLOW_TEST_HWM_FILE"); f != "" {
			writePeakRSS(f)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// recurse overflows the stack on purpose: a Go fatal error for the
// supervisor tests.
func recurse(n int) int {
	var pad [64]byte
	pad[0] = byte(n)
	//lint:ignore SA5007 the infinite recursion is the point
	return recurse(n+1) + int(pad[0])
}

// writePeakRSS records this process's peak resident set (VmHWM). The rusage
// a parent reads for an exec'd child is no good here: Linux folds the
// parent's own peak into it at exec.
func writePeakRSS(path string) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			_ = os.WriteFile(path, []byte(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))), 0o644)
		}
	}
}
