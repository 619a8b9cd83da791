package cache

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
)

// The memo index is a read-only, sorted copy of every memo in the cache,
// in a file of its own beside Badger's (memoIndexName), written when a
// writable handle closes. A warm run looks a node's memo up there by
// binary search in mapped memory instead of through Badger's levels:
// at 210k nodes a Badger Get was half of a warm run's CPU (about 13 µs a
// node on this 2-core VM), an index lookup is a few hundred nanoseconds.
//
// Badger stays the truth: the index is a copy of it, and is only read
// while it is an exact copy. The safety envelope:
//
//   - The index names a token (16 random bytes); Badger keeps the current
//     one under memoTokenKey. The index is used only when the two are equal.
//   - Before a handle changes any memo (set or delete, whoever writes it:
//     a run, gc, repair, heal), it writes a new token and waits for it to
//     be durable (invalidateMemoIndex), and stops reading the index. So an
//     index whose token Badger holds was built from the memos as they are
//     now: while it is used, a memo absent from it is absent from Badger,
//     and a lookup never touches Badger.
//   - An open that finds damage neither reads the index nor keeps its token
//     valid (a writable open writes a new one): what the heal restores or
//     drops is not in it.
//   - A damaged index can only make lookups miss, never hit wrongly: each
//     entry carries its own key, compared on every hit, and its value
//     carries the memo's checksum (sealMemo), checked on every hit. A miss
//     costs a re-render, as a lost memo does. The header has a checksum of
//     its own, and a file whose size does not match its header is ignored.
//   - Memo keys are hex SHA-256 digests (the engine's input keys); a cache
//     holding any other memo key gets no index.
//
// File layout (integers little-endian):
//
//	header   "IFMEMO01" | token [16] | count u64 | table offset u64 | CRC-32C of the 40 bytes before u32 | 0 u32
//	entries  count x (key [32] | length u32 | sealed memo [length]), in key order
//	table    count x (key [32] | entry offset u64), in key order
const (
	memoIndexName  = "memos.idx"
	memoIndexMagic = "IFMEMO01"
	memoHeaderLen  = 48
	memoTableEntry = 32 + 8
	memoTokenLen   = 16
	// memoTokenKey holds the token of the memos as they are. It is not one
	// of the store's prefixes (cacheKey), so heal never restores an old one.
	memoTokenKey = "x/memo-token"
	// memoIndexMinReads is how many memo lookups a handle must have sent to
	// Badger for its Close to write the index: fewer cost less than writing
	// it. A warm run of 10,000 nodes makes about as many lookups.
	memoIndexMinReads = 10_000
)

// errNoIndex says the cache's memos cannot be indexed (a key that is not a
// hex digest).
var errNoIndex = errors.New("memo key is not a hex digest")

// memoIndex is an opened index file.
type memoIndex struct {
	data  []byte // the whole file
	table []byte // count x memoTableEntry
	count int
	unmap func()
	// starts[p] is the first table entry whose key begins with the 16
	// bits p (starts[65536] = count): a lookup searches one bucket, about
	// count/65536 entries, instead of the whole table's log2(count) steps
	// over 40 MB at 1M memos, each a cache miss.
	starts []uint32
}

// newMemoToken is a fresh token.
func newMemoToken() []byte {
	t := make([]byte, memoTokenLen)
	if _, err := rand.Read(t); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails on supported platforms
	}
	return t
}

// readMemoIndexHeader reads an index file's header: its token, entry count
// and table offset, or why the bytes are not an index.
func readMemoIndexHeader(data []byte) (token []byte, count int, tableOff uint64, err error) {
	if len(data) < memoHeaderLen || string(data[:8]) != memoIndexMagic {
		return nil, 0, 0, fmt.Errorf("%w: memo index has no header", ErrCorrupt)
	}
	if got, want := crc32.Checksum(data[:40], castagnoli), binary.LittleEndian.Uint32(data[40:]); got != want {
		return nil, 0, 0, fmt.Errorf("%w: memo index header checksum %08x, stored %08x", ErrCorrupt, got, want)
	}
	n := binary.LittleEndian.Uint64(data[24:])
	tableOff = binary.LittleEndian.Uint64(data[32:])
	if tableOff < memoHeaderLen || n > uint64(len(data))/memoTableEntry || tableOff+n*memoTableEntry != uint64(len(data)) {
		return nil, 0, 0, fmt.Errorf("%w: memo index of %d bytes does not hold the %d entries its header says", ErrCorrupt, len(data), n)
	}
	return data[8:24], int(n), tableOff, nil
}

// openMemoIndex maps the index at path for the memos of token. It returns
// nil (and no error) when there is no index; an error says the file is
// there but is not an index of these memos (the caller ignores it). count
// is the file's entry count whatever its token (the size of the last index,
// which decides whether rewriting it pays: shouldIndex).
func openMemoIndex(path string, token []byte) (x *memoIndex, count int, err error) {
	data, unmap, err := mapFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	}
	tok, n, tableOff, err := readMemoIndexHeader(data)
	if err != nil {
		unmap()
		return nil, 0, err
	}
	if token == nil || !bytes.Equal(tok, token) {
		unmap()
		return nil, n, nil // of other memos than these: stale
	}
	x = &memoIndex{data: data, table: data[tableOff:], count: n, unmap: unmap, starts: make([]uint32, 1<<16+1)}
	// Buckets from the table's keys, which are in order unless damaged:
	// a damaged table makes some lookups search the wrong bucket, a miss.
	p := 0
	for i := range n {
		for k := int(x.table[i*memoTableEntry])<<8 | int(x.table[i*memoTableEntry+1]); p <= k; p++ {
			x.starts[p] = uint32(i)
		}
	}
	for ; p <= 1<<16; p++ {
		x.starts[p] = uint32(n)
	}
	return x, n, nil
}

// lookup finds the sealed memo of key (its m/ prefix removed). ok is false
// for a key that is not in the index, which (the token holding) means not
// in the cache. A damaged entry is a miss too (see the safety envelope).
func (x *memoIndex) lookup(key []byte) (sealed []byte, ok bool) {
	var want [32]byte
	if len(key) != 64 {
		return nil, false
	}
	if _, err := hex.Decode(want[:], key); err != nil {
		return nil, false
	}
	b := int(want[0])<<8 | int(want[1])
	lo, hi := int(x.starts[b]), int(x.starts[b+1])
	if lo > hi || hi > x.count {
		return nil, false
	}
	i := lo + sort.Search(hi-lo, func(j int) bool {
		return bytes.Compare(x.table[(lo+j)*memoTableEntry:(lo+j)*memoTableEntry+32], want[:]) >= 0
	})
	if i == hi {
		return nil, false
	}
	e := x.table[i*memoTableEntry:]
	if !bytes.Equal(e[:32], want[:]) {
		return nil, false
	}
	off := binary.LittleEndian.Uint64(e[32:])
	if off < memoHeaderLen || off+36 > uint64(len(x.data)) {
		return nil, false
	}
	entry := x.data[off:]
	if !bytes.Equal(entry[:32], want[:]) {
		return nil, false
	}
	n := uint64(binary.LittleEndian.Uint32(entry[32:]))
	if off+36+n > uint64(len(x.data)) {
		return nil, false
	}
	sealed = entry[36 : 36+n]
	if _, err := unsealMemo(sealed); err != nil {
		return nil, false
	}
	return sealed, true
}

func (x *memoIndex) close() {
	if x != nil && x.unmap != nil {
		x.unmap()
	}
}

// writeMemoIndex writes the index of the memos scan yields (in ascending
// key order, as Badger iterates) for token, to a temporary file renamed
// over path once synced, so a crash leaves the old index or the new one.
// It returns the number of memos indexed.
func writeMemoIndex(path string, token []byte, scan func(fn func(key, sealed []byte) error) error) (n int, err error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := w.Write(make([]byte, memoHeaderLen)); err != nil {
		return 0, err
	}
	off := uint64(memoHeaderLen)
	var table []byte
	var prev [32]byte
	var k [32]byte
	var lenb [4]byte
	err = scan(func(key, sealed []byte) error {
		if len(key) != 64 {
			return errNoIndex
		}
		if _, err := hex.Decode(k[:], key); err != nil {
			return errNoIndex
		}
		if n > 0 && bytes.Compare(k[:], prev[:]) <= 0 {
			return fmt.Errorf("memo keys out of order at %x", k)
		}
		prev = k
		table = append(table, k[:]...)
		table = binary.LittleEndian.AppendUint64(table, off)
		binary.LittleEndian.PutUint32(lenb[:], uint32(len(sealed)))
		w.Write(k[:])
		w.Write(lenb[:])
		if _, err := w.Write(sealed); err != nil {
			return err
		}
		off += 36 + uint64(len(sealed))
		n++
		return nil
	})
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(table); err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	hdr := make([]byte, memoHeaderLen)
	copy(hdr, memoIndexMagic)
	copy(hdr[8:], token)
	binary.LittleEndian.PutUint64(hdr[24:], uint64(n))
	binary.LittleEndian.PutUint64(hdr[32:], off)
	binary.LittleEndian.PutUint32(hdr[40:], crc32.Checksum(hdr[:40], castagnoli))
	if _, err := f.WriteAt(hdr, 0); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	return n, syncDir(filepath.Dir(path))
}

// shouldIndex says whether a handle that sent reads memo lookups to Badger
// should write the index at Close, the last index having held last memos
// (0: none, or unreadable). Writing it reads every memo, so it must pay: at
// least after (memoIndexMinReads) lookups, and a quarter of the last index's size
// (a run over a small part of a large shared cache does not rewrite it).
func shouldIndex(reads, after int64, last int) bool {
	return reads >= after && reads*4 >= int64(last)
}
