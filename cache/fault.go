package cache

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
)

// faultSafe runs read, which reads memory-mapped file contents, turning a
// memory fault into an error instead of a crash. Reading a mapped page the
// file system cannot back is a SIGBUS: a sparse log (Badger preallocates
// its memtable logs with holes) on a full tmpfs, where even a read needs a
// page, or a file another process shrank. The open that scans such a log
// then says why, and the run exits as for a full disk, instead of dying
// with Go's fault trace (TestDiskFilledByAnotherProcess saw it).
//
// SetPanicOnFault is per goroutine: read must not start goroutines that
// touch the mapping.
func faultSafe(path string, read func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if _, fault := r.(interface{ Addr() uintptr }); !fault {
			panic(r)
		}
		err = fmt.Errorf("%w at %s: reading %s faulted (%v): the file system cannot back its pages (it is full, or the file shrank while read); free space and run again: completed results are kept",
			ErrDiskFull, filepath.Dir(path), filepath.Base(path), r)
	}()
	read()
	return nil
}
