package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/stages/llm"
)

func TestMemoTrustsOnlyItsEpoch(t *testing.T) {
	store := cache.NewMemory()
	out := []byte(`{"ideas":["x"]}`)
	rec := &cache.Record{Key: hex.EncodeToString(bytes.Repeat([]byte{1}, 32)), Output: out}
	if err := store.Put(rec); err != nil {
		t.Fatal(err)
	}
	w := &walker{store: store, interned: map[string]string{}, provs: newProvTable(), epoch: memoEpoch()}
	in := sha256.Sum256([]byte("input state"))
	who := &llm.Answerer{Class: llm.ClassMock, Identity: "seed 7", Synthetic: true}
	st := &nodeState{key: rec.Key, digest: sha256.Sum256(out), isCall: true, wantModel: "m", servedModel: "m-2024", answerer: who}
	w.setMemo(in, st)

	var got nodeState
	if !w.memoHit(&got, in) {
		t.Fatal("a memo written under this epoch was not used")
	}
	if got.key != rec.Key || got.digest != st.digest || !got.isCall || got.wantModel != "m" || got.servedModel != "m-2024" || got.status != StatusCached ||
		got.answerer == nil || *got.answerer != *who {
		t.Fatalf("memo decoded as %+v", got)
	}

	// The same memo under another epoch: shared rendering code or a
	// scheme changed, so stage code may render differently now.
	other := bytes.Replace(w.encodeMemo(st), []byte(w.epoch), []byte("another-epoch"), 1)
	if err := store.SetMemo(hex.EncodeToString(in[:]), other); err != nil {
		t.Fatal(err)
	}
	if w.memoHit(&nodeState{}, in) {
		t.Fatal("a memo of another epoch was trusted")
	}

	// gc removes a memo with its record. (A memo left naming a dropped
	// record is trusted without a lookup; the first read of the output
	// finds the record gone and the walk recomputes the node:
	// TestDamagedInputIsRecomputed.)
	w.setMemo(in, st)
	if _, err := store.GC(map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	if w.memoHit(&nodeState{}, in) {
		t.Fatal("a memo gc should have removed was used")
	}
}
