package cache

import (
	"fmt"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// committer is the group commit behind every Badger write. Each fsync costs
// milliseconds, so one sync per Put caps a run at a few hundred Puts a second;
// instead a single goroutine takes whatever requests are waiting, writes them
// in as few transactions as Badger allows, and acknowledges each request only
// after its transaction is committed with SyncWrites (synced). A Put therefore
// returns only once its record is on disk, and concurrent Puts share syncs.
type committer struct {
	db    *badger.DB
	guard *spaceGuard // nil: nothing is allocated ahead
	reqs  chan *commitReq
	done  chan struct{}

	mu     sync.RWMutex // guards closed against sends on a closed reqs
	closed bool
}

type commitReq struct {
	ops  []op
	errc chan error
}

// maxGroup bounds the requests gathered into one group, which bounds the
// latency a single Put can pick up waiting for a large group to commit.
const maxGroup = 512

func newCommitter(db *badger.DB, guard *spaceGuard) *committer {
	c := &committer{db: db, guard: guard, reqs: make(chan *commitReq, maxGroup), done: make(chan struct{})}
	go c.run()
	return c
}

// submit writes each unit atomically and returns once all are durable.
// Units are queued together so that a bulk write (GC, Import) shares syncs the
// way concurrent Puts do, instead of paying one sync per unit.
func (c *committer) submit(units [][]op) error {
	reqs := make([]*commitReq, len(units))
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrClosed
	}
	for i, ops := range units {
		reqs[i] = &commitReq{ops: ops, errc: make(chan error, 1)}
		c.reqs <- reqs[i]
	}
	c.mu.RUnlock()
	var first error
	for _, r := range reqs {
		if err := <-r.errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// stop waits for queued requests to commit and ends the goroutine.
func (c *committer) stop() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.reqs)
	c.mu.Unlock()
	<-c.done
	c.guard.close()
}

func (c *committer) run() {
	defer close(c.done)
	group := make([]*commitReq, 0, maxGroup)
	for first := range c.reqs {
		group = append(group[:0], first)
	gather:
		for len(group) < maxGroup {
			select {
			case r, ok := <-c.reqs:
				if !ok {
					break gather
				}
				group = append(group, r)
			default:
				break gather
			}
		}
		c.commitGroup(group)
		clear(group)
	}
}

// commitGroup commits the group in order, splitting it where Badger's
// transaction size limit demands; a request is never split across
// transactions, so a record and its parts land together.
func (c *committer) commitGroup(group []*commitReq) {
	if c.guard != nil {
		var n int64
		for _, r := range group {
			for _, o := range r.ops {
				n += int64(len(o.key) + len(o.val))
			}
		}
		if err := c.guard.reserve(n); err != nil {
			for _, r := range group {
				r.errc <- err
			}
			return
		}
		defer c.guard.advance()
	}
	for len(group) > 0 {
		n, err := c.commitPrefix(group)
		for _, r := range group[:n] {
			r.errc <- err
		}
		group = group[n:]
	}
}

// commitPrefix commits as many leading requests as fit one transaction and
// returns how many it handled (at least one) and the commit's error.
func (c *committer) commitPrefix(group []*commitReq) (int, error) {
	txn := c.db.NewTransaction(true)
	fit := 0
	var setErr error
	for _, r := range group {
		if setErr = setAll(txn, r.ops); setErr != nil {
			break
		}
		fit++
	}
	if setErr == nil {
		return fit, txn.Commit()
	}
	// The failing request may be half-set in txn, so rebuild from the ones that fit.
	txn.Discard()
	if fit == 0 {
		return 1, fmt.Errorf("write %d entries: %w", len(group[0].ops), setErr)
	}
	txn = c.db.NewTransaction(true)
	defer txn.Discard()
	for _, r := range group[:fit] {
		if err := setAll(txn, r.ops); err != nil {
			return fit, fmt.Errorf("rebuild write group: %w", err)
		}
	}
	return fit, txn.Commit()
}

func setAll(txn *badger.Txn, ops []op) error {
	for _, o := range ops {
		var err error
		if o.del {
			err = txn.Delete(o.key)
		} else {
			err = txn.Set(o.key, o.val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
