package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/rs/zerolog"
)

var (
	// ErrLocked is wrapped by Open's error when another process has the cache
	// open; the error names that process when Badger's LOCK file says.
	ErrLocked = errors.New("cache is in use by another process")
	// ErrNeedsRecovery is wrapped by a ReadOnly Open's error for a cache that
	// was not closed cleanly: one writable Open replays its log, after which
	// read-only opens work again.
	ErrNeedsRecovery = errors.New("cache was not closed cleanly and needs a writable open to recover")
	// ErrNoCache is wrapped by Open and OpenReadOnly for a folder that does not
	// exist or holds no cache files. Only Create makes a cache: a typo in a
	// path must not become an empty cache that reports "all verified".
	ErrNoCache = errors.New("no cache")
	// ErrNoManifest is wrapped by every open of a folder that holds Badger data
	// files but no MANIFEST. Badger would start an empty cache beside the data
	// (and delete its tables), so the next run would silently pay again.
	ErrNoManifest = errors.New("cache has data files but no MANIFEST")
	// ErrNotWritable is wrapped by Open and Create errors when the folder or
	// its file system refuses writes (permissions, a read-only mount);
	// OpenReadOnly still works there.
	ErrNotWritable = errors.New("cache folder is not writable")
	// ErrDiskFull is wrapped by write errors when the file system holding the
	// cache is full, or too full to write safely (see diskReserve).
	ErrDiskFull = errors.New("disk full")
	// ErrDamaged is wrapped by Open errors for damage an open cannot read
	// around: a MANIFEST that does not decode and cannot be rebuilt.
	ErrDamaged = errors.New("cache damaged")
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
	// Values of at least this many bytes go to the value log; smaller ones
	// (memos, latest keys, records of short answers and small scores) live in
	// the LSM tree alone. A damaged table block therefore costs its small
	// records (recomputed; a short answer is asked again), while larger ones
	// are restored from the value log (heal.go). 128 would put every record
	// in the value log, and the memos with them: in BenchmarkScale/items=300
	// (48k model nodes) that took SST garbles from up to 14 of 32 calls
	// re-paid to none (TestSSTGarbles), but warm re-runs from 3.5 to 4.2 s
	// and their peak RSS from 148 to 247 MiB (each memo read maps a page of
	// the log), so it stays here.
	valueThreshold = 512
	// Value-log files are the unit of GC; the file being written is never
	// collected, so smaller files leave less garbage behind.
	valueLogFileSize = 64 << 20
)

// Option configures Open, Create and OpenReadOnly.
type Option func(*openOptions)

type openOptions struct {
	logger       *zerolog.Logger
	readOnly     bool
	memTableSize int64
	closeTimeout time.Duration
	freeSpace    func(dir string) (int64, error)
	flattenAfter int64
	indexAfter   int64 // memo lookups that make Close write the memo index
}

// WithLogger routes Badger's own logging to l, at debug (its errors and
// warnings) and trace (the rest): see badgerLogger. Without it Badger logs
// nothing. The cache's own lines go to l at their levels: warnings (data
// Badger dropped while recovering) and the progress of the compaction at
// close (info).
func WithLogger(l zerolog.Logger) Option {
	return func(o *openOptions) { o.logger = &l }
}

// ReadOnly opens an existing cache under a shared lock, for inspection
// (stats, ls, verify, export, plan) beside other readers; OpenReadOnly is
// Open with this option. Writes return ErrReadOnly. Open fails with ErrLocked
// while a writer holds the cache, and with ErrNeedsRecovery after an unclean
// shutdown until a writable Open has replayed the log. A read-only open never
// changes a file in the folder, so it is safe on damaged or shared caches.
func ReadOnly() Option {
	return func(o *openOptions) { o.readOnly = true }
}

// withFlattenAfter lets tests reach the compaction at close with few writes.
func withFlattenAfter(n int64) Option {
	return func(o *openOptions) { o.flattenAfter = n }
}

// withIndexAfter lets tests reach the memo index with few lookups.
func withIndexAfter(n int64) Option {
	return func(o *openOptions) { o.indexAfter = n }
}

// withMemTableSize lets tests reach Badger's transaction size limit (15% of a
// memtable) with small records.
func withMemTableSize(n int64) Option {
	return func(o *openOptions) { o.memTableSize = n }
}

// withFreeSpace replaces the file-system free-space probe, so tests can fill
// the disk without filling it.
func withFreeSpace(fn func(dir string) (int64, error)) Option {
	return func(o *openOptions) { o.freeSpace = fn }
}

// Badger is the on-disk Store. Writes go through a group committer and are
// synced before they return. GC gives freed space back to the file system,
// except what sits in the value-log file this process has been writing to;
// GC in a process of its own (as `ideaflow cache gc` is) reclaims it all.
//
// Safety envelope. Every value carries a CRC (wire.go) checked on every read,
// and Badger is told to check its own value-log checksums too. Before Badger
// reads a folder, every open checks every table block against its checksum
// and every entry of the newest value log and the memtable logs against its
// CRC, and reads around what fails (heal.go): damage surfaces as ErrCorrupt
// or a miss on the damaged keys only, never as a wrong value, a panic, a
// hang, or a log cut at the damage; a writable open restores what the
// damaged files still hold and drops the rest (Recovery says what). Opening
// never creates a cache except through Create, and a read-only open never
// writes. Writes are refused with ErrDiskFull before the file system is too
// full for Badger's memory-mapped files, which would otherwise kill the
// process with SIGBUS (headroom.go).
type Badger struct {
	store
	dir      string
	db       *badger.DB
	recovery Recovery
	damage   *damage // what the open found (nil for a new cache)
}

var _ Store = (*Badger)(nil)

// Open opens the existing cache in dir for reading and writing. A folder that
// does not exist or holds no cache is ErrNoCache; use Create to make one.
func Open(dir string, opts ...Option) (*Badger, error) {
	return open(dir, false, opts)
}

// Create opens the cache in dir, creating the folder and an empty cache if
// there is none yet. It is for the commands that fill a cache (run, import).
func Create(dir string, opts ...Option) (*Badger, error) {
	return open(dir, true, opts)
}

// OpenReadOnly opens the existing cache in dir without writing to it: see
// ReadOnly. It works on a folder without write permission (a mounted shared
// copy) and beside other readers.
func OpenReadOnly(dir string, opts ...Option) (*Badger, error) {
	return open(dir, false, append(opts, ReadOnly()))
}

// defaultCloseTimeout bounds Close. Badger's close waits for locks that a
// damaged value log has been seen to leave held; a command that has done its
// work should then fail with a clear error rather than hang.
const defaultCloseTimeout = 30 * time.Second

func open(dir string, create bool, opts []Option) (*Badger, error) {
	o := openOptions{memTableSize: defaultMemTableSize, closeTimeout: defaultCloseTimeout, freeSpace: freeBytes, flattenAfter: flattenAfter, indexAfter: memoIndexMinReads}
	for _, fn := range opts {
		fn(&o)
	}
	if dir == "" {
		return nil, errors.New("open cache: empty directory")
	}
	mode := "open cache"
	if o.readOnly {
		mode = "open cache read-only"
	}
	st, err := probe(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mode, err)
	}
	switch {
	case st.dataFiles > 0 && !st.manifest:
		return nil, fmt.Errorf("%s %s: %w (%d data files, %d bytes): opening it would start an empty cache and discard them; restore MANIFEST from a backup, or move the folder aside to start a new cache",
			mode, dir, ErrNoManifest, st.dataFiles, st.dataBytes)
	case !st.manifest && !create:
		what := "the folder holds no cache"
		if !st.exists {
			what = "the folder does not exist"
		}
		return nil, fmt.Errorf("%s: %w at %s: %s", mode, ErrNoCache, dir, what)
	case !st.exists:
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create cache directory: %w", classifyWriteErr(dir, err))
		}
	}
	// Check the files before Badger reads them (heal.go), under the lock
	// Badger takes: a writer's files are not read while it writes them.
	var dmg *damage
	var view string
	var unlock func() // a read-only open keeps its shared lock until Close
	cleanup := func() {
		if view != "" {
			os.RemoveAll(view)
		}
		if unlock != nil {
			unlock()
		}
	}
	if st.manifest {
		release, err := lockDir(dir, !o.readOnly)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", mode, dir, err)
		}
		if dmg, err = inspect(dir); err != nil {
			release()
			return nil, fmt.Errorf("%s %s: %w: %v; nothing was changed: restore the folder from a backup, or move it aside to start a new cache", mode, dir, ErrDamaged, err)
		}
		if o.readOnly {
			unlock = release
			if dmg.needsView() {
				if view, err = dmg.makeView(dir); err != nil {
					cleanup()
					return nil, fmt.Errorf("%s %s: %w", mode, dir, err)
				}
			}
		} else {
			err := dmg.prepare(dir)
			release()
			switch {
			case err != nil && notWritable(err):
				return nil, fmt.Errorf("%s %s: %w (%v)", mode, dir, ErrNotWritable, err)
			case err != nil:
				return nil, fmt.Errorf("%s %s: set damaged files aside: %w", mode, dir, classifyWriteErr(dir, err))
			}
		}
	}
	badgerDir := dir
	if view != "" {
		badgerDir = view
	}
	bopts := badger.DefaultOptions(badgerDir).
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
		WithCompression(options.None).
		WithNumCompactors(2).
		WithValueThreshold(valueThreshold).
		WithValueLogFileSize(valueLogFileSize).
		// Without this Badger decodes a damaged value-log entry's header as
		// is: seen to panic in a prefetch goroutine (unrecoverable) and to leak
		// a file lock that makes Close hang forever. With it, damage is a
		// checksum mismatch that Badger logs and reads as an empty value, which
		// our own CRC then reports as ErrCorrupt. The CRC is hardware-assisted.
		WithVerifyValueChecksum(true)
	// Tables are checked whole before Badger opens them (inspect), so its
	// own block checks (ChecksumVerificationMode) would only repeat that on
	// every block read, for about 6% of a Get: they stay off. (Badger's
	// check on opening a table would also panic on the first bad block.)
	if o.logger != nil {
		bopts = bopts.WithLogger(badgerLogger{*o.logger})
	}
	var before []logExtent
	if !o.readOnly && st.manifest {
		before = logExtents(dir)
		if dmg != nil {
			// A damaged memtable log found above is cut by Badger at the
			// damage, as foreseen: what follows it is restored from our
			// scan (heal). Only a cut past that point is data lost. Its
			// file is either left cut or, once Badger has flushed it,
			// deleted; measuring against its data end made the count
			// depend on whether the flush had run yet.
			for i, x := range before {
				for _, m := range dmg.memLogs {
					if m.path == x.path {
						before[i].dataEnd = min(x.dataEnd, int64(m.scan.validEnd))
					}
				}
			}
		}
	}
	db, err := badger.Open(bopts)
	if err != nil {
		cleanup()
		// Badger formats these errors as text, so they can only be matched as text.
		switch msg := err.Error(); {
		case strings.Contains(msg, "Cannot acquire directory lock"):
			return nil, fmt.Errorf("%s %s: %w%s", mode, dir, ErrLocked, lockHolder(dir))
		case o.readOnly && strings.Contains(msg, "truncate required"):
			return nil, fmt.Errorf("%s %s: %w", mode, dir, ErrNeedsRecovery)
		case !o.readOnly && notWritable(err):
			return nil, fmt.Errorf("%s %s: %w (%v)", mode, dir, ErrNotWritable, err)
		}
		return nil, fmt.Errorf("%s %s: %w", mode, dir, classifyWriteErr(dir, err))
	}
	bb := &badgerBackend{db: db, dir: dir, readOnly: o.readOnly, closeTimeout: o.closeTimeout, freeSpace: o.freeSpace,
		reserve: diskReserve(o.memTableSize), cleanup: cleanup, flattenAfter: o.flattenAfter, log: zerolog.Nop()}
	bb.memo.after = o.indexAfter
	if o.logger != nil {
		bb.log = *o.logger
	}
	if !o.readOnly {
		var guard *spaceGuard
		if o.freeSpace != nil {
			guard = newSpaceGuard(dir)
		}
		bb.commit = newCommitter(db, guard)
		if o.freeSpace != nil {
			bb.headroom = newHeadroom(dir, bb.reserve)
		}
	}
	b := &Badger{store: newStore(bb, dir), dir: dir, db: db, damage: dmg}
	if before != nil {
		b.recovery = b.measureRecovery(before)
	}
	if dmg != nil {
		if err := b.heal(); err != nil {
			b.Close()
			return nil, fmt.Errorf("%s %s: %w", mode, dir, err)
		}
	}
	// After damage, what heal restored or dropped is in no index.
	damaged := (dmg != nil && dmg.any()) || b.recovery.Damaged()
	if err := bb.loadMemoIndex(damaged); err != nil {
		b.Close()
		return nil, fmt.Errorf("%s %s: %w", mode, dir, err)
	}
	if r := b.recovery; r.Damaged() && o.logger != nil {
		ev := o.logger.Warn().Str("cache", dir).Strs("damage", r.Damage).Int("records_unreadable", r.RecordsUnreadable)
		if o.readOnly {
			ev.Msg("cache: damaged files; read around them without changing anything: the entries they hold are misses until a writable open (the next run, or `ideaflow cache verify --repair`) restores what it can")
		} else {
			ev.Int("restored", r.Restored).Int("dropped", r.Repaired.Dropped()).Int64("bytes_dropped", r.BytesDropped).
				Msg("cache: damaged files repaired; what could not be restored is dropped and will be recomputed")
		}
	}
	return b, nil
}

// notWritable says err is a refusal to write: permissions, a read-only mount.
func notWritable(err error) bool {
	msg := err.Error()
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) ||
		strings.Contains(msg, "read-only file system") || strings.Contains(msg, "permission denied")
}

// heal finishes what the open found: a writable open restores what damaged
// files still hold, then checks every entry and drops what cannot be read,
// so that the run that follows recomputes exactly that. A read-only open
// only counts the records it cannot read.
func (b *Badger) heal() error {
	d := b.damage
	r := &b.recovery
	r.Damage = d.describe()
	if !d.any() && r.BytesDropped == 0 {
		return nil
	}
	bb := b.b.(*badgerBackend)
	if bb.readOnly {
		r.ReadOnly = true
		r.RecordsUnreadable = b.unreadable()
		return nil
	}
	n, err := bb.restore(d)
	if err != nil {
		return fmt.Errorf("restore entries of damaged files: %w", err)
	}
	r.Restored = n
	rep, err := b.store.Check()
	if err != nil {
		return err
	}
	if r.Repaired, err = b.store.Repair(rep); err != nil {
		return err
	}
	r.RecordsUnreadable = len(rep.BadRecords)
	d.tables, d.missing, d.pending, d.moved, d.memLogs, d.keyRegistry, d.rebuilt = nil, nil, nil, nil, nil, false, nil
	return nil
}

// unreadable counts the records whose summary fails its checksum.
func (b *Badger) unreadable() int {
	n := 0
	_ = b.b.scan(prefixRecord, false, func(_, v []byte) error {
		if _, err := readSummary(v); err != nil {
			n++
		}
		return nil
	})
	return n
}

// prepare makes the folder safe for Badger's read-write open: a damaged key
// registry goes (Badger writes a new one), damaged tables are set aside, and
// a damaged newest log becomes an old one.
func (d *damage) prepare(dir string) error {
	if err := d.writeRebuiltManifest(dir); err != nil {
		return fmt.Errorf("rebuild MANIFEST: %w", err)
	}
	if d.keyRegistry {
		if err := os.Remove(filepath.Join(dir, badger.KeyRegistryFileName)); err != nil {
			return err
		}
	}
	if err := d.setAside(dir); err != nil {
		return err
	}
	return d.startNewLog()
}

// Dir is the directory the cache lives in.
func (b *Badger) Dir() string { return b.dir }

// CompactedOnClose says whether Close compacted the tables, as it does after
// flattenAfter writes through this handle: the CLI names that phase in a
// run's summary, so its wall time is never a silent tail.
func (b *Badger) CompactedOnClose() bool {
	bb, ok := b.b.(*badgerBackend)
	return ok && bb.compacted.Load()
}

// Recovery says what a read-write open had Badger drop from a damaged log.
func (b *Badger) Recovery() Recovery { return b.recovery }

type badgerBackend struct {
	db           *badger.DB
	dir          string
	cleanup      func() // after Close: a read-only open's view and lock
	readOnly     bool
	closeTimeout time.Duration
	freeSpace    func(dir string) (int64, error)
	reserve      int64
	commit       *committer // nil when read-only
	headroom     *headroom  // nil when read-only
	closed       atomic.Bool
	written      atomic.Int64 // write units applied through this handle
	closeOnce    sync.Once
	closeErr     error
	compacted    atomic.Bool    // Close compacted the tables (CompactedOnClose)
	flattenAfter int64          // writes that make Close compact (flattenAfter, or a test's)
	log          zerolog.Logger // the cache's own lines (Nop without WithLogger)
	memo         memoState      // the memo index (memoindex.go)
}

// A panic inside Badger while it reads for us is damage the open did not
// see (the file changed since): the read fails with ErrCorrupt instead of
// taking the process down. Badger's own goroutines cannot be covered so:
// there the open's checks are the defence.
func recoverRead(what string, key []byte, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: Badger failed reading %s %q: %v", ErrCorrupt, what, key, r)
	}
}

func (bb *badgerBackend) has(key []byte) (found bool, err error) {
	if bb.closed.Load() {
		return false, ErrClosed
	}
	if x := bb.memoIndexed(key); x != nil {
		_, ok := x.lookup(key[len(prefixMemo):])
		return ok, nil
	}
	defer recoverRead("key", key, &err)
	err = bb.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		found = err == nil
		return err
	})
	return found, err
}

func (bb *badgerBackend) get(key []byte, fn func([]byte) error) (err error) {
	if bb.closed.Load() {
		return ErrClosed
	}
	if x := bb.memoIndexed(key); x != nil {
		v, ok := x.lookup(key[len(prefixMemo):])
		if !ok {
			return errNoKey
		}
		return fn(v)
	}
	return bb.getBadger(key, fn)
}

func (bb *badgerBackend) scan(prefix string, keysOnly bool, fn func(key, val []byte) error) (err error) {
	if bb.closed.Load() {
		return ErrClosed
	}
	return bb.scanDB(prefix, keysOnly, fn)
}

// scanDB is scan for the handle itself, Close included.
func (bb *badgerBackend) scanDB(prefix string, keysOnly bool, fn func(key, val []byte) error) (err error) {
	defer recoverRead("prefix", []byte(prefix), &err)
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
		return fmt.Errorf("%w (%s)", ErrReadOnly, bb.dir)
	}
	if err := bb.checkSpace(units); err != nil {
		return err
	}
	if err := bb.invalidateMemoIndex(units); err != nil {
		return err
	}
	bb.written.Add(int64(len(units)))
	return bb.commit.submit(units)
}

// flattenAfter is how many writes through one handle make Close compact
// the tree into one level first. A run that wrote a large experiment leaves
// many overlapping level-0 tables, and every memo lookup of the next (warm)
// run would probe each of them until background compaction caught up: warm
// runs of 200k nodes varied from 4.4 s to 6.8 s. Compacting once at the end
// of the writing run makes the next one's lookups hit one level.
//
// It stays at Close, where nothing waits on it, rather than at the next
// open (which would put its 1-70 s on the warm run it exists to speed up)
// or in the background of the next run (whose lookups it would slow while
// it rewrites the tables they read). What it must not be is silent: it
// logs a progress line at info when it starts and when it ends (compact),
// and `ideaflow cache compact` runs it alone.
const flattenAfter = 20_000

// Compact flattens the cache's tables into one level, as Close does after a
// handle made flattenAfter writes: for a cache grown by many smaller runs,
// or one whose compaction at close was interrupted. It logs the same two
// lines. It rewrites every table, so it needs their size free.
func (b *Badger) Compact() error {
	bb, ok := b.store.b.(*badgerBackend)
	switch {
	case !ok:
		return fmt.Errorf("compact: %w", ErrReadOnly)
	case bb.closed.Load():
		return ErrClosed
	case bb.readOnly:
		return fmt.Errorf("compact: %w (%s)", ErrReadOnly, bb.dir)
	}
	tables := bb.tableBytes()
	if bb.freeSpace != nil {
		if free, err := bb.freeSpace(bb.dir); err == nil && free >= 0 && free < tables+bb.reserve {
			return fmt.Errorf("compact %s: %w: it rewrites %d bytes of tables and %d are free", bb.dir, ErrDiskFull, tables, free)
		}
	}
	return bb.compact(0, tables)
}

// compact flattens the tree into one level, saying so: writes is what made
// it worth it (0: asked for), tables the bytes it rewrites.
func (bb *badgerBackend) compact(writes, tables int64) error {
	start := time.Now()
	ev := bb.log.Info().Str("cache", bb.dir).Int64("table_bytes", tables)
	if writes > 0 {
		ev = ev.Int64("writes", writes)
	}
	ev.Msg("cache: compacting the tables so that the next run's lookups read one level (safe to interrupt; `ideaflow cache compact` does it later)")
	// Dropping a prefix no key uses first writes out the memtables already
	// full (see reclaim), so that none lands in level 0 after the flatten.
	err := bb.db.DropPrefix([]byte(flushMarker))
	if err == nil {
		err = bb.db.Flatten(2)
	}
	if err != nil {
		bb.log.Warn().Str("cache", bb.dir).Err(err).Msg("cache: compaction failed; nothing is lost, lookups stay slower until `ideaflow cache compact`")
		return fmt.Errorf("compact %s: %w", bb.dir, err)
	}
	bb.log.Info().Str("cache", bb.dir).Dur("took", time.Since(start)).Msg("cache: compacted")
	return nil
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
	if err := bb.evacuateDamagedLogs(); err != nil {
		return fmt.Errorf("value log gc: %w", err)
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

// evacuateDamagedLogs writes again every entry still in use that lies after
// damage in a value log. Badger's value-log GC reads a log up to its first
// damaged entry, moves the entries in use it saw, and deletes the log: the
// ones after the damage would go with it. Written again, they live in the
// current log, and the damaged one holds nothing in use past its damage.
func (bb *badgerBackend) evacuateDamagedLogs() error {
	paths, err := filepath.Glob(filepath.Join(bb.dir, "*.vlog"))
	if err != nil || len(paths) < 2 {
		return err
	}
	slices.Sort(paths)
	type version struct {
		key []byte
		v   uint64
	}
	var after []version
	for _, p := range paths[:len(paths)-1] { // GC never takes the newest
		if _, err := scanFile(p, func(txn []logEntry, clean bool) {
			if !clean {
				for _, e := range txn {
					after = append(after, version{bytes.Clone(userKey(e.key)), keyVersion(e.key)})
				}
			}
		}); err != nil {
			return err
		}
	}
	var units [][]op
	err = bb.db.View(func(txn *badger.Txn) error {
		for _, a := range after {
			if !cacheKey(a.key) {
				continue
			}
			item, err := txn.Get(a.key)
			if err != nil || item.Version() != a.v {
				continue // gone, or superseded: not in use here
			}
			val, err := item.ValueCopy(nil)
			if err != nil || !soundValue(string(a.key), salvaged{val: val}) {
				continue // damaged itself: Check reports it
			}
			units = append(units, []op{setOp(string(a.key), val)})
		}
		return nil
	})
	if err != nil || len(units) == 0 {
		return err
	}
	return bb.apply(units...)
}

// tableBytes is the size of the tables, what a full compaction rewrites.
func (bb *badgerBackend) tableBytes() int64 {
	paths, _ := filepath.Glob(filepath.Join(bb.dir, "*.sst"))
	var n int64
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil {
			n += info.Size()
		}
	}
	return n
}

// diskBytes is the space the cache's files take, not counting the reserve
// (HEADROOM) or what the logs have allocated for their next writes, which
// hold free space.
func (bb *badgerBackend) diskBytes() (int64, error) {
	var total int64
	err := filepath.WalkDir(bb.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == headroomName {
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
	if bb.commit != nil {
		total -= bb.commit.guard.allocatedAhead()
	}
	return total, nil
}

func (bb *badgerBackend) close() error {
	bb.closeOnce.Do(func() {
		if bb.commit != nil {
			bb.commit.stop()
		}
		bb.closed.Store(true)
		if !bb.readOnly {
			room, free := bb.roomToClose()
			if !room {
				// Badger's flush would write into a disk that cannot take
				// it (SIGBUS). Its goroutines and lock stay until the
				// process exits, which the CLI does next.
				bb.closeErr = bb.errClosedUnflushed(free)
				return
			}
			if n := bb.written.Load(); n >= bb.flattenAfter {
				if tables := bb.tableBytes(); free < 0 || free >= tables+bb.reserve {
					// Outside the close timeout: compaction of a large cache
					// takes its time and is no sign of damage. A failure only
					// leaves lookups slower; nothing is lost. It rewrites every
					// table, so it needs their size free.
					bb.compacted.Store(bb.compact(n, tables) == nil)
				}
			}
			bb.writeMemoIndexAtClose(free)
		}
		done := make(chan error, 1)
		go func() { done <- bb.db.Close() }()
		select {
		case err := <-done:
			if err != nil {
				bb.closeErr = fmt.Errorf("close cache %s: %w", bb.dir, err)
			}
		case <-time.After(bb.closeTimeout):
			// The goroutine stays blocked; the process is about to exit anyway,
			// and every write had been synced before Close was called.
			bb.closeErr = fmt.Errorf("close cache %s: Badger did not finish closing within %s, which a damaged value log can cause; run `ideaflow cache verify` to find the damage", bb.dir, bb.closeTimeout)
		}
		bb.memo.idx.Store(nil)
		bb.memo.opened.close()
		if bb.cleanup != nil {
			bb.cleanup()
		}
	})
	return bb.closeErr
}
