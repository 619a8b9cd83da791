package cache

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Stats decodes only the summary of each record. A record that fails its
// checksum is counted as damaged (its sums are unknown), not an error: a
// damaged cache is when its numbers matter most.
func (s *store) Stats() (Stats, error) {
	var st Stats
	err := s.b.scan(prefixRecord, false, func(k, v []byte) error {
		sum, err := readSummary(v)
		if err != nil || sum.Key != string(k[len(prefixRecord):]) {
			st.Damaged++
			return nil
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
// stored record value. A record that fails its checksum is listed with
// Damaged set and only its key. An error from fn stops the walk and is
// returned as is.
func (s *store) List(fn func(Entry) error) error {
	var fnErr error
	err := s.b.scan(prefixRecord, false, func(k, v []byte) error {
		e := Entry{Key: string(k[len(prefixRecord):]), Bytes: len(v), Damaged: true}
		if sum, err := readSummary(v); err == nil && sum.Key == e.Key {
			e = Entry{Key: sum.Key, Stage: sum.Stage, Address: sum.Address, Bytes: len(v), CreatedAt: sum.CreatedAt}
		}
		fnErr = fn(e)
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

// CheckReport is what Check found. Records and their parts are checked
// apart: a record whose key parts are damaged is sound (its parts only
// explain misses), so repairing it drops the parts and keeps the record,
// which costs no call.
type CheckReport struct {
	Records  int `json:"records"`
	Parts    int `json:"parts"`
	Memos    int `json:"memos"`
	Latest   int `json:"latest"`
	Failures int `json:"failures"`
	Runs     int `json:"runs"`
	// BadRecords fail their checksum, their key, or their output digest.
	BadRecords []string `json:"bad_records,omitempty"`
	// BadParts are keys of sound records whose key parts fail to decode.
	BadParts []string `json:"bad_parts,omitempty"`
	// BadIndex are stored keys (with their prefix) of memos, latest-key
	// entries, failures and runs that fail their checks, and of damaged key
	// parts whose record is gone.
	BadIndex []string `json:"bad_index,omitempty"`
	// Dangling counts memos and latest-key entries that name a record that
	// is not there: no damage (they cost a re-render), but Repair drops them.
	Dangling int `json:"dangling,omitempty"`
	// File-level checks of the Badger store (zero for the in-memory one):
	// every table block against its checksum, every value-log entry
	// against its CRC.
	Tables     int   `json:"tables,omitempty"`
	TableBytes int64 `json:"table_bytes,omitempty"`
	Logs       int   `json:"logs,omitempty"`
	LogBytes   int64 `json:"log_bytes,omitempty"`
	// MemoIndex is how many memos were compared with the memo index being
	// read (0: none is read); a difference is in Damage.
	MemoIndex int `json:"memo_index,omitempty"`
	// Damage lists damaged files whose entries are unreadable until a
	// writable open restores them, one line each.
	Damage []string `json:"damage,omitempty"`
	// LogDamage lists damaged byte ranges of value logs. The records under
	// them are in BadRecords if they are still in use; the rest is garbage
	// that gc reclaims, so this alone is not a failure.
	LogDamage []string `json:"log_damage,omitempty"`
}

// Sound says nothing failed.
func (r CheckReport) Sound() bool {
	return len(r.BadRecords) == 0 && len(r.BadParts) == 0 && len(r.BadIndex) == 0 && len(r.Damage) == 0
}

// Check reads every entry and checks it as its reader would, and more: a
// record's output against its digest.
func (s *store) Check() (CheckReport, error) {
	var r CheckReport
	records := map[string]bool{}
	err := s.b.scan(prefixRecord, false, func(k, v []byte) error {
		key := string(k[len(prefixRecord):])
		r.Records++
		records[key] = true
		if err := checkRecordValue(key, v); err != nil {
			r.BadRecords = append(r.BadRecords, key)
		}
		return nil
	})
	badRecord := make(map[string]bool, len(r.BadRecords))
	for _, k := range r.BadRecords {
		badRecord[k] = true
	}
	if err == nil {
		err = s.b.scan(prefixParts, false, func(k, v []byte) error {
			r.Parts++
			if _, err := decodeParts(v); err != nil {
				switch key := string(k[len(prefixParts):]); {
				case badRecord[key]: // goes with its record
				case records[key]:
					r.BadParts = append(r.BadParts, key)
				default:
					r.BadIndex = append(r.BadIndex, string(k))
				}
			}
			return nil
		})
	}
	if err == nil {
		err = s.b.scan(prefixMemo, false, func(k, v []byte) error {
			r.Memos++
			switch m, err := unsealMemo(v); {
			case err != nil:
				r.BadIndex = append(r.BadIndex, string(k))
			case !records[memoRecordKey(m)]:
				r.Dangling++
			}
			return nil
		})
	}
	if err == nil {
		err = s.b.scan(prefixLatest, false, func(k, v []byte) error {
			r.Latest++
			switch {
			case len(v) == 0 || len(v) > maxIDLen || !utf8.Valid(v) || slices.Contains(v, 0):
				r.BadIndex = append(r.BadIndex, string(k))
			case !records[string(v)]:
				r.Dangling++
			}
			return nil
		})
	}
	if err == nil {
		err = s.b.scan(prefixFailure, false, func(k, v []byte) error {
			r.Failures++
			var f Failure
			if json.Unmarshal(v, &f) != nil {
				r.BadIndex = append(r.BadIndex, string(k))
			}
			return nil
		})
	}
	if err == nil {
		err = s.b.scan(prefixRun, false, func(k, v []byte) error {
			r.Runs++
			var run RunRecord
			if json.Unmarshal(v, &run) != nil {
				r.BadIndex = append(r.BadIndex, string(k))
			}
			return nil
		})
	}
	if err != nil {
		return r, fmt.Errorf("check: %w", err)
	}
	return r, nil
}

// Check is store.Check plus the files: the tables as the open checked them
// and every value log, entry by entry.
func (b *Badger) Check() (CheckReport, error) {
	r, err := b.store.Check()
	if err != nil {
		return r, err
	}
	if d := b.damage; d != nil {
		r.Tables, r.TableBytes = d.checked, d.tableBytes
		r.Damage = d.describeFiles()
	}
	if bb, ok := b.b.(*badgerBackend); ok {
		n, bad, err := bb.checkMemoIndex()
		if err != nil {
			return r, fmt.Errorf("check: %w", err)
		}
		r.MemoIndex = n
		if bad != "" {
			r.Damage = append(r.Damage, bad)
		}
	}
	paths, err := filepath.Glob(filepath.Join(b.dir, "*.vlog"))
	if err != nil {
		return r, fmt.Errorf("check: %w", err)
	}
	for _, p := range paths {
		s, err := scanFile(p, nil)
		if err != nil {
			return r, fmt.Errorf("check: %w", err)
		}
		r.Logs++
		r.LogBytes += int64(s.dataEnd)
		if len(s.damage) > 0 {
			r.LogDamage = append(r.LogDamage, describeLog(p, s))
		}
	}
	return r, nil
}

// Verify returns the keys whose record or key parts fail (see Check).
func (s *store) Verify() ([]string, error) {
	r, err := s.Check()
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	bad := slices.Concat(r.BadRecords, r.BadParts)
	slices.Sort(bad)
	return slices.Compact(bad), nil
}

// checkRecordValue checks one stored record value: its checksum, that it is
// stored under its own key, and that its output hashes to OutputDigest.
func checkRecordValue(key string, v []byte) error {
	rec, err := decodeRecord(v)
	if err != nil {
		return err
	}
	if rec.Key != key {
		return fmt.Errorf("%w: record for key %s stored under %s", ErrCorrupt, rec.Key, key)
	}
	if got := DigestOutput(rec.Output); got != rec.OutputDigest {
		return fmt.Errorf("%w: output sha256 %s, recorded %s", ErrCorrupt, got, rec.OutputDigest)
	}
	return nil
}

// checkRecord fully checks one stored record value and its parts and returns
// the record with its parts.
func (s *store) checkRecord(key string, v []byte) (*Record, error) {
	if err := checkRecordValue(key, v); err != nil {
		return nil, err
	}
	rec, err := decodeRecord(v)
	if err != nil {
		return nil, err
	}
	if rec.Parts, err = s.Parts(key); err != nil {
		return nil, err
	}
	return rec, nil
}

// checkedRecord reads a record without its parts, checked as by Check.
func (s *store) checkedRecord(key string) (*Record, error) {
	var rec *Record
	err := s.b.get([]byte(prefixRecord+key), func(v []byte) error {
		if err := checkRecordValue(key, v); err != nil {
			return err
		}
		var err error
		rec, err = decodeRecord(v)
		return err
	})
	if err != nil {
		return nil, s.lookupErr("read record", key, err)
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
	Parts   int `json:"parts"`   // damaged key parts dropped from sound records
	Latest  int `json:"latest"`  // latest-key entries that named dropped or missing records, or were damaged
	Memos   int `json:"memos"`   // memos that named dropped or missing records, or were damaged
	Index   int `json:"index"`   // damaged failures, runs, and parts of no record
}

// Dropped is the number of entries Repair deleted.
func (r RepairResult) Dropped() int { return r.Records + r.Parts + r.Latest + r.Memos + r.Index }

// Repair drops what Check found: the bad records with their parts, the
// damaged parts of sound records (the records stay), damaged index entries,
// and the memos and latest-key entries that name a dropped or missing
// record, in one pass, so that the next run recomputes exactly the dropped
// records instead of failing on them or trusting an index that points at
// them. Sound records are never touched.
func (s *store) Repair(r CheckReport) (RepairResult, error) {
	var res RepairResult
	drop := make(map[string]bool, len(r.BadRecords))
	var ops []op
	for _, k := range r.BadRecords {
		if !drop[k] {
			drop[k] = true
			ops = append(ops, delOp(prefixRecord+k), delOp(prefixParts+k))
			res.Records++
		}
	}
	for _, k := range r.BadParts {
		if !drop[k] {
			ops = append(ops, delOp(prefixParts+k))
			res.Parts++
		}
	}
	badIndex := map[string]bool{}
	for _, k := range r.BadIndex {
		badIndex[k] = true
		if strings.HasPrefix(k, prefixFailure) || strings.HasPrefix(k, prefixRun) || strings.HasPrefix(k, prefixParts) {
			ops = append(ops, delOp(k))
			res.Index++
		}
	}
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	gone := func(key string) bool {
		if drop[key] {
			return true
		}
		ok, err := s.b.has([]byte(prefixRecord + key))
		return err == nil && !ok
	}
	err := s.b.scan(prefixLatest, false, func(k, v []byte) error {
		if badIndex[string(k)] || gone(string(v)) {
			ops = append(ops, delOp(string(k)))
			res.Latest++
		}
		return nil
	})
	if err == nil {
		err = s.b.scan(prefixMemo, false, func(k, v []byte) error {
			if _, merr := unsealMemo(v); merr != nil || gone(memoRecordKey(v)) {
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
