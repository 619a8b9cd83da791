//go:build !linux

package main

import (
	"io"
	"os"
)

const noSupervisorEnv = "IDEAFLOW_NO_SUPERVISOR"

// supervise is Linux-only (it relies on the parent-death signal): elsewhere
// ideaflow runs in one process, and only a panic on Main's goroutine is
// turned into exitInternal.
func supervise(string, []string, []string, io.Writer) (int, bool) { return 0, false }

func childSetup() (*os.File, bool) { return nil, false }

func supervised() bool { return false }
