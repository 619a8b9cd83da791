package engine

import (
	"encoding/hex"
	"errors"

	"github.com/ideaflow/ideaflow/cache"
)

// writeJob is one completed node's durable write.
type writeJob struct {
	idx   int32
	inKey [32]byte
	rec   *cache.Record
	memo  []byte
	// settleAfter: settle the node once the write is durable (calls);
	// otherwise it was settled when it completed (compute nodes).
	settleAfter bool
}

// writers is the run's pool of cache writers. Many writers in flight let the
// store's group commit put many records in one sync, so neither resolvers
// nor dispatch slots wait for a disk.
const writers = 32

func (w *walker) startWriters() {
	w.writes = make(chan *writeJob, 4*writers)
	for k := 0; k < writers; k++ {
		w.writersWG.Add(1)
		go func() {
			defer w.writersWG.Done()
			for job := range w.writes {
				w.write(job)
				w.act.add(-1)
			}
		}()
	}
}

// stopWriters waits until every queued write is done.
func (w *walker) stopWriters() {
	if w.writes == nil {
		return
	}
	close(w.writes)
	w.writersWG.Wait()
	w.writes = nil
}

// write stores one record with its latest-key entry and memo in one durable
// write: a crash leaves all three or none.
func (w *walker) write(job *writeJob) {
	// The node's address comes from its record, not from g.Nodes: a grow
	// between rounds appends to g.Nodes while writes behind are in flight.
	rec := job.rec
	err := w.store.PutIndexed(rec, w.expKey+rec.Address, hex.EncodeToString(job.inKey[:]), job.memo)
	if err != nil {
		if job.settleAfter {
			// A paid answer that cannot be kept: stop paying for more.
			w.setStoreErr(err)
			w.fail(job.idx, rec.Key, why(failCache, err.Error()), "", nil)
			return
		}
		// Already settled, its output in memory: the run goes on without
		// its record, and the next run recomputes it. A read-only cache
		// (run --offline) is no failure; any other write error stops the run.
		w.unsaved.Add(1)
		if errors.Is(err, cache.ErrReadOnly) {
			return
		}
		w.setStoreErr(err)
		w.log.Warn().Str("node", rec.Address).Err(err).Msg("could not write a computed node")
		return
	}
	if _, err := w.store.Failure(rec.Key); err == nil {
		_ = w.store.DeleteFailure(rec.Key)
	}
	if job.settleAfter {
		w.settle(job.idx, rec)
	}
}
