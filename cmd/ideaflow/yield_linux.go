//go:build linux

package main

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// readerNice is the priority a command takes while it reads the view a run
// serves.
const readerNice = 10

// yieldToRun lowers this process's CPU priority to readerNice when it reads
// the cache a run serves: on a machine whose cores are busy, a reader's own
// work (loading, planning) then waits for the run rather than slowing it
// (BenchmarkRunWithReaders). Linux keeps a priority per thread, so every
// thread of the process is lowered (threads started later inherit it); a
// priority already lower is left.
func yieldToRun() {
	tids := []int{0}
	if entries, err := os.ReadDir("/proc/self/task"); err == nil {
		tids = tids[:0]
		for _, e := range entries {
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				tids = append(tids, tid)
			}
		}
	}
	for _, tid := range tids {
		// Getpriority returns 20 - nice on Linux.
		if cur, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil && 20-cur >= readerNice {
			continue
		}
		_ = unix.Setpriority(unix.PRIO_PROCESS, tid, readerNice)
	}
}
