// Command ideaflow plans and runs declarative LLM research-ideation experiments.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
