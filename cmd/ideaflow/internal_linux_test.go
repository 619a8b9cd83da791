package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideaflow/ideaflow/stages/llm/llmtest"
)

// panicExperiment writes an experiment whose test_panic stage panics in
// Layout or in its compute nodes with message.
func panicExperiment(t *testing.T, in, message string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kw.txt"), "alpha\nbeta\n")
	writeFile(t, filepath.Join(dir, "main.hcl"), `
dataset "d" {
  format = "keywords"
  path   = "kw.txt"
}

stage "test_panic" "p" {
  items   = dataset.d
  in      = "`+in+`"
  message = "`+message+`"
}
`)
	return dir
}

var crashReportRe = regexp.MustCompile(`attaching the crash report (\S+) \(ideaflow `)

// checkCrash checks an internal error's exit code and hint, that no stack
// reached stderr, and that the crash report holds the stack without the
// secret; it returns the report.
func checkCrash(t *testing.T, code int, stderr, what, secret string) string {
	t.Helper()
	if code != exitInternal {
		t.Errorf("exit %d, want %d (internal error)", code, exitInternal)
	}
	if !strings.Contains(stderr, "ideaflow: internal error: "+what) || !strings.Contains(stderr, "This is a bug in ideaflow, not a problem with your experiment") {
		t.Errorf("stderr lacks the hint for %q:\n%s", what, stderr)
	}
	if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, ".go:") {
		t.Errorf("a stack reached stderr:\n%s", stderr)
	}
	m := crashReportRe.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr names no crash report:\n%s", stderr)
	}
	t.Cleanup(func() { os.Remove(m[1]) })
	report, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "goroutine ") || (secret != "" && strings.Contains(string(report), secret)) {
		t.Errorf("crash report (stack, secret masked?):\n%.2000s", report)
	}
	return string(report)
}

// TestPanicIsAnInternalError: a panic on Main's goroutine (a stage type's
// Layout, while validate builds the graph) ends with exit 70 and the hint,
// the stack in a crash report with the environment's secrets masked.
func TestPanicIsAnInternalError(t *testing.T) {
	const secret = "sk-crash-secret-0123456789"
	t.Setenv("CRASH_TEST_API_KEY", secret)
	dir := panicExperiment(t, "layout", "bug in layout with "+secret)
	code, _, stderr := cli(t, "validate", dir)
	report := checkCrash(t, code, stderr, "panic: bug in layout with ***", secret)
	if !strings.Contains(report, "panic: bug in layout with ***") {
		t.Errorf("crash report:\n%.1000s", report)
	}
}

// runSupervised runs the CLI as main does, under its supervisor, in a
// process of its own.
func runSupervised(t *testing.T, extraEnv []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "IDEAFLOW_TEST_SUPERVISE=1", "IDEAFLOW_TEST_ARGS="+strings.Join(args, "\x1f")), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// TestSupervisedCrashes: under the supervisor, a panic on a resolver
// goroutine during a run and a Go fatal error (a stack overflow), neither of
// which a recover can catch, end with exit 70 and the hint, not Go's exit 2
// and stack; a run without a bug keeps its own exit code and output.
func TestSupervisedCrashes(t *testing.T) {
	const secret = "sk-crash-secret-9876543210"
	dir := panicExperiment(t, "compute", "bug in compute with "+secret)
	code, _, stderr := runSupervised(t, []string{"CRASH_TEST_TOKEN=" + secret}, "run", dir, "--cache-dir", filepath.Join(t.TempDir(), "cache"))
	checkCrash(t, code, stderr, "panic: bug in compute with ***", secret)

	code, _, stderr = runSupervised(t, []string{"IDEAFLOW_TEST_CRASH=stack overflow"}, "version")
	checkCrash(t, code, stderr, "fatal error: stack overflow", "")

	reports := crashReports(t)
	code, stdout, stderr := runSupervised(t, nil, "validate", "../../experiments/quickstart")
	if code != 0 || !strings.Contains(stdout, "quickstart is valid") || stderr != "" {
		t.Errorf("validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, "main.hcl"), "stage \"nope\" \"x\" {}\n")
	code, _, stderr = runSupervised(t, nil, "validate", bad)
	if code != exitBadInput || !strings.Contains(stderr, "main.hcl:1:") || strings.Contains(stderr, "internal error") {
		t.Errorf("bad input: exit %d\n%s", code, stderr)
	}
	if now := crashReports(t); now != reports {
		t.Errorf("runs without a crash left %d crash report file(s)", now-reports)
	}
}

// crashReports counts the crash report files in the temporary folder.
func crashReports(t *testing.T) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "ideaflow-crash-*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// TestSupervisorPassesSignalsOn: SIGINT to the supervising process reaches
// the run, which stops cleanly with exit 130; SIGKILL to it ends the run
// too (the parent-death signal), as a kill -9 of one process would.
func TestSupervisorPassesSignalsOn(t *testing.T) {
	srv := llmtest.New(llmtest.WithResponder(responder), llmtest.WithLatency(25*time.Millisecond))
	defer srv.Close()
	t.Setenv("SUPERVISE_API_KEY", "sk-supervise")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	writeExperiment(t, exp, scenario{BaseURL: srv.URL, KeyEnv: "SUPERVISE_API_KEY", Generators: []string{"gen-a", "gen-b"}, N: 3, Limit: 5, MaxConcurrency: 1})
	start := func(cacheDir string) (*exec.Cmd, *strings.Builder) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "IDEAFLOW_TEST_SUPERVISE=1",
			"IDEAFLOW_TEST_ARGS="+strings.Join([]string{"run", exp, "--cache-dir", cacheDir, "--log-level", "warn"}, "\x1f"))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	waitFor := func(n int) {
		deadline := time.Now().Add(30 * time.Second)
		for answered(srv) < n {
			if time.Now().After(deadline) {
				t.Fatalf("only %d requests answered", answered(srv))
			}
			time.Sleep(2 * time.Millisecond)
		}
	}

	cmd, out := start(filepath.Join(dir, "cache-int"))
	waitFor(4)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted || !strings.Contains(out.String(), "interrupted") {
		t.Errorf("SIGINT: %v\n%s", err, out)
	}

	before := answered(srv)
	reports := crashReports(t)
	cmd, _ = start(filepath.Join(dir, "cache-kill"))
	waitFor(before + 4)
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", cmd.Process.Pid))
	var child int
	for _, f := range tasks {
		if b, err := os.ReadFile(f); err == nil && child == 0 {
			fmt.Sscan(string(b), &child)
		}
	}
	if child == 0 {
		t.Skipf("cannot find the supervisor's child in /proc (%d tasks)", len(tasks))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil || strings.Contains(string(st), ") Z ") { // gone, or a zombie waiting for init
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run (pid %d) outlived its killed supervisor", child)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if now := crashReports(t); now != reports {
		t.Errorf("a killed run left %d crash report file(s)", now-reports)
	}
}
