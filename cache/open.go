package cache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dirState is what probe found in a cache folder before Badger touched it.
type dirState struct {
	exists    bool
	manifest  bool
	dataFiles int   // value logs, tables and memtable logs
	dataBytes int64 // their allocated size
}

// probe looks at dir without changing it. Badger itself treats a missing
// MANIFEST as a new cache, so the check has to happen before badger.Open.
func probe(dir string) (dirState, error) {
	var st dirState
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, nil
	case err != nil:
		return st, err
	case !info.IsDir():
		return st, fmt.Errorf("%s is a file, not a cache folder", dir)
	}
	st.exists = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		return st, fmt.Errorf("read cache folder: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "MANIFEST":
			st.manifest = true
		case strings.HasSuffix(name, ".vlog"), strings.HasSuffix(name, ".sst"), strings.HasSuffix(name, ".mem"):
			info, err := e.Info()
			if err != nil {
				continue
			}
			st.dataFiles++
			st.dataBytes += allocatedBytes(info)
		}
	}
	return st, nil
}

// lockHolder names the process in Badger's LOCK file, which a writer fills
// with its pid, for the ErrLocked message.
func lockHolder(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "LOCK"))
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return ""
	}
	if pid == os.Getpid() {
		return fmt.Sprintf(" (held by this process, pid %d)", pid)
	}
	return fmt.Sprintf(" (held by process %d)", pid)
}

// Recovery is what an open found damaged and did about it (heal.go).
type Recovery struct {
	// Damage names the damaged files the open found, one line each.
	Damage []string `json:"damage,omitempty"`
	// ReadOnly: the open read around the damage and repaired nothing.
	ReadOnly bool `json:"read_only,omitempty"`
	// Restored counts entries a writable open put back from damaged files.
	Restored int `json:"restored,omitempty"`
	// Repaired is what a writable open then dropped because it could not
	// be read: the next run recomputes those records.
	Repaired RepairResult `json:"repaired"`
	// RecordsUnreadable counts the records that could not be read after
	// the open's repairs (dropped by a writable open, ErrCorrupt for a
	// read-only one).
	RecordsUnreadable int `json:"records_unreadable"`
	// Files and BytesDropped measure what Badger cut from logs on a
	// writable open regardless (none, unless a check here missed damage
	// that Badger saw).
	Files        []string `json:"files,omitempty"`
	BytesDropped int64    `json:"bytes_dropped"`
}

// Damaged says the open found damage or lost data.
func (r Recovery) Damaged() bool {
	return len(r.Damage) > 0 || r.BytesDropped > 0 || r.RecordsUnreadable > 0 || r.Repaired.Dropped() > 0
}

// logExtent is a log file's data end before Badger opened it.
type logExtent struct {
	path    string
	dataEnd int64 // offset after the last non-zero byte
}

// logExtents measures the logs Badger may truncate on a read-write open: the
// newest value log and every memtable log. Logs are preallocated and
// zero-filled, so a cut of zeros is routine crash recovery and only the
// non-zero bytes past the cut are data lost.
func logExtents(dir string) []logExtent {
	var out []logExtent
	var newestVlog string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasSuffix(name, ".vlog"):
			if name > newestVlog { // zero-padded numbers sort as text
				newestVlog = name
			}
		case strings.HasSuffix(name, ".mem"):
			out = append(out, logExtent{path: filepath.Join(dir, name)})
		}
	}
	if newestVlog != "" {
		out = append(out, logExtent{path: filepath.Join(dir, newestVlog)})
	}
	kept := out[:0]
	for _, x := range out {
		end, err := dataEnd(x.path)
		if err == nil && end > 0 {
			x.dataEnd = end
			kept = append(kept, x)
		}
	}
	return kept
}

// dataEnd reads path backwards for its last non-zero byte.
func dataEnd(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 1<<20)
	for end := info.Size(); end > 0; {
		start := max(0, end-int64(len(buf)))
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for j := len(chunk) - 1; j >= 0; j-- {
			if chunk[j] != 0 {
				return start + int64(j) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}

// measureRecovery compares the logs with their extents before the open.
// A memtable log that Badger already flushed and deleted cannot be compared;
// the value log, where records live, always can.
func (b *Badger) measureRecovery(before []logExtent) Recovery {
	var r Recovery
	for _, x := range before {
		info, err := os.Stat(x.path)
		if err != nil {
			continue
		}
		if cut := x.dataEnd - info.Size(); cut > 0 {
			r.Files = append(r.Files, filepath.Base(x.path))
			r.BytesDropped += cut
		}
	}
	return r
}

// diskReserve is the free space below which writes are refused. Badger writes
// its value log, memtable log and tables through memory maps of sparse
// files; when the file system cannot back a page, the write is a SIGBUS that
// kills the process instead of an error. The reserve covers what Badger can
// write besides the batch itself: a memtable flushed to a table and the
// tables of a compaction.
func diskReserve(memTableSize int64) int64 {
	return 2*memTableSize + 8<<20
}

// checkSpace refuses a write that would leave less than the reserve free. The
// batch is counted twice: once in the value log, once in the memtable log.
func (bb *badgerBackend) checkSpace(units [][]op) error {
	if bb.freeSpace == nil {
		return nil
	}
	free, err := bb.freeSpace(bb.dir)
	if err != nil || free < 0 {
		return nil // unknown: let the write try
	}
	var n int64
	for _, ops := range units {
		for _, o := range ops {
			n += int64(len(o.key) + len(o.val))
		}
	}
	margin := bb.reserve
	if h := bb.headroom; h != nil && (h.isHeld() || free >= 2*n+2*bb.reserve && h.take()) {
		// The reserve is held as a file: only a margin need stay free.
		margin = headroomMargin
		if free, err = bb.freeSpace(bb.dir); err != nil || free < 0 {
			return nil
		}
	}
	if need := 2*n + margin; free < need {
		return fmt.Errorf("%w at %s: %d bytes free, below the %d a %d-byte write needs (the cache keeps headroom so that Badger's memory-mapped files never hit a full disk); free some space and re-run: completed results are kept",
			ErrDiskFull, bb.dir, free, need, n)
	}
	return nil
}

// classifyWriteErr makes a write that failed for want of space wrap
// ErrDiskFull, whichever layer noticed it.
func classifyWriteErr(where string, err error) error {
	if err == nil || errors.Is(err, ErrDiskFull) {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "no space left on device") {
		return fmt.Errorf("%w at %s: %v", ErrDiskFull, where, err)
	}
	return err
}
