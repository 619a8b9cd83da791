package main

// Internal errors: a panic or a Go fatal error is a bug in ideaflow, not bad
// input. It ends the process with exitInternal and a short hint naming a
// crash report file, never a stack on a researcher's terminal, and never
// exit code 2 (the code for bad input, which Go's runtime would use).
//
// A panic on the goroutine that runs Main is recovered there. A panic on
// any other goroutine, or a fatal error (out of memory, a stack overflow,
// concurrent map writes), cannot be recovered in-process: on Linux the
// ideaflow binary therefore runs itself as a child (supervise_linux.go)
// whose runtime output goes to the crash report file, and the parent turns
// the child's crash into exitInternal and the hint.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// crashReportEnv names, in a supervised child, the crash report file that
// its file descriptor 3 (and 2) write to.
const crashReportEnv = "IDEAFLOW_CRASH_REPORT"

// crashOut is where a recovered panic's report goes in a supervised child
// (the crash report file); nil: Main makes a file of its own.
var crashOut *os.File

// recovered turns a panic recovered in Main into exitInternal: the report
// (the panic and its stack, secrets masked) goes to a crash report file, and
// stderr gets the hint.
func recovered(stderr io.Writer, v any, stack []byte) int {
	report := maskSecrets([]byte(fmt.Sprintf("panic: %v\n\n%s", v, stack)))
	path := ""
	if crashOut != nil {
		crashOut.Write(report)
		path = crashOut.Name()
	} else if f, err := os.CreateTemp("", "ideaflow-crash-*.txt"); err == nil {
		f.Write(report)
		f.Close()
		path = f.Name()
	}
	printCrashHint(stderr, firstCrashLine(report), path)
	return exitInternal
}

// printCrashHint tells a researcher that ideaflow has a bug, what it was,
// that their work is safe, and what to send.
func printCrashHint(w io.Writer, what, path string) {
	fmt.Fprintf(w, "ideaflow: internal error: %s\n", what)
	fmt.Fprintln(w, "    This is a bug in ideaflow, not a problem with your experiment. Completed nodes are in the cache: running again resumes.")
	if path != "" {
		fmt.Fprintf(w, "    Please report it, attaching the crash report %s (ideaflow %s); it holds the stack, with secrets from the environment masked.\n", path, versionString())
	} else {
		fmt.Fprintf(w, "    Please report it (ideaflow %s), with the command that failed.\n", versionString())
	}
}

// goCrash matches the first line Go's runtime prints for an unrecovered
// panic or a fatal error.
var goCrash = regexp.MustCompile(`(?m)^(panic: .*|fatal error: .*)$`)

// isGoCrash reports whether b, what a process wrote to its file descriptor
// 2, holds a Go crash.
func isGoCrash(b []byte) bool { return goCrash.Match(b) }

// firstCrashLine is the panic or fatal error line of a crash report.
func firstCrashLine(b []byte) string {
	if m := goCrash.Find(b); m != nil {
		return strings.TrimSpace(string(m))
	}
	return "the process crashed"
}

// secretEnvName matches the names of environment variables that hold
// secrets by convention (OPENAI_API_KEY, HF_TOKEN, ...).
var secretEnvName = regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)`)

// maskSecrets replaces, in a crash report, the values of environment
// variables that look like secrets (8 characters or more, as the clients
// mask): a panic message may quote a request or a header.
func maskSecrets(b []byte) []byte {
	var secrets []string
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if len(value) >= 8 && secretEnvName.MatchString(name) {
			secrets = append(secrets, value)
		}
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, s := range secrets {
		b = bytes.ReplaceAll(b, []byte(s), []byte("***"))
	}
	return b
}
