package cache

import (
	"bytes"
	"errors"
	"fmt"
)

func (s *store) Has(key string) (bool, error) {
	ok, err := s.b.has([]byte(prefixRecord + key))
	if err != nil {
		return false, fmt.Errorf("look up record %s: %w", key, err)
	}
	return ok, nil
}

func (s *store) Memo(inputKey string) ([]byte, bool, error) {
	var out []byte
	err := s.b.get([]byte(prefixMemo+inputKey), func(v []byte) error {
		out = append([]byte(nil), v...)
		return nil
	})
	switch {
	case errors.Is(err, errNoKey):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("get memo %s: %w", inputKey, err)
	}
	return out, true, nil
}

func (s *store) SetMemo(inputKey string, value []byte) error {
	if err := checkMemo(inputKey, value); err != nil {
		return fmt.Errorf("set memo: %w", err)
	}
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.apply([]op{setOp(prefixMemo+inputKey, value)}); err != nil {
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
		extra = append(extra, setOp(prefixMemo+inputKey, memo))
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
