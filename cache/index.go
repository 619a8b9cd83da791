package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Memo values are stored as
//
//	value | NUL | 'M' | CRC-32C of value (4 bytes, LE)
//
// so a damaged memo reads as ErrCorrupt instead of pointing a warm run at a
// wrong key. The NUL keeps memoRecordKey (used by GC) reading the record key
// of the stored form. Memos written before the trailer existed fail the check
// and cost one re-render, as any lost memo does.
const memoTrailer = 2 + crcSize

func sealMemo(v []byte) []byte {
	out := make([]byte, 0, len(v)+memoTrailer)
	out = append(append(out, v...), 0, 'M')
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(v, castagnoli))
}

func unsealMemo(stored []byte) ([]byte, error) {
	n := len(stored) - memoTrailer
	if n < 0 || stored[n] != 0 || stored[n+1] != 'M' {
		return nil, fmt.Errorf("%w: memo of %d bytes has no checksum trailer", ErrCorrupt, len(stored))
	}
	v := stored[:n]
	if got, want := crc32.Checksum(v, castagnoli), binary.LittleEndian.Uint32(stored[n+2:]); got != want {
		return nil, fmt.Errorf("%w: memo checksum %08x, stored %08x", ErrCorrupt, got, want)
	}
	return v, nil
}

func (s *store) Has(key string) (bool, error) {
	ok, err := s.b.has([]byte(prefixRecord + key))
	if err != nil {
		return false, fmt.Errorf("look up record %s: %w", key, err)
	}
	return ok, nil
}

func (s *store) Memo(inputKey string) ([]byte, bool, error) {
	var out []byte
	ok, err := s.MemoView(inputKey, func(v []byte) { out = bytes.Clone(v) })
	return out, ok, err
}

// MemoViewer is implemented by the local stores: MemoView is Memo without
// the copy. fn sees the value only while it runs (it may be the memo
// index's mapped bytes, unmapped at Close), so it must copy what it keeps.
// A warm run reads one memo a node, field by field: at 1M nodes the copies
// were 280 MB of garbage.
type MemoViewer interface {
	MemoView(inputKey string, fn func(value []byte)) (ok bool, err error)
}

func (s *store) MemoView(inputKey string, fn func(value []byte)) (bool, error) {
	err := s.b.get([]byte(prefixMemo+inputKey), func(stored []byte) error {
		v, err := unsealMemo(stored)
		if err == nil {
			fn(v)
		}
		return err
	})
	switch {
	case errors.Is(err, errNoKey):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get memo %s: %w", inputKey, err)
	}
	return true, nil
}

func (s *store) SetMemo(inputKey string, value []byte) error {
	if err := checkMemo(inputKey, value); err != nil {
		return fmt.Errorf("set memo: %w", err)
	}
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.apply([]op{setOp(prefixMemo+inputKey, sealMemo(value))}); err != nil {
		return fmt.Errorf("set memo %s: %w", inputKey, err)
	}
	return nil
}

func (s *store) PutIndexed(rec *Record, address, inputKey string, memo []byte) error {
	var extra []op
	if address != "" {
		if err := checkID("node address", address); err != nil {
			return fmt.Errorf("put record: %w", err)
		}
		extra = append(extra, setOp(prefixLatest+address, []byte(rec.Key)))
	}
	if inputKey != "" {
		if err := checkMemo(inputKey, memo); err != nil {
			return fmt.Errorf("put record: %w", err)
		}
		extra = append(extra, setOp(prefixMemo+inputKey, sealMemo(memo)))
	}
	return s.put(rec, extra...)
}

func checkMemo(inputKey string, value []byte) error {
	if err := checkID("memo key", inputKey); err != nil {
		return err
	}
	if memoRecordKey(value) == "" {
		return errors.New("memo value does not start with a record key")
	}
	return nil
}

// memoRecordKey is the record key a memo value starts with.
func memoRecordKey(v []byte) string {
	if i := bytes.IndexByte(v, 0); i >= 0 {
		v = v[:i]
	}
	return string(v)
}
