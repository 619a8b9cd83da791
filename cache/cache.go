// Package cache is ideaflow's content-addressed store of node results.
//
// A node's key is a SHA-256 digest (hex) computed by the engine over everything
// that can change the node's output. The cache never sees how a key was made;
// it stores the result under the key plus the key's named parts so the engine
// can later explain why a node is dirty.
//
// Store is the seam for tiering: the local Badger store is one tier today; a
// shared remote store can sit in front of it later behind the same interface.
//
// Create opens the Badger store, making it if needed (for commands that fill
// the cache); Open opens an existing one and OpenReadOnly opens an existing
// one without ever writing (for commands that only read). ResolveDir says
// where it lives. NewMemory returns an in-memory Store with the same rules,
// for tests. Writes are durable when they return: concurrent Puts share one
// sync (group commit), so a kill -9 loses only Puts that have not returned.
// Export and Import move records between caches as a checked single-file
// bundle (bundle.go, which also states what a bundle's digest does and does
// not prove).
//
// Failure envelope: a damaged value is ErrCorrupt for its key alone (repair
// by overwriting it, Drop, or Repair over what Verify returns); a missing or
// MANIFEST-less cache is ErrNoCache or ErrNoManifest, never a new empty cache;
// a held cache is ErrLocked naming the holder; a full disk is ErrDiskFull;
// a record over MaxRecordBytes is ErrTooLarge; writes to a read-only store
// are ErrReadOnly. See Badger for what a read-write open of a damaged log does.
package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"time"
)

// ErrNotFound is returned by Get when no record is stored under a key.
var ErrNotFound = errors.New("not in cache")

// ErrCorrupt is wrapped by errors about a stored value that fails its checksum
// or cannot be decoded. The engine should treat such a record as a miss.
var ErrCorrupt = errors.New("cache value corrupt")

// ErrClosed is returned by every method called after Close.
var ErrClosed = errors.New("cache closed")

// ErrReadOnly is returned by writes to a store opened with ReadOnly.
var ErrReadOnly = errors.New("cache opened read-only")

// DigestOutput is the OutputDigest of an output: hex SHA-256 of its bytes.
func DigestOutput(output []byte) string {
	sum := sha256.Sum256(output)
	return hex.EncodeToString(sum[:])
}

// Usage is what one node cost to compute.
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	LatencyMS    int64   `json:"latency_ms"`
	Attempts     int     `json:"attempts"`
	// CachedTokens is the part of InputTokens the provider served from its
	// prompt cache (priced at the cached-input rate); 0 on older records.
	CachedTokens int64 `json:"cached_tokens,omitempty"`
}

// Part is one named piece of a key's material, e.g. {"model.temperature", <digest>, "0.7"}.
// Display is a short human-readable rendering (never a secret), used to explain misses.
type Part struct {
	Name    string `json:"name"`
	Digest  string `json:"digest"`
	Display string `json:"display,omitempty"`
}

// Attempt records one try at a model call (including repair re-asks).
type Attempt struct {
	Error    string `json:"error,omitempty"`
	Raw      string `json:"raw,omitempty"`
	Status   int    `json:"status,omitempty"`
	Repair   bool   `json:"repair,omitempty"`
	Duration int64  `json:"duration_ms,omitempty"`
}

// Record is a completed node result.
type Record struct {
	Key          string    `json:"key"`
	Stage        string    `json:"stage"`   // stage instance address, informational
	Address      string    `json:"address"` // node address, informational
	Output       []byte    `json:"output"`  // canonical JSON produced by the stage
	OutputDigest string    `json:"output_digest"`
	Usage        Usage     `json:"usage"`
	Parts        []Part    `json:"parts,omitempty"`
	Model        string    `json:"model,omitempty"`        // model name requested
	ServedModel  string    `json:"served_model,omitempty"` // model name the server reported
	Fingerprint  string    `json:"system_fingerprint,omitempty"`
	Raw          string    `json:"raw,omitempty"`       // raw model text of the accepted answer
	Reasoning    string    `json:"reasoning,omitempty"` // reasoning_content, kept out of the answer
	Attempts     []Attempt `json:"attempts,omitempty"`
	// Synthetic says the output is made up: a call the mock answered, or a
	// compute output that rests on one (see Fed).
	Synthetic bool `json:"synthetic,omitempty"`
	// AnswerKey is set on a call node's record whose output was derived,
	// with no call, from the parsed answer stored under that key (the same
	// request, asked before under other output settings).
	AnswerKey string `json:"answer_key,omitempty"`
	// Answerer is who answered a call or service record (and an answer
	// record): its provider's class and identity, which are key material
	// of the node. nil on compute records, and on records written before
	// answers were keyed by who gave them.
	Answerer *Answerer `json:"answerer,omitempty"`
	// Fed lists, on a compute record, the distinct answerers of the calls
	// its output rests on, directly or through its inputs, as their
	// records said (sorted by class, then identity); Synthetic is set when
	// one of them is. The node's key holds its inputs' provenance, so Fed
	// is what the output was computed from.
	Fed []Answerer `json:"fed,omitempty"`
	// AdoptedFrom is set on a record `ideaflow cache adopt` stored: the key
	// of the record it was copied from, written before answers were keyed by
	// who gave them. Its Answerer is the one the user declared.
	AdoptedFrom string    `json:"adopted_from,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// Obtained says how a call's answer was obtained when not by one
	// request of its own: "batch <id> of provider <name>".
	Obtained string `json:"obtained,omitempty"`
}

// Answerer is who answered a call, as the record of the call says: the
// class of answerer ("mock", "baseline", "corpus", "endpoint") and what
// tells answerers of a class apart (an endpoint's normalised base URL or
// declared identity, the mock's seed, a corpus file's digest).
type Answerer struct {
	Class     string `json:"class"`
	Identity  string `json:"identity,omitempty"`
	Synthetic bool   `json:"synthetic,omitempty"`
}

// String names an answerer: "mock seed 7", "endpoint https://api.openai.com/v1".
func (a Answerer) String() string {
	if a.Identity == "" {
		return a.Class
	}
	return a.Class + " " + a.Identity
}

// Failure records a node that failed, so the run report can show it; a later run retries it.
type Failure struct {
	Key       string    `json:"key"`
	Stage     string    `json:"stage"`
	Address   string    `json:"address"`
	Error     string    `json:"error"`
	Raw       string    `json:"raw,omitempty"`
	Attempts  []Attempt `json:"attempts,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// RunRecord summarises one run of one experiment.
type RunRecord struct {
	ID               string            `json:"id"`
	Experiment       string            `json:"experiment"`
	ExperimentDigest string            `json:"experiment_digest"`
	Variables        map[string]string `json:"variables,omitempty"`
	GitCommit        string            `json:"git_commit,omitempty"`
	Started          time.Time         `json:"started"`
	Finished         time.Time         `json:"finished"`
	Summary          []byte            `json:"summary"` // the run summary JSON
	Keys             []string          `json:"keys,omitempty"`
	// Who ran, for a later plan of the same experiment moved or renamed to
	// find this run (engine: priorRun): its identity, the absolute path it
	// was loaded from, the prefix of its latest-key addresses and its
	// declared blocks' addresses. Empty in runs written before they were.
	ExperimentID   string   `json:"experiment_id,omitempty"`
	ExperimentPath string   `json:"experiment_path,omitempty"`
	LatestPrefix   string   `json:"latest_prefix,omitempty"`
	Blocks         []string `json:"blocks,omitempty"`
	// VarValues are Variables as HCL literals, which read back as exactly
	// the value (a string "5" stays a string), so that show, export and
	// report can describe the run again; VarFiles the -var-file files the
	// values were read from. A variable whose value holds a secret is in
	// neither: Variables says it was withheld. Empty in older runs.
	VarValues map[string]string `json:"var_values,omitempty"`
	VarFiles  []VarFile         `json:"var_files,omitempty"`
}

// VarFile is a -var-file a run read: where it was and what it held.
type VarFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"` // of its bytes; empty when it could not be read again
}

// Entry is one line of `cache ls`.
type Entry struct {
	Key       string    `json:"key"`
	Stage     string    `json:"stage"`
	Address   string    `json:"address"`
	Bytes     int       `json:"bytes"`
	CreatedAt time.Time `json:"created_at"`
	// Damaged: the record fails its checksum; only Key and Bytes are known.
	Damaged bool `json:"damaged,omitempty"`
}

// Stats is what `cache stats` prints.
type Stats struct {
	Records      int     `json:"records"`
	Damaged      int     `json:"damaged"` // records that fail their checksum, not in the sums
	Failures     int     `json:"failures"`
	Runs         int     `json:"runs"`
	OutputBytes  int64   `json:"output_bytes"`
	DiskBytes    int64   `json:"disk_bytes"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"` // what the stored results cost to compute
}

// Store is a content-addressed result store.
type Store interface {
	// Get returns the record stored under key, or ErrNotFound, or an error
	// wrapping ErrCorrupt when the stored value fails its checksum or does not
	// decode (Parts, Memo, Failure and Runs report damage the same way). Parts is left nil:
	// parts are stored apart from the record so the hot path (a cache hit) does
	// not pay for decoding them; call Parts when explaining a miss.
	Get(key string) (*Record, error)
	// Parts returns the key parts stored with the record under key (nil if the
	// record was stored without parts), or ErrNotFound if there is no record.
	Parts(key string) ([]Part, error)
	// Put stores rec durably (synced before return): a crash after Put keeps it.
	// A record over MaxRecordBytes is refused with ErrTooLarge; a full disk is
	// ErrDiskFull; a read-only store is ErrReadOnly.
	// An empty OutputDigest or zero CreatedAt is filled in on rec; a non-empty
	// OutputDigest that does not match Output is refused.
	Put(rec *Record) error

	// Latest/SetLatest keep, per node address, the key last computed there, so a
	// later plan can compare key parts and say why a node is dirty.
	Latest(address string) (key string, ok bool, err error)
	SetLatest(address, key string) error

	// Drop deletes the record under key with its parts (absent is not an
	// error). A record whose Get fails with ErrCorrupt can also simply be
	// overwritten by Put or PutIndexed: the new value replaces the damaged one.
	Drop(key string) error

	// Has reports whether a record is stored under key, without reading it
	// (so without checking it: a damaged record still "has"; Get tells).
	Has(key string) (bool, error)
	// Memo/SetMemo keep an index from a node's input state (a digest the
	// engine computes) to what it knows about the node's key. The value must
	// start with the record key, ended by a NUL byte or the value's end; GC
	// drops memos whose record is gone. Losing a memo only costs a re-render.
	Memo(inputKey string) (value []byte, ok bool, err error)
	SetMemo(inputKey string, value []byte) error
	// PutIndexed is Put plus, in the same atomic durable write, the latest-key
	// entry of address (if not empty) and a memo (if inputKey is not empty).
	PutIndexed(rec *Record, address, inputKey string, memo []byte) error

	PutFailure(f *Failure) error
	Failure(key string) (*Failure, error) // ErrNotFound if none
	DeleteFailure(key string) error

	PutRun(r *RunRecord) error
	Runs() ([]*RunRecord, error)

	Stats() (Stats, error)
	List(fn func(Entry) error) error
	// GC deletes records (and latest-index entries pointing at them) whose key is not in keep.
	// Failures whose key is not in keep go too; runs are history and stay. removed
	// counts records only.
	GC(keep map[string]bool) (removed int, err error)
	// PreviewGC says what GC(keep) would remove, removing nothing.
	PreviewGC(keep map[string]bool) (GCPreview, error)
	// Export writes a portable bundle of the records whose key is in keys (all
	// records if keys is nil). Records that fail their checks are left out and
	// listed in the result; the result's Digest identifies the bundle.
	Export(w io.Writer, keys map[string]bool) (ExportResult, error)
	// Import reads a bundle, verifying every record; a corrupt bundle is refused whole with a clear error.
	Import(r io.Reader) (imported int, err error)
	// Verify checks every stored record against its checksum and returns the
	// keys whose record or key parts fail (Check says which).
	Verify() (bad []string, err error)
	// Check reads every entry a plan or run reads (records, key parts,
	// memos, latest keys, failures, runs) and says what fails; Repair drops
	// exactly that.
	Check() (CheckReport, error)
	Repair(CheckReport) (RepairResult, error)

	Close() error
}
