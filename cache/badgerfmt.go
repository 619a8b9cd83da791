package cache

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/fb"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/proto"
)

// Badger's files, read without Badger.
//
// Badger trusts its files. A damaged table makes it slice out of range,
// often in a goroutine of its own where no recover can stop the crash; a
// damaged log is cut at the damage by a read-write open, with every entry
// after it. So the cache reads the files itself before Badger opens them:
// every table block against its checksum, every log entry against its CRC.
// These readers check each length against the bytes they hold, so damage is
// an error here, never a panic (and each recovers besides, as a second line).
//
// The formats, as Badger v4.9 writes them (badgerfmt_test.go has Badger write
// files and reads them back here, so an upgrade that changes them fails
// there first):
//
//	table        blocks | index | index length (u32 BE) | checksum | checksum length (u32 BE)
//	             (index: flatbuffer fb.TableIndex; checksum: protobuf pb.Checksum of the index)
//	block        entries | entry offsets (u32 each, native order) | entry count (u32 BE) |
//	             checksum | checksum length (u32 BE); the checksum covers all before it
//	block entry  overlap with the block's first key (u16 native) | length of the rest (u16 native) |
//	             the rest of the key | meta | user meta | expiry (uvarint) | value
//	log          key id (u64 BE) | base IV (12 bytes) | entries
//	log entry    meta | user meta | key length, value length, expiry (uvarints) | key | value |
//	             CRC-32C of all before it (u32 BE)
//
// Keys carry their version as 8 bytes BE (MaxUint64 - version) at the end. A
// value log (.vlog) holds values of at least valueThreshold bytes, each entry
// on its own; a memtable log (.mem) holds every write of a memtable not yet
// flushed, in transactions (entries marked bitTxn, closed by a bitFinTxn
// entry whose value is the commit version). A table entry whose meta has
// bitValuePointer holds a pointer (fid, length, offset: u32 native each) to
// its value log entry.

// Meta bits of Badger entries (badger/value.go; unexported there).
const (
	bitDelete       byte = 1 << 0
	bitValuePointer byte = 1 << 1
	bitTxn          byte = 1 << 6
	bitFinTxn       byte = 1 << 7
)

const (
	logHeaderSize = 20 // key id + base IV
	vptrSize      = 12
	maxKeyLen     = 1 << 16 // Badger's own bound on a log entry's key
)

// table is one table file as readTable found it.
type table struct {
	id   uint64
	path string
	size int64
	// err is set when the file, its footer or its index cannot be read:
	// then no block is known and every entry of the table is lost to it.
	err    error
	blocks []tableBlock
	comp   options.CompressionType
	data   []byte // the file, kept only while its entries are salvaged
}

type tableBlock struct {
	first  []byte // the block's first key (with version), from the index
	off, n uint32
	err    error // nil when the block decodes and its checksum holds
}

func (t *table) damaged() bool {
	if t.err != nil {
		return true
	}
	for _, b := range t.blocks {
		if b.err != nil {
			return true
		}
	}
	return false
}

// badBlocks counts the blocks that failed.
func (t *table) badBlocks() int {
	n := 0
	for _, b := range t.blocks {
		if b.err != nil {
			n++
		}
	}
	return n
}

// describe says what is wrong with a damaged table, for logs and verify.
func (t *table) describe() string {
	if t.err != nil {
		return fmt.Sprintf("%s (%d bytes): %v", filepath.Base(t.path), t.size, t.err)
	}
	for _, b := range t.blocks {
		if b.err != nil {
			return fmt.Sprintf("%s (%d bytes): %d of %d blocks fail their checksum, the first at offset %d (%v)",
				filepath.Base(t.path), t.size, t.badBlocks(), len(t.blocks), b.off, b.err)
		}
	}
	return filepath.Base(t.path) + ": sound"
}

// readTable reads and checks every block of the table file at path. keep
// keeps the file's bytes for entries (salvage); checking alone drops them.
func readTable(path string, id uint64, comp options.CompressionType, keep bool) (t *table) {
	t = &table{id: id, path: path, comp: comp}
	defer func() {
		if r := recover(); r != nil {
			t.err = fmt.Errorf("reading it panicked: %v", r)
			t.blocks = nil
		}
		if !keep {
			t.data = nil
		}
	}()
	data, err := os.ReadFile(path)
	if err != nil {
		t.err = err
		return t
	}
	t.data, t.size = data, int64(len(data))
	index, err := tableIndex(data)
	if err != nil {
		t.err = err
		if comp == options.None {
			t.blocksWithoutIndex()
		}
		return t
	}
	var bo fb.BlockOffset
	n := index.OffsetsLength()
	t.blocks = make([]tableBlock, n)
	end := uint64(len(data))
	for i := 0; i < n; i++ {
		b := &t.blocks[i]
		if !index.Offsets(&bo, i) {
			b.err = fmt.Errorf("index entry %d unreadable", i)
			continue
		}
		b.first, b.off, b.n = bytes.Clone(bo.KeyBytes()), bo.Offset(), bo.Len()
		if uint64(b.off)+uint64(b.n) > end {
			b.err = fmt.Errorf("block %d at %d+%d runs past the blocks' end %d", i, b.off, b.n, end)
			continue
		}
		_, b.err = t.block(i)
	}
	return t
}

// maxScannedBlock bounds the blocks blocksWithoutIndex looks for: a block
// holds 4 KiB of entries and at most one more (an inline value is below
// valueThreshold).
const maxScannedBlock = 64 << 10

// blocksWithoutIndex finds the blocks of a table whose index is unreadable,
// from the start: a block ends with its checksum and the checksum's length,
// and the next block starts where it ends. It stops at the first place no
// block ends within reach (the damage, or the index); t.blocks then holds the
// sound blocks before it, and t.err still says the table is damaged.
func (t *table) blocksWithoutIndex() {
	for pos := 0; pos < len(t.data); {
		end := blockEnd(t.data, pos)
		if end < 0 {
			return
		}
		b := tableBlock{off: uint32(pos), n: uint32(end - pos)}
		t.blocks = append(t.blocks, b)
		i := len(t.blocks) - 1
		if err := t.entries(i, func(e tableEntry) error {
			t.blocks[i].first = bytes.Clone(e.key)
			return errStop
		}); err != errStop {
			t.blocks = t.blocks[:i]
			return
		}
		pos = end
	}
}

var errStop = errors.New("stop")

// blockEnd is where the uncompressed block starting at pos ends, or -1.
func blockEnd(data []byte, pos int) int {
	for end := pos + 12; end <= len(data) && end-pos <= maxScannedBlock; end++ {
		chkLen := int(binary.BigEndian.Uint32(data[end-4:]))
		if chkLen < 2 || chkLen > 32 || end-4-chkLen <= pos+8 {
			continue
		}
		var chk pb.Checksum
		if proto.Unmarshal(data[end-4-chkLen:end-4], &chk) != nil || chk.Sum == 0 {
			continue
		}
		if y.VerifyChecksum(data[pos:end-4-chkLen], &chk) == nil {
			return end
		}
	}
	return -1
}

// tableIndex checks a table's footer and index checksum and returns the
// index. The index holds each block's offset, length and first key.
func tableIndex(data []byte) (*fb.TableIndex, error) {
	pos := len(data) - 4
	if pos < 0 {
		return nil, fmt.Errorf("%d bytes is shorter than a table footer", len(data))
	}
	chkLen := int(binary.BigEndian.Uint32(data[pos:]))
	if chkLen <= 0 || chkLen > pos-4 {
		return nil, fmt.Errorf("index checksum length %d does not fit the file", chkLen)
	}
	pos -= chkLen
	var chk pb.Checksum
	if err := proto.Unmarshal(data[pos:pos+chkLen], &chk); err != nil {
		return nil, fmt.Errorf("index checksum unreadable: %v", err)
	}
	pos -= 4
	indexLen := int(binary.BigEndian.Uint32(data[pos:]))
	if indexLen <= 0 || indexLen > pos {
		return nil, fmt.Errorf("index length %d does not fit the file", indexLen)
	}
	index := data[pos-indexLen : pos]
	if err := y.VerifyChecksum(index, &chk); err != nil {
		return nil, fmt.Errorf("index checksum: %v", err)
	}
	return fb.GetRootAsTableIndex(index, 0), nil
}

// block returns block i's entries and entry offsets (decompressed, checked
// against the block's checksum).
func (t *table) block(i int) (entries []byte, err error) {
	b := t.blocks[i]
	raw := t.data[b.off : b.off+b.n]
	switch t.comp {
	case options.None:
	case options.Snappy:
		if raw, err = snappy.Decode(nil, raw); err != nil {
			return nil, fmt.Errorf("snappy: %v", err)
		}
	case options.ZSTD:
		if raw, err = y.ZSTDDecompress(nil, raw); err != nil {
			return nil, fmt.Errorf("zstd: %v", err)
		}
	default:
		return nil, fmt.Errorf("unknown compression %d", t.comp)
	}
	pos := len(raw) - 4
	if pos < 0 {
		return nil, fmt.Errorf("%d-byte block", len(raw))
	}
	chkLen := int(binary.BigEndian.Uint32(raw[pos:]))
	if chkLen <= 0 || chkLen > pos-4 {
		return nil, fmt.Errorf("block checksum length %d", chkLen)
	}
	var chk pb.Checksum
	if err := proto.Unmarshal(raw[pos-chkLen:pos], &chk); err != nil {
		return nil, fmt.Errorf("block checksum unreadable: %v", err)
	}
	body := raw[:pos-chkLen]
	if err := y.VerifyChecksum(body, &chk); err != nil {
		return nil, fmt.Errorf("block checksum: %v", err)
	}
	return body, nil
}

// tableEntry is one entry of a table block.
type tableEntry struct {
	key  []byte // with version
	meta byte
	val  []byte // the value, or a value pointer when meta has bitValuePointer
}

// entries calls fn for every entry of block i, which must be sound.
func (t *table) entries(i int, fn func(tableEntry) error) error {
	body, err := t.block(i)
	if err != nil {
		return err
	}
	// body: entries | offsets | count (u32 BE)
	if len(body) < 4 {
		return errors.New("block without entry count")
	}
	count := int(binary.BigEndian.Uint32(body[len(body)-4:]))
	offStart := len(body) - 4 - 4*count
	if count <= 0 || offStart < 0 {
		return fmt.Errorf("%d entries do not fit a %d-byte block", count, len(body))
	}
	data := body[:offStart]
	offset := func(k int) int { return int(binary.NativeEndian.Uint32(body[offStart+4*k:])) }
	var base, key []byte
	for k := 0; k < count; k++ {
		start, end := offset(k), len(data)
		if k+1 < count {
			end = offset(k + 1)
		}
		if start < 0 || start+4 > end || end > len(data) {
			return fmt.Errorf("entry %d at %d..%d", k, start, end)
		}
		e := data[start:end]
		overlap := int(binary.NativeEndian.Uint16(e[0:]))
		diff := int(binary.NativeEndian.Uint16(e[2:]))
		if 4+diff > len(e) {
			return fmt.Errorf("entry %d key runs past it", k)
		}
		if k == 0 {
			base = e[4 : 4+diff]
		}
		if overlap > len(base) {
			return fmt.Errorf("entry %d overlaps %d bytes of a %d-byte base key", k, overlap, len(base))
		}
		key = append(append(key[:0], base[:overlap]...), e[4:4+diff]...)
		vs := e[4+diff:]
		if len(vs) < 2 {
			return fmt.Errorf("entry %d has no value header", k)
		}
		_, n := binary.Uvarint(vs[2:])
		if n <= 0 {
			return fmt.Errorf("entry %d expiry", k)
		}
		if err := fn(tableEntry{key: key, meta: vs[0], val: vs[2+n:]}); err != nil {
			return err
		}
	}
	return nil
}

// valuePointer is where a value log entry lives.
type valuePointer struct{ fid, n, off uint32 }

func decodeValuePointer(b []byte) (valuePointer, bool) {
	if len(b) < vptrSize {
		return valuePointer{}, false
	}
	return valuePointer{
		fid: binary.NativeEndian.Uint32(b[0:]),
		n:   binary.NativeEndian.Uint32(b[4:]),
		off: binary.NativeEndian.Uint32(b[8:]),
	}, true
}

// logEntry is one entry of a value or memtable log.
type logEntry struct {
	off, size int
	meta      byte
	key, val  []byte // key with version; both alias the log's bytes
}

// errLogEnd: the entry at an offset is the zero entry that ends a log (or
// the log's bytes end there).
var errLogEnd = errors.New("end of log")

// readLogEntry decodes the log entry at off, as Badger's safeRead does, and
// checks its CRC. It fails with errLogEnd at the end of the entries.
func readLogEntry(data []byte, off int) (logEntry, error) {
	e := logEntry{off: off}
	if off < 0 || off+2 > len(data) {
		return e, errLogEnd
	}
	p := off + 2
	var fields [3]uint64
	for i := range fields {
		v, n := binary.Uvarint(data[p:])
		switch {
		case n == 0:
			return e, errLogEnd // the bytes end mid-header: a torn write
		case n < 0:
			return e, fmt.Errorf("header field overflows at %d", p)
		}
		fields[i], p = v, p+n
	}
	// Badger keeps the lengths as uint32.
	klen, vlen := int(uint32(fields[0])), int(uint32(fields[1]))
	if klen == 0 {
		return e, errLogEnd
	}
	if klen > maxKeyLen {
		return e, fmt.Errorf("key length %d at %d", klen, off)
	}
	end := p + klen + vlen
	if end+crc32.Size > len(data) || end < p {
		return e, fmt.Errorf("entry at %d runs past the log's end", off)
	}
	if got, want := crc32.Checksum(data[off:end], castagnoli), binary.BigEndian.Uint32(data[end:]); got != want {
		return e, fmt.Errorf("entry at %d fails its CRC", off)
	}
	e.meta, e.key, e.val = data[off], data[p:p+klen], data[p+klen:end]
	e.size = end + crc32.Size - off
	return e, nil
}

// plausibleEntry says whether bytes at off could start an entry this cache
// wrote: it never sets user meta or an expiry, and Badger uses only the low
// four meta bits and the two transaction bits. Resynchronising after damage
// tries this before paying for a CRC.
func plausibleEntry(data []byte, off int) bool {
	return off+4 < len(data) && data[off]&0x30 == 0 && data[off+1] == 0
}

// logRange is a byte range of a log.
type logRange struct{ off, end int }

// logScan is what scanLog found in a log.
type logScan struct {
	// validEnd is where Badger's read-write open cuts the log: after the
	// last whole entry (or whole transaction) before the first damage.
	validEnd int
	// dataEnd is the offset after the log's last non-zero byte. Logs are
	// preallocated and zero-filled, so bytes between validEnd and dataEnd
	// are what a cut would lose.
	dataEnd int
	damage  []logRange
	entries int
}

// scanLog reads every entry of a log's bytes from its header on. Past a
// damaged range it resynchronises on the next entry whose CRC holds, so the
// entries after the damage are found too. fn (if not nil) gets whole
// transactions: one entry, or the entries of one transaction in a memtable
// log (without its marker); clean is false from the first damage on, where
// Badger's read-write open would cut the log, and for the sound entries of a
// transaction the damage cut short. The entries alias data.
func scanLog(data []byte, fn func(txn []logEntry, clean bool)) (s logScan) {
	s.dataEnd = len(bytes.TrimRight(data, "\x00"))
	s.validEnd = logHeaderSize
	if len(data) < logHeaderSize {
		s.validEnd = 0
		if s.dataEnd > 0 {
			s.damage = append(s.damage, logRange{0, s.dataEnd})
		}
		return s
	}
	defer func() {
		if r := recover(); r != nil { // a second line: the reader checks its bounds
			s.damage = append(s.damage, logRange{s.validEnd, s.dataEnd})
		}
	}()
	var txn []logEntry
	var txnTs uint64
	clean := true // no damage seen yet: validEnd still moves
	// broken passes on the entries of a transaction cut short (by damage, or
	// by the next one starting): each holds by its own CRC. Badger drops
	// them with everything after.
	broken := func() {
		if len(txn) > 0 && fn != nil {
			fn(txn, false)
		}
		txn, clean = txn[:0], false
	}
	off := logHeaderSize
	for off < s.dataEnd {
		e, err := readLogEntry(data, off)
		if err == nil {
			off += e.size
			s.entries++
			switch {
			case e.meta&bitTxn != 0:
				ts := y.ParseTs(e.key)
				if len(txn) > 0 && ts != txnTs {
					broken()
				}
				txn, txnTs = append(txn, e), ts
			case e.meta&bitFinTxn != 0:
				ts, perr := strconv.ParseUint(string(e.val), 10, 64)
				if perr != nil || len(txn) == 0 || ts != txnTs {
					broken()
					continue
				}
				if fn != nil {
					fn(txn, clean)
				}
				txn = txn[:0]
				if clean {
					s.validEnd = off
				}
			default:
				if len(txn) > 0 {
					broken()
				}
				if fn != nil {
					fn([]logEntry{e}, clean)
				}
				if clean {
					s.validEnd = off
				}
			}
			continue
		}
		// Damage (a zero entry before the data's end is damage too): find
		// the next entry that holds.
		broken()
		start := off
		off++
		for off < s.dataEnd {
			if plausibleEntry(data, off) {
				if e, err := readLogEntry(data, off); err == nil && len(e.key) > 8 {
					break
				}
			}
			off++
		}
		s.damage = append(s.damage, logRange{start, off})
	}
	if len(txn) > 0 {
		broken() // the log ends inside a transaction
	}
	return s
}

// cuts says whether Badger's read-write open would cut data from the log.
func (s logScan) cuts() bool { return s.validEnd < s.dataEnd }

// readManifest reads the MANIFEST in dir without changing it.
func readManifest(dir string) (badger.Manifest, error) {
	f, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
	if err != nil {
		return badger.Manifest{}, err
	}
	defer f.Close()
	m, _, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		return badger.Manifest{}, fmt.Errorf("MANIFEST: %v", err)
	}
	return m, nil
}

// manifestDeletes encodes one MANIFEST change set that deletes the tables:
// length (u32 BE) | CRC-32C (u32 BE) | protobuf pb.ManifestChangeSet, as
// Badger appends its own changes.
func manifestDeletes(ids []uint64) ([]byte, error) {
	set := pb.ManifestChangeSet{}
	for _, id := range ids {
		set.Changes = append(set.Changes, &pb.ManifestChange{Id: id, Op: pb.ManifestChange_DELETE})
	}
	buf, err := proto.Marshal(&set)
	if err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(buf)))
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(buf, castagnoli))
	return append(out, buf...), nil
}

// appendManifest appends b to dir's MANIFEST durably.
func appendManifest(dir string, b []byte) error {
	f, err := os.OpenFile(filepath.Join(dir, badger.ManifestFilename), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeEmptyLog writes a value log that holds only its header (key id 0:
// no encryption; a fresh base IV), as Badger's bootstrap does.
func writeEmptyLog(path string) error {
	buf := make([]byte, logHeaderSize)
	if _, err := rand.Read(buf[8:]); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// userKey and version split a Badger key.
func userKey(k []byte) []byte {
	if len(k) < 8 {
		return nil
	}
	return k[:len(k)-8]
}

func keyVersion(k []byte) uint64 {
	if len(k) < 8 {
		return 0
	}
	return math.MaxUint64 - binary.BigEndian.Uint64(k[len(k)-8:])
}
