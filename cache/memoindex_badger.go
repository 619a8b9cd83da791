package cache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// memoState is a Badger handle's part of the memo index (memoindex.go).
// Reads go through idx while it holds the index of the memos as they are;
// the first memo change through the handle writes a new token and drops it.
type memoState struct {
	idx     atomic.Pointer[memoIndex] // nil: read memos from Badger
	opened  *memoIndex                // mapped until close, even once dropped (readers may hold it)
	last    int                       // entries of the index file found at open, whatever its token
	changed atomic.Bool               // this handle wrote a new token
	reads   atomic.Int64              // memo lookups sent to Badger
	mu      sync.Mutex                // one token write at a time
	token   []byte                    // the token as this handle knows it (nil: none); under mu
	after   int64                     // lookups that make Close write the index (memoIndexMinReads)
	indexed int                       // memos Close indexed (0: it wrote no index)
}

// loadMemoIndex opens the index if it is of the memos as they are. damaged
// is an open that found damage: its index is not read, and a writable
// handle writes a new token now, so that no later open reads it either.
func (bb *badgerBackend) loadMemoIndex(damaged bool) error {
	m := &bb.memo
	tok, err := bb.memoToken()
	if err != nil {
		return err
	}
	if !bb.readOnly {
		os.Remove(filepath.Join(bb.dir, memoIndexName+".tmp")) // a Close's that crashed
	}
	if damaged {
		if !bb.readOnly {
			return bb.writeMemoToken()
		}
		return nil
	}
	x, last, err := openMemoIndex(filepath.Join(bb.dir, memoIndexName), tok)
	if err != nil {
		bb.log.Debug().Err(err).Str("cache", bb.dir).Msg("cache: memo index unreadable; memos are read from the tables")
		return nil
	}
	m.last, m.opened = last, x
	if x != nil {
		m.idx.Store(x)
	}
	return nil
}

// memoToken reads the current token (nil when the cache has none).
func (bb *badgerBackend) memoToken() ([]byte, error) {
	var tok []byte
	err := bb.getBadger([]byte(memoTokenKey), func(v []byte) error {
		tok = bytes.Clone(v)
		return nil
	})
	if errors.Is(err, errNoKey) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the memo token: %w", err)
	}
	bb.memo.mu.Lock()
	bb.memo.token = tok
	bb.memo.mu.Unlock()
	return tok, nil
}

// writeMemoToken writes a new token, durably, and stops reading the index.
// The index is dropped first: from then on memos are read from Badger,
// which holds them as they are whatever happens to the token's write.
func (bb *badgerBackend) writeMemoToken() error {
	m := &bb.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.changed.Load() {
		return nil
	}
	m.idx.Store(nil)
	tok := newMemoToken()
	if err := bb.commit.submit([][]op{{setOp(memoTokenKey, tok)}}); err != nil {
		return fmt.Errorf("write the memo token: %w", err)
	}
	m.token = tok
	m.changed.Store(true)
	return nil
}

// invalidateMemoIndex is called before units are written: when they change
// a memo, the first time in this handle, the token changes first.
func (bb *badgerBackend) invalidateMemoIndex(units [][]op) error {
	if bb.memo.changed.Load() || !touchesMemos(units) {
		return nil
	}
	return bb.writeMemoToken()
}

func touchesMemos(units [][]op) bool {
	for _, u := range units {
		for _, o := range u {
			if bytes.HasPrefix(o.key, []byte(prefixMemo)) {
				return true
			}
		}
	}
	return false
}

// memoIndexed returns the index to read key from, or nil (read Badger, and
// count the read).
func (bb *badgerBackend) memoIndexed(key []byte) *memoIndex {
	if !bytes.HasPrefix(key, []byte(prefixMemo)) {
		return nil
	}
	x := bb.memo.idx.Load()
	if x == nil {
		bb.memo.reads.Add(1)
	}
	return x
}

// writeMemoIndexAtClose writes the index when this handle's lookups make it
// pay (shouldIndex) and it is stale. It runs after the last write, so the
// index it writes is of the memos as they stay. A failure leaves the old
// file, whose token no longer matches: memos are read from Badger, as
// before there was an index.
func (bb *badgerBackend) writeMemoIndexAtClose(free int64) {
	m := &bb.memo
	if m.idx.Load() != nil || !shouldIndex(m.reads.Load(), m.after, m.last) {
		return
	}
	if free >= 0 {
		// The index is about as large as the memos it copies; their count
		// is not known before the scan, so ask for room for the tables.
		if free < bb.tableBytes()+bb.reserve {
			bb.log.Debug().Str("cache", bb.dir).Msg("cache: no room to write the memo index")
			return
		}
	}
	start := time.Now()
	tok := m.token
	if tok == nil {
		// A cache that never had a token: write one directly (the
		// committer has stopped), synced as every write is.
		tok = newMemoToken()
		if err := bb.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(memoTokenKey), tok) }); err != nil {
			bb.log.Debug().Err(err).Msg("cache: memo token not written; no index")
			return
		}
	}
	n, err := writeMemoIndex(filepath.Join(bb.dir, memoIndexName), tok, func(fn func(key, sealed []byte) error) error {
		return bb.scanDB(prefixMemo, false, func(k, v []byte) error { return fn(k[len(prefixMemo):], v) })
	})
	if err != nil {
		bb.log.Debug().Err(err).Str("cache", bb.dir).Msg("cache: memo index not written; memos are read from the tables")
		return
	}
	m.indexed = n
	bb.log.Info().Str("cache", bb.dir).Int("memos", n).Dur("took", time.Since(start)).Msg("cache: indexed the memos for the next run's lookups")
}

// getBadger is get without the memo index.
func (bb *badgerBackend) getBadger(key []byte, fn func([]byte) error) (err error) {
	if bb.closed.Load() {
		return ErrClosed
	}
	defer recoverRead("key", key, &err)
	return bb.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return errNoKey
		}
		if err != nil {
			return err
		}
		return item.Value(fn)
	})
}

// MemoIndexed says how many memos Close wrote to the memo index (0: none):
// the CLI names that part of closing.
func (b *Badger) MemoIndexed() int {
	bb, ok := b.b.(*badgerBackend)
	if !ok {
		return 0
	}
	return bb.memo.indexed
}

// checkMemoIndex compares the index being read with the memos in the
// tables, for `cache verify`: it returns how many entries it compared and a
// description of the differences ("" when it is an exact copy, or when no
// index is read). An index found different is no longer read by this
// handle, and a writable one writes a new token so that no later open
// reads it; the next Close that pays rewrites it.
func (bb *badgerBackend) checkMemoIndex() (int, string, error) {
	x := bb.memo.idx.Load()
	if x == nil {
		return 0, "", nil
	}
	n, differ := 0, 0
	err := bb.scanDB(prefixMemo, false, func(k, v []byte) error {
		n++
		if got, ok := x.lookup(k[len(prefixMemo):]); !ok || !bytes.Equal(got, v) {
			differ++
		}
		return nil
	})
	if err != nil {
		return 0, "", fmt.Errorf("check the memo index: %w", err)
	}
	if differ == 0 && n == x.count {
		return n, "", nil
	}
	bb.memo.idx.Store(nil)
	if !bb.readOnly {
		if err := bb.writeMemoToken(); err != nil {
			return n, "", err
		}
	}
	return n, fmt.Sprintf("%s: %d of the %d memos differ from the index's %d entries (it is no longer read; the next run that reads many memos rewrites it)",
		filepath.Join(bb.dir, memoIndexName), differ, n, x.count), nil
}
