// Package remote is a shared tier under a local cache: the cache's
// immutable, content-addressed records (cache.Records) also live in an
// object store that every user and machine of a lab can read and write,
// while memos, latest keys, failures and runs (cache.Index) stay local.
//
// Reads go through (a local miss asks the remote; a hit there is stored
// locally, so the next read is local), writes go through (a record put
// locally is put remotely too, write-once: If-None-Match: *, so two users
// computing the same key never overwrite each other). Object names are
// sharded by the key's first hex digits. Every object read is checked (its
// checksum, its key, its output digest): a corrupt object is a miss, counted
// and logged, never an answer.
package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
)

// Objects is the object store under a tier: S3 (s3.go) or a test double.
type Objects interface {
	// Get returns the object's bytes, or an error wrapping ErrMissing.
	Get(ctx context.Context, name string) ([]byte, error)
	// PutIfAbsent writes the object unless one of that name exists: an
	// existing object is left as it is and is not an error (write-once).
	// created says whether this call wrote it.
	PutIfAbsent(ctx context.Context, name string, body []byte) (created bool, err error)
	// Where names the store in messages (never with credentials).
	Where() string
}

// ErrMissing is an absent object.
var ErrMissing = errors.New("no such object")

// ErrIntegrity is an object the store's own checks refused on the way
// (a response checksum that does not match the body): corrupt, as one
// that fails Decode.
var ErrIntegrity = errors.New("object failed its integrity check")

// Name is the object name of key's record: r/<2 hex>/<2 hex>/<key>, so a
// store that partitions by name prefix spreads the records evenly (keys
// are SHA-256 hex digests).
func Name(key string) string {
	if len(key) < 4 {
		return "r/_/" + key
	}
	return "r/" + key[:2] + "/" + key[2:4] + "/" + key
}

// Stats is what a tier did, for the run's report.
type Stats struct {
	Hits        int64 `json:"hits"`         // records read from the remote (local misses)
	Misses      int64 `json:"misses"`       // local misses the remote did not have either
	Corrupt     int64 `json:"corrupt"`      // remote objects that failed their checks: treated as misses
	Written     int64 `json:"written"`      // records this process wrote to the remote
	Present     int64 `json:"present"`      // records it would have written that another writer had
	WriteErrors int64 `json:"write_errors"` // remote writes that failed (the local copy stands)
	ReadErrors  int64 `json:"read_errors"`  // remote reads that failed other than by absence
}

// Tier is a cache.Store whose records are also kept in a remote object
// store. Everything but the Records methods is the local store's.
type Tier struct {
	cache.Store
	obj Objects
	log zerolog.Logger
	ctx context.Context

	hits, misses, corrupt, written, present, writeErrs, readErrs atomic.Int64
}

// New puts obj under local.
func New(ctx context.Context, local cache.Store, obj Objects, log zerolog.Logger) *Tier {
	return &Tier{Store: local, obj: obj, log: log, ctx: ctx}
}

// RemoteStats says what the tier did so far (Stats is the local store's).
func (t *Tier) RemoteStats() Stats {
	return Stats{Hits: t.hits.Load(), Misses: t.misses.Load(), Corrupt: t.corrupt.Load(), Written: t.written.Load(),
		Present: t.present.Load(), WriteErrors: t.writeErrs.Load(), ReadErrors: t.readErrs.Load()}
}

// MemoView is the local store's: memos are Index, never remote, so a warm
// run through the tier reads them in place as it would without it.
func (t *Tier) MemoView(inputKey string, fn func(value []byte)) (bool, error) {
	if mv, ok := t.Store.(cache.MemoViewer); ok {
		return mv.MemoView(inputKey, fn)
	}
	v, ok, err := t.Store.Memo(inputKey)
	if ok && err == nil {
		fn(v)
	}
	return ok, err
}

// Where names the remote.
func (t *Tier) Where() string { return t.obj.Where() }

// Get is the local record, else the remote's (then stored locally).
func (t *Tier) Get(key string) (*cache.Record, error) {
	rec, err := t.Store.Get(key)
	if err == nil || !errors.Is(err, cache.ErrNotFound) {
		return rec, err
	}
	if !t.fetch(key) {
		return nil, err
	}
	return t.Store.Get(key)
}

// Has is true for a record held locally or remotely (a remote one is
// fetched: a Has is followed by a Get).
func (t *Tier) Has(key string) (bool, error) {
	ok, err := t.Store.Has(key)
	if ok || err != nil {
		return ok, err
	}
	return t.fetch(key), nil
}

// Parts reads the record's parts, fetching the record if only the remote has it.
func (t *Tier) Parts(key string) ([]cache.Part, error) {
	parts, err := t.Store.Parts(key)
	if errors.Is(err, cache.ErrNotFound) && t.fetch(key) {
		return t.Store.Parts(key)
	}
	return parts, err
}

// Put stores rec locally, then remotely.
func (t *Tier) Put(rec *cache.Record) error {
	if err := t.Store.Put(rec); err != nil {
		return err
	}
	t.push(rec)
	return nil
}

// PutIndexed stores rec and its index entries locally, then rec remotely.
func (t *Tier) PutIndexed(rec *cache.Record, address, inputKey string, memo []byte) error {
	if err := t.Store.PutIndexed(rec, address, inputKey, memo); err != nil {
		return err
	}
	t.push(rec)
	return nil
}

// object is a record as stored remotely: its JSON (parts included) and the
// checksum of that JSON.
type object struct {
	SHA256 string          `json:"sha256"`
	Record json.RawMessage `json:"record"`
}

// Encode is rec's remote object.
func Encode(rec *cache.Record) ([]byte, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return json.Marshal(object{SHA256: hex.EncodeToString(sum[:]), Record: b})
}

// Decode checks and decodes key's remote object: its checksum, that it is
// key's record, and that its output matches its output digest.
func Decode(key string, body []byte) (*cache.Record, error) {
	var o object
	if err := json.Unmarshal(body, &o); err != nil {
		return nil, fmt.Errorf("not a record object: %w", err)
	}
	sum := sha256.Sum256(o.Record)
	if hex.EncodeToString(sum[:]) != o.SHA256 {
		return nil, errors.New("checksum mismatch")
	}
	var rec cache.Record
	if err := json.Unmarshal(o.Record, &rec); err != nil {
		return nil, fmt.Errorf("record does not decode: %w", err)
	}
	if rec.Key != key {
		return nil, fmt.Errorf("holds the record of key %s", rec.Key)
	}
	if rec.OutputDigest != cache.DigestOutput(rec.Output) {
		return nil, errors.New("output does not match its digest")
	}
	return &rec, nil
}

// fetch copies key's remote record into the local store; false when the
// remote has no usable record (absent, unreadable, corrupt).
func (t *Tier) fetch(key string) bool {
	body, err := t.obj.Get(t.ctx, Name(key))
	if errors.Is(err, ErrMissing) {
		t.misses.Add(1)
		return false
	}
	if errors.Is(err, ErrIntegrity) {
		t.corrupt.Add(1)
		t.log.Warn().Str("key", key).Str("object", Name(key)).Err(err).Msg("corrupt remote cache object: treated as a miss")
		return false
	}
	if err != nil {
		t.readErrs.Add(1)
		t.log.Warn().Str("key", key).Err(err).Msg("remote cache read failed: treated as a miss")
		return false
	}
	rec, err := Decode(key, body)
	if err != nil {
		t.corrupt.Add(1)
		t.log.Warn().Str("key", key).Str("object", Name(key)).Err(err).Msg("corrupt remote cache object: treated as a miss")
		return false
	}
	if err := t.Store.Put(rec); err != nil {
		// A read-only local cache: serve nothing rather than half (the
		// Get that follows reads the local store).
		t.log.Debug().Str("key", key).Err(err).Msg("remote record not stored locally")
		return false
	}
	t.hits.Add(1)
	return true
}

// push writes rec remotely, once: a failure leaves the local copy, which
// the next run's write (or `cache push`, not yet) can send again.
func (t *Tier) push(rec *cache.Record) {
	body, err := Encode(rec)
	if err == nil {
		var created bool
		created, err = t.obj.PutIfAbsent(t.ctx, Name(rec.Key), body)
		if err == nil {
			if created {
				t.written.Add(1)
			} else {
				t.present.Add(1)
			}
			return
		}
	}
	t.writeErrs.Add(1)
	t.log.Warn().Str("key", rec.Key).Err(err).Msg("remote cache write failed: the record stays local")
}

var _ cache.Store = (*Tier)(nil)
