package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// ExportResult is what Export wrote.
type ExportResult struct {
	Written int    `json:"written"`
	Digest  string `json:"digest"` // hex SHA-256 the bundle's trailer holds; see the trust model in bundle.go
	// Skipped are the keys of records that failed their checks and were left
	// out, in key order: a damaged record must not stop the rest from moving.
	Skipped []string `json:"skipped,omitempty"`
	// WithoutParts are the keys of sound records whose key parts are
	// damaged: they were written without them (parts only explain misses).
	WithoutParts []string `json:"without_parts,omitempty"`
}

// Export writes every run record with the records when keys is nil (the
// whole cache); ExportRuns names the runs.
func (s *store) Export(w io.Writer, keys map[string]bool) (ExportResult, error) {
	var runs []*RunRecord
	if keys == nil {
		runs = s.soundRuns()
	}
	return s.ExportRuns(w, keys, runs)
}

// soundRuns is every run record that decodes, oldest first: a damaged run
// record (history, not a result) must not stop an export.
func (s *store) soundRuns() []*RunRecord {
	if runs, err := s.Runs(); err == nil {
		return runs
	}
	var runs []*RunRecord
	_ = s.b.scan(prefixRun, false, func(_, v []byte) error {
		var r RunRecord
		if json.Unmarshal(v, &r) == nil {
			runs = append(runs, &r)
		}
		return nil
	})
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Started.Before(runs[j].Started) })
	return runs
}

// ExportRuns is Export that writes runs after the records, so the bundle
// says with which variable values they were computed (a bundle with runs is
// format version 2).
func (s *store) ExportRuns(w io.Writer, keys map[string]bool, runs []*RunRecord) (ExportResult, error) {
	var res ExportResult
	version := byte(bundleVersion)
	if len(runs) > 0 {
		version = bundleVersionRuns
	}
	bw, err := newBundleWriterVersion(w, version)
	if err != nil {
		return res, fmt.Errorf("export: %w", err)
	}
	write := func(key string) error {
		rec, err := s.fullRecord(key)
		if errors.Is(err, ErrCorrupt) {
			if rec, err = s.checkedRecord(key); err == nil {
				res.WithoutParts = append(res.WithoutParts, key)
			}
		}
		if errors.Is(err, ErrCorrupt) {
			res.Skipped = append(res.Skipped, key)
			return nil
		}
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
	for _, r := range runs {
		if err != nil {
			break
		}
		err = bw.writeRun(r)
	}
	res.Written = bw.count
	if err != nil {
		return res, fmt.Errorf("export: %w", err)
	}
	if res.Digest, err = bw.close(); err != nil {
		return res, fmt.Errorf("export: %w", err)
	}
	return res, nil
}

// importBatch bounds how many records one apply carries during Import.
const importBatch = 256

// Import keeps a local record that passes its checks rather than rewriting it:
// equal keys mean equal inputs. imported counts records written (new or
// replacing a damaged local copy).
func (s *store) Import(r io.Reader) (int, error) { return s.ImportExpect(r, "") }

// ImportExpect is Import that first checks the bundle's digest against
// expect (hex, "sha256:" optional; empty skips the check) and refuses a
// mismatch with ErrDigestMismatch before writing anything.
func (s *store) ImportExpect(r io.Reader, expect string) (int, error) {
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
	var runUnits [][]op
	runFn := func(run *RunRecord) error {
		if has, err := s.b.has([]byte(prefixRun + run.ID)); err == nil && has {
			return nil // runs are history: the local copy stays
		}
		v, err := json.Marshal(run)
		if err != nil {
			return fmt.Errorf("encode run %s: %w", run.ID, err)
		}
		runUnits = append(runUnits, []op{setOp(prefixRun+run.ID, v)})
		return nil
	}
	err := readBundleRuns(r, expect, func(rec *Record) error {
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
	}, runFn)
	if err == nil {
		err = flush()
	}
	if err == nil && len(runUnits) > 0 {
		// After the records, so a run is never imported without them.
		err = s.apply(runUnits...)
	}
	if err != nil {
		return imported, fmt.Errorf("import: %w", err)
	}
	return imported, nil
}
