package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// spaceGuard allocates the blocks Badger's next writes land on before they
// are made, so that a write into its memory-mapped logs never needs a block
// the file system no longer has (a SIGBUS): the disk filling up, even by
// another process between the free-space check and the write, is then
// ErrDiskFull for the commit that does not fit. It covers the value log and
// the memtable log a writable handle appends to, ahead of their data ends,
// which it follows entry by entry. It runs in the committer's goroutine,
// between commits, so no write is in flight while it reads the logs. What
// it cannot reach: the first write into a log Badger starts in the middle of
// a write (a new memtable log, a new value log every 64 MiB), and the tables
// Badger writes on its own; the headroom covers the table Close flushes
// (headroom.go).
type spaceGuard struct {
	dir   string
	logs  [2]logTracker // the value log, the memtable log
	ahead atomic.Int64  // bytes allocated past the logs' data ends
}

// logTracker follows one log: the newest file with its extension.
type logTracker struct {
	ext      string
	digits   int
	fid      int
	f        *os.File
	dataEnd  int64 // where Badger's next entry goes
	allocEnd int64 // blocks are allocated up to here
}

// allocateAhead is how far past a commit's bytes the logs are allocated.
const allocateAhead = 4 << 20

func newSpaceGuard(dir string) *spaceGuard {
	g := &spaceGuard{dir: dir, logs: [2]logTracker{{ext: ".vlog", digits: 6, fid: -1}, {ext: ".mem", digits: 5, fid: -1}}}
	for i := range g.logs {
		if fid := newestFid(dir, g.logs[i].ext); fid >= 0 {
			g.logs[i].open(dir, fid)
		}
	}
	g.advance()
	if g.logs[0].f == nil {
		return nil
	}
	return g
}

// open starts following the log with file number fid.
func (l *logTracker) open(dir string, fid int) {
	if l.f != nil {
		l.f.Close()
	}
	l.fid, l.f, l.dataEnd, l.allocEnd = fid, nil, logHeaderSize, 0
	if f, err := os.OpenFile(l.path(dir, fid), os.O_RDWR, 0); err == nil {
		l.f = f
	}
}

func (l *logTracker) path(dir string, fid int) string {
	return filepath.Join(dir, fmt.Sprintf("%0*d%s", l.digits, fid, l.ext))
}

// newestFid is the highest file number among dir's files ending in ext.
func newestFid(dir, ext string) int {
	paths, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
	fid := -1
	for _, p := range paths {
		if n, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(p), ext)); err == nil && n > fid {
			fid = n
		}
	}
	return fid
}

// reserve allocates what a commit of n bytes of keys and values can write
// into each log: its entries, bounded by 2n, and a margin.
func (g *spaceGuard) reserve(n int64) error {
	if g == nil {
		return nil
	}
	for i := range g.logs {
		l := &g.logs[i]
		if l.f == nil {
			continue
		}
		need := l.dataEnd + 2*n + 1<<20
		if need <= l.allocEnd {
			continue
		}
		end := need + allocateAhead
		if err := unix.Fallocate(int(l.f.Fd()), unix.FALLOC_FL_KEEP_SIZE, l.allocEnd, end-l.allocEnd); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return fmt.Errorf("%w at %s: no room to allocate the next write ahead (%v); free some space and re-run: completed results are kept", ErrDiskFull, g.dir, err)
			}
			l.f.Close() // cannot allocate ahead here: the free-space check alone guards it
			l.f = nil
			continue
		}
		l.allocEnd = end
	}
	g.count()
	return nil
}

// advance follows each log to its data end after a commit, and to the next
// file once Badger has started one.
func (g *spaceGuard) advance() {
	if g == nil {
		return
	}
	for i := range g.logs {
		l := &g.logs[i]
		if l.f != nil {
			l.follow()
		}
		// Badger numbers its logs one after the other.
		if _, err := os.Stat(l.path(g.dir, l.fid+1)); err == nil {
			l.open(g.dir, l.fid+1)
			if l.f != nil {
				l.follow()
			}
		}
	}
	g.count()
}

// follow moves dataEnd past the entries written since, reading their
// headers a page at a time.
func (l *logTracker) follow() {
	var buf [4096]byte
	var at int64 = -1 // buf holds the file from at
	var n int
	for {
		if at < 0 || l.dataEnd+2+3*binary.MaxVarintLen64 > at+int64(n) {
			at = l.dataEnd
			n, _ = l.f.ReadAt(buf[:], at)
		}
		hdr := buf[l.dataEnd-at : n]
		p, ok := 2, len(hdr) >= 5
		var f [3]uint64
		for i := 0; ok && i < len(f); i++ {
			v, k := binary.Uvarint(hdr[p:])
			if k <= 0 {
				ok = false
				break
			}
			f[i], p = v, p+k
		}
		if !ok || uint32(f[0]) == 0 {
			return
		}
		l.dataEnd += int64(p) + int64(uint32(f[0])) + int64(uint32(f[1])) + 4
	}
}

func (g *spaceGuard) count() {
	var ahead int64
	for _, l := range g.logs {
		if l.f != nil && l.allocEnd > l.dataEnd {
			ahead += l.allocEnd - l.dataEnd
		}
	}
	g.ahead.Store(ahead)
}

// allocatedAhead is what diskBytes leaves out: space held for the next
// writes, not used by the cache.
func (g *spaceGuard) allocatedAhead() int64 {
	if g == nil {
		return 0
	}
	return g.ahead.Load()
}

func (g *spaceGuard) close() {
	if g == nil {
		return
	}
	for _, l := range g.logs {
		if l.f != nil {
			l.f.Close()
		}
	}
}
