package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
)

// maxIDLen bounds keys, addresses and run ids; Badger refuses keys over 64 KiB
// and anything near that is a bug upstream, not a cache key.
const maxIDLen = 4096

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
	// gcMu lets GC see and delete a stable set: writers hold it shared.
	gcMu sync.RWMutex
	now  func() time.Time
}

func newStore(b backend) store {
	return store{b: b, now: func() time.Time { return time.Now().UTC() }}
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
		rec, err = decodeRecord(v)
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

func (s *store) Put(rec *Record) error {
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
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.b.apply(recordOps(rec)); err != nil {
		return fmt.Errorf("put record %s: %w", rec.Key, err)
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
	if err := s.b.apply([]op{setOp(prefixLatest+address, []byte(key))}); err != nil {
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
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.b.apply([]op{setOp(prefixFailure+f.Key, v)}); err != nil {
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
	if err := s.b.apply([]op{delOp(prefixFailure + key)}); err != nil {
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
	if err := s.b.apply([]op{setOp(prefixRun+r.ID, v)}); err != nil {
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

func (s *store) Stats() (Stats, error) {
	var st Stats
	err := s.b.scan(prefixRecord, false, func(k, v []byte) error {
		sum, err := readSummary(v)
		if err != nil {
			return fmt.Errorf("record %s: %w", k[len(prefixRecord):], err)
		}
		st.Records++
		st.OutputBytes += int64(sum.OutputLen)
		st.InputTokens += sum.Usage.InputTokens
		st.OutputTokens += sum.Usage.OutputTokens
		st.CostUSD += sum.Usage.CostUSD
		return nil
	})
	if err == nil {
		st.Failures, err = s.count(prefixFailure)
	}
	if err == nil {
		st.Runs, err = s.count(prefixRun)
	}
	if err == nil {
		st.DiskBytes, err = s.b.diskBytes()
	}
	if err != nil {
		return Stats{}, fmt.Errorf("cache stats: %w", err)
	}
	return st, nil
}

func (s *store) count(prefix string) (int, error) {
	n := 0
	err := s.b.scan(prefix, true, func(_, _ []byte) error {
		n++
		return nil
	})
	return n, err
}

// List calls fn for every record in key order; Entry.Bytes is the size of the
// stored record value. An error from fn stops the walk and is returned as is.
func (s *store) List(fn func(Entry) error) error {
	var fnErr error
	err := s.b.scan(prefixRecord, false, func(k, v []byte) error {
		sum, err := readSummary(v)
		if err != nil {
			return fmt.Errorf("list records: record %s: %w", k[len(prefixRecord):], err)
		}
		fnErr = fn(Entry{Key: sum.Key, Stage: sum.Stage, Address: sum.Address, Bytes: len(v), CreatedAt: sum.CreatedAt})
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

func (s *store) GC(keep map[string]bool) (int, error) {
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	var units [][]op
	removed := 0
	err := s.b.scan(prefixRecord, true, func(k, _ []byte) error {
		if key := string(k[len(prefixRecord):]); !keep[key] {
			units = append(units, []op{delOp(prefixRecord + key), delOp(prefixParts + key)})
			removed++
		}
		return nil
	})
	if err == nil {
		err = s.b.scan(prefixLatest, false, func(k, v []byte) error {
			if !keep[string(v)] {
				units = append(units, []op{delOp(string(k))})
			}
			return nil
		})
	}
	if err == nil {
		err = s.b.scan(prefixFailure, true, func(k, _ []byte) error {
			if !keep[string(k[len(prefixFailure):])] {
				units = append(units, []op{delOp(string(k))})
			}
			return nil
		})
	}
	if err != nil {
		return 0, fmt.Errorf("gc: scan: %w", err)
	}
	if len(units) == 0 {
		return 0, nil
	}
	if err := s.b.apply(units...); err != nil {
		return 0, fmt.Errorf("gc: delete %d entries: %w", len(units), err)
	}
	if err := s.b.reclaim(); err != nil {
		return removed, fmt.Errorf("gc: removed %d records but could not reclaim disk space: %w", removed, err)
	}
	return removed, nil
}

// Verify checks every record's checksum, that it is stored under its own key,
// that its output hashes to OutputDigest, and that its parts decode.
func (s *store) Verify() ([]string, error) {
	var bad []string
	err := s.b.scan(prefixRecord, false, func(k, v []byte) error {
		key := string(k[len(prefixRecord):])
		if _, err := s.checkRecord(key, v); err != nil {
			bad = append(bad, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	return bad, nil
}

// checkRecord fully checks one stored record value and its parts and returns
// the record with its parts.
func (s *store) checkRecord(key string, v []byte) (*Record, error) {
	rec, err := decodeRecord(v)
	if err != nil {
		return nil, err
	}
	if rec.Key != key {
		return nil, fmt.Errorf("%w: record for key %s stored under %s", ErrCorrupt, rec.Key, key)
	}
	if got := DigestOutput(rec.Output); got != rec.OutputDigest {
		return nil, fmt.Errorf("%w: output sha256 %s, recorded %s", ErrCorrupt, got, rec.OutputDigest)
	}
	if rec.Parts, err = s.Parts(key); err != nil {
		return nil, err
	}
	return rec, nil
}

// fullRecord reads a record with its parts, checked as by Verify.
func (s *store) fullRecord(key string) (*Record, error) {
	var rec *Record
	err := s.b.get([]byte(prefixRecord+key), func(v []byte) error {
		var err error
		rec, err = s.checkRecord(key, v)
		return err
	})
	if err != nil {
		return nil, s.lookupErr("read record", key, err)
	}
	return rec, nil
}

func (s *store) Export(w io.Writer, keys map[string]bool) (int, error) {
	bw, err := newBundleWriter(w)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	write := func(key string) error {
		rec, err := s.fullRecord(key)
		if err != nil {
			return err
		}
		return bw.write(rec)
	}
	if keys == nil {
		err = s.b.scan(prefixRecord, true, func(k, _ []byte) error {
			return write(string(k[len(prefixRecord):]))
		})
	} else {
		sorted := make([]string, 0, len(keys))
		for k, ok := range keys {
			if ok {
				sorted = append(sorted, k)
			}
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if err = write(k); errors.Is(err, ErrNotFound) {
				err = nil // keys may name nodes never computed; the count says what was written
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		return bw.count, fmt.Errorf("export: %w", err)
	}
	if err := bw.close(); err != nil {
		return bw.count, fmt.Errorf("export: %w", err)
	}
	return bw.count, nil
}

// importBatch bounds how many records one apply carries during Import.
const importBatch = 256

// Import keeps a local record that passes its checks rather than rewriting it:
// equal keys mean equal inputs. imported counts records written (new or
// replacing a damaged local copy).
func (s *store) Import(r io.Reader) (int, error) {
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	imported := 0
	var units [][]op
	flush := func() error {
		if len(units) == 0 {
			return nil
		}
		if err := s.b.apply(units...); err != nil {
			return err
		}
		imported += len(units)
		units = units[:0]
		return nil
	}
	seen := map[string]bool{}
	err := readBundle(r, func(rec *Record) error {
		if seen[rec.Key] {
			return nil
		}
		seen[rec.Key] = true
		if _, err := s.fullRecord(rec.Key); err == nil {
			return nil
		}
		units = append(units, recordOps(rec))
		if len(units) >= importBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return imported, fmt.Errorf("import: %w", err)
	}
	return imported, nil
}

func (s *store) Close() error {
	return s.b.close()
}
