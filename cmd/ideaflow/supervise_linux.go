package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
)

// noSupervisorEnv, set to anything, runs ideaflow in one process: Go's own
// crash output then reaches stderr, with exit code 2.
const noSupervisorEnv = "IDEAFLOW_NO_SUPERVISOR"

// supervise runs exe with args as a child with the same standard streams,
// its file descriptors 2 (after childSetup) and 3 writing to a crash report
// file, and returns the exit code to end with: the child's own, except that
// a Go crash (exit 2 with a panic or fatal error in the report) is
// exitInternal with a hint. Signals that end a run (SIGINT, SIGTERM,
// SIGHUP) are passed on; the child is killed if this process dies, so a
// kill -9 of ideaflow ends the run as it would end one process. ok is false
// when the child could not be started (then the caller runs in-process).
func supervise(exe string, args, env []string, stderr io.Writer) (code int, ok bool) {
	report, err := os.CreateTemp("", "ideaflow-crash-*.txt")
	if err != nil {
		return 0, false
	}
	defer report.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{report}
	cmd.Env = append(env, crashReportEnv+"="+report.Name())
	// The parent-death signal follows the thread that started the child:
	// keep this goroutine on it until the child is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		os.Remove(report.Name())
		return 0, false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
wait:
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s) // a terminal's ^C reaches both; a second SIGINT is absorbed by a run
		case werr = <-done:
			break wait
		}
	}
	code = 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
			if ws.Signal() == syscall.SIGKILL {
				fmt.Fprintf(stderr, "ideaflow: killed (SIGKILL; out of memory?): completed nodes are in the cache; run again to continue\n")
			}
		}
	} else if werr != nil {
		fmt.Fprintf(stderr, "ideaflow: %v\n", werr)
		code = exitInternal
	}
	out, _ := os.ReadFile(report.Name())
	switch {
	case code == exitInternal && len(out) > 0:
		// The child recovered a panic, wrote the report and printed the hint.
		_ = os.WriteFile(report.Name(), maskSecrets(out), 0o600)
	case code == 2 && isGoCrash(out):
		masked := maskSecrets(out)
		_ = os.WriteFile(report.Name(), masked, 0o600)
		printCrashHint(stderr, firstCrashLine(masked), report.Name())
		code = exitInternal
	default:
		// Not a crash: whatever reached file descriptor 2 directly (a
		// library's log, GODEBUG output) is passed on.
		_, _ = stderr.Write(out)
		os.Remove(report.Name())
	}
	return code, true
}

// childSetup, in a supervised child, points file descriptor 2 at the crash
// report (fd 3) so that Go's runtime writes a crash there, and returns a new
// file for the process's own stderr output (the original stream: a
// terminal stays a terminal). ok is false when not supervised.
func childSetup() (stderr *os.File, ok bool) {
	path := os.Getenv(crashReportEnv)
	if path == "" {
		return nil, false
	}
	os.Unsetenv(crashReportEnv)
	fd, err := syscall.Dup(2)
	if err != nil {
		return nil, false
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(3, 2, 0); err != nil {
		syscall.Close(fd)
		return nil, false
	}
	stderr = os.NewFile(uintptr(fd), "/dev/stderr")
	os.Stderr = stderr
	log.SetOutput(stderr)
	crashOut = os.NewFile(3, path)
	return stderr, true
}

// supervised reports whether main should run the CLI as a supervised child.
func supervised() bool {
	return os.Getenv(crashReportEnv) == "" && os.Getenv(noSupervisorEnv) == ""
}
