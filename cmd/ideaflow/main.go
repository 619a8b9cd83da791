// Command ideaflow plans and runs declarative LLM research-ideation experiments.
package main

import (
	"os"
)

func main() {
	if supervised() {
		if exe, err := os.Executable(); err == nil {
			if code, ok := supervise(exe, os.Args[1:], os.Environ(), os.Stderr); ok {
				os.Exit(code)
			}
		}
	}
	stderr := os.Stderr
	if f, ok := childSetup(); ok {
		stderr = f
	}
	os.Exit(Main(os.Args[1:], os.Stdout, stderr))
}
