package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm"
)

// The memo: a stage is pure given its params, its node identity and its
// inputs' outputs, so the digest of those (the input key) determines the
// rendered request and thus the node's key. The cache keeps input key -> key;
// looking it up skips rendering prompts and loading upstream outputs, so a
// warm re-run costs two index lookups per node. The memo is an index, not a
// result: losing it costs a re-render.

// memoFormat names the memo scheme; v2 came with key scheme v2 (who
// answers is key material), so no memo of a v1 key is ever trusted.
const memoFormat = "ideaflow-memo-v3" // v3: the record's fingerprint

// memoBase digests what is common to every node of an instance: stage type,
// implementation version, every param, and who answers each of its model
// params (the params' JSON leaves the provider out, and a provider pointed
// elsewhere must not find the old key through the memo).
func memoBase(inst *Instance) [32]byte {
	h := sha256.New()
	h.Write([]byte(memoFormat + "\x00" + inst.Type + "@" + inst.Version))
	for _, p := range inst.paramParts {
		h.Write([]byte{0})
		h.Write([]byte(p.name))
		h.Write(p.digest[:])
	}
	h.Write([]byte{1})
	h.Write(inst.answerers[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// inputKey digests a node's full input state: its instance's memo base,
// its identity, and its inputs' output digests and provenance (a compute
// node's key holds who answered its inputs).
func inputKey(n *Node, in keyInputs) [32]byte {
	digests := in.digests
	h := sha256.New()
	h.Write(n.Inst.memoBase[:])
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(n.Spec.Slot))
	h.Write(buf[:])
	h.Write(nodeIdentity(n))
	h.Write([]byte{0})
	if n.expandedFrom != nil {
		h.Write(n.expandedFrom[:])
	}
	for _, d := range digests {
		h.Write(d[:])
	}
	h.Write([]byte{1})
	for _, p := range in.provs {
		d := p.digestOf()
		h.Write(d[:])
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Memo values: key hex, output digest hex, flags, requested model, served
// model, epoch (memoEpoch), drop reason, answer key, who answered (a call or service
// node's record's answerer: class, identity), and the record's system fingerprint.
const (
	memoCall      = "c"
	memoService   = "v"
	memoSynthetic = "s" // the answerer is synthetic
	memoDropped   = "d"
	memoFields    = 10
)

func (w *walker) encodeMemo(st *nodeState) []byte {
	flags := ""
	if st.isCall {
		flags += memoCall
	}
	if st.isService {
		flags += memoService
	}
	answerer := ""
	if a := st.answerer; a != nil {
		if a.Synthetic {
			flags += memoSynthetic
		}
		answerer = a.Class + "\x1f" + a.Identity
	}
	if st.dropped {
		flags += memoDropped
	}
	return []byte(strings.Join([]string{st.key, hex.EncodeToString(st.digest[:]), flags, st.wantModel, st.servedModel, w.epoch, st.dropWhy, st.answerKey, answerer, st.fingerprint}, "\x00"))
}

// renderVersion names the rendering code every stage shares: the answer
// instructions a stage appends (format.Instructions), the repair and re-ask
// messages, the prompt template helpers. A node's own stage code is named by
// its type's Version (in memoBase); this names the rest. Bump it when that
// shared code would render another request for the same inputs:
// TestRenderVersionPinned fails until you do. It is a variable only so a
// benchmark can build a binary that says it renders differently
// (-ldflags -X github.com/ideaflow/ideaflow/engine.renderVersion=...).
var renderVersion = "1"

// memoEpoch is what a memo vouches for besides its input state: the memo and
// key schemes and the shared rendering code. It used to be the digest of the
// executable, so any rebuild (a new version string from make build) made
// every memo stale, and warm runs slow for good: a plan never rewrote them.
// What decides a node's output is its stage type's version, the shared
// rendering code's version and the key scheme, never the binary's bytes.
var memoEpoch = func() string { return memoEpochOf(memoFormat, keyFormat, "render="+renderVersion) }

func memoEpochOf(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:12])
}

// memoHit fills st from the memo of inKey. It does not look the record up:
// a memo is written with its record in one atomic write and gc removes both,
// so a memo names a record that exists; were it gone (dropped by a repair),
// the first read of its output finds it missing and the walk recomputes the
// node (see damage.go). Skipping the lookup halves a warm node's index reads.
func (w *walker) memoHit(st *nodeState, inKey [32]byte) bool {
	hit := false
	settle := func(v []byte) { hit = w.settleMemo(st, v) }
	var ok bool
	var err error
	if mv, viewable := w.store.(cache.MemoViewer); viewable {
		ok, err = mv.MemoView(hex.EncodeToString(inKey[:]), settle)
	} else {
		var v []byte
		if v, ok, err = w.store.Memo(hex.EncodeToString(inKey[:])); ok && err == nil {
			settle(v)
		}
	}
	return err == nil && ok && hit
}

// settleMemo fills st from a memo value, copying what it keeps (v may be
// the cache's mapped bytes: MemoView). It leaves st unchanged and returns
// false for a memo it cannot use.
func (w *walker) settleMemo(st *nodeState, v []byte) bool {
	f := splitMemo(v)
	if f == nil || string(f[5]) != w.epoch {
		return false // another scheme or rendering code: render again
	}
	var d [32]byte
	if n, err := hex.Decode(d[:], f[1]); err != nil || n != 32 {
		return false
	}
	key := string(f[0])
	if w.distrusted(key) {
		return false
	}
	st.status, st.known, st.key, st.digest = StatusCached, true, key, d
	st.isCall = bytes.Contains(f[2], []byte(memoCall))
	st.isService = bytes.Contains(f[2], []byte(memoService))
	st.dropped = bytes.Contains(f[2], []byte(memoDropped))
	st.wantModel, st.servedModel = w.intern(f[3]), w.intern(f[4])
	if st.dropped {
		st.dropWhy = w.intern(f[6])
	}
	st.answerKey = string(f[7])
	st.fingerprint = w.intern(f[9])
	st.answerer = nil
	if st.isCall || st.isService {
		class, id, _ := bytes.Cut(f[8], []byte{0x1f})
		st.answerer = w.provs.answerer(llm.Answerer{Class: string(class), Identity: string(id),
			Synthetic: bytes.Contains(f[2], []byte(memoSynthetic))})
	}
	return true
}

// splitMemo splits a memo value into its memoFields fields, or returns nil.
func splitMemo(v []byte) [][]byte {
	f := make([][]byte, 0, memoFields)
	for len(f) < memoFields-1 {
		i := bytes.IndexByte(v, 0)
		if i < 0 {
			return nil
		}
		f = append(f, v[:i])
		v = v[i+1:]
	}
	return append(f, v)
}

func (w *walker) setMemo(inKey [32]byte, st *nodeState) {
	if err := w.store.SetMemo(hex.EncodeToString(inKey[:]), w.encodeMemo(st)); err != nil {
		w.log.Debug().Err(err).Msg("memo write failed")
	}
}

// memoWriters is how many goroutines rewrite the memos a run's plan found
// stale. The store's group commit shares one sync among the writes waiting,
// so many writers in flight make a few hundred syncs of 200k memos.
const memoWriters = 256

// memoWriter rewrites, behind a run's plan, the memos of the cached nodes it
// found by rendering (no memo, or one of another epoch): the next warm run
// settles them from the memo again. A plan alone (the plan command) writes
// nothing. A memo is an index, so a lost write costs a re-render, and the
// plan does not wait for one.
type memoWriter struct {
	store   cache.Store
	jobs    chan memoJob
	wg      sync.WaitGroup
	written atomic.Int64
}

type memoJob struct {
	inKey string
	value []byte
}

func newMemoWriter(store cache.Store) *memoWriter {
	m := &memoWriter{store: store, jobs: make(chan memoJob, memoWriters)}
	for k := 0; k < memoWriters; k++ {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			for j := range m.jobs {
				if m.store.SetMemo(j.inKey, j.value) == nil {
					m.written.Add(1)
				}
			}
		}()
	}
	return m
}

func (m *memoWriter) put(inKey [32]byte, value []byte) {
	m.jobs <- memoJob{inKey: hex.EncodeToString(inKey[:]), value: value}
}

// stop waits for every queued memo and returns how many were written.
func (m *memoWriter) stop() int {
	if m == nil {
		return 0
	}
	close(m.jobs)
	m.wg.Wait()
	return int(m.written.Load())
}
