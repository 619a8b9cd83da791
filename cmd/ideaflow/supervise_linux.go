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
// its file descriptors 2 (after childSetup) and 3 writing to an unlinked
// temporary file, and returns the exit code to end with: the child's own,
// except that a Go crash (exit 2 with a panic or fatal error in what it
// wrote) is exitInternal with a hint. Only a crash leaves a file: the crash
// report, at the name the child was given. Signals that end a run (SIGINT, SIGTERM,
// SIGHUP) are passed on; the child is killed if this process dies, so a
// kill -9 of ideaflow ends the run as it would end one process. ok is false
// when the child could not be started (then the caller runs in-process).
func supervise(exe string, args, env []string, stderr io.Writer) (code int, ok bool) {
	report, err := os.CreateTemp("", "ideaflow-crash-*.txt")
	if err != nil {
		return 0, false
	}
	defer report.Close()
	// Unlinked at once, so a run that ends (or is killed) without a crash
	// leaves nothing behind; a crash's report is written under this name.
	name := report.Name()
	os.Remove(name)
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{report}
	cmd.Env = append(env, crashReportEnv+"="+name)
	// The parent-death signal follows the thread that started the child:
	// keep this goroutine on it until the child is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
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
	var out []byte
	if st, err := report.Stat(); err == nil {
		out, _ = io.ReadAll(io.NewSectionReader(report, 0, st.Size()))
	}
	switch {
	case code == exitInternal && len(out) > 0:
		// The child recovered a panic, wrote the report and printed the
		// hint, which names the file.
		keepReport(name, maskSecrets(out), stderr)
	case code == 2 && isGoCrash(out):
		masked := maskSecrets(out)
		if keepReport(name, masked, stderr) {
			printCrashHint(stderr, firstCrashLine(masked), name)
		} else {
			printCrashHint(stderr, firstCrashLine(masked), "")
		}
		code = exitInternal
	default:
		// Not a crash: whatever reached file descriptor 2 directly (a
		// library's log, GODEBUG output) is passed on.
		_, _ = stderr.Write(out)
	}
	return code, true
}

// keepReport writes a crash report at name, which must not exist yet.
func keepReport(name string, b []byte, stderr io.Writer) bool {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "ideaflow: could not write the crash report %s: %v\n", name, err)
		return false
	}
	return true
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
