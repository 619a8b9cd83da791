package cache

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

func (s *store) Export(w io.Writer, keys map[string]bool) (int, error) {
	bw, err := newBundleWriter(w)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	write := func(key string) error {
		rec, err := s.fullRecord(key)
		if err != nil {
			return err
		}
		return bw.write(rec)
	}
	if keys == nil {
		err = s.b.scan(prefixRecord, true, func(k, _ []byte) error {
			return write(string(k[len(prefixRecord):]))
		})
	} else {
		sorted := make([]string, 0, len(keys))
		for k, ok := range keys {
			if ok {
				sorted = append(sorted, k)
			}
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if err = write(k); errors.Is(err, ErrNotFound) {
				err = nil // keys may name nodes never computed; the count says what was written
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		return bw.count, fmt.Errorf("export: %w", err)
	}
	if err := bw.close(); err != nil {
		return bw.count, fmt.Errorf("export: %w", err)
	}
	return bw.count, nil
}

// importBatch bounds how many records one apply carries during Import.
const importBatch = 256

// Import keeps a local record that passes its checks rather than rewriting it:
// equal keys mean equal inputs. imported counts records written (new or
// replacing a damaged local copy).
func (s *store) Import(r io.Reader) (int, error) {
	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	imported := 0
	var units [][]op
	flush := func() error {
		if len(units) == 0 {
			return nil
		}
		if err := s.apply(units...); err != nil {
			return err
		}
		imported += len(units)
		units = units[:0]
		return nil
	}
	seen := map[string]bool{}
	err := readBundle(r, func(rec *Record) error {
		if seen[rec.Key] {
			return nil
		}
		seen[rec.Key] = true
		if _, err := s.fullRecord(rec.Key); err == nil {
			return nil
		}
		units = append(units, recordOps(rec))
		if len(units) >= importBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return imported, fmt.Errorf("import: %w", err)
	}
	return imported, nil
}
