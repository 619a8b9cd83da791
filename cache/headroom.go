package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// A full disk must be an error, never a crash, even when another process
// fills it. Badger writes its logs and tables through memory maps of sparse
// files: a page the file system cannot back kills the process with SIGBUS.
// Refusing writes while some space is left (checkSpace) keeps room for what
// Badger writes on its own, above all the memtable Close flushes to a table,
// but only while no other process takes that room.
//
// So a writable cache holds its reserve as a file, HEADROOM: space no other
// process can take. While it is held, writes are refused only when the disk
// is nearly full (headroomMargin). Close looks at the free space first: when
// it is below what the flush needs, the file is deleted, and once the free
// space stops falling (whoever filled the disk has stopped), Badger flushes
// into the room it held. If even that is not enough, Close leaves the cache
// as a killed process would (every write was synced; the next writable open
// recovers it) rather than flush into a disk that cannot take it. The next
// writable open takes the reserve again, if the space is back.

// headroomName is the reserve's file in the cache folder. Badger ignores it.
const headroomName = "HEADROOM"

// headroomMargin is the free space below which writes are refused while the
// headroom is held: what Badger writes besides a batch and its flushes
// (MANIFEST and discard-stats updates, a new log's first pages).
const headroomMargin = 8 << 20

// settleWait bounds how long Close waits for the free space to stop falling
// after it gave the reserve back.
const settleWait = 2 * time.Second

// headroom is the reserve file of one writable handle.
type headroom struct {
	path string
	size int64
	mu   sync.Mutex
	held bool
}

func newHeadroom(dir string, size int64) *headroom {
	h := &headroom{path: filepath.Join(dir, headroomName), size: size}
	h.take()
	return h
}

// take allocates the reserve (a file the size of it, its blocks allocated),
// if the file system has the room; it reports whether the reserve is held.
func (h *headroom) take() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held {
		return true
	}
	if err := allocate(h.path, h.size); err != nil {
		os.Remove(h.path)
		return false
	}
	h.held = true
	return true
}

// release gives the reserve back to the file system; it reports whether
// there was one to give.
func (h *headroom) release() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.held {
		return false
	}
	h.held = false
	return os.Remove(h.path) == nil
}

func (h *headroom) isHeld() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// errNoAllocate: the file system cannot allocate blocks ahead (no
// fallocate), so the reserve is not held there.
var errNoAllocate = errors.New("cannot allocate ahead")

// closeNeeds is the free space Close needs: the memtable flushed to a
// table, and a compaction that may be running.
func (bb *badgerBackend) closeNeeds() int64 { return bb.reserve }

// roomToClose says whether Close may let Badger flush, giving the reserve
// back first if that makes the room, and the free space it saw.
func (bb *badgerBackend) roomToClose() (bool, int64) {
	if bb.freeSpace == nil {
		return true, -1
	}
	free, err := bb.freeSpace(bb.dir)
	if err != nil || free < 0 {
		return true, -1
	}
	if free >= bb.closeNeeds() || bb.headroom == nil || !bb.headroom.release() {
		return free >= bb.closeNeeds(), free
	}
	// Whoever filled the disk may still be writing into what the reserve
	// gave back: wait for the free space to settle.
	deadline := time.Now().Add(settleWait)
	for {
		time.Sleep(25 * time.Millisecond)
		now, err := bb.freeSpace(bb.dir)
		if err != nil || now < 0 {
			return true, -1
		}
		if now == free || time.Now().After(deadline) {
			return now >= bb.closeNeeds(), now
		}
		free = now
	}
}

// errClosedUnflushed is Close's error when the disk had no room for its flush.
func (bb *badgerBackend) errClosedUnflushed(free int64) error {
	return fmt.Errorf("%w at %s: %d bytes free, below the %d closing the cache needs: it was left as a killed process leaves it (every result written so far is on disk; the next run recovers it); free some space and re-run",
		ErrDiskFull, bb.dir, free, bb.closeNeeds())
}
