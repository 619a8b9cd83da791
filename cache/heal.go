package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"
)

// Damage to Badger's files, found before Badger reads them, and what each
// open does about it. The rule: a damaged byte costs at most the entries it
// held, which the next run recomputes; it never crashes a command, never
// serves a wrong value, and never takes sound entries down with it.
//
//	damaged table      Badger would panic on it. A read-write open moves it
//	                   to damaged/, drops it from the MANIFEST, and restores
//	                   its entries: those of its sound blocks from the table
//	                   itself, and the records of its damaged blocks from the
//	                   value logs (records of valueThreshold bytes or more live
//	                   there too; smaller ones are lost with their block). A
//	                   deletion in a damaged block can be undone that way: the
//	                   record comes back, sound (the value of its key). A
//	                   read-only open reads a view of the folder without the
//	                   table, changing nothing: its entries are misses until a
//	                   writable open restores them.
//	damaged last log   Badger's read-write open would cut the newest value log
//	                   at the damage, losing every record after it. The open
//	                   starts a new empty log instead, so the damaged one is an
//	                   old log that Badger never cuts: only the records under
//	                   the damage are unreadable (ErrCorrupt, then recomputed).
//	damaged memtable   Badger cuts it at the damage; the open restores every
//	log                sound entry after it (each has its own CRC), those of
//	                   a transaction the damage cut included.
//	damaged key        (the file that would hold encryption keys, which the
//	registry           cache never uses) is rewritten, or left out of a view.
//	damaged MANIFEST   (which tables make up the tree, at which level) is
//	                   rebuilt from the table files, every one at level 0,
//	                   where tables may overlap: Badger reads them all and
//	                   keeps each key's newest version, and compaction sorts
//	                   them into levels again. The damaged one is set aside.
//
// After any of these, a read-write open checks every entry and drops what
// still cannot be read (Repair), so the run that follows recomputes exactly
// that and no damage is left behind. Damage in an older value log is found
// when a record is read (or by Check) and costs that record.

// damagedDir holds tables moved out of the LSM tree until their entries are
// restored (a repair interrupted by a crash finishes on the next open), and
// a MANIFEST replaced by a rebuilt one, kept for a look (safe to delete).
const damagedDir = "damaged"

// damage is what inspect found in a cache folder.
type damage struct {
	manifest    badger.Manifest
	badManifest error    // why the MANIFEST did not decode
	rebuilt     []byte   // a MANIFEST rebuilt from the table files, when it did not
	tables      []*table // damaged tables the MANIFEST lists
	missing     []uint64 // tables the MANIFEST lists that have no file
	pending     []string // tables in damaged/ whose entries are not restored yet
	moved       []string // tables this open set aside, to restore
	checked     int      // tables checked
	tableBytes  int64
	lastLog     string   // the newest value log
	lastScan    logScan  // what a read-write open would cut from it
	memLogs     []memLog // memtable logs a writable open would cut data from
	// memEnds maps every memtable log to the end of its whole entries. A
	// memtable log left by a process that did not close the cache has
	// preallocated zeros after them, and read-only Badger refuses to open
	// until a writable open has cut them: a read-only view holds copies cut
	// there instead.
	memEnds     map[string]int
	keyRegistry bool // KEYREGISTRY unreadable
}

type memLog struct {
	path string
	scan logScan
	lost []salvaged // the sound entries after the damage
}

func (d *damage) any() bool {
	return d.rebuilt != nil || len(d.tables) > 0 || len(d.missing) > 0 || len(d.pending) > 0 || d.lastScan.cuts() ||
		len(d.memLogs) > 0 || d.keyRegistry
}

// needsView says whether a read-only open must read around the damage.
func (d *damage) needsView() bool {
	if d.rebuilt != nil || len(d.tables) > 0 || len(d.missing) > 0 || d.keyRegistry {
		return true
	}
	for path, end := range d.memEnds {
		if info, err := os.Stat(path); err == nil && info.Size() > int64(end) {
			return true
		}
	}
	return false
}

// describe lists the damage for logs and verify, one line each.
func (d *damage) describe() []string {
	out := d.describeFiles()
	if d.lastScan.cuts() {
		out = append(out, "value log "+describeLog(d.lastLog, d.lastScan))
	}
	return out
}

// describeFiles is describe without the newest value log.
func (d *damage) describeFiles() []string {
	var out []string
	if d.rebuilt != nil {
		out = append(out, fmt.Sprintf("MANIFEST does not decode (%v): rebuilt from the %d table file(s)", d.badManifest, len(d.manifest.Tables)))
	}
	for _, t := range d.tables {
		out = append(out, "index table "+t.describe())
	}
	for _, id := range d.missing {
		out = append(out, fmt.Sprintf("index table %06d.sst is listed in MANIFEST but missing", id))
	}
	for _, p := range d.pending {
		out = append(out, fmt.Sprintf("index table %s was set aside as damaged; its entries are restored on the next writable open", filepath.Join(damagedDir, filepath.Base(p))))
	}
	for _, m := range d.memLogs {
		out = append(out, "memtable log "+describeLog(m.path, m.scan))
	}
	if d.keyRegistry {
		out = append(out, "KEYREGISTRY is unreadable (the cache uses no encryption keys)")
	}
	return out
}

func describeLog(path string, s logScan) string {
	var parts []string
	for _, r := range s.damage {
		parts = append(parts, fmt.Sprintf("%d bytes at offset %d", r.end-r.off, r.off))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%d bytes after offset %d do not decode", s.dataEnd-s.validEnd, s.validEnd))
	}
	return fmt.Sprintf("%s: damaged: %s", filepath.Base(path), strings.Join(parts, ", "))
}

// inspect reads dir's MANIFEST and checks every table it lists, the newest
// value log, every memtable log and the key registry, changing nothing. The
// caller holds the folder's lock.
func inspect(dir string) (*damage, error) {
	d := &damage{memEnds: map[string]int{}}
	m, err := readManifest(dir)
	if err != nil {
		d.badManifest = err
		if m, d.rebuilt, err = rebuildManifest(dir); err != nil {
			return nil, fmt.Errorf("%v, and it cannot be rebuilt from the tables: %w", d.badManifest, err)
		}
	}
	d.manifest = m
	ids := make([]uint64, 0, len(m.Tables))
	for id := range m.Tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	results := make([]*table, len(ids))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), 4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id := ids[i]
				path := tablePath(dir, id)
				if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
					continue // results[i] stays nil: missing
				}
				results[i] = readTable(path, id, m.Tables[id].Compression, false)
			}
		}()
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, t := range results {
		switch {
		case t == nil:
			d.missing = append(d.missing, ids[i])
		case t.damaged():
			d.tables = append(d.tables, t)
		}
		if t != nil {
			d.checked++
			d.tableBytes += t.size
		}
	}

	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var maxFid = -1
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".vlog"):
			if fid, err := strconv.Atoi(strings.TrimSuffix(name, ".vlog")); err == nil && fid > maxFid {
				maxFid = fid
			}
		case strings.HasSuffix(name, ".mem"):
			path := filepath.Join(dir, name)
			var lost []salvaged
			s, err := scanFile(path, func(txn []logEntry, clean bool) {
				if !clean {
					lost = appendTxn(lost, txn)
				}
			})
			if err == nil {
				d.memEnds[path] = s.validEnd
				if s.cuts() {
					d.memLogs = append(d.memLogs, memLog{path: path, scan: s, lost: lost})
				}
			}
		}
	}
	if maxFid >= 0 {
		d.lastLog = filepath.Join(dir, fmt.Sprintf("%06d.vlog", maxFid))
		if s, err := scanFile(d.lastLog, nil); err == nil {
			d.lastScan = s
		}
	}
	if pend, err := filepath.Glob(filepath.Join(dir, damagedDir, "*.sst")); err == nil {
		d.pending = pend
	}
	d.keyRegistry = keyRegistryDamaged(dir)
	return d, nil
}

func tablePath(dir string, id uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.sst", id))
}

// scanFile maps a log and scans it (see scanLog).
func scanFile(path string, fn func(txn []logEntry, clean bool)) (logScan, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return logScan{}, err
	}
	defer unmap()
	var scan logScan
	err = faultSafe(path, func() { scan = scanLog(data, fn) })
	return scan, err
}

// keyRegistryDamaged: without encryption KEYREGISTRY is a 16-byte IV and
// Badger's sanity text, and Badger refuses to open when the text differs. A
// longer file holds encryption keys, which this cache never writes: it is
// left to Badger.
func keyRegistryDamaged(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, badger.KeyRegistryFileName))
	if err != nil || len(b) > 28 {
		return false
	}
	return len(b) < 28 || string(b[16:28]) != "Hello Badger"
}

// salvaged is one entry to restore: a version of a key that only a damaged
// file still held.
type salvaged struct {
	key     []byte // user key
	version uint64
	del     bool
	val     []byte
	ptr     []byte // set instead of val: the value is in a value log
}

// salvagedEntry copies an entry of a table or memtable log.
func salvagedEntry(key []byte, meta byte, val []byte) salvaged {
	s := salvaged{key: bytes.Clone(userKey(key)), version: keyVersion(key), del: meta&bitDelete != 0}
	switch {
	case meta&bitValuePointer != 0:
		s.del, s.ptr = false, bytes.Clone(val)
	case !s.del:
		s.val = bytes.Clone(val)
	}
	return s
}

func appendTxn(out []salvaged, txn []logEntry) []salvaged {
	for _, e := range txn {
		out = append(out, salvagedEntry(e.key, e.meta, e.val))
	}
	return out
}

// rebuildManifest builds a MANIFEST that lists every table file in dir at
// level 0 (see the package comment above), with each table's compression
// found by trying each kind against the block checksums.
func rebuildManifest(dir string) (badger.Manifest, []byte, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil {
		return badger.Manifest{}, nil, err
	}
	m := badger.Manifest{Tables: map[uint64]badger.TableManifest{}}
	set := pb.ManifestChangeSet{}
	for _, p := range paths {
		id, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".sst"), 10, 64)
		if err != nil {
			continue
		}
		comp := options.None
		if t, err := readPendingTable(p, m); err == nil {
			comp = t.comp
		}
		m.Tables[id] = badger.TableManifest{Level: 0, Compression: comp}
		set.Changes = append(set.Changes, &pb.ManifestChange{Id: id, Op: pb.ManifestChange_CREATE, Level: 0, Compression: uint32(comp)})
	}
	body, err := proto.Marshal(&set)
	if err != nil {
		return badger.Manifest{}, nil, err
	}
	// magic "Bdgr" | external magic (u16 BE, 0) | Badger's format version (u16 BE)
	out := append([]byte("Bdgr"), 0, 0, 0, badgerManifestVersion)
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)))
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(body, castagnoli))
	return m, append(out, body...), nil
}

// badgerManifestVersion is the MANIFEST format of Badger v4 (badgerMagicVersion).
const badgerManifestVersion = 8

// writeRebuiltManifest sets the damaged MANIFEST aside and puts the rebuilt
// one in its place.
func (d *damage) writeRebuiltManifest(dir string) error {
	if d.rebuilt == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(dir, damagedDir), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(dir, badger.ManifestFilename+".rebuilt")
	if err := os.WriteFile(tmp, d.rebuilt, 0o600); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, badger.ManifestFilename), filepath.Join(dir, damagedDir, badger.ManifestFilename)); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, badger.ManifestFilename)); err != nil {
		return err
	}
	return syncDir(dir)
}

// setAside moves the damaged tables out of the LSM tree before Badger opens:
// into damaged/ first (so a crash leaves them where the next open finds
// them), then out of the MANIFEST, together with tables it lists that are
// gone. Badger then opens without them.
func (d *damage) setAside(dir string) error {
	if len(d.tables) == 0 && len(d.missing) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(dir, damagedDir), 0o755); err != nil {
		return err
	}
	ids := slices.Clone(d.missing)
	for _, t := range d.tables {
		to := filepath.Join(dir, damagedDir, filepath.Base(t.path))
		if err := os.Rename(t.path, to); err != nil {
			return fmt.Errorf("set aside %s: %w", t.path, err)
		}
		d.moved = append(d.moved, to)
		ids = append(ids, t.id)
	}
	b, err := manifestDeletes(ids)
	if err != nil {
		return err
	}
	if err := appendManifest(dir, b); err != nil {
		return fmt.Errorf("drop damaged tables from MANIFEST: %w", err)
	}
	return syncDir(dir)
}

// startNewLog makes the damaged newest value log an old one, which Badger
// never cuts, by adding an empty log after it.
func (d *damage) startNewLog() error {
	if !d.lastScan.cuts() {
		return nil
	}
	base := strings.TrimSuffix(filepath.Base(d.lastLog), ".vlog")
	fid, err := strconv.Atoi(base)
	if err != nil {
		return err
	}
	dir := filepath.Dir(d.lastLog)
	if err := writeEmptyLog(filepath.Join(dir, fmt.Sprintf("%06d.vlog", fid+1))); err != nil {
		return fmt.Errorf("start a new value log after the damaged %s: %w", filepath.Base(d.lastLog), err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// makeView builds a folder of links to dir's files without the damaged
// tables (and with a MANIFEST that no longer lists them), for a read-only
// open that must not change dir. The caller removes it after Close.
func (d *damage) makeView(dir string) (string, error) {
	view, err := os.MkdirTemp("", "ideaflow-cache-view-")
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(view)
		return "", fmt.Errorf("read around damage: %w", err)
	}
	skip := map[string]bool{badger.ManifestFilename: true}
	if d.keyRegistry {
		skip[badger.KeyRegistryFileName] = true // read-only Badger starts an empty one
	}
	ids := slices.Clone(d.missing)
	for _, t := range d.tables {
		skip[filepath.Base(t.path)] = true
		ids = append(ids, t.id)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fail(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fail(err)
	}
	for _, e := range entries {
		name := e.Name()
		if skip[name] || e.IsDir() || !(strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".vlog") ||
			strings.HasSuffix(name, ".mem") || name == badger.KeyRegistryFileName) {
			continue
		}
		if end, ok := d.memEnds[filepath.Join(dir, name)]; ok {
			if end >= logHeaderSize {
				if err := copyPrefix(filepath.Join(dir, name), filepath.Join(view, name), end); err != nil {
					return fail(err)
				}
			}
			continue
		}
		if err := os.Symlink(filepath.Join(abs, name), filepath.Join(view, name)); err != nil {
			return fail(err)
		}
	}
	m := d.rebuilt
	if m == nil {
		if m, err = os.ReadFile(filepath.Join(dir, badger.ManifestFilename)); err != nil {
			return fail(err)
		}
	}
	del, err := manifestDeletes(ids)
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(view, badger.ManifestFilename), append(m, del...), 0o600); err != nil {
		return fail(err)
	}
	return view, nil
}

// copyPrefix copies the first n bytes of from to a new file to.
func copyPrefix(from, to string, n int) error {
	data, unmap, err := mapFile(from)
	if err != nil {
		return err
	}
	defer unmap()
	var werr error
	if err := faultSafe(from, func() { werr = os.WriteFile(to, data[:min(n, len(data))], 0o600) }); err != nil {
		return err
	}
	return werr
}

// restore puts back what the damaged files held, after Badger opened
// without them: every entry of the set-aside tables' sound blocks and of the
// memtable logs' lost transactions, and every value-log entry in the damaged
// blocks' key ranges (every record lives in a value log as well as in the
// tree). An entry is restored only where the cache holds no newer version of
// its key (deletions included), so nothing written since is undone and
// restoring twice, after a crash, is harmless. It returns how many entries
// it wrote.
func (bb *badgerBackend) restore(d *damage) (int, error) {
	logs := newLogReader(bb.dir)
	defer logs.close()
	txn := bb.db.NewTransaction(false)
	defer txn.Discard()
	it := txn.NewIterator(badger.IteratorOptions{AllVersions: true})
	itOpen := true
	defer func() {
		if itOpen {
			it.Close()
		}
	}()
	newer := func(key []byte, version uint64) bool {
		it.Seek(key)
		return !(it.Valid() && bytes.Equal(it.Item().Key(), key) && it.Item().Version() >= version)
	}
	best := map[string]salvaged{}
	keep := func(s salvaged) {
		if !cacheKey(s.key) || !newer(s.key, s.version) {
			return
		}
		if cur, ok := best[string(s.key)]; ok && cur.version >= s.version {
			return
		}
		if s.ptr != nil {
			val, ok := logs.value(s.ptr, s.key, s.version)
			if !ok {
				return // the value is gone too: a miss
			}
			s.val, s.ptr = val, nil
		}
		s.key, s.val = bytes.Clone(s.key), bytes.Clone(s.val)
		if soundValue(string(s.key), s) {
			best[string(s.key)] = s
		}
	}
	for _, m := range d.memLogs {
		for _, s := range m.lost {
			keep(s)
		}
	}
	var ranges []keyRange
	for _, path := range slices.Concat(d.pending, d.moved) {
		t, err := readPendingTable(path, d.manifest)
		if err != nil {
			ranges = append(ranges, keyRange{}) // nothing is known of it: every key
			continue
		}
		ranges = append(ranges, t.salvage(keep)...)
	}
	if len(d.missing) > 0 {
		ranges = append(ranges, keyRange{})
	}
	if len(ranges) > 0 {
		logs.each(func(e logEntry) {
			k := userKey(e.key)
			for _, r := range ranges {
				if r.has(k) {
					keep(salvaged{key: k, version: keyVersion(e.key), val: e.val})
					return
				}
			}
		})
	}
	it.Close()
	itOpen = false
	keys := make([]string, 0, len(best))
	for k := range best {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	units := make([][]op, 0, len(keys))
	for _, k := range keys {
		if s := best[k]; s.del {
			units = append(units, []op{delOp(k)})
		} else {
			units = append(units, []op{setOp(k, s.val)})
		}
	}
	if len(units) > 0 {
		if err := bb.apply(units...); err != nil {
			return 0, fmt.Errorf("restore %d entries: %w", len(units), err)
		}
	}
	for _, p := range slices.Concat(d.pending, d.moved) {
		if err := os.Remove(p); err != nil {
			return len(units), err
		}
	}
	os.Remove(filepath.Join(bb.dir, damagedDir)) // only if empty
	return len(units), nil
}

// cacheKey says whether k is one of the store's keys (not Badger's own,
// which it refuses to be written).
func cacheKey(k []byte) bool {
	for _, p := range []string{prefixRecord, prefixParts, prefixLatest, prefixFailure, prefixRun, prefixMemo} {
		if bytes.HasPrefix(k, []byte(p)) {
			return true
		}
	}
	return false
}

// soundValue checks a salvaged value the cache can check itself (every
// salvaged entry has passed Badger's own checksum as well).
func soundValue(key string, s salvaged) bool {
	if s.del {
		return true
	}
	switch {
	case strings.HasPrefix(key, prefixRecord):
		rec, err := decodeRecord(s.val)
		return err == nil && rec.Key == key[len(prefixRecord):]
	case strings.HasPrefix(key, prefixParts):
		_, err := decodeParts(s.val)
		return err == nil
	case strings.HasPrefix(key, prefixMemo):
		_, err := unsealMemo(s.val)
		return err == nil
	}
	return true
}

// keyRange is a range of user keys, [lo, hi] (nil: unbounded).
type keyRange struct{ lo, hi []byte }

func (r keyRange) has(k []byte) bool {
	return (r.lo == nil || bytes.Compare(k, r.lo) >= 0) && (r.hi == nil || bytes.Compare(k, r.hi) <= 0)
}

// readPendingTable reads a set-aside table with its bytes. Its compression
// is the MANIFEST's when it still lists it; otherwise each kind is tried
// (the checksums say which is right).
func readPendingTable(path string, m badger.Manifest) (*table, error) {
	id, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(path), ".sst"), 10, 64)
	if err != nil {
		return nil, err
	}
	kinds := []options.CompressionType{options.None, options.Snappy, options.ZSTD}
	if tm, ok := m.Tables[id]; ok {
		kinds = []options.CompressionType{tm.Compression}
	}
	var best *table
	sound := func(t *table) int { return len(t.blocks) - t.badBlocks() }
	for _, c := range kinds {
		t := readTable(path, id, c, true)
		if t.err == nil && sound(t) > 0 {
			return t, nil
		}
		if best == nil || sound(t) > sound(best) {
			best = t
		}
	}
	if best.err != nil && len(best.blocks) == 0 {
		return nil, best.err
	}
	return best, nil
}

// salvage passes every entry of the sound blocks to keep and returns the key
// ranges of the damaged ones. For a table whose index is unreadable, the
// blocks found without it are sound, and every key after the last of them
// is in range.
func (t *table) salvage(keep func(salvaged)) []keyRange {
	var ranges []keyRange
	if t.err != nil {
		r := keyRange{}
		if n := len(t.blocks); n > 0 {
			r.lo = userKey(t.blocks[n-1].first)
		}
		ranges = append(ranges, r)
	}
	for i, b := range t.blocks {
		if b.err == nil {
			err := t.entries(i, func(e tableEntry) error {
				keep(salvagedEntry(e.key, e.meta, e.val))
				return nil
			})
			if err == nil {
				continue
			}
		}
		r := keyRange{lo: userKey(b.first)}
		if i+1 < len(t.blocks) {
			r.hi = userKey(t.blocks[i+1].first)
		}
		ranges = append(ranges, r)
	}
	return ranges
}

// logReader reads value logs for restore, mapping each once.
type logReader struct {
	dir   string
	maps  map[uint32][]byte
	unmap []func()
}

func newLogReader(dir string) *logReader {
	return &logReader{dir: dir, maps: map[uint32][]byte{}}
}

func (l *logReader) data(fid uint32) []byte {
	if b, ok := l.maps[fid]; ok {
		return b
	}
	b, unmap, err := mapFile(filepath.Join(l.dir, fmt.Sprintf("%06d.vlog", fid)))
	if err == nil {
		l.unmap = append(l.unmap, unmap)
	}
	l.maps[fid] = b
	return b
}

// value reads the value a pointer names, if its entry is sound and is the
// entry of key at version.
func (l *logReader) value(ptr, key []byte, version uint64) ([]byte, bool) {
	vp, ok := decodeValuePointer(ptr)
	if !ok {
		return nil, false
	}
	var val []byte
	found := false
	// A page that faults is an entry that cannot be read: not restored.
	_ = faultSafe(filepath.Join(l.dir, fmt.Sprintf("%06d.vlog", vp.fid)), func() {
		e, err := readLogEntry(l.data(vp.fid), int(vp.off))
		if err != nil || e.size != int(vp.n) || !bytes.Equal(userKey(e.key), key) || keyVersion(e.key) != version {
			return
		}
		val, found = bytes.Clone(e.val), true
	})
	return val, found
}

// each calls fn for every sound entry of every value log (the entries
// alias the mapped logs: fn copies what it keeps).
func (l *logReader) each(fn func(logEntry)) {
	paths, _ := filepath.Glob(filepath.Join(l.dir, "*.vlog"))
	for _, p := range paths {
		fid, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".vlog"), 10, 32)
		if err != nil {
			continue
		}
		// A log whose pages fault is read up to the fault.
		_ = faultSafe(p, func() {
			scanLog(l.data(uint32(fid)), func(txn []logEntry, _ bool) {
				for _, e := range txn {
					fn(e)
				}
			})
		})
	}
}

func (l *logReader) close() {
	for _, u := range l.unmap {
		u()
	}
}
