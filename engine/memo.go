package engine

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"sync"

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
const memoFormat = "ideaflow-memo-v2"

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
// model, build, drop reason, answer key, and who answered (a call or service
// node's record's answerer: class, identity).
const (
	memoCall      = "c"
	memoService   = "v"
	memoSynthetic = "s" // the answerer is synthetic
	memoDropped   = "d"
	memoFields    = 9
)

func encodeMemo(st *nodeState) []byte {
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
	return []byte(strings.Join([]string{st.key, hex.EncodeToString(st.digest[:]), flags, st.wantModel, st.servedModel, buildID(), st.dropWhy, st.answerKey, answerer}, "\x00"))
}

var (
	buildOnce sync.Once
	build     string
)

// buildID identifies the ideaflow program that wrote a memo: the digest of
// its executable. A memo skips rendering, so it vouches that the stage code
// would render the same request; a new build (a changed default prompt or
// answer instruction, even without a version bump) must render again. Its
// records stay valid: a re-rendered request that did not change finds them.
func buildID() string {
	buildOnce.Do(func() {
		if exe, err := os.Executable(); err == nil {
			if f, err := os.Open(exe); err == nil {
				h := sha256.New()
				_, err = io.Copy(h, f)
				f.Close()
				if err == nil {
					build = hex.EncodeToString(h.Sum(nil)[:12])
					return
				}
			}
		}
		// Unknown build: a per-process value, so no memo is ever trusted.
		var nonce [12]byte
		_, _ = rand.Read(nonce[:])
		build = "unknown-" + hex.EncodeToString(nonce[:])
	})
	return build
}

// memoHit fills st from the memo of inKey. It does not look the record up:
// a memo is written with its record in one atomic write and gc removes both,
// so a memo names a record that exists; were it gone (dropped by a repair),
// the first read of its output finds it missing and the walk recomputes the
// node (see damage.go). Skipping the lookup halves a warm node's index reads.
func (w *walker) memoHit(st *nodeState, inKey [32]byte) bool {
	v, ok, err := w.store.Memo(hex.EncodeToString(inKey[:]))
	if err != nil || !ok {
		return false
	}
	f := splitMemo(v)
	if f == nil || string(f[5]) != buildID() {
		return false
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
	if err := w.store.SetMemo(hex.EncodeToString(inKey[:]), encodeMemo(st)); err != nil {
		w.log.Debug().Err(err).Msg("memo write failed")
	}
}
