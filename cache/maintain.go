package cache

import (
	"fmt"
	"strings"
)

// Stats decodes only the summary of each record; a record that fails its
// checksum makes Stats (and List) fail naming it, since its sums are unknown.
func (s *store) Stats() (Stats, error) {
	var st Stats
	err := s.b.scan(prefixRecord, false, func(k, v []byte) error {
		sum, err := readSummary(v)
		if err != nil {
			return fmt.Errorf("record %s: %w", k[len(prefixRecord):], err)
		}
		st.Records++
		st.OutputBytes += int64(sum.OutputLen)
		st.InputTokens += sum.Usage.InputTokens
		st.OutputTokens += sum.Usage.OutputTokens
		st.CostUSD += sum.Usage.CostUSD
		return nil
	})
	if err == nil {
		st.Failures, err = s.count(prefixFailure)
	}
	if err == nil {
		st.Runs, err = s.count(prefixRun)
	}
	if err == nil {
		st.DiskBytes, err = s.b.diskBytes()
	}
	if err != nil {
		return Stats{}, fmt.Errorf("cache stats: %w", err)
	}
	return st, nil
}

func (s *store) count(prefix string) (int, error) {
	n := 0
	err := s.b.scan(prefix, true, func(_, _ []byte) error {
		n++
		return nil
	})
	return n, err
}

// List calls fn for every record in key order; Entry.Bytes is the size of the
// stored record value. An error from fn stops the walk and is returned as is.
func (s *store) List(fn func(Entry) error) error {
	var fnErr error
	err := s.b.scan(prefixRecord, false, func(k, v []byte) error {
		sum, err := readSummary(v)
		if err != nil {
			return fmt.Errorf("list records: record %s: %w", k[len(prefixRecord):], err)
		}
		fnErr = fn(Entry{Key: sum.Key, Stage: sum.Stage, Address: sum.Address, Bytes: len(v), CreatedAt: sum.CreatedAt})
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

// GC holds every writer off while it scans and deletes, so a record Put
// concurrently is never half-collected.
func (s *store) GC(keep map[string]bool) (int, error) {
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	var units [][]op
	removed := 0
	err := s.b.scan(prefixRecord, true, func(k, _ []byte) error {
		if key := string(k[len(prefixRecord):]); !keep[key] {
			units = append(units, []op{delOp(prefixRecord + key), delOp(prefixParts + key)})
			removed++
		}
		return nil
	})
	if err == nil {
		err = s.b.scan(prefixLatest, false, func(k, v []byte) error {
			if !keep[string(v)] {
				units = append(units, []op{delOp(string(k))})
			}
			return nil
		})
	}
	if err == nil {
		err = s.b.scan(prefixMemo, false, func(k, v []byte) error {
			if !keep[memoRecordKey(v)] {
				units = append(units, []op{delOp(string(k))})
			}
			return nil
		})
	}
	if err == nil {
		err = s.b.scan(prefixFailure, true, func(k, _ []byte) error {
			if !keep[string(k[len(prefixFailure):])] {
				units = append(units, []op{delOp(string(k))})
			}
			return nil
		})
	}
	if err != nil {
		return 0, fmt.Errorf("gc: scan: %w", err)
	}
	if len(units) == 0 {
		return 0, nil
	}
	if err := s.apply(units...); err != nil {
		return 0, fmt.Errorf("gc: delete %d entries: %w", len(units), err)
	}
	if err := s.b.reclaim(); err != nil {
		return removed, fmt.Errorf("gc: removed %d records but could not reclaim disk space: %w", removed, err)
	}
	return removed, nil
}

// Verify checks every record's checksum, that it is stored under its own key,
// that its output hashes to OutputDigest, and that its parts decode.
func (s *store) Verify() ([]string, error) {
	var bad []string
	err := s.b.scan(prefixRecord, false, func(k, v []byte) error {
		key := string(k[len(prefixRecord):])
		if _, err := s.checkRecord(key, v); err != nil {
			bad = append(bad, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	return bad, nil
}

// checkRecord fully checks one stored record value and its parts and returns
// the record with its parts.
func (s *store) checkRecord(key string, v []byte) (*Record, error) {
	rec, err := decodeRecord(v)
	if err != nil {
		return nil, err
	}
	if rec.Key != key {
		return nil, fmt.Errorf("%w: record for key %s stored under %s", ErrCorrupt, rec.Key, key)
	}
	if got := DigestOutput(rec.Output); got != rec.OutputDigest {
		return nil, fmt.Errorf("%w: output sha256 %s, recorded %s", ErrCorrupt, got, rec.OutputDigest)
	}
	if rec.Parts, err = s.Parts(key); err != nil {
		return nil, err
	}
	return rec, nil
}

// fullRecord reads a record with its parts, checked as by Verify.
func (s *store) fullRecord(key string) (*Record, error) {
	var rec *Record
	err := s.b.get([]byte(prefixRecord+key), func(v []byte) error {
		var err error
		rec, err = s.checkRecord(key, v)
		return err
	})
	if err != nil {
		return nil, s.lookupErr("read record", key, err)
	}
	return rec, nil
}

// RepairResult counts what Repair deleted.
type RepairResult struct {
	Records int `json:"records"` // records (with their parts) dropped
	Latest  int `json:"latest"`  // latest-key entries that named them
	Memos   int `json:"memos"`   // memos that named them or were damaged themselves
}

// Repair drops the records in bad (as Verify returns them), the latest-key
// entries and memos that name them, and every memo that fails its own
// checksum, in one write, so that the next run recomputes exactly those
// records instead of failing on them or trusting an index that points at
// them. Records not in bad are never touched.
func (s *store) Repair(bad []string) (RepairResult, error) {
	var res RepairResult
	drop := make(map[string]bool, len(bad))
	var ops []op
	for _, k := range bad {
		if !drop[k] {
			drop[k] = true
			ops = append(ops, delOp(prefixRecord+k), delOp(prefixParts+k))
			res.Records++
		}
	}
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	err := s.b.scan(prefixLatest, false, func(k, v []byte) error {
		if drop[string(v)] {
			ops = append(ops, delOp(string(k)))
			res.Latest++
		}
		return nil
	})
	if err == nil {
		err = s.b.scan(prefixMemo, false, func(k, v []byte) error {
			if _, merr := unsealMemo(v); merr != nil || drop[memoRecordKey(v)] {
				ops = append(ops, delOp(string(k)))
				res.Memos++
			}
			return nil
		})
	}
	if err != nil {
		return RepairResult{}, fmt.Errorf("repair: scan: %w", err)
	}
	if len(ops) == 0 {
		return res, nil
	}
	// One unit per entry: the deletions need not be atomic together, and
	// small units let the committer split a large repair across transactions.
	units := make([][]op, len(ops))
	for i := range ops {
		units[i] = ops[i : i+1]
	}
	if err := s.apply(units...); err != nil {
		return RepairResult{}, fmt.Errorf("repair: delete %d entries: %w", len(ops), err)
	}
	return res, nil
}

// GCPreview is what GC(keep) would remove, for a person to confirm first.
type GCPreview struct {
	Records int   `json:"records"`
	Bytes   int64 `json:"bytes"`
	// ByExperiment counts the records to remove by the experiment that last
	// computed them (from the latest-key index); records no experiment
	// names any more count under "".
	ByExperiment map[string]int `json:"by_experiment"`
}

// PreviewGC says what GC(keep) would remove, without removing anything.
func (s *store) PreviewGC(keep map[string]bool) (GCPreview, error) {
	p := GCPreview{ByExperiment: map[string]int{}}
	gone := map[string]bool{}
	err := s.List(func(e Entry) error {
		if !keep[e.Key] {
			gone[e.Key] = true
			p.Records++
			p.Bytes += int64(e.Bytes)
		}
		return nil
	})
	if err != nil {
		return p, fmt.Errorf("gc preview: %w", err)
	}
	named := map[string]bool{}
	err = s.b.scan(prefixLatest, false, func(k, v []byte) error {
		key := string(v)
		if !gone[key] || named[key] {
			return nil
		}
		named[key] = true
		addr := string(k[len(prefixLatest):])
		exp, _, _ := strings.Cut(addr, ":")
		p.ByExperiment[exp]++
		return nil
	})
	if err != nil {
		return p, fmt.Errorf("gc preview: scan latest: %w", err)
	}
	if n := p.Records - len(named); n > 0 {
		p.ByExperiment[""] = n
	}
	return p, nil
}
