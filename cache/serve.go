//go:build unix

package cache

// Reads while a run holds the cache. Badger locks the folder exclusively
// for a writer (flock LOCK_EX), so a read-only open beside a run fails with
// ErrLocked. The running process therefore answers reads itself on a unix
// socket beside the cache (SocketPath), and a read-only open that finds the
// lock held reads through it (DialServed): plan, show, export, report and
// cache stats then see the run's progress.
//
// Each connection reads one Badger snapshot (a read transaction opened when
// it connects), so a command sees one consistent state of the cache however
// long it reads, the way a read-only open would. The protocol is the
// backend's reads and nothing else: get, has, a paged scan, the disk size.
// The socket is mode 0600 (the user's own commands only), and a reader
// never takes a lock the run's writes wait for: Badger reads are concurrent
// with its commits. A run killed before it removed its socket leaves a
// stale one: the next run replaces it (it holds the lock, so no other run
// serves there), and a reader that cannot connect reports ErrLocked as
// before.

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// SocketName is the socket's name in the cache folder.
const SocketName = "serve.sock"

// maxSocketPath is below the 104 bytes (macOS) and 108 (Linux) a unix
// socket address may take.
const maxSocketPath = 100

// SocketPath is where the run holding dir serves reads: <dir>/serve.sock,
// or, when that path is too long for a socket address, a name in the
// temporary folder derived from dir's absolute path.
func SocketPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if p := filepath.Join(abs, SocketName); len(p) <= maxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(os.TempDir(), "ideaflow-"+hex.EncodeToString(sum[:8])+".sock")
}

// Tuning of the server. A session holds a snapshot; one left idle this long
// is closed, so a reader that hangs cannot pin old versions for the rest of
// a run (long enough for a reader loading a large experiment between two
// reads). At most maxSessions read at once; more wait to be accepted, which
// costs the reader time, never the run.
const (
	sessionIdle  = 5 * time.Minute
	maxSessions  = 4
	scanPageKeys = 512
	scanPageSize = 1 << 20 // bytes of values per scan page
)

// Request operations.
const (
	opGet  = 'g'
	opHas  = 'h'
	opScan = 's' // prefix, start after, keys only
	opDisk = 'd'
)

// Response statuses.
const (
	stOK      = 0
	stNoKey   = 1
	stCorrupt = 2
	stErr     = 3
	stMore    = 4 // a scan page that is not the last
)

// Server answers reads of a writable cache on its socket.
type Server struct {
	path  string
	ln    *net.UnixListener
	db    *badger.DB
	bb    *badgerBackend
	slots chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
	done  bool
}

// Serve starts answering reads of b on SocketPath(b.Dir()) until Close,
// which b's owner calls before closing b. Only a writable cache serves: its
// process holds the folder's lock, so a socket already there is stale.
func (b *Badger) Serve() (*Server, error) {
	bb, ok := b.b.(*badgerBackend)
	if !ok || bb.readOnly {
		return nil, errors.New("serve cache: only a writable cache serves reads")
	}
	path := SocketPath(b.dir)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("serve cache: remove stale socket %s: %w", path, err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("serve cache: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("serve cache: %w", err)
	}
	s := &Server{path: path, ln: ln, db: b.db, bb: bb, slots: make(chan struct{}, maxSessions), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Close stops serving: readers still connected get an error (the run is
// over; their command can open the cache itself now), and the socket goes.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return nil
	}
	s.done = true
	err := s.ln.Close() // removes the socket file
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		s.slots <- struct{}{}
		c, err := s.ln.Accept()
		if err != nil {
			<-s.slots
			return
		}
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			c.Close()
			<-s.slots
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.slots }()
			s.session(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// session answers one reader's requests from one snapshot.
func (s *Server) session(c net.Conn) {
	if s.bb.closed.Load() {
		return
	}
	txn := s.db.NewTransaction(false)
	defer txn.Discard()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	for {
		c.SetDeadline(time.Now().Add(sessionIdle))
		op, err := r.ReadByte()
		if err != nil {
			return
		}
		key, err := readBlob(r)
		if err != nil {
			return
		}
		switch op {
		case opGet:
			s.get(w, txn, key)
		case opHas:
			s.has(w, txn, key)
		case opScan:
			after, err := readBlob(r)
			if err != nil {
				return
			}
			keysOnly, err := r.ReadByte()
			if err != nil {
				return
			}
			s.scan(w, txn, string(key), after, keysOnly == 1)
		case opDisk:
			n, err := s.bb.diskBytes()
			if err != nil {
				writeErr(w, err)
			} else {
				w.WriteByte(stOK)
				w.Write(binary.BigEndian.AppendUint64(nil, uint64(n)))
			}
		default:
			return
		}
		if w.Flush() != nil {
			return
		}
	}
}

func (s *Server) get(w *bufio.Writer, txn *badger.Txn, key []byte) {
	var val []byte
	err := func() (err error) {
		defer recoverRead("key", key, &err)
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		val, err = item.ValueCopy(nil)
		return err
	}()
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		w.WriteByte(stNoKey)
	case err != nil:
		writeErr(w, err)
	default:
		w.WriteByte(stOK)
		writeBlob(w, val)
	}
}

func (s *Server) has(w *bufio.Writer, txn *badger.Txn, key []byte) {
	err := func() (err error) {
		defer recoverRead("key", key, &err)
		_, err = txn.Get(key)
		return err
	}()
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		w.WriteByte(stNoKey)
	case err != nil:
		writeErr(w, err)
	default:
		w.WriteByte(stOK)
	}
}

// scan writes one page of the keys under prefix after after: entries, then
// stMore (ask again after the last key) or stOK (the end).
func (s *Server) scan(w *bufio.Writer, txn *badger.Txn, prefix string, after []byte, keysOnly bool) {
	err := func() (err error) {
		defer recoverRead("prefix", []byte(prefix), &err)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix), PrefetchValues: !keysOnly, PrefetchSize: 64})
		defer it.Close()
		if len(after) > 0 {
			it.Seek(after)
		} else {
			it.Rewind()
		}
		n, size := 0, 0
		for ; it.Valid(); it.Next() {
			item := it.Item()
			if len(after) > 0 && string(item.Key()) == string(after) {
				continue
			}
			if n == scanPageKeys || size >= scanPageSize {
				w.WriteByte(stMore)
				return nil
			}
			var val []byte
			if !keysOnly {
				if val, err = item.ValueCopy(nil); err != nil {
					return err
				}
			}
			w.WriteByte(stOK)
			writeBlob(w, item.Key())
			writeBlob(w, val)
			n++
			size += len(val)
		}
		w.WriteByte(stNoKey) // the end
		return nil
	}()
	if err != nil {
		writeErr(w, err)
	}
}

func writeErr(w *bufio.Writer, err error) {
	st := byte(stErr)
	if errors.Is(err, ErrCorrupt) {
		st = stCorrupt
	}
	w.WriteByte(st)
	writeBlob(w, []byte(err.Error()))
}

func writeBlob(w *bufio.Writer, b []byte) {
	w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
	w.Write(b)
}

// maxBlob refuses absurd lengths from a broken peer before allocating.
const maxBlob = 2 * MaxRecordBytes

func readBlob(r *bufio.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxBlob {
		return nil, fmt.Errorf("message of %d bytes", size)
	}
	b := make([]byte, size)
	_, err := io.ReadFull(r, b)
	return b, err
}

// Served is a cache read through the socket of the run that holds it: a
// Store whose writes fail with ErrReadOnly.
type Served struct {
	store
	dir, socket string
}

// ErrServeGone is wrapped by reads of a Served cache whose run ended (or
// closed the connection) while they read: run the command again.
var ErrServeGone = errors.New("the run serving the cache stopped while it was read")

// DialServed connects to the run that holds dir (see SocketPath). It fails
// when nothing answers there: no run serves, or the socket is stale.
func DialServed(dir string) (*Served, error) {
	path := SocketPath(dir)
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("read cache %s through %s: %w", dir, path, err)
	}
	rb := &remoteBackend{c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c), dir: dir}
	return &Served{store: newStore(rb, dir), dir: dir, socket: path}, nil
}

// Dir is the cache folder.
func (s *Served) Dir() string { return s.dir }

// Socket is the socket it reads through.
func (s *Served) Socket() string { return s.socket }

// Recovery is empty: the run's open repaired what it found.
func (s *Served) Recovery() Recovery { return Recovery{} }

// remoteBackend is the backend over a server connection; requests are one
// at a time, so a scan asks page by page and the store may read (get)
// between pages, as Export does.
type remoteBackend struct {
	mu     sync.Mutex
	c      net.Conn
	r      *bufio.Reader
	w      *bufio.Writer
	dir    string
	closed bool
}

func (rb *remoteBackend) request(op byte, key []byte, extra ...[]byte) error {
	if rb.closed {
		return ErrClosed
	}
	rb.w.WriteByte(op)
	writeBlob(rb.w, key)
	for _, e := range extra {
		rb.w.Write(e)
	}
	if err := rb.w.Flush(); err != nil {
		return rb.gone(err)
	}
	return nil
}

func (rb *remoteBackend) gone(err error) error {
	return fmt.Errorf("%w (%s): %v; run the command again", ErrServeGone, rb.dir, err)
}

// status reads a response status, turning error statuses into errors.
func (rb *remoteBackend) status() (byte, error) {
	st, err := rb.r.ReadByte()
	if err != nil {
		return 0, rb.gone(err)
	}
	if st == stErr || st == stCorrupt {
		msg, err := readBlob(rb.r)
		if err != nil {
			return 0, rb.gone(err)
		}
		if st == stCorrupt {
			return st, fmt.Errorf("%w: %s", ErrCorrupt, strings.TrimPrefix(string(msg), ErrCorrupt.Error()+": "))
		}
		return st, errors.New(string(msg))
	}
	return st, nil
}

func (rb *remoteBackend) get(key []byte, fn func([]byte) error) error {
	rb.mu.Lock()
	if err := rb.request(opGet, key); err != nil {
		rb.mu.Unlock()
		return err
	}
	st, err := rb.status()
	var val []byte
	if err == nil && st == stOK {
		if val, err = readBlob(rb.r); err != nil {
			err = rb.gone(err)
		}
	}
	rb.mu.Unlock()
	switch {
	case err != nil:
		return err
	case st == stNoKey:
		return errNoKey
	}
	return fn(val)
}

func (rb *remoteBackend) has(key []byte) (bool, error) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if err := rb.request(opHas, key); err != nil {
		return false, err
	}
	st, err := rb.status()
	return err == nil && st == stOK, err
}

type scanEntry struct{ key, val []byte }

func (rb *remoteBackend) scan(prefix string, keysOnly bool, fn func(key, val []byte) error) error {
	var after []byte
	for {
		page, more, err := rb.scanPage(prefix, after, keysOnly)
		if err != nil {
			return err
		}
		for _, e := range page {
			if err := fn(e.key, e.val); err != nil {
				return err
			}
		}
		if !more || len(page) == 0 {
			return nil
		}
		after = page[len(page)-1].key
	}
}

func (rb *remoteBackend) scanPage(prefix string, after []byte, keysOnly bool) ([]scanEntry, bool, error) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	var ko byte
	if keysOnly {
		ko = 1
	}
	var extra []byte
	extra = binary.BigEndian.AppendUint32(extra, uint32(len(after)))
	extra = append(append(extra, after...), ko)
	if err := rb.request(opScan, []byte(prefix), extra); err != nil {
		return nil, false, err
	}
	var page []scanEntry
	for {
		st, err := rb.status()
		if err != nil {
			return nil, false, err
		}
		switch st {
		case stMore:
			return page, true, nil
		case stNoKey:
			return page, false, nil
		}
		k, err := readBlob(rb.r)
		if err != nil {
			return nil, false, rb.gone(err)
		}
		v, err := readBlob(rb.r)
		if err != nil {
			return nil, false, rb.gone(err)
		}
		if keysOnly {
			v = nil
		}
		page = append(page, scanEntry{k, v})
	}
}

func (rb *remoteBackend) apply(...[]op) error {
	return fmt.Errorf("%w (%s, read through the run that holds it)", ErrReadOnly, rb.dir)
}

func (rb *remoteBackend) diskBytes() (int64, error) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if err := rb.request(opDisk, nil); err != nil {
		return 0, err
	}
	st, err := rb.status()
	if err != nil {
		return 0, err
	}
	if st != stOK {
		return 0, rb.gone(fmt.Errorf("status %d", st))
	}
	var n [8]byte
	if _, err := io.ReadFull(rb.r, n[:]); err != nil {
		return 0, rb.gone(err)
	}
	return int64(binary.BigEndian.Uint64(n[:])), nil
}

func (rb *remoteBackend) reclaim() error { return rb.apply() }

func (rb *remoteBackend) close() error {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.closed {
		return nil
	}
	rb.closed = true
	return rb.c.Close()
}
