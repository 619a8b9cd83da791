package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Key layout shared by every backend. Parts live apart from records so a hit
// decodes only the record.
const (
	prefixRecord  = "r/"   // r/<key>      -> encodeRecord
	prefixParts   = "p/"   // p/<key>      -> encodeParts
	prefixLatest  = "l/"   // l/<address>  -> key
	prefixFailure = "f/"   // f/<key>      -> JSON Failure
	prefixRun     = "run/" // run/<id>     -> JSON RunRecord
	prefixMemo    = "m/"   // m/<input key> -> memo value (starts with a record key)
)

// maxIDLen bounds keys, addresses and run ids; Badger refuses keys over 64 KiB
// and anything near that is a bug upstream, not a cache key.
const maxIDLen = 4096

// MaxRecordBytes caps a stored record value (after compression). Badger
// refuses values over its value-log file size (64 MiB here) with an error
// that names neither the record nor the limit, and a value near that size
// would fill a value-log file by itself; 32 MiB is far above any real answer
// (raw text is stored once, see codec.go) and leaves that headroom.
const MaxRecordBytes = 32 << 20

// ErrTooLarge is wrapped by Put errors for a record over MaxRecordBytes.
var ErrTooLarge = errors.New("record too large for the cache")

// errNoKey is a backend's "absent", translated to ErrNotFound by store.
var errNoKey = errors.New("key absent")

// op is one write: set key to val, or delete key.
type op struct {
	key, val []byte
	del      bool
}

func setOp(key string, val []byte) op { return op{key: []byte(key), val: val} }
func delOp(key string) op             { return op{key: []byte(key), del: true} }

// backend is the ordered key-value store under a store.
type backend interface {
	// get calls fn with the value of key (valid only during fn) or returns errNoKey.
	get(key []byte, fn func(val []byte) error) error
	// has reports whether key is present without reading its value.
	has(key []byte) (bool, error)
	// scan calls fn for each key with prefix in ascending order; val is nil when
	// keysOnly is set and is valid only during fn.
	scan(prefix string, keysOnly bool, fn func(key, val []byte) error) error
	// apply writes each unit atomically; all are durable when it returns nil.
	apply(units ...[]op) error
	// diskBytes is the space the store occupies.
	diskBytes() (int64, error)
	// reclaim gives space freed by deletions back, after GC.
	reclaim() error
	close() error
}

// store implements Store over a backend.
type store struct {
	b backend
	// where names the store in errors: its directory, or "memory".
	where string
	// gcMu lets GC see and delete a stable set: writers hold it shared.
	gcMu sync.RWMutex
	now  func() time.Time
}

func newStore(b backend, where string) store {
	return store{b: b, where: where, now: func() time.Time { return time.Now().UTC() }}
}

// apply is every write's way to the backend, so that a full disk is reported
// as ErrDiskFull whichever layer noticed it.
func (s *store) apply(units ...[]op) error {
	return classifyWriteErr(s.where, s.b.apply(units...))
}

func checkID(what, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("empty %s", what)
	case len(id) > maxIDLen:
		return fmt.Errorf("%s of %d bytes exceeds %d", what, len(id), maxIDLen)
	}
	return nil
}

func (s *store) Get(key string) (*Record, error) {
	var rec *Record
	err := s.b.get([]byte(prefixRecord+key), func(v []byte) error {
		var err error
		if rec, err = decodeRecord(v); err == nil && rec.Key != key {
			// A sound value under the wrong key (a stale pointer into a
			// reused log offset): never serve another node's record.
			err = fmt.Errorf("%w: holds the record of %s", ErrCorrupt, rec.Key)
		}
		return err
	})
	if err != nil {
		return nil, s.lookupErr("get record", key, err)
	}
	return rec, nil
}

func (s *store) lookupErr(what, key string, err error) error {
	if errors.Is(err, errNoKey) {
		return ErrNotFound
	}
	return fmt.Errorf("%s %s: %w", what, key, err)
}

func (s *store) Parts(key string) ([]Part, error) {
	var parts []Part
	err := s.b.get([]byte(prefixParts+key), func(v []byte) error {
		var err error
		parts, err = decodeParts(v)
		return err
	})
	if errors.Is(err, errNoKey) {
		// A record stored without parts has no p/ entry; tell it from no record.
		err = s.b.get([]byte(prefixRecord+key), func([]byte) error { return nil })
		if err == nil {
			return nil, nil
		}
	}
	if err != nil {
		return nil, s.lookupErr("get parts of", key, err)
	}
	return parts, nil
}

func (s *store) Put(rec *Record) error { return s.put(rec) }

// put stores rec and the extra index entries in one atomic, durable write.
func (s *store) put(rec *Record, extra ...op) error {
	if rec == nil {
		return errors.New("put record: nil record")
	}
	if err := checkID("record key", rec.Key); err != nil {
		return fmt.Errorf("put record: %w", err)
	}
	digest := DigestOutput(rec.Output)
	switch rec.OutputDigest {
	case "":
		rec.OutputDigest = digest
	case digest:
	default:
		return fmt.Errorf("put record %s: output digest %s does not match output (sha256 %s)", rec.Key, rec.OutputDigest, digest)
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = s.now()
	}
	ops := recordOps(rec)
	for _, o := range ops {
		if len(o.val) > MaxRecordBytes {
			return fmt.Errorf("put record %s: %w: %s is %d bytes after compression, over the %d-byte (%d MiB) limit; output %d bytes, raw text %d bytes, %d attempts",
				rec.Key, ErrTooLarge, o.key[:2], len(o.val), MaxRecordBytes, MaxRecordBytes>>20, len(rec.Output), len(rec.Raw), len(rec.Attempts))
		}
	}
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.apply(append(ops, extra...)); err != nil {
		return fmt.Errorf("put record %s: %w", rec.Key, err)
	}
	return nil
}

// Drop deletes the record under key and its parts, so that the next run
// recomputes it: the repair for a record that reads as ErrCorrupt. Index
// entries naming key are left; they cost a miss (Has reports false), and
// Repair removes them. Dropping an absent key is not an error.
func (s *store) Drop(key string) error {
	if err := checkID("record key", key); err != nil {
		return fmt.Errorf("drop record: %w", err)
	}
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.apply([]op{delOp(prefixRecord + key), delOp(prefixParts + key)}); err != nil {
		return fmt.Errorf("drop record %s: %w", key, err)
	}
	return nil
}

// recordOps writes a record and its parts together, removing stale parts when
// the record is rewritten without any.
func recordOps(rec *Record) []op {
	partsOp := delOp(prefixParts + rec.Key)
	if len(rec.Parts) > 0 {
		partsOp = setOp(prefixParts+rec.Key, encodeParts(rec.Parts))
	}
	return []op{setOp(prefixRecord+rec.Key, encodeRecord(rec)), partsOp}
}

func (s *store) Latest(address string) (string, bool, error) {
	var key string
	err := s.b.get([]byte(prefixLatest+address), func(v []byte) error {
		key = string(v)
		return nil
	})
	switch {
	case errors.Is(err, errNoKey):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("get latest key of %s: %w", address, err)
	}
	return key, true, nil
}

func (s *store) SetLatest(address, key string) error {
	if err := checkID("node address", address); err != nil {
		return fmt.Errorf("set latest: %w", err)
	}
	if err := checkID("record key", key); err != nil {
		return fmt.Errorf("set latest of %s: %w", address, err)
	}
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.apply([]op{setOp(prefixLatest+address, []byte(key))}); err != nil {
		return fmt.Errorf("set latest of %s: %w", address, err)
	}
	return nil
}

func (s *store) PutFailure(f *Failure) error {
	if f == nil {
		return errors.New("put failure: nil failure")
	}
	if err := checkID("failure key", f.Key); err != nil {
		return fmt.Errorf("put failure: %w", err)
	}
	if f.CreatedAt.IsZero() {
		f.CreatedAt = s.now()
	}
	v, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("put failure %s: %w", f.Key, err)
	}
	if len(v) > MaxRecordBytes {
		return fmt.Errorf("put failure %s: %w: %d bytes, over the %d MiB limit", f.Key, ErrTooLarge, len(v), MaxRecordBytes>>20)
	}
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.apply([]op{setOp(prefixFailure+f.Key, v)}); err != nil {
		return fmt.Errorf("put failure %s: %w", f.Key, err)
	}
	return nil
}

func (s *store) Failure(key string) (*Failure, error) {
	var f Failure
	err := s.b.get([]byte(prefixFailure+key), func(v []byte) error {
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return nil
	})
	if err != nil {
		return nil, s.lookupErr("get failure", key, err)
	}
	return &f, nil
}

func (s *store) DeleteFailure(key string) error {
	if err := checkID("failure key", key); err != nil {
		return fmt.Errorf("delete failure: %w", err)
	}
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.apply([]op{delOp(prefixFailure + key)}); err != nil {
		return fmt.Errorf("delete failure %s: %w", key, err)
	}
	return nil
}

func (s *store) PutRun(r *RunRecord) error {
	if r == nil {
		return errors.New("put run: nil run")
	}
	if err := checkID("run id", r.ID); err != nil {
		return fmt.Errorf("put run: %w", err)
	}
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.apply([]op{setOp(prefixRun+r.ID, v)}); err != nil {
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	return nil
}

// Runs returns every run record, oldest first (ties by id).
func (s *store) Runs() ([]*RunRecord, error) {
	var runs []*RunRecord
	err := s.b.scan(prefixRun, false, func(k, v []byte) error {
		var r RunRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("run %s: %w: %v", k[len(prefixRun):], ErrCorrupt, err)
		}
		runs = append(runs, &r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].Started.Equal(runs[j].Started) {
			return runs[i].Started.Before(runs[j].Started)
		}
		return runs[i].ID < runs[j].ID
	})
	return runs, nil
}

func (s *store) Close() error {
	return s.b.close()
}
