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
		os.Exit(Main(strings.Split(os.Getenv("IDEAFLOW_TEST_ARGS"), "\x1f"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
