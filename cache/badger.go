package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"
)

var (
	// ErrLocked is wrapped by Open's error when another process has the cache open.
	ErrLocked = errors.New("cache is in use by another process")
	// ErrNeedsRecovery is wrapped by a ReadOnly Open's error for a cache that
	// was not closed cleanly: one writable Open replays its log, after which
	// read-only opens work again.
	ErrNeedsRecovery = errors.New("cache was not closed cleanly and needs a writable open to recover")
)

// Memory budget. Badger's defaults (five 64 MiB memtables, a 256 MiB block
// cache, values up to 1 MiB inside the LSM tree) are sized for a database
// server. Here records go to the value log, which Badger reads through mmap
// without copying or decompressing, and the LSM tree keeps only keys, value
// pointers and small values, so a small block cache covers it. BenchmarkRerun
// over 200k records of ~3.3 KiB peaked at 1.3 GiB resident with values inside
// the LSM tree, 747 MiB with them in the value log, and 337 MiB once records
// were also s2-compressed (codec.go).
const (
	defaultMemTableSize = 16 << 20
	numMemtables        = 3
	blockCacheSize      = 16 << 20
	// Values of at least this many bytes (every real record) go to the value log.
	valueThreshold = 512
	// Value-log files are the unit of GC; the file being written is never
	// collected, so smaller files leave less garbage behind.
	valueLogFileSize = 64 << 20
)

// Option configures Open.
type Option func(*openOptions)

type openOptions struct {
	logger       *zerolog.Logger
	readOnly     bool
	memTableSize int64
}

// WithLogger routes Badger's own logging to l: errors and warnings at their
// levels, Badger's chatty info at debug. Without it Badger logs nothing.
func WithLogger(l zerolog.Logger) Option {
	return func(o *openOptions) { o.logger = &l }
}

// ReadOnly opens an existing cache under a shared lock, for inspection
// (stats, ls, verify, export) beside other readers. Writes return ErrReadOnly.
// Open fails with ErrLocked while a writer holds the cache, and with
// ErrNeedsRecovery after an unclean shutdown until a writable Open has
// replayed the log.
func ReadOnly() Option {
	return func(o *openOptions) { o.readOnly = true }
}

// withMemTableSize lets tests reach Badger's transaction size limit (15% of a
// memtable) with small records.
func withMemTableSize(n int64) Option {
	return func(o *openOptions) { o.memTableSize = n }
}

// Badger is the on-disk Store. Writes go through a group committer and are
// synced before they return. GC gives freed space back to the file system,
// except what sits in the value-log file this process has been writing to;
// GC in a process of its own (as `ideaflow cache gc` is) reclaims it all.
type Badger struct {
	store
	dir string
	db  *badger.DB
}

var _ Store = (*Badger)(nil)

// Open opens (creating if needed) the cache in dir.
func Open(dir string, opts ...Option) (*Badger, error) {
	o := openOptions{memTableSize: defaultMemTableSize}
	for _, fn := range opts {
		fn(&o)
	}
	if dir == "" {
		return nil, errors.New("open cache: empty directory")
	}
	if o.readOnly {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("open cache %s read-only: %w", dir, err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cache directory: %w", err)
	}
	bopts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithReadOnly(o.readOnly).
		// Every commit is synced; the committer makes concurrent Puts share syncs.
		WithSyncWrites(true).
		// Writes all come from the committer, one transaction at a time.
		WithDetectConflicts(false).
		WithMetricsEnabled(false).
		WithMemTableSize(o.memTableSize).
		WithNumMemtables(numMemtables).
		WithBlockCacheSize(blockCacheSize).
		WithNumCompactors(2).
		WithValueThreshold(valueThreshold).
		WithValueLogFileSize(valueLogFileSize)
	if o.logger != nil {
		bopts = bopts.WithLogger(badgerLogger{*o.logger})
	}
	db, err := badger.Open(bopts)
	if err != nil {
		// Badger formats these errors as text, so they can only be matched as text.
		switch msg := err.Error(); {
		case strings.Contains(msg, "Cannot acquire directory lock"):
			return nil, fmt.Errorf("open cache %s: %w", dir, ErrLocked)
		case o.readOnly && strings.Contains(msg, "truncate required"):
			return nil, fmt.Errorf("open cache %s read-only: %w", dir, ErrNeedsRecovery)
		}
		return nil, fmt.Errorf("open cache %s: %w", dir, err)
	}
	bb := &badgerBackend{db: db, dir: dir, readOnly: o.readOnly}
	if !o.readOnly {
		bb.commit = newCommitter(db)
	}
	return &Badger{store: newStore(bb), dir: dir, db: db}, nil
}

// Dir is the directory the cache lives in.
func (b *Badger) Dir() string { return b.dir }

type badgerBackend struct {
	db        *badger.DB
	dir       string
	readOnly  bool
	commit    *committer // nil when read-only
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

func (bb *badgerBackend) has(key []byte) (bool, error) {
	if bb.closed.Load() {
		return false, ErrClosed
	}
	found := false
	err := bb.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		found = err == nil
		return err
	})
	return found, err
}

func (bb *badgerBackend) get(key []byte, fn func([]byte) error) error {
	if bb.closed.Load() {
		return ErrClosed
	}
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

func (bb *badgerBackend) scan(prefix string, keysOnly bool, fn func(key, val []byte) error) error {
	if bb.closed.Load() {
		return ErrClosed
	}
	return bb.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{
			Prefix:         []byte(prefix),
			PrefetchValues: !keysOnly,
			PrefetchSize:   64,
		})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			var err error
			if keysOnly {
				err = fn(key, nil)
			} else {
				err = item.Value(func(v []byte) error { return fn(key, v) })
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func (bb *badgerBackend) apply(units ...[]op) error {
	switch {
	case bb.closed.Load():
		return ErrClosed
	case bb.readOnly:
		return ErrReadOnly
	}
	return bb.commit.submit(units)
}

// flushMarker is written and dropped by reclaim; no other key uses its prefix.
const flushMarker = "gc-flush/marker"

// reclaim makes GC's deletions shrink the directory. Deleted keys sit in the
// memtable until it is flushed, and Badger flushes only when a memtable fills,
// on Close, or as the first step of DropPrefix; dropping a prefix that holds
// only a marker is the public way to flush now. Flatten then compacts every
// level into one, which drops deleted values and their tombstones, and the
// value-log GC rewrites log files that are mostly garbage.
func (bb *badgerBackend) reclaim() error {
	if err := bb.apply([]op{setOp(flushMarker, []byte{1})}); err != nil {
		return fmt.Errorf("write flush marker: %w", err)
	}
	if err := bb.db.DropPrefix([]byte(flushMarker)); err != nil {
		return fmt.Errorf("flush memtables: %w", err)
	}
	if err := bb.db.Flatten(2); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	for {
		err := bb.db.RunValueLogGC(0.5)
		if errors.Is(err, badger.ErrNoRewrite) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("value log gc: %w", err)
		}
	}
}

func (bb *badgerBackend) diskBytes() (int64, error) {
	var total int64
	err := filepath.WalkDir(bb.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += allocatedBytes(info)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("measure %s: %w", bb.dir, err)
	}
	return total, nil
}

func (bb *badgerBackend) close() error {
	bb.closeOnce.Do(func() {
		if bb.commit != nil {
			bb.commit.stop()
		}
		bb.closed.Store(true)
		if err := bb.db.Close(); err != nil {
			bb.closeErr = fmt.Errorf("close cache %s: %w", bb.dir, err)
		}
	})
	return bb.closeErr
}
