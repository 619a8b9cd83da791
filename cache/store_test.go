package cache

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPutGetRoundTrip(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		recs := []*Record{sampleRecord(0), sampleRecord(1), sampleRecord(2)}
		recs[2].Parts = nil
		mustPut(t, s, recs...)
		for _, r := range recs {
			assertRecord(t, s, r)
		}
		if _, err := s.Get("missing"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get missing: err = %v, want ErrNotFound", err)
		}
		if _, err := s.Parts("missing"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Parts missing: err = %v, want ErrNotFound", err)
		}
	})
}

func TestPutFillsDigestAndTime(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		rec := &Record{Key: "k1", Output: []byte(`{"a":1}`)}
		mustPut(t, s, rec)
		if want := "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"; rec.OutputDigest != want {
			t.Fatalf("OutputDigest = %s, want %s", rec.OutputDigest, want)
		}
		if rec.CreatedAt.IsZero() {
			t.Fatal("CreatedAt was not filled in")
		}
		assertRecord(t, s, rec)
	})
}

func TestPutRefuses(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		tests := []struct {
			name string
			rec  *Record
			want string
		}{
			{"nil", nil, "put record: nil record"},
			{"empty key", &Record{}, "put record: empty record key"},
			{"long key", &Record{Key: strings.Repeat("a", maxIDLen+1)}, "record key of 4097 bytes exceeds 4096"},
			{"wrong digest", &Record{Key: "k", Output: []byte("x"), OutputDigest: "00"},
				"put record k: output digest 00 does not match output (sha256 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881)"},
		}
		for _, tt := range tests {
			err := s.Put(tt.rec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
			}
		}
		if keys := recordKeys(t, s); len(keys) != 0 {
			t.Fatalf("refused puts stored %v", keys)
		}
	})
}

func TestOverwriteWithoutPartsDropsOldParts(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		rec := sampleRecord(1)
		mustPut(t, s, rec)
		again := sampleRecord(1)
		again.Parts = nil
		again.Raw = "second computation"
		mustPut(t, s, again)
		assertRecord(t, s, again)
	})
}

func TestLatestIndex(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		if _, ok, err := s.Latest("a"); ok || err != nil {
			t.Fatalf("Latest on empty store = ok %v err %v", ok, err)
		}
		steps := []struct{ address, key string }{{"a", "k1"}, {"b", "k2"}, {"a", "k3"}}
		for _, st := range steps {
			if err := s.SetLatest(st.address, st.key); err != nil {
				t.Fatal(err)
			}
		}
		for address, want := range map[string]string{"a": "k3", "b": "k2"} {
			key, ok, err := s.Latest(address)
			if err != nil || !ok || key != want {
				t.Fatalf("Latest(%s) = %q %v %v, want %q", address, key, ok, err, want)
			}
		}
		if err := s.SetLatest("", "k"); err == nil || err.Error() != "set latest: empty node address" {
			t.Fatalf("SetLatest empty address: err = %v", err)
		}
	})
}

func TestFailures(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		f := &Failure{
			Key: "k9", Stage: "stage.rank_ideas.novelty", Address: "stage.rank_ideas.novelty.item[3]",
			Error: "unparseable ranking after 2 repairs", Raw: "I think B is best",
			Attempts:  []Attempt{{Raw: "I think B is best", Status: 200}, {Raw: "B", Status: 200, Repair: true}},
			CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		}
		if err := s.PutFailure(f); err != nil {
			t.Fatal(err)
		}
		got, err := s.Failure("k9")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Fatalf("Failure:\n got %+v\nwant %+v", got, f)
		}
		if err := s.DeleteFailure("k9"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Failure("k9"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Failure after delete: err = %v, want ErrNotFound", err)
		}
		if err := s.DeleteFailure("never-stored"); err != nil {
			t.Fatalf("DeleteFailure of an absent key: %v", err)
		}
	})
}

func TestRunsOldestFirst(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		day := func(d int) time.Time { return time.Date(2025, 5, d, 0, 0, 0, 0, time.UTC) }
		runs := []*RunRecord{
			{ID: "c", Experiment: "quickstart", Started: day(3), Finished: day(3), Summary: []byte(`{"ran":1}`)},
			{ID: "a", Experiment: "quickstart", Started: day(5), Finished: day(6), Variables: map[string]string{"n": "3"}, Keys: []string{"k1", "k2"}},
			{ID: "b", Experiment: "ablation", Started: day(3), Finished: day(4), GitCommit: "abc123"},
		}
		for _, r := range runs {
			if err := s.PutRun(r); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Runs()
		if err != nil {
			t.Fatal(err)
		}
		// b and c started together and order by id.
		want := []*RunRecord{runs[2], runs[0], runs[1]}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Runs = %v, want ids %v", runIDs(got), runIDs(want))
		}
	})
}

func runIDs(runs []*RunRecord) []string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

func TestStatsAndList(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		recs := []*Record{sampleRecord(2), sampleRecord(0), sampleRecord(1)}
		mustPut(t, s, recs...)
		if err := s.PutFailure(&Failure{Key: "f1", Error: "boom"}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutRun(&RunRecord{ID: "r1"}); err != nil {
			t.Fatal(err)
		}
		st, err := s.Stats()
		if err != nil {
			t.Fatal(err)
		}
		var outBytes int64
		for _, r := range recs {
			outBytes += int64(len(r.Output))
		}
		if st.DiskBytes <= 0 {
			t.Fatalf("DiskBytes = %d, want > 0", st.DiskBytes)
		}
		st.DiskBytes = 0
		want := Stats{Records: 3, Failures: 1, Runs: 1, OutputBytes: outBytes, InputTokens: 100 + 101 + 102, OutputTokens: 50 + 51 + 52, CostUSD: 0.75}
		if st != want {
			t.Fatalf("Stats = %+v, want %+v", st, want)
		}

		var entries []Entry
		if err := s.List(func(e Entry) error { entries = append(entries, e); return nil }); err != nil {
			t.Fatal(err)
		}
		// Key order: sampleRecord(i) has key i+1 in hex.
		for i, e := range entries {
			r := sampleRecord(i)
			want := Entry{Key: r.Key, Stage: r.Stage, Address: r.Address, Bytes: len(encodeRecord(r)), CreatedAt: r.CreatedAt}
			if e != want {
				t.Fatalf("entry %d = %+v, want %+v", i, e, want)
			}
		}
		if len(entries) != 3 {
			t.Fatalf("List yielded %d entries, want 3", len(entries))
		}

		stop := errors.New("stop")
		calls := 0
		err = s.List(func(Entry) error { calls++; return stop })
		if err != stop || calls != 1 {
			t.Fatalf("List with stopping fn: err = %v after %d calls, want stop after 1", err, calls)
		}
	})
}

func TestGCKeepsExactlyKeptKeys(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		var recs []*Record
		for i := range 10 {
			recs = append(recs, sampleRecord(i))
		}
		mustPut(t, s, recs...)
		keep := map[string]bool{recs[1].Key: true, recs[4].Key: true, recs[9].Key: true, "never-stored": true}
		for i, r := range recs[:4] {
			if err := s.SetLatest(r.Address, r.Key); err != nil {
				t.Fatal(err)
			}
			if err := s.PutFailure(&Failure{Key: recs[i].Key, Error: "earlier failure"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.PutRun(&RunRecord{ID: "run-1"}); err != nil {
			t.Fatal(err)
		}

		removed, err := s.GC(keep)
		if err != nil {
			t.Fatal(err)
		}
		if removed != 7 {
			t.Fatalf("GC removed %d, want 7", removed)
		}
		wantKeys := []string{recs[1].Key, recs[4].Key, recs[9].Key}
		if got := recordKeys(t, s); !slices.Equal(got, wantKeys) {
			t.Fatalf("keys after GC = %v, want %v", got, wantKeys)
		}
		for _, k := range []int{1, 4, 9} {
			assertRecord(t, s, recs[k])
		}
		if _, err := s.Parts(recs[0].Key); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Parts of a collected record: err = %v, want ErrNotFound", err)
		}
		for i, r := range recs[:4] {
			key, ok, err := s.Latest(r.Address)
			if err != nil {
				t.Fatal(err)
			}
			if wantOK := i == 1; ok != wantOK || (ok && key != r.Key) {
				t.Fatalf("Latest(%s) after GC = %q %v, want present=%v", r.Address, key, ok, wantOK)
			}
			_, err = s.Failure(r.Key)
			if wantErr := i != 1; errors.Is(err, ErrNotFound) != wantErr {
				t.Fatalf("Failure(%d) after GC: err = %v, want not-found=%v", i, err, wantErr)
			}
		}
		st, err := s.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Records != 3 || st.Failures != 1 || st.Runs != 1 {
			t.Fatalf("Stats after GC = %+v, want 3 records, 1 failure, 1 run", st)
		}
		if removed, err := s.GC(keep); err != nil || removed != 0 {
			t.Fatalf("second GC = %d, %v; want 0, nil", removed, err)
		}
	})
}

func TestVerifyHealthyStore(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		mustPut(t, s, sampleRecord(0), sampleRecord(1))
		bad, err := s.Verify()
		if err != nil || len(bad) != 0 {
			t.Fatalf("Verify = %v, %v; want no bad keys", bad, err)
		}
	})
}

func TestClosedStoreRefusesCalls(t *testing.T) {
	backends(t, func(t *testing.T, s Store) {
		mustPut(t, s, sampleRecord(0))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if _, err := s.Get(sampleRecord(0).Key); !errors.Is(err, ErrClosed) {
			t.Fatalf("Get after Close: err = %v, want ErrClosed", err)
		}
		if err := s.Put(sampleRecord(1)); !errors.Is(err, ErrClosed) {
			t.Fatalf("Put after Close: err = %v, want ErrClosed", err)
		}
		if _, err := s.Stats(); !errors.Is(err, ErrClosed) {
			t.Fatalf("Stats after Close: err = %v, want ErrClosed", err)
		}
	})
}
