package cache

// A Store is two stores with different lives (as BuildKit keeps its key
// storage apart from its result storage):
//
//   - Records: immutable and content-addressed. A record's key names its
//     output (the key digests everything the output depends on), so a
//     record is written once, never changes, and can be shared by every
//     user and machine: it may live in an object store (cache/remote).
//   - Index: what this cache knows about its own runs: memos, the latest
//     key per address, failures and run history. Mutable, local, cheap to
//     lose (a lost memo costs a re-render, a lost latest key an explanation).
//
// Store keeps both (and the maintenance methods) for the local Badger and
// memory backends; a tier that serves Records from elsewhere wraps a Store
// and overrides the Records methods only.

// Records is the content-addressed half of a Store.
type Records interface {
	Get(key string) (*Record, error)
	Has(key string) (bool, error)
	Put(rec *Record) error
	Parts(key string) ([]Part, error)
}

// Index is the local, mutable half of a Store.
type Index interface {
	Latest(address string) (key string, ok bool, err error)
	SetLatest(address, key string) error
	Memo(inputKey string) (value []byte, ok bool, err error)
	SetMemo(inputKey string, value []byte) error
	PutFailure(f *Failure) error
	Failure(key string) (*Failure, error)
	DeleteFailure(key string) error
	PutRun(r *RunRecord) error
	Runs() ([]*RunRecord, error)
}

// Every Store is both halves.
var (
	_ Records = Store(nil)
	_ Index   = Store(nil)
)
