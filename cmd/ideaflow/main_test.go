package main

import (
	"os"
	"strings"
	"testing"
)

// TestMain lets tests re-execute the test binary as the ideaflow CLI, so a
// run can be killed with SIGKILL like a real process.
func TestMain(m *testing.M) {
	if os.Getenv("IDEAFLOW_TEST_AS_CLI") == "1" {
		code := Main(strings.Split(os.Getenv("IDEAFLOW_TEST_ARGS"), "\x1f"), os.Stdout, os.Stderr)
		if f := os.Getenv("IDEAFLOW_TEST_HWM_FILE"); f != "" {
			writePeakRSS(f)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
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
